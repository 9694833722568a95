import Foundation
import GatehouseAPI
import GatehouseKit

/// Checks a tag as it is typed, for every screen with a tag field (registration, editing the
/// profile): the tag rule at once, then, after ``MessengerEnvironment/tagCheckDelay`` of quiet,
/// the server; typing on cancels the pending question, and an answer about a tag no longer in
/// the field is dropped.
@MainActor
final class TagCheck {
    private let environment: MessengerEnvironment
    private var task: Task<Void, Never>?

    init(environment: MessengerEnvironment) {
        self.environment = environment
    }

    deinit { task?.cancel() }

    /// Checks `tag` (canonical); `apply` gets the status and the message to show. `mine` is the
    /// account's own tag, which is available to it without asking.
    func schedule(_ tag: String, mine: String? = nil, current: @escaping @MainActor () -> String?,
                  apply: @escaping @MainActor (TagStatus, String?) -> Void) {
        cancel()
        let apply = { [environment] (status: TagStatus, message: String?) in apply(status, Self.text(status, tag, message, environment)) }
        if tag.isEmpty { return apply(.empty, nil) }
        if let problem = environment.tagProblem(tag) { return apply(.invalid, problem) }
        if tag == mine { return apply(.available, environment.localizer("messenger.tag.yours")) }
        apply(.checking, nil)
        let delay = environment.tagCheckDelay
        let client = environment.client
        task = Task {
            if delay > 0 {
                try? await Task.sleep(nanoseconds: UInt64(delay * 1_000_000_000))
            }
            if Task.isCancelled { return }
            let status: TagStatus
            var message: String?
            do {
                let answer = try await client.tagAvailability(tag)
                status = answer.available ? .available : .taken
            } catch let error as GatehouseClientError where error.code == .invalidTag {
                status = .invalid
                message = error.message
            } catch is CancellationError {
                return
            } catch {
                status = .unknown
            }
            guard !Task.isCancelled, current() == tag else { return }
            apply(status, message)
        }
    }

    /// The line under the field for a status: the server's or the rule's message where there is one.
    private static func text(_ status: TagStatus, _ tag: String, _ message: String?, _ environment: MessengerEnvironment) -> String? {
        let l = environment.localizer
        return switch status {
        case .available: message ?? l("messenger.tag.available", tag)
        case .taken: message ?? l("messenger.tag.taken", tag)
        case .invalid: message ?? environment.tagProblem(tag)
        case .unknown: l("messenger.tag.unknown")
        case .checking: l("messenger.tag.checking", tag)
        case .empty: nil
        }
    }

    /// Waits for the pending check, if any.
    func settle() async { await task?.value }

    func cancel() {
        task?.cancel()
        task = nil
    }
}
