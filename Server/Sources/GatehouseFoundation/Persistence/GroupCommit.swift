import Foundation
import NIOConcurrencyHelpers

/// What a batch made of one request: done (with its value or its error), or to be done on its
/// own after the batch (a retry, a refusal, anything the batch does not handle).
package enum BatchOutcome<Value: Sendable>: Sendable {
    case done(Result<Value, any Error>)
    case alone
}

/// Group commit (docs/performance.md): requests that arrive while a batch is being written wait
/// for the next one, and a batch is one transaction with a fixed number of statements however
/// many requests it holds. The cost of a write was its round trips to the database; a batch
/// shares them. Every send of the messenger (`SendBatcher`) and every transfer of the wallet
/// (`TransferBatcher`) goes through one: a request that comes alone is a batch of one.
///
/// Each request keeps its own outcome. A request the batch leaves `alone`, and every request of
/// a batch that fails as a whole (the database, a deadlock), is written by `single` on its own,
/// so that one request can never fail the others.
package final class GroupCommit<Request: Sendable, Value: Sendable>: Sendable {
    private struct Waiting {
        var request: Request
        var continuation: CheckedContinuation<Value, any Error>
    }

    private struct State {
        var queue: [Waiting] = []
        var writers = 0
    }

    /// The most requests one transaction writes.
    package let maxBatch: Int
    /// The most batches written at once (each its own transaction and connection): while one
    /// waits for the database, the next is built.
    package let concurrency: Int
    private let write: @Sendable ([Request]) async throws -> [BatchOutcome<Value>]
    private let single: @Sendable (Request) async throws -> Value
    /// The database the batches are written to: its writers run on its event loops
    /// (`DatabaseProvider.writerExecutor`), so that a batch's round trips need no thread hand-offs.
    private let database: DatabaseProvider?
    private let state = NIOLockedValueBox(State())

    /// `write` answers an outcome per request, in order; `single` writes one request on its own.
    /// `database` is where they write (nil: writers on Swift's global pool, for work without one).
    package init(maxBatch: Int, concurrency: Int = 1, database: DatabaseProvider?,
         write: @escaping @Sendable ([Request]) async throws -> [BatchOutcome<Value>],
         single: @escaping @Sendable (Request) async throws -> Value) {
        self.maxBatch = max(1, maxBatch)
        self.database = database
        self.concurrency = max(1, concurrency)
        self.write = write
        self.single = single
    }

    package func submit(_ request: Request) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let start = state.withLockedValue { state -> Bool in
                state.queue.append(Waiting(request: request, continuation: continuation))
                if state.writers >= concurrency { return false }
                state.writers += 1
                return true
            }
            if start { Task(executorPreference: database?.writerExecutor(), priority: .high) { await self.drain() } }
        }
    }

    private func drain() async {
        while true {
            let batch = state.withLockedValue { state -> [Waiting] in
                guard !state.queue.isEmpty else {
                    state.writers -= 1
                    return []
                }
                let count = min(state.queue.count, maxBatch)
                let batch = Array(state.queue.prefix(count))
                state.queue.removeFirst(count)
                return batch
            }
            if batch.isEmpty { return }
            var alone: [Waiting] = []
            do {
                let outcomes = try await write(batch.map(\.request))
                precondition(outcomes.count == batch.count, "a batch answers every request")
                for (waiting, outcome) in zip(batch, outcomes) {
                    switch outcome {
                    case .done(let result): waiting.continuation.resume(with: result)
                    case .alone: alone.append(waiting)
                    }
                }
            } catch {
                alone = batch
            }
            guard !alone.isEmpty else { continue }
            // Each on its own, concurrently, after the batch committed (or rolled back), and before
            // this writer takes the next batch: with one writer (the messenger's sends) a later
            // request never overtakes one sent alone.
            await withTaskGroup(of: Void.self) { group in
                for waiting in alone {
                    group.addTask {
                        do { waiting.continuation.resume(returning: try await self.single(waiting.request)) } catch { waiting.continuation.resume(throwing: error) }
                    }
                }
            }
        }
    }
}
