import Foundation

/// Polls `condition` every 5 ms until it holds or `limit` passes; true when it held.
public func eventually(within limit: Duration = .seconds(10), _ condition: @Sendable () async throws -> Bool) async rethrows -> Bool {
    let end = ContinuousClock.now + limit
    while ContinuousClock.now < end {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return try await condition()
}
