import Foundation
import GatehouseKit

/// The one observation mechanism of every view model: a `State` value and closures called on
/// the main actor whenever it changes. Works on iOS 15 (no Observation framework needed) and on
/// Linux, and binds as easily to UIKit as to a terminal.
@MainActor
public class ScreenModel<State: Equatable> {
    /// The current state; views draw exactly this.
    public private(set) var state: State
    private var observers: [UUID: @MainActor (State) -> Void] = [:]

    /// Creates a model with its first state.
    public init(state: State) {
        self.state = state
    }

    /// Calls `handler` now with the current state and again after every change, until the
    /// returned token is cancelled or released.
    @discardableResult
    public func observe(_ handler: @escaping @MainActor (State) -> Void) -> ObservationToken {
        let id = UUID()
        observers[id] = handler
        handler(state)
        return ObservationToken { [weak self] in
            // A token may be released on any thread; the observers live on the main actor.
            if Thread.isMainThread {
                MainActor.assumeIsolated { _ = self?.observers.removeValue(forKey: id) }
            } else {
                Task { @MainActor in _ = self?.observers.removeValue(forKey: id) }
            }
        }
    }

    /// Changes the state and notifies observers if anything changed. Only the view model
    /// itself does this; views call its actions.
    func update(_ change: (inout State) -> Void) {
        var next = state
        change(&next)
        guard next != state else { return }
        state = next
        for observer in observers.values { observer(next) }
    }
}
