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
/// On PostgreSQL each operation also runs on a connection it leases itself and is watched
/// (`ConnectionWatch`): should that connection close under it, the operation fails at once
/// with `DatabaseConnectionLostError` and the connection goes back to the pool, which drops
/// it. That is what answers the query postgres-nio loses on a connection that has just closed,
/// long before the deadline, and without stranding its pool slot.
///
/// A late answer is dropped (a promise completes once). A transaction has one deadline as a
/// whole; the statements inside it run under it without timers of their own (a timer per
/// statement cost a thread wake-up each: a tenth of a message send on SQLite).
package struct DeadlineDatabase: GatehouseDatabase {
    package let base: any Database
    /// The same handle as SQLKit's (`sqlView(of:)`).
    private let sql: any SQLDatabase
    /// Nil: no deadline (a migration runs as long as it needs).
    package let deadline: TimeAmount?
    /// False inside a transaction: the transaction's deadline bounds its statements.
    package let boundsEachOperation: Bool
    /// Told of operations that outlive their deadline and of requests the pool could not serve.
    package let health: PoolHealth?

    /// A handle on the connection of a transaction this type began itself (the driver's own flag
    /// says nothing of a `BEGIN` it did not send): a transaction asked of it joins that one.
    private let ownTransaction: Bool
    /// False behind a pooler in transaction mode (`GatehouseConfiguration.databaseDirect`): a
    /// statement prepared by name on one server connection is unknown to the next one the
    /// pooler hands out, so `prepared` answers nil and every statement runs as a plain one.
    package let preparesStatements: Bool

    package init(base: any Database, deadline: TimeAmount?, boundsEachOperation: Bool = true, health: PoolHealth? = nil, preparesStatements: Bool = true) {
        self.init(base: base, deadline: deadline, boundsEachOperation: boundsEachOperation, health: health,
                  ownTransaction: false, preparesStatements: preparesStatements)
    }

    private init(base: any Database, deadline: TimeAmount?, boundsEachOperation: Bool, health: PoolHealth?, ownTransaction: Bool, preparesStatements: Bool) {
        self.base = base
        self.sql = Self.sqlView(of: base)
        self.deadline = deadline
        self.boundsEachOperation = boundsEachOperation
        self.health = health
        self.ownTransaction = ownTransaction
        self.preparesStatements = preparesStatements
    }

    /// A handle Fluent passes back as `any Database` (a model middleware's, a migration's) as ours: one of ours as it
    /// is; one of the driver's wrapped without a deadline of its own (it runs inside its caller's operation, or is
    /// a migration, which runs as long as it needs).
    package static func adopting(_ db: any Database) -> any GatehouseDatabase {
        if let ours = db as? any GatehouseDatabase { return ours }
        return DeadlineDatabase(base: db, deadline: nil, boundsEachOperation: false, preparesStatements: false)
    }

    /// Fluent's drivers hand their handles out as `any Database`; both of ours (FluentSQLiteDriver's and
    /// FluentPostgresDriver's, and their connections and transactions) are SQLKit databases too. This is the one place
    /// that relies on it, and a driver that were not would stop the server at its first handle, not at a query.
    private static func sqlView(of db: any Database) -> any SQLDatabase {
        guard let sql = db as? any SQLDatabase else {
            preconditionFailure("the database driver \(type(of: db)) is not an SQL database")
        }
        return sql
    }

    package var context: DatabaseContext { base.context }
    package var inTransaction: Bool { ownTransaction || base.inTransaction }

    package func withTransaction<T: Sendable>(onLoop: Bool, _ body: @escaping @Sendable (any GatehouseDatabase) async throws -> T) async throws -> T {
        try await transaction(typed: { tx in
            onLoop ? tx.eventLoop.makeFutureWithTaskOnLoop { try await body(tx) } : tx.eventLoop.makeFutureWithTask { try await body(tx) }
        }).get()
    }

    package func execute(query: DatabaseQuery, onOutput: @escaping @Sendable (any DatabaseOutput) -> Void) -> EventLoopFuture<Void> {
        bounded("\(query.action) \(query.schema)") { $0.execute(query: query, onOutput: onOutput) }
    }

    package func execute(schema: DatabaseSchema) -> EventLoopFuture<Void> {
        bounded("schema \(schema.schema)") { $0.execute(schema: schema) }
    }

    package func execute(enum: DatabaseEnum) -> EventLoopFuture<Void> {
        bounded("enum \(`enum`.name)") { $0.execute(enum: `enum`) }
    }

    package func transaction<T>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        transaction(typed: closure)
    }

    /// A transaction, its body handed the transaction as a `DeadlineDatabase`; inside one, the body
    /// joins it. Begun here on both engines, on a connection leased for it:
    /// - on PostgreSQL that connection is the one `bounded` leases and watches: a ROLLBACK after it
    ///   closed would be lost as well, so none is sent;
    /// - on SQLite with `BEGIN IMMEDIATE`, which takes the write lock first and so waits for it
    ///   (`busy_timeout`). Fluent's deferred `BEGIN` reads first and asks for the lock at its first
    ///   write, which fails at once with `SQLITE_BUSY_SNAPSHOT` when another connection to the file
    ///   (the `gatehouse` CLI beside a running server) wrote in between: no wait can help a
    ///   transaction whose snapshot is already stale.
    private func transaction<T>(typed closure: @escaping @Sendable (DeadlineDatabase) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        guard !inTransaction else { return closure(self) }
        let (deadline, health, preparesStatements) = (deadline, health, preparesStatements)
        let isPostgres = base is any PostgresDatabase
        let run: @Sendable (any Database) -> EventLoopFuture<T> = { db in
            // Chained by callbacks and a promise rather than by `flatMap`: `T` need not be `Sendable` (Fluent's
            // requirement does not ask it to be), and the value only ever travels on the connection's loop.
            let sql = Self.sqlView(of: db)
            let answer = OnItsLoop(db.eventLoop.makePromise(of: T.self))
            sql.raw(isPostgres ? "BEGIN" : "BEGIN IMMEDIATE").run().whenComplete { begun in
                if case .failure(let error) = begun { return answer.value.fail(error) }
                closure(DeadlineDatabase(base: db, deadline: deadline, boundsEachOperation: false, health: health,
                                         ownTransaction: true, preparesStatements: preparesStatements)).whenComplete { result in
                    switch result {
                    case .success(let value):
                        let value = OnItsLoop(value)
                        sql.raw("COMMIT").run().whenComplete { committed in
                            switch committed {
                            case .success: Self.succeed(answer, with: value)
                            case .failure(let error): answer.value.fail(error)
                            }
                        }
                    case .failure(let error):
                        if isPostgres, ConnectionWatch.connection(of: db)?.isClosed ?? true {
                            return answer.value.fail(error)
                        }
                        // The ROLLBACK's own failure would hide why the transaction failed: the body's error is the answer.
                        sql.raw("ROLLBACK").run().whenComplete { _ in answer.value.fail(error) }
                    }
                }
            }
            return answer.value.futureResult
        }
        guard isPostgres else { return deadlined("transaction", always: true, base.withConnection(run)) }
        return bounded("transaction", always: true, run)
    }

    /// Completes `promise` with `value` on the promise's loop (at once when already there).
    private static func succeed<T>(_ promise: OnItsLoop<EventLoopPromise<T>>, with value: OnItsLoop<T>) {
        let loop = promise.value.futureResult.eventLoop
        if loop.inEventLoop {
            promise.value.assumeIsolated().succeed(value.value)
        } else {
            loop.execute { promise.value.assumeIsolated().succeed(value.value) }
        }
    }

    package func withConnection<T>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        let (deadline, boundsEachOperation, health, preparesStatements) = (deadline, boundsEachOperation, health, preparesStatements)
        let body: @Sendable (any Database) -> EventLoopFuture<T> = { db in
            closure(DeadlineDatabase(base: db, deadline: deadline, boundsEachOperation: boundsEachOperation, health: health,
                                     preparesStatements: preparesStatements))
        }
        // The work on a leased connection has no deadline of its own (it may hold the connection
        // as long as it needs), but it is watched: it fails should the connection close under it.
        guard boundsEachOperation, base is any PostgresDatabase else { return base.withConnection(body) }
        return base.withConnection { db in ConnectionWatch.watch(body(db), on: db) }
    }

    // SQLDatabase
    package var logger: Logger { base.logger }
    package var eventLoop: any EventLoop { base.eventLoop }
    package var dialect: any SQLDialect { sql.dialect }
    package var version: (any SQLDatabaseReportedVersion)? { sql.version }
    package var queryLogLevel: Logger.Level? { sql.queryLogLevel }

    package func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        bounded("sql") { Self.sqlView(of: $0).execute(sql: query, onRow) }
    }

    /// On PostgreSQL, `query` as a prepared statement (`PreparedStatements`); its rows as SQL
    /// rows (`PreparedRow`). Nil on SQLite, behind a pooler in transaction mode, once every slot is taken, or for a
    /// bind without a binary form: the caller then runs it as usual.
    package func prepared(_ query: SQLQueryString) async throws -> [any SQLRow]? {
        guard preparesStatements, let postgres = base as? any PostgresDatabase else { return nil }
        var serializer = SQLSerializer(database: self)
        query.serialize(to: &serializer)
        guard let bindings = try PreparedStatements.bindings(serializer.binds), let slot = PreparedStatements.slot(for: serializer.sql) else { return nil }
        let (run, logger, text) = (PreparedStatements.runners[slot], self.logger, serializer.sql.prefix(60))
        let watched = boundsEachOperation
        return try await deadlined("prepared \(text)", postgres.withConnection { connection in
            let answer: EventLoopFuture<[any SQLRow]?> = connection.eventLoop.makeFutureWithTaskOnLoop {
                try await run(connection, bindings, logger).map { PreparedRow($0) }
            }
            return watched ? ConnectionWatch.shared.watch(answer, on: connection) : answer
        }).get()
    }

    /// `operation` under the deadline; on PostgreSQL on a connection leased for it and watched
    /// (`ConnectionWatch`). Inside a transaction it runs as it is: the transaction is bounded.
    private func bounded<T>(_ name: @escaping @autoclosure @Sendable () -> String, always: Bool = false,
                            _ operation: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        guard boundsEachOperation || always else { return operation(base) }
        guard base is any PostgresDatabase else { return deadlined(name(), always: always, operation(base)) }
        return deadlined(name(), always: always, base.withConnection { db in ConnectionWatch.watch(operation(db), on: db) })
    }

    private func deadlined<T>(_ operation: @escaping @autoclosure @Sendable () -> String, always: Bool = false,
                              _ future: EventLoopFuture<T>) -> EventLoopFuture<T> {
        guard boundsEachOperation || always, let deadline else { return future }
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

/// The PostgreSQL connections operations are running on, watched for closing. postgres-nio
/// 1.33.2 writes a query to its channel with no promise, so a query written just after the
/// channel closed is lost: its own promise is never completed (docs/decisions.md, "the hang").
/// Every operation `DeadlineDatabase` runs on a connection is registered here; when that
/// connection closes, whatever is still pending on it `grace` later is failed with
/// `DatabaseConnectionLostError`. The pool then gets the connection back and drops it, where a
/// lost query used to hold its slot until the process restarted.
///
/// One callback per connection on its close future (not one per operation, which would pile up
/// on a connection that lives for hours); the operations pending on it are kept here.
package final class ConnectionWatch: Sendable {
    package static let shared = ConnectionWatch(grace: .milliseconds(200))

    /// How long after its connection closed an operation may still complete on its own: the
    /// queries postgres-nio knew of are failed as the channel goes inactive, before its close
    /// future completes; their errors travel through a few futures, on the same loop.
    package let grace: TimeAmount
    private let state = NIOLockedValueBox(State())

    private struct State {
        var next: UInt64 = 0
        /// Per connection with its close callback registered (until it closes), what is pending on it.
        var pending: [ObjectIdentifier: [UInt64: @Sendable () -> Void]] = [:]
    }

    package init(grace: TimeAmount) {
        self.grace = grace
    }

    /// `future`, failed with `DatabaseConnectionLostError` should the connection `db` is bound to
    /// close before it completes. `future` itself when `db` is not a PostgreSQL connection.
    package static func watch<T>(_ future: EventLoopFuture<T>, on db: any Database) -> EventLoopFuture<T> {
        guard let connection = connection(of: db) else { return future }
        return shared.watch(future, on: connection)
    }

    package func watch<T>(_ future: EventLoopFuture<T>, on connection: PostgresConnection) -> EventLoopFuture<T> {
        let promise = future.eventLoop.makePromise(of: T.self)
        let key = ObjectIdentifier(connection)
        let (id, first) = state.withLockedValue { state -> (UInt64, Bool) in
            state.next += 1
            let first = state.pending[key] == nil
            state.pending[key, default: [:]][state.next] = { promise.fail(DatabaseConnectionLostError()) }
            return (state.next, first)
        }
        if first {
            // Also when the connection is closed already: the callback then runs at once.
            let (grace, loop) = (grace, connection.eventLoop)
            connection.closeFuture.whenComplete { [self] _ in
                let lost = state.withLockedValue { $0.pending.removeValue(forKey: key) } ?? [:]
                guard !lost.isEmpty else { return }
                loop.scheduleTask(in: grace) { lost.values.forEach { $0() } }
            }
        }
        let answer = OnItsLoop(promise)
        future.whenComplete { [state] result in
            // The connection's entry stays, empty, until it closes: its one callback is registered.
            state.withLockedValue { state in _ = state.pending[key]?.removeValue(forKey: id) }
            // After the connection was lost the promise has failed already, and a late result is dropped.
            answer.value.assumeIsolated().completeWith(result)
        }
        return promise.futureResult
    }

    /// How many operations are pending, and on how many open connections (tests).
    package var watching: (operations: Int, connections: Int) {
        state.withLockedValue { ($0.pending.values.reduce(0) { $0 + $1.count }, $0.pending.count) }
    }

    /// The PostgreSQL connection `db` is bound to: only for a `db` handed to a `withConnection`
    /// or `transaction` closure (asked of the pool itself, it would lease one of its own).
    package static func connection(of db: any Database) -> PostgresConnection? {
        guard let postgres = db as? any PostgresDatabase else { return nil }
        final class Found: @unchecked Sendable { var connection: PostgresConnection? }
        let found = Found()
        _ = postgres.withConnection { connection in
            found.connection = connection
            return connection.eventLoop.makeSucceededVoidFuture()
        }
        return found.connection
    }
}

package struct DatabaseConnectionLostError: Error, CustomStringConvertible {
    package var description: String { "the database connection closed before the operation was answered" }
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
