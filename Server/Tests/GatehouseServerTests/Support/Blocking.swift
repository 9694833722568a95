import Foundation

/// Runs blocking work (starting a child process and polling it, a lazy global that does so) on a
/// thread of its own. Never on Swift's cooperative pool: it has one thread per core (two here), and
/// a test blocking one for seconds stalls every other test's servers and clients meanwhile (seen as
/// WebSocket tests taking 30 s in parallel runs).
func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}
