import Foundation
import GatehouseAPI
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import PostgresKit
import Testing
@testable import GatehouseServer

/// The database engines a suite runs on: SQLite always, PostgreSQL when `POSTGRES_URL` is set
/// (CI sets it). `GATEHOUSE_TEST_ENGINES=sqlite` narrows a local run.
enum TestEngine: String, CustomTestStringConvertible, Sendable, CaseIterable {
    case sqlite, postgres

    static var available: [TestEngine] {
        let env = ProcessInfo.processInfo.environment
        var engines: [TestEngine] = [.sqlite]
        if let url = env["POSTGRES_URL"], !url.isEmpty { engines.append(.postgres) }
        if let only = env["GATEHOUSE_TEST_ENGINES"] {
            let wanted = Set(only.split(separator: ",").map(String.init))
            engines = engines.filter { wanted.contains($0.rawValue) }
        }
        return engines
    }

    var testDescription: String { rawValue }
}

/// A clock the test moves by hand.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = start }

    var now: Date { lock.withLock { current } }
    func advance(by seconds: TimeInterval) { lock.withLock { current.addTimeInterval(seconds) } }
    var gatehouseClock: GatehouseClock { GatehouseClock { [self] in self.now } }
}

/// A fresh database for one test: a temporary SQLite file, or a new PostgreSQL schema.
struct TestDatabase {
    let location: GatehouseConfiguration.DatabaseLocation
    let cleanup: @Sendable () async -> Void

    static func make(_ engine: TestEngine) async throws -> TestDatabase {
        switch engine {
        case .sqlite:
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-test-\(UUID().uuidString).sqlite").path
            return TestDatabase(location: .sqlite(path: path)) {
                for suffix in ["", "-wal", "-shm", ".blobs"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            }
        case .postgres:
            let url = ProcessInfo.processInfo.environment["POSTGRES_URL"]!
            let schema = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
            try await TestDatabase.postgresAdmin(url: url, "CREATE SCHEMA \(schema)")
            return TestDatabase(location: .postgres(url: url, searchPath: schema)) {
                try? await TestDatabase.postgresAdmin(url: url, "DROP SCHEMA \(schema) CASCADE")
            }
        }
    }

    static func postgresAdmin(url: String, _ sql: String) async throws {
        let provider = try DatabaseProvider(location: .postgres(url: url), poolSize: 1, threadPool: .singleton, logger: Logger(label: "test-admin"))
        do {
            try await provider.sql.raw(SQLQueryString(sql)).run()
        } catch {
            await provider.shutdown()
            throw error
        }
        await provider.shutdown()
    }
}

/// What a test gets: a client that speaks HTTP to the live server, the clock, and the services.
struct TestHarness {
    let client: any TestClientProtocol
    let clock: TestClock
    let services: GatehouseServices
    let configuration: GatehouseConfiguration
}

extension GatehouseConfiguration {
    /// Fast, deterministic settings for tests: bcrypt cost 4, quick polling, port 0.
    static func testing(database: DatabaseLocation) -> GatehouseConfiguration {
        var c = GatehouseConfiguration()
        c.host = "127.0.0.1"
        c.port = 0
        c.database = database
        c.publicURL = "http://gatehouse.test"
        c.passwords.bcryptCost = 4
        c.databasePoolSize = 2
        c.databasePoolTimeout = 10  // a loaded CI machine can take seconds to hand out a connection
        c.delivery.pollInterval = .milliseconds(50)
        c.delivery.firstAttemptWait = .seconds(3)
        c.logLevel = .warning
        c.http.maxConnectionsPerAddress = 100_000   // every test client is 127.0.0.1
        c.limits.codeRequestsPerAddressPerDestination = 1_000
        // Blobs of one test in a folder of their own (beside a SQLite file they are anyway).
        c.storage.directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-blobs-\(UUID().uuidString)").path
        return c
    }
}

/// Builds a fresh application and database, runs `body` against the live server, tears down.
func withApp(
    _ engine: TestEngine,
    configure: (inout GatehouseConfiguration) -> Void = { _ in },
    random: GatehouseRandom = .live,
    _ body: @Sendable (TestHarness) async throws -> Void
) async throws {
    let database = try await TestDatabase.make(engine)
    var configuration = GatehouseConfiguration.testing(database: database.location)
    configure(&configuration)
    let clock = TestClock()
    var logger = Logger(label: "gatehouse-test")
    logger.logLevel = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .warning
    let services = try GatehouseServices(configuration: configuration, dependencies: .init(clock: clock.gatehouseClock, random: random), logger: logger)
    let app = buildApplication(services: services)
    let finalConfiguration = configuration
    do {
        try await app.test(.live) { client in
            try await body(TestHarness(client: client, clock: clock, services: services, configuration: finalConfiguration))
        }
    } catch {
        await database.cleanup()
        try? FileManager.default.removeItem(atPath: finalConfiguration.blobDirectory)
        throw error
    }
    await database.cleanup()
    try? FileManager.default.removeItem(atPath: finalConfiguration.blobDirectory)
}
