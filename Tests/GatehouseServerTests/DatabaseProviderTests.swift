import FluentKit
import Foundation
import Logging
import Testing
@testable import GatehouseServer

@Suite("Database provider")
struct DatabaseProviderTests {
    @Test("a query after shutdown fails with an error instead of crashing the process", arguments: TestEngine.available)
    func queryAfterShutdown_fails(engine: TestEngine) async throws {
        // setup
        let database = try await TestDatabase.make(engine)
        let provider = try DatabaseProvider(location: database.location, poolSize: 1, threadPool: .singleton, logger: Logger(label: "test"))
        try await provider.migrate()
        #expect(try await AccountModel.query(on: provider.db).count() == 0)
        await provider.shutdown()
        // MUT
        let outcome = await Result(catching: { try await AccountModel.query(on: provider.db).count() })
        let raw = await Result(catching: { try await provider.run(statement: "SELECT 1") })
        // validate
        #expect(throws: DatabaseClosedError.self) { try outcome.get() }
        #expect(throws: DatabaseClosedError.self) { try raw.get() }
        await database.cleanup()
    }

    @Test("shutdown waits for work begun outside structured tasks, up to its bound")
    func inFlightWork_waitsUntilIdleWithinBound() async throws {
        // setup
        let work = InFlightWork()
        work.begin()
        let finished = ManagedAtomicFlag()
        Task {
            try? await Task.sleep(for: .milliseconds(200))
            finished.set()
            work.end()
        }
        // MUT
        await work.waitUntilIdle(within: .seconds(30))
        // validate
        #expect(finished.isSet)
        #expect(work.current == 0)
        // A task that never ends holds shutdown no longer than the bound.
        work.begin()
        await work.waitUntilIdle(within: .milliseconds(100))
        #expect(work.current == 1)
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
