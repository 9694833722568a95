import FluentKit
import FluentPostgresDriver
import FluentSQLiteDriver
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import PostgresKit
import ServiceLifecycle
import SQLKit

/// Owns the Fluent `Databases` for one engine and hands out `Database` handles.
///
/// SQLite runs on a single event loop, so there is exactly one connection: writers are
/// serialised in process (no SQLITE_BUSY) and WAL lets `gatehouse outbox` read meanwhile.
/// PostgreSQL gets a pool on every loop.
package final class DatabaseProvider: Service, @unchecked Sendable {
    package let databases: Databases
    package let logger: Logger
    package let isPostgres: Bool
    /// The PostgreSQL connection settings (for the event bus's own listening connection) and schema.
    package let postgres: (configuration: PostgresConnection.Configuration, schema: String?)?
    /// False behind a pooler in transaction mode (`DeadlineDatabase.preparesStatements`).
    package let preparesStatements: Bool
    /// The streaming replicas that serve reads which tolerate a little lag (`reading(for:_:)`).
    package let replicas: ReadReplicas?
    private let eventLoopGroup: any EventLoopGroup
    private let readyFlag = NIOLockedValueBox(false)
    /// Answers in place of the database once it is shut down.
    private var closed: ClosedDatabase!
    private let stopping = NIOLockedValueBox(false)
    /// When the PostgreSQL pool was last replaced (`replaceStarvedPool`).
    private let lastPoolReplacement = NIOLockedValueBox<NIODeadline?>(nil)
    private var health: PoolHealth?

    /// Longest any one operation may take (`DeadlineDatabase`).
    package let queryDeadline: TimeAmount

    package init(location: GatehouseConfiguration.DatabaseLocation, poolSize: Int = 4, poolTimeout: Double = 3,
         queryTimeout: Double = 15, planCacheMode: GatehouseConfiguration.PlanCacheMode = .auto, pooled: Bool = false,
         replicas: [GatehouseConfiguration.DatabaseLocation] = [], replicaSettings: ReadReplicas.Settings? = nil,
         threadPool: NIOThreadPool, logger: Logger) throws {
        self.logger = logger
        self.preparesStatements = !pooled
        if let replicaSettings, !replicas.isEmpty {
            let members = try replicas.map { replica in
                try DatabaseProvider(location: replica, poolSize: poolSize, poolTimeout: poolTimeout, queryTimeout: queryTimeout,
                                     planCacheMode: planCacheMode, pooled: pooled, threadPool: threadPool, logger: logger)
            }
            self.replicas = ReadReplicas(members: members, settings: replicaSettings, logger: logger)
        } else {
            self.replicas = nil
        }
        self.queryDeadline = .milliseconds(Int64(queryTimeout * 1000))
        switch location {
        case .sqlite(let path):
            // One loop for SQLite's one connection, shared by every provider of the process and
            // never shut down: a query still running on the thread pool when its provider shuts
            // down (a request that came in as the server stopped) completes on a live loop, where
            // an owned loop shut down under it left a promise unfulfilled (a crash in debug builds).
            let group = Self.sqliteEventLoop
            self.eventLoopGroup = group
            self.isPostgres = false
            self.postgres = nil
            self.databases = Databases(threadPool: threadPool, on: group)
            databases.use(.sqlite(.file(path), sqlLogLevel: .trace), as: .sqlite)
        case .postgres(let url, let searchPath):
            self.eventLoopGroup = MultiThreadedEventLoopGroup.singleton
            self.isPostgres = true
            var configuration = try PostgresAddress.configuration(url)
            if let searchPath { configuration.searchPath = [searchPath] }
            // A run-time setting in the start-up message (no round trip of its own); `auto` leaves
            // the database's own setting alone.
            if planCacheMode != .auto {
                configuration.coreConfiguration.options.additionalStartupParameters.append(("plan_cache_mode", planCacheMode.rawValue))
            }
            self.postgres = (configuration.coreConfiguration, searchPath)
            self.databases = Databases(threadPool: threadPool, on: MultiThreadedEventLoopGroup.singleton)
            databases.use(
                .postgres(configuration: configuration, maxConnectionsPerEventLoop: poolSize,
                          connectionPoolTimeout: .milliseconds(Int64(poolTimeout * 1000)), sqlLogLevel: .trace),
                as: .psql
            )
        }
        let live = databases.database(logger: logger, on: eventLoopGroup.any())!
        if isPostgres {
            health = PoolHealth { [weak self] in self?.replaceStarvedPool() }
        }
        closed = ClosedDatabase(configuration: live.context.configuration, dialect: DeadlineDatabase.adopting(live).dialect, logger: logger)
    }

    /// The settings of a connection of its own to `location` when it is PostgreSQL (the database
    /// itself, `GatehouseConfiguration.databaseDirect`); nil for none or SQLite.
    package static func connection(to location: GatehouseConfiguration.DatabaseLocation?) throws -> PostgresConnection.Configuration? {
        guard case .postgres(let url, _) = location else { return nil }
        return try PostgresAddress.configuration(url).coreConfiguration
    }

    /// A database handle. Cheap: it borrows a pooled connection per query. After shutdown every
    /// query through it fails (`DatabaseClosedError`).
    ///
    /// One handle per event loop, made once and handed out again: making one (Fluent's lock, its
    /// logger's metadata, the driver's `some SQLDatabase` resolved at run time) was 3% of a send's
    /// server time, for a value that names the same loop's pool every time. Made again after the pool is
    /// replaced (`replaceStarvedPool`) or shut down (`forgetHandles`).
    package var db: any GatehouseDatabase {
        let loop = eventLoopGroup.any()
        let key = ObjectIdentifier(loop)
        let (known, generation) = handles.withLockedValue { ($0.byLoop[key], $0.generation) }
        if let known { return known }
        guard let live = databases.database(logger: logger, on: loop) else { return closed }
        let handle = DeadlineDatabase(base: live, deadline: queryDeadline, health: health, preparesStatements: preparesStatements)
        handles.withLockedValue { state in
            // A handle made while the pool was being replaced or shut down is used once, not kept.
            if state.generation == generation { state.byLoop[key] = handle }
        }
        return handle
    }

    /// The handles `db` made, by event loop.
    private let handles = NIOLockedValueBox<(byLoop: [ObjectIdentifier: DeadlineDatabase], generation: UInt64)>(([:], 0))

    /// Drops the handles: the pool they name is being replaced or shut down.
    private func forgetHandles() {
        handles.withLockedValue { state in
            state.byLoop.removeAll()
            state.generation &+= 1
        }
    }

    package var sql: any SQLDatabase { db }

    /// `body` on a read replica when one may serve `account`'s read (`ReadReplicas`), else on the
    /// primary: for reads that tolerate a little lag (lists, searches, history pages), never
    /// inside a transaction, never for what decides a write.
    package func reading<T>(for account: UUID?, _ body: (any GatehouseDatabase) async throws -> T) async throws -> T {
        guard let replicas else { return try await body(db) }
        return try await replicas.reading(for: account, primary: db, body)
    }

    /// `account` asked for a change: its own reads see it (the primary's, for a while).
    package func readsOwnWrites(_ account: UUID) {
        replicas?.pin(account)
    }

    /// Where a group-commit writer runs (`EventLoopTaskExecutor`): the event loop it is asked from
    /// when that is one of the database's (tasks on the event loops, `gatehouse serve`: the request
    /// that starts a writer is answered on the thread its batch is written on), else one of them in
    /// turn. `db` asked from there borrows a connection of that loop's pool, so the writer's
    /// statements are sent and answered on its own thread.
    package func writerExecutor() -> any TaskExecutor {
        EventLoopTaskExecutor(eventLoopGroup.any())
    }

    /// Whether the database answers (`SELECT 1`): readiness for a load balancer.
    package func ping() async throws {
        try await sql.raw("SELECT 1").run()
    }

    /// Whether the database was ever migrated (Fluent's migrations table is there): what a command that must not make
    /// a database checks before it migrates or reads.
    package func isMigrated() async throws -> Bool {
        let query: SQLQueryString = isPostgres
            ? "SELECT count(*) AS found FROM (SELECT to_regclass('_fluent_migrations') AS t) r WHERE t IS NOT NULL"
            : "SELECT count(*) AS found FROM sqlite_master WHERE type = 'table' AND name = '_fluent_migrations'"
        let row = try await sql.raw(query).first()
        return try (row?.decode(column: "found", as: Int.self) ?? 0) > 0
    }

    /// One statement as written (schema set-up in tests and tools).
    package func run(statement: String) async throws {
        try await sql.raw(SQLQueryString(statement)).run()
    }

    /// Prepares the engine (SQLite: WAL, busy timeout) and runs the pending ones of `all`.
    package func migrate(_ all: [any AsyncMigration]) async throws {
        try await prepareEngine()
        let migrations = Migrations()
        migrations.add(all)
        // One line for the batch, not two per migration (52 lines at a first start hid everything else).
        let migrator = Migrator(databases: databases, migrations: migrations, logger: logger, on: eventLoopGroup.any(), migrationLogLevel: .debug)
        try await migrator.setupIfNeeded().get()
        let pending = try await migrator.previewPrepareBatch().get()
        try await migrator.prepareBatch().get()
        if !pending.isEmpty {
            logger.info("migrations: \(pending.count) applied, \(pending.last.map { $0.0.name } ?? "") the newest")
        }
        readyFlag.withLockedValue { $0 = true }
    }

    /// Background services wait for this so they never query a schema that is not there yet.
    /// Returns early when `stopping` is set: a server whose migrations failed shuts down without
    /// ever being ready, and a service still waiting here would hold that shutdown forever.
    package func waitUntilReady(unless stopping: NIOLockedValueBox<Bool>? = nil) async {
        while !readyFlag.withLockedValue({ $0 }) && !(stopping?.withLockedValue({ $0 }) ?? false) && !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    package func prepareEngine() async throws {
        if !isPostgres {
            try await sql.raw("PRAGMA journal_mode=WAL").run()
            try await sql.raw("PRAGMA busy_timeout=5000").run()
            try await sql.raw("PRAGMA synchronous=NORMAL").run()
        }
    }

    /// For servers started without migrations (`GATEHOUSE_AUTO_MIGRATE=false`).
    package func markReady() { readyFlag.withLockedValue { $0 = true } }

    package func run() async throws {
        if let replicas {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await replicas.watch(primary: self) }
                try? await gracefulShutdown()
                group.cancelAll()
            }
        } else {
            try? await gracefulShutdown()
        }
        await shutdown()
    }

    /// The loop every SQLite provider runs its connection on.
    package static let sqliteEventLoop = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    package func shutdown() async {
        stopping.withLockedValue { $0 = true }
        forgetHandles()
        await databases.shutdownAsync()
        forgetHandles()
        for replica in replicas?.members ?? [] { await replica.shutdown() }
    }

    /// Connections that never come back have taken the whole pool: postgres-nio can leave a query
    /// unanswered for ever when PostgreSQL dies under it (docs/decisions.md, "the hang"). The
    /// ledger checker restarted PostgreSQL under 64 concurrent transactions and saw six such
    /// leases take every connection: each later request waited for one and timed out, for good.
    /// So the pool is replaced: new requests get a fresh one, and the old pool closes each stranded
    /// connection should it ever come back. At most once per query deadline, off the event loop
    /// (shutting a pool down waits for its idle connections to close).
    private func replaceStarvedPool() {
        guard isPostgres, !stopping.withLockedValue({ $0 }) else { return }
        let now = NIODeadline.now()
        let due = lastPoolReplacement.withLockedValue { last -> Bool in
            if let last, now - last < queryDeadline { return false }
            last = now
            return true
        }
        guard due else { return }
        let (databases, logger, stopping, health) = (databases, logger, stopping, health)
        Thread.detachNewThread { [self] in
            guard !stopping.withLockedValue({ $0 }) else { return }
            // Before, so that no kept handle names the old pool while it is replaced; after, for
            // one made meanwhile (as `shutdown` does).
            forgetHandles()
            databases.reinitialize(.psql)
            forgetHandles()
            health?.reset()
            logger.warning("database: replaced the PostgreSQL connection pool: stranded connections had taken all of it")
        }
    }
}

extension Error {
    /// A unique or foreign-key constraint refused the write (both engines).
    package var isConstraintViolation: Bool {
        if let error = self as? any DatabaseError { return error.isConstraintFailure }
        return false
    }
}
