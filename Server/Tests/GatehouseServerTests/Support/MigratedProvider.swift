import GatehouseFoundation
import GatehouseServer
import GatehouseTestSupport
import Logging

/// A migrated `DatabaseProvider` of these settings on a fresh database of `engine` for `body`;
/// afterwards, whatever `body` threw, the provider is shut down and the database removed.
func withMigratedProvider(_ engine: TestEngine, poolSize: Int = 1, poolTimeout: Double = 3, queryTimeout: Double = 15,
                          planCacheMode: GatehouseConfiguration.PlanCacheMode = .auto,
                          _ body: (DatabaseProvider) async throws -> Void) async throws {
    let database = try await TestDatabase.migrated(engine)
    let provider = try DatabaseProvider(location: database.location, poolSize: poolSize, poolTimeout: poolTimeout, queryTimeout: queryTimeout,
                                        planCacheMode: planCacheMode, threadPool: .singleton, logger: Logger(label: "test"))
    let outcome = await Result(catching: {
        try await migrate(provider)
        try await body(provider)
    })
    await provider.shutdown()
    await database.cleanup()
    try outcome.get()
}

/// The provider's migrations (on a database made from the migrated template they only check it),
/// tried again for up to 20 s: a test's short pool wait (1 s in some) is for the test's own
/// operations, and its first connection, opened while the whole suite runs on two cores, has been
/// seen to take longer than that. The last error is thrown if no try succeeds.
private func migrate(_ provider: DatabaseProvider) async throws {
    let started = ContinuousClock.now
    while true {
        do { return try await provider.migrate(GatehouseMigrations.all) } catch {
            if ContinuousClock.now - started > .seconds(20) { throw error }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}

extension Result where Failure == any Error {
    /// `body`'s value or error, so that clean-up can run before it is thrown.
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
