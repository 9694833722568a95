import FluentKit
import NIOCore

/// Runs a task's jobs on one NIO event loop (a task executor preference, SE-0417), for the
/// database work whose every step waits for the database: a batch writer, a transaction's body, a
/// prepared statement (docs/decisions.md, "Database work runs on its connection's event loop").
/// On SQLite that is its one loop, where its one connection's queries complete.
///
/// A query's answer arrives on its connection's event loop. A task on Swift's global pool
/// resumes on another thread, and its next query goes back to the loop by another wake-up: three
/// thread hand-offs per round trip besides the database's own, each costing a wake-up of an idle
/// core (about 0.1–0.3 ms on these virtual machines) and, under load, a context switch. A task
/// that prefers the connection's loop sends, is answered and goes on in the same thread.
///
/// Only for work that awaits the database and computes briefly between its statements: anything
/// that blocks here blocks the loop's sockets too.
package final class EventLoopTaskExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: `loop` is immutable and an EventLoop is Sendable; the class is only a handle.
    package let loop: any EventLoop

    package init(_ loop: any EventLoop) {
        self.loop = loop
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

extension EventLoop {
    /// `makeFutureWithTask`, with the task preferring this loop (`EventLoopTaskExecutor`):
    /// NIO's own creates a plain `Task`, which runs on the global pool (an unstructured task
    /// inherits no executor preference).
    package func makeFutureWithTaskOnLoop<Value: Sendable>(_ body: @escaping @Sendable () async throws -> Value) -> EventLoopFuture<Value> {
        let promise = makePromise(of: Value.self)
        Task(executorPreference: EventLoopTaskExecutor(self)) {
            do { promise.succeed(try await body()) } catch { promise.fail(error) }
        }
        return promise.futureResult
    }
}
