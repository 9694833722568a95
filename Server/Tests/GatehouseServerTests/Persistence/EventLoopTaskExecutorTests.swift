import FluentKit
import Foundation
import GatehouseFoundation
import GatehouseServer
import GatehouseTestSupport
import Logging
import SQLKit
import Testing

@Suite("Database work on its connection's event loop")
struct EventLoopTaskExecutorTests {
    @Test("a transaction's body and a group-commit writer run on their connection's event loop and come back to it after every statement; FluentKit's own transaction body does not", .tags(.engine), arguments: TestEngine.all)
    func databaseWorkStaysOnItsLoop(engine: TestEngine) async throws {
        // setup
        try await withMigratedProvider(engine, poolSize: 2) { provider in
            @Sendable func statement(on db: any GatehouseDatabase) async throws -> Int {
                try await db.preparedRows("SELECT 1 AS one").first!.decode(column: "one", as: Int.self)
            }
            let commits = GroupCommit<Int, [Bool]>(maxBatch: 4, concurrency: 2, database: provider, write: { requests in
                // Given the database as the wallet's and the messenger's batchers are; the writer asks for it as a service does
                // and must be given its own loop's connection.
                let db = provider.db
                var seen = [db.eventLoop.inEventLoop]
                for _ in 0..<3 {
                    let one = try await statement(on: db)
                    #expect(one == 1)
                    seen.append(db.eventLoop.inEventLoop)
                }
                return requests.map { _ in .done(.success(seen)) }
            }, single: { _ in [] })

            // MUT: a transaction's body, statement after statement; writers of requests sent at once; FluentKit's transaction
            let inTransaction = try await provider.db.withTransaction(onLoop: true) { tx -> [Bool] in
                var seen = [tx.eventLoop.inEventLoop]
                for _ in 0..<3 {
                    let one = try await statement(on: tx)
                    #expect(one == 1)
                    seen.append(tx.eventLoop.inEventLoop)
                }
                return seen
            }
            let byWriters = try await withThrowingTaskGroup(of: [Bool].self) { group in
                for n in 1...12 { group.addTask { try await commits.submit(n) } }
                return try await group.reduce(into: [[Bool]]()) { $0.append($1) }
            }
            let fluents = try await provider.db.withTransaction { tx in tx.eventLoop.inEventLoop }

            // validate
            #expect(inTransaction == [true, true, true, true])
            #expect(byWriters.count == 12)
            #expect(byWriters.allSatisfy { $0 == [true, true, true, true] }, "\(byWriters)")
            #expect(!fluents, "FluentKit runs a transaction's body in a plain Task, on the global pool: the reason for withTransaction(onLoop:)")
        }
    }

    @Test("a group-commit writer asked for on one of the database's event loops starts on that loop, where the request that starts it is answered; SQLite's writer is on its one loop", .tags(.engine), arguments: TestEngine.all)
    func writerStartsOnTheAskingLoop(engine: TestEngine) async throws {
        try await withMigratedProvider(engine, poolSize: 1) { provider in
            for _ in 0..<4 {
                // setup: one of the database's loops (given in turn when asked from Swift's pool, as here)
                let loop = try #require(provider.writerExecutor() as? EventLoopTaskExecutor).loop

                // MUT: a writer asked for from a task on that loop
                let (onLoop, asked) = try await withTaskExecutorPreference(EventLoopTaskExecutor(loop)) {
                    (loop.inEventLoop, try #require(provider.writerExecutor() as? EventLoopTaskExecutor).loop)
                }

                // validate: the same loop (in turn, as before, it would have been the other one)
                #expect(onLoop)
                #expect(asked === loop)
            }
        }
    }
}
