import FluentKit
import Foundation
import GatehouseAccounts
import GatehouseFoundation
import GatehousePlatform
import GatehouseServer
import GatehouseTestSupport
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresKit
import SQLKit
import Testing

@Suite("Database provider")
struct DatabaseProviderTests {
    @Test("a query after shutdown fails with an error instead of crashing the process", .tags(.engine), arguments: TestEngine.all)
    func queryAfterShutdown_fails(engine: TestEngine) async throws {
        // setup
        let database = try await TestDatabase.make(engine)
        let provider = try DatabaseProvider(location: database.location, poolSize: 1, threadPool: .singleton, logger: Logger(label: "test"))
        try await provider.migrate(GatehouseMigrations.all)
        #expect(try await AccountModel.query(on: provider.db).count() == 0)
        await provider.shutdown()
        // MUT
        let outcome = await Result(catching: { try await AccountModel.query(on: provider.db).count() })
        let raw = await Result(catching: { try await provider.run(statement: "SELECT 1") })
        // validate
        #expect(throws: DatabaseClosedError.self) { try outcome.get() }
        #expect(throws: DatabaseClosedError.self) { try raw.get() }
        // What a request meeting it answers: 503 service_unavailable, not 500.
        if case .failure(let error) = outcome { #expect(DatabaseOutage.matches(error)) }
        await database.cleanup()
    }

    @Test("an operation past its deadline fails with DatabaseTimeoutError, and the pool keeps serving", .tags(.engine))
    func queryPastDeadline_fails() async throws {
        // PostgreSQL only: it has a statement that takes as long as asked (SQLite has no sleep).
        guard TestEngine.all.contains(.postgres) else { return }
        try await withMigratedProvider(.postgres, poolSize: 1, queryTimeout: 0.3) { provider in
            // MUT
            let slow = await Result(catching: { try await provider.run(statement: "SELECT pg_sleep(2)") })
            let slowTransaction = await Result(catching: {
                try await provider.db.withTransaction { tx in try await tx.raw("SELECT pg_sleep(2)").run() }
            })
            // validate
            #expect(throws: DatabaseTimeoutError.self) { try slow.get() }
            #expect(throws: DatabaseTimeoutError.self) { try slowTransaction.get() }
            if case .failure(let error) = slow { #expect(DatabaseOutage.matches(error)) }
            // The slow statements finish on the server and give their connections back: the same pool
            // answers again (each try below is itself bounded by the 0.3 s deadline; at most 60 tries).
            var answered: Int?
            for _ in 0..<60 where answered == nil {
                answered = try? await AccountModel.query(on: provider.db).count()
            }
            #expect(answered == 0)
        }
    }

    @Test("connections that never come back (a query stuck past its deadline) do not starve the pool: it is replaced", .tags(.engine))
    func strandedConnections_replaceThePool() async throws {
        guard TestEngine.all.contains(.postgres) else { return }
        // setup: one connection per event loop, every one of them taken by a statement that
        // outlives its deadline by far (as postgres-nio's lost answers do when PostgreSQL dies)
        try await withMigratedProvider(.postgres, poolSize: 1, poolTimeout: 1, queryTimeout: 0.5) { provider in
            let loops = System.coreCount
            let stuck = Task {
                await withTaskGroup(of: Void.self) { group in
                    for _ in 0..<(loops * 2) {
                        group.addTask { _ = try? await provider.db.withTransaction { tx in try await tx.raw("SELECT pg_sleep(30)").run() } }
                    }
                }
            }
            try await Task.sleep(for: .seconds(1.5))
            // MUT: long before the stuck statements end (30 s), a query gets a connection
            let started = ContinuousClock.now
            var answered: Int?
            while answered == nil, ContinuousClock.now - started < .seconds(10) {
                answered = try? await AccountModel.query(on: provider.db).count()
            }
            // validate
            #expect(answered == 0, "the pool still starved \(ContinuousClock.now - started) after the deadline")
            #expect(ContinuousClock.now - started < .seconds(10))
            stuck.cancel()
        }
    }

    @Test("an operation whose connection closes under it unanswered fails at once, and its pool slot comes back", .tags(.engine))
    func connectionClosedUnderAnOperation_failsAndFreesTheSlot() async throws {
        guard TestEngine.all.contains(.postgres) else { return }
        // setup: one connection per event loop, a deadline far beyond the test, a short pool wait.
        // Each operation stands in for the query postgres-nio loses on a connection that has just
        // closed: it closes its connection and never answers.
        let unanswered = NIOLockedValueBox<[EventLoopPromise<Int>]>([])
        defer { unanswered.withLockedValue { $0.forEach { $0.succeed(0) } } }   // debug builds trap on a promise never completed
        @Sendable func closeAndNeverAnswer(_ db: any Database) -> EventLoopFuture<Int> {
            let connection = ConnectionWatch.connection(of: (db as! DeadlineDatabase).base)!
            let never = db.eventLoop.makePromise(of: Int.self)
            unanswered.withLockedValue { $0.append(never) }
            return connection.close().flatMap { never.futureResult }
        }
        try await withMigratedProvider(.postgres, poolSize: 1, poolTimeout: 1, queryTimeout: 60) { (provider: DatabaseProvider) async throws in
            // MUT: more such operations than the pool has connections, one after another, on a
            // leased connection and in a transaction (which every query's path shares)
            var outcomes: [Result<Int, any Error>] = []
            for n in 0..<(System.coreCount * 2 + 2) {
                outcomes.append(await Result(catching: {
                    n.isMultiple(of: 2) ? try await provider.db.withConnection(closeAndNeverAnswer).get()
                                        : try await provider.db.transaction(closeAndNeverAnswer).get()
                }))
            }
            // validate: each failed as lost (not by the 60 s deadline, and no lease waited for a
            // slot: the pool took every closed connection back), and the pool still answers
            for result in outcomes {
                #expect(throws: DatabaseConnectionLostError.self) { try result.get() }
            }
            #expect(try await AccountModel.query(on: provider.db).count() == 0)
        }
    }

    @Test("a transaction whose connection is terminated by the server fails, and the pool serves again", .tags(.engine))
    func transactionWhoseBackendIsTerminated_fails() async throws {
        guard TestEngine.all.contains(.postgres) else { return }
        // setup: a second connection per loop, for the statement that terminates the first
        try await withMigratedProvider(.postgres, poolSize: 2, poolTimeout: 5, queryTimeout: 60) { provider in
            let sleeping = Task {
                try await provider.db.withTransaction { tx in
                    try await tx.raw("SELECT pg_sleep(60) AS slept").run()
                }
            }
            var terminated = false
            for _ in 0..<100 where !terminated {
                try await Task.sleep(for: .milliseconds(50))
                let rows = try await provider.sql.raw("""
                    SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity
                    WHERE query LIKE '%pg_sleep(60) AS slept%' AND datname = current_database() AND pid <> pg_backend_pid()
                    """).all()
                terminated = !rows.isEmpty
            }
            // MUT
            let result = await sleeping.result
            // validate: the transaction failed (not by its deadline), and a query gets a connection
            #expect(terminated)
            #expect(throws: (any Error).self) { try result.get() }
            if case .failure(let error) = result {
                #expect(!(error is DatabaseTimeoutError))
                // PostgreSQL's own words for it (57P01, or the connection closed): the database away, a 503 to a request.
                #expect(DatabaseOutage.matches(error), "\(String(reflecting: error))")
            }
            #expect(try await AccountModel.query(on: provider.db).count() == 0)
        }
    }

    @Test("what says the database is away: PostgreSQL's connection and shutdown states and a read-only standby, not a refusal of the request's")
    func databaseOutage_sqlStates() {
        for away in ["08000", "08006", "08P01", "57P01", "57P02", "57P03", "25006", "53300"] { #expect(DatabaseOutage.isOutage(sqlState: away), "\(away)") }
        for refusal in ["23505", "40001", "40P01", "42P01", "22001", ""] { #expect(!DatabaseOutage.isOutage(sqlState: refusal), "\(refusal)") }
        #expect(DatabaseOutage.matches(GatehouseError.serviceUnavailable))
        #expect(!DatabaseOutage.matches(GatehouseError.invalidCredentials))
        #expect(!DatabaseOutage.matches(CancellationError()))
    }

    @Test("the watch passes answers through and forgets an operation once it is answered", .tags(.engine))
    func connectionWatch_passesAnswersThrough() async throws {
        guard TestEngine.all.contains(.postgres) else { return }
        // setup: a connection of its own and a watch of its own
        try await withMigratedProvider(.postgres, poolSize: 4) { provider in
        let connection = try await PostgresConnection.connect(configuration: provider.postgres!.configuration, id: 1,
                                                               logger: Logger(label: "test"))
        let watch = ConnectionWatch(grace: .milliseconds(10))
        struct Refused: Error {}
        // MUT
        for n in 0..<100 {   // one after another: the connection keeps its one entry (and one close callback)
            _ = try await watch.watch(connection.eventLoop.makeSucceededFuture(n), on: connection).get()
        }
        let answered = watch.watch(connection.eventLoop.makeSucceededFuture(7), on: connection)
        let failed = watch.watch(connection.eventLoop.makeFailedFuture(Refused()) as EventLoopFuture<Int>, on: connection)
        let pending = connection.eventLoop.makePromise(of: Int.self)
        let lost = watch.watch(pending.futureResult, on: connection)
        let answer = try await answered.get()
        let refusal = await Result(catching: { try await failed.get() })
        let watchingBeforeClose = watch.watching   // the two answered ones are forgotten before they are passed on
        try await connection.close()
        let lostOutcome = await Result(catching: { try await lost.get() })
        pending.succeed(8)   // late: dropped
        // validate
        #expect(answer == 7)
        #expect(throws: Refused.self) { try refusal.get() }
        #expect(watchingBeforeClose == (operations: 1, connections: 1))
        #expect(throws: DatabaseConnectionLostError.self) { try lostOutcome.get() }
        #expect(watch.watching == (operations: 0, connections: 0))
        }
    }

    @Test("on SQLite a transaction takes the write lock first: another connection's write to the file (the CLI beside a running server) waits for it, where it used to leave the transaction a stale snapshot and fail it")
    func sqliteTransaction_waitsForTheOtherConnection() async throws {
        // setup: two providers on one file, as a server and the `gatehouse` CLI are
        let database = try await TestDatabase.make(.sqlite)
        let server = try DatabaseProvider(location: database.location, poolSize: 1, threadPool: .singleton, logger: Logger(label: "server"))
        let cli = try DatabaseProvider(location: database.location, poolSize: 1, threadPool: .singleton, logger: Logger(label: "cli"))
        let outcome = await Result(catching: {
            try await server.prepareEngine()
            try await cli.prepareEngine()
            try await server.run(statement: "CREATE TABLE probe (n INTEGER NOT NULL)")
            // MUT: the transaction reads, the other connection writes meanwhile, the transaction writes what it read
            let other = try await server.db.withTransaction { tx -> Task<Void, any Error> in
                let before = try await tx.raw("SELECT COUNT(*) AS n FROM probe").first()?.decode(column: "n", as: Int.self) ?? -1
                let other = Task { try await cli.run(statement: "INSERT INTO probe (n) VALUES (2)") }
                try await Task.sleep(for: .milliseconds(300))
                try await tx.raw("INSERT INTO probe (n) VALUES (\(literal: before + 1))").run()
                return other
            }
            try await other.value
            // validate: both written, the other connection's after the transaction's commit
            let rows = try await server.sql.raw("SELECT n FROM probe ORDER BY rowid").all().map { try $0.decode(column: "n", as: Int.self) }
            #expect(rows == [1, 2])
        })
        await server.shutdown()
        await cli.shutdown()
        await database.cleanup()
        try outcome.get()
    }

    @Test("shutdown waits for work begun outside structured tasks, up to its bound")
    func inFlightWork_waitsUntilIdleWithinBound() async throws {
        // setup
        let work = InFlightWork()
        work.begin()
        let finished = NIOLockedValueBox(false)
        Task {
            try? await Task.sleep(for: .milliseconds(200))
            finished.withLockedValue { $0 = true }
            work.end()
        }
        // MUT
        await work.waitUntilIdle(within: .seconds(30))
        // validate
        #expect(finished.withLockedValue { $0 })
        #expect(work.current == 0)
        // A task that never ends holds shutdown no longer than the bound.
        work.begin()
        await work.waitUntilIdle(within: .milliseconds(100))
        #expect(work.current == 1)
    }

    @Test("every PostgreSQL connection plans as configured: PostgreSQL's own choice by default, generic plans when asked", .tags(.engine))
    func planCacheMode_reachesEveryConnection() async throws {
        guard TestEngine.all.contains(.postgres) else { return }
        for mode in [GatehouseConfiguration.PlanCacheMode.auto, .forceGenericPlan] {
            try await withMigratedProvider(.postgres, poolSize: 2, planCacheMode: mode) { provider in
                // MUT: the setting as several connections at once see it (each holds its own until all have answered)
                let seen = try await withThrowingTaskGroup(of: (pid: Int, mode: String).self) { group in
                    for _ in 0..<4 {
                        group.addTask {
                            let row = try await provider.sql.raw("""
                                SELECT pg_backend_pid() AS pid, current_setting('plan_cache_mode') AS mode, pg_sleep(0.2)::text AS slept
                                """).first()
                            return (try row?.decode(column: "pid", as: Int.self) ?? 0, try row?.decode(column: "mode", as: String.self) ?? "")
                        }
                    }
                    return try await group.reduce(into: [(pid: Int, mode: String)]()) { $0.append($1) }
                }
                // validate: as asked; `auto` is not sent at all, so a database's own setting
                // (`ALTER DATABASE … SET plan_cache_mode`) stays in force
                #expect(Set(seen.map(\.pid)).count > 1, "one connection answered all")
                #expect(seen.allSatisfy { $0.mode == mode.rawValue }, "\(seen)")
                let sent = try #require(provider.postgres).configuration.options.additionalStartupParameters.filter { $0.0 == "plan_cache_mode" }.map(\.1)
                #expect(sent == (mode == .auto ? [] : [mode.rawValue]))
            }
        }
    }
}
