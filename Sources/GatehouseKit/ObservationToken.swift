import Foundation

/// Keeps an observation alive; cancel it (or let it go) to stop being called.
public final class ObservationToken: @unchecked Sendable {
    private let onCancel: @Sendable () -> Void
    private var cancelled = false

    /// Creates a token that calls `onCancel` once, on ``cancel()`` or when released.
    public init(_ onCancel: @escaping @Sendable () -> Void) { self.onCancel = onCancel }

    /// Stops the observation.
    public func cancel() {
        guard !cancelled else { return }
        cancelled = true
        onCancel()
    }

    deinit { cancel() }
}
