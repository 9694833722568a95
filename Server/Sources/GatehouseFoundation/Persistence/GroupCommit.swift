import Foundation
import Metrics
import NIOConcurrencyHelpers
import NIOCore

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
        /// `touches(request)`, worked out before the queue's lock is taken.
        var touches: [Int]
    }

    private struct State {
        var queue: [Waiting] = []
        var writers = 0
        /// What the batches being written touch (`touches`), with how many of them touch it.
        var touched: [Int: Int] = [:]
        /// When the last request came (uptime, nanoseconds), and the time between requests,
        /// averaged (`linger`): how many more one linger would bring.
        var lastArrival: UInt64 = 0
        var gap: UInt64 = GroupCommit.longGap
        /// Batches a writer waited for (`lingers`).
        var lingers = 0
    }

    /// The longest gap between two requests counted (an idle night is no longer than this).
    private static var longGap: UInt64 { 10_000_000_000 }

    /// The most requests one transaction writes.
    package let maxBatch: Int
    /// The most batches written at once (each its own transaction and connection): while one
    /// waits for the database, the next is built.
    package let concurrency: Int
    /// How many requests must be waiting for a writer beyond the first to start, or to go on
    /// after its batch: below it, one writer takes them all in its next batch. A second writer
    /// pays for itself only when the queue outgrows one: at a light load two writers write
    /// batches no larger than one would, and each of their round trips waits longer for the
    /// processors they share (docs/performance.md, "Sixteenth look"). 1: every free writer starts.
    package let backlog: Int
    /// How long the one writer waits, at most, before it writes a batch that requests coming at the
    /// recent pace would at least double (nanoseconds; 0: never; `lingerWait`). A batch's fixed costs (its statement,
    /// its round trip, its events' announcement) are most of a request's when batches hold one
    /// or two; a wait of a few milliseconds shares them, as PostgreSQL's `commit_delay` and
    /// Kafka's `linger.ms` do. A request that comes alone, after a pause, never waits: the pace
    /// is an average of the gaps between requests that a pause resets at once and a run of
    /// requests lowers gradually (docs/performance.md, "Seventeenth look").
    package let linger: UInt64
    /// Counts the batches a writer waited for, in `/metrics` (as `lingers` does for the process).
    private let lingered: Counter?
    private let write: @Sendable ([Request]) async throws -> [BatchOutcome<Value>]
    private let single: @Sendable (Request) async throws -> Value
    /// What a request touches (hashed: a collision only makes two requests wait for each other).
    /// A writer takes no request that touches what a batch being written touches, nor one after a
    /// request it left for that reason that touches the same: batches written at once are
    /// disjoint, so neither waits for the other's locks, and requests that touch the same thing
    /// are written in the order they came. Nil: every batch takes the queue from its head.
    private let touches: (@Sendable (Request) -> [Int])?
    /// The database the batches are written to: its writers run on its event loops
    /// (`DatabaseProvider.writerExecutor`), so that a batch's round trips need no thread hand-offs.
    private let database: DatabaseProvider?
    private let state = NIOLockedValueBox(State())

    /// `write` answers an outcome per request, in order; `single` writes one request on its own.
    /// `database` is where they write (nil: writers on Swift's global pool, for work without one).
    package init(maxBatch: Int, concurrency: Int = 1, backlog: Int = 1, linger: Duration = .zero, lingered: Counter? = nil, database: DatabaseProvider?,
         touches: (@Sendable (Request) -> [Int])? = nil,
         write: @escaping @Sendable ([Request]) async throws -> [BatchOutcome<Value>],
         single: @escaping @Sendable (Request) async throws -> Value) {
        self.maxBatch = max(1, maxBatch)
        self.database = database
        self.concurrency = max(1, concurrency)
        self.backlog = max(1, backlog)
        self.linger = UInt64(max(0, TimeAmount(linger).nanoseconds))
        self.lingered = lingered
        self.touches = touches
        self.write = write
        self.single = single
    }

    /// Requests waiting for a batch.
    package var queued: Int { state.withLockedValue { $0.queue.count } }

    /// Batches a writer waited for before writing (`linger`).
    package var lingers: Int { state.withLockedValue { $0.lingers } }

    /// How long the one writer waits before writing `queued` requests that came `gap` apart on
    /// average (nanoseconds; 0: not at all): only when one `linger` at that pace would bring at
    /// least as many again, and then no longer than that pace takes to fill the batch, as a Kafka
    /// producer sends a full batch before its linger ends.
    package static func lingerWait(queued: Int, gap: UInt64, linger: UInt64, maxBatch: Int) -> UInt64 {
        guard linger > 0, queued > 0, queued < maxBatch else { return 0 }
        let (doubled, overflow) = UInt64(queued).multipliedReportingOverflow(by: gap)
        guard !overflow, doubled < linger else { return 0 }
        return min(linger, UInt64(maxBatch - queued).multipliedReportingOverflow(by: gap).partialValue)
    }

    package func submit(_ request: Request) async throws -> Value {
        let touched = touches?(request) ?? []
        return try await withCheckedThrowingContinuation { continuation in
            let start = state.withLockedValue { state -> Bool in
                if linger > 0 {
                    // Read under the lock, so that arrivals are in order. A pause counts at once; a
                    // run of requests lowers the average a quarter at a time.
                    let now = NIODeadline.now().uptimeNanoseconds
                    let since = state.lastArrival == 0 ? Self.longGap : min(now &- state.lastArrival, Self.longGap)
                    state.gap = since >= state.gap ? since : (state.gap * 3 + since) / 4
                    state.lastArrival = now
                }
                state.queue.append(Waiting(request: request, continuation: continuation, touches: touched))
                guard state.writers == 0 || (state.writers < concurrency && state.queue.count >= backlog) else { return false }
                state.writers += 1
                return true
            }
            if start { Task(executorPreference: database?.writerExecutor(), priority: .high) { await self.drain() } }
        }
    }

    private func drain() async {
        var mine: [Int] = []
        var waited = false
        while true {
            var wait: UInt64 = 0
            let batch = state.withLockedValue { state -> [Waiting] in
                for key in mine {
                    if let count = state.touched[key], count > 1 { state.touched[key] = count - 1 } else { state.touched[key] = nil }
                }
                mine = []
                if state.writers > 1 && state.queue.count < backlog {
                    // Few enough for the writers still running to take in their next batches.
                    state.writers -= 1
                    return []
                }
                if !waited, state.writers == 1 {
                    wait = Self.lingerWait(queued: state.queue.count, gap: state.gap, linger: linger, maxBatch: maxBatch)
                    if wait > 0 {
                        state.lingers += 1
                        return []
                    }
                }
                let batch: [Waiting]
                if !state.touched.isEmpty {
                    (batch, mine) = Self.disjoint(&state, maxBatch)
                } else {
                    let count = min(state.queue.count, maxBatch)
                    batch = Array(state.queue.prefix(count))
                    state.queue.removeFirst(count)
                    if touches != nil { mine = batch.flatMap(\.touches) }
                }
                guard !batch.isEmpty else {
                    // Nothing to take, or all of it waits for the other writers' batches: each
                    // of them drains the queue again when it ends.
                    state.writers -= 1
                    return []
                }
                for key in mine { state.touched[key, default: 0] += 1 }
                return batch
            }
            if wait > 0 {
                waited = true
                self.lingered?.increment()
                try? await Task.sleep(nanoseconds: wait)
                continue
            }
            waited = false
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

    /// The requests of the queue that a writer takes while others write (`disjoint(_:busy:maxBatch:)`),
    /// taken out of it; with what they touch.
    private static func disjoint(_ state: inout State, _ maxBatch: Int) -> ([Waiting], [Int]) {
        let touched = state.touched
        let taken = disjoint(state.queue.map(\.touches), busy: { touched[$0] != nil }, maxBatch: maxBatch)
        var batch: [Waiting] = []
        var mine: [Int] = []
        for index in taken.reversed() {
            mine += state.queue[index].touches
            batch.append(state.queue.remove(at: index))
        }
        return (batch.reversed(), mine)
    }

    /// Which of the requests that touch `touches` (in the order they came) a writer takes while
    /// what is `busy` is being written: from the head, at most `maxBatch`, each touching nothing
    /// busy and nothing touched by a request left before it (so that requests touching the same
    /// thing are written in the order they came). Answers their places, in order.
    package static func disjoint(_ touches: [[Int]], busy: (Int) -> Bool, maxBatch: Int) -> [Int] {
        var taken: [Int] = []
        var barred: Set<Int> = []
        for (index, keys) in touches.enumerated() {
            guard taken.count < maxBatch else { break }
            if keys.contains(where: { busy($0) || barred.contains($0) }) {
                barred.formUnion(keys)
            } else {
                taken.append(index)
            }
        }
        return taken
    }
}
