import AsyncKit
import FluentKit
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresKit
import SQLKit

/// Every database operation of the server with a deadline (`GATEHOUSE_DB_QUERY_TIMEOUT_SECONDS`):
/// one that has not finished by then fails with `DatabaseTimeoutError`, and the request it
/// belongs to is answered (500) instead of waiting for ever. The pool's own timeout only bounds
/// the wait *for* a connection; this bounds the work *on* one. The mixed-load soak found one
/// request in about 200,000 whose query never completed when PostgreSQL was shut down under it
/// (docs/decisions.md, "the hang"); the error logged here names the operation.
///
/// A late answer is dropped (a promise completes once). A transaction has one deadline as a
/// whole; the statements inside it run under it without timers of their own (a timer per
/// statement cost a thread wake-up each: a tenth of a message send on SQLite).
package struct DeadlineDatabase: Database, SQLDatabase {
    package let base: any Database
    package let deadline: TimeAmount
    /// False inside a transaction: the transaction's deadline bounds its statements.
    package var boundsEachOperation = true
    /// Told of operations that outlive their deadline and of requests the pool could not serve.
    package var health: PoolHealth? = nil

    package var context: DatabaseContext { base.context }
    package var inTransaction: Bool { base.inTransaction }
    private var sql: any SQLDatabase { base as! any SQLDatabase }

    package func execute(query: DatabaseQuery, onOutput: @escaping @Sendable (any DatabaseOutput) -> Void) -> EventLoopFuture<Void> {
        bounded("\(query.action) \(query.schema)", base.execute(query: query, onOutput: onOutput))
    }

    package func execute(schema: DatabaseSchema) -> EventLoopFuture<Void> {
        bounded("schema \(schema.schema)", base.execute(schema: schema))
    }

    package func execute(enum: DatabaseEnum) -> EventLoopFuture<Void> {
        bounded("enum \(`enum`.name)", base.execute(enum: `enum`))
    }

    package func transaction<T>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        bounded("transaction", always: true, base.transaction { [deadline, health] db in
            closure(DeadlineDatabase(base: db, deadline: deadline, boundsEachOperation: false, health: health))
        })
    }

    package func withConnection<T>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        base.withConnection { [deadline, boundsEachOperation, health] db in
            closure(DeadlineDatabase(base: db, deadline: deadline, boundsEachOperation: boundsEachOperation, health: health))
        }
    }

    // SQLDatabase
    package var logger: Logger { base.logger }
    package var eventLoop: any EventLoop { base.eventLoop }
    package var dialect: any SQLDialect { sql.dialect }
    package var version: (any SQLDatabaseReportedVersion)? { sql.version }
    package var queryLogLevel: Logger.Level? { sql.queryLogLevel }

    package func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        bounded("sql", sql.execute(sql: query, onRow))
    }

    /// On PostgreSQL, `query` as a prepared statement (`PreparedStatements`); its rows as SQL
    /// rows. Nil on SQLite, once every slot is taken, or for a bind without a binary form: the
    /// caller then runs it as usual.
    package func prepared(_ query: SQLQueryString) async throws -> [any SQLRow]? {
        guard let postgres = base as? any PostgresDatabase else { return nil }
        var serializer = SQLSerializer(database: self)
        query.serialize(to: &serializer)
        guard let bindings = try PreparedStatements.bindings(serializer.binds), let slot = PreparedStatements.slot(for: serializer.sql) else { return nil }
        let (run, logger, text) = (PreparedStatements.runners[slot], self.logger, serializer.sql.prefix(60))
        return try await bounded("prepared \(text)", postgres.withConnection { connection in
            connection.eventLoop.makeFutureWithTaskOnLoop { try await run(connection, bindings, logger).map { $0.sql() } }
        }).get()
    }

    private func bounded<T>(_ operation: @escaping @autoclosure @Sendable () -> String, always: Bool = false,
                            _ future: EventLoopFuture<T>) -> EventLoopFuture<T> {
        guard boundsEachOperation || always else { return future }
        let promise = future.eventLoop.makePromise(of: T.self)
        // Both are touched only on their own event loop (the timer is scheduled there, `whenComplete`
        // runs there, and the promise was made there), so they may cross into those callbacks.
        let late = OnItsLoop(future), answer = OnItsLoop(promise)
        let timer = future.eventLoop.scheduleTask(in: deadline) { [logger, deadline, health] in
            let description = operation()
            logger.error("database operation unfinished after its deadline; failing it", metadata: [
                "operation": "\(description)", "deadline_ms": "\(deadline.nanoseconds / 1_000_000)",
            ])
            promise.fail(DatabaseTimeoutError())
            health?.overran(late.value)
        }
        future.whenComplete { [health] result in
            timer.cancel()
            if case .failure(let error) = result { health?.failed(error) }
            // After an overrun the promise has failed already, and the late result is dropped.
            answer.value.assumeIsolated().completeWith(result)
        }
        return promise.futureResult
    }
}

/// Whether the PostgreSQL pool is starved by connections that never come back: postgres-nio can
/// leave a query unanswered for ever when PostgreSQL dies under it (docs/decisions.md, "the
/// hang"), and its connection is then never given back to the pool. Operations past their
/// deadline are counted until they finish; a request that times out waiting for a connection
/// while some are counted means the pool is starved, and `starved` is called.
package final class PoolHealth: Sendable {
    private let stranded = NIOLockedValueBox(0)
    private let starved: @Sendable () -> Void

    package init(starved: @escaping @Sendable () -> Void) {
        self.starved = starved
    }

    /// An operation outlived its deadline; it still holds its connection until `future` ends.
    package func overran<T>(_ future: EventLoopFuture<T>) {
        stranded.withLockedValue { $0 += 1 }
        future.whenComplete { [stranded] _ in stranded.withLockedValue { $0 = max(0, $0 - 1) } }
    }

    /// An operation failed; a wait for a connection that timed out while connections are stranded starves the pool.
    package func failed(_ error: any Error) {
        guard error is ConnectionPoolTimeoutError, stranded.withLockedValue({ $0 > 0 }) else { return }
        starved()
    }

    /// The pool was replaced: the stranded connections belong to the old one.
    package func reset() { stranded.withLockedValue { $0 = 0 } }
}

package struct DatabaseTimeoutError: Error, CustomStringConvertible {
    package var description: String { "the database did not answer within the query deadline" }
}

/// A future or a promise handed to a callback that runs on its own event loop, where alone it is
/// touched: its value need not be `Sendable` to be waited for or completed there.
private struct OnItsLoop<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
