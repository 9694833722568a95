import FluentPostgresDriver
import Foundation
import GatehouseFoundation
import GatehouseServer
import Logging
import Testing

/// The database engines a suite runs on: SQLite always, PostgreSQL when `POSTGRES_URL` is set
/// (CI sets it). `GATEHOUSE_TEST_ENGINES=sqlite` narrows a local run.
public enum TestEngine: String, CustomTestStringConvertible, Sendable, CaseIterable {
    case sqlite, postgres

    public static var available: [TestEngine] {
        let env = ProcessInfo.processInfo.environment
        var engines: [TestEngine] = [.sqlite]
        if let url = env["POSTGRES_URL"], !url.isEmpty { engines.append(.postgres) }
        if let only = env["GATEHOUSE_TEST_ENGINES"] {
            let wanted = Set(only.split(separator: ",").map(String.init))
            engines = engines.filter { wanted.contains($0.rawValue) }
        }
        return engines
    }

    public var testDescription: String { rawValue }
}

/// A clock the test moves by hand.
public final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = start }

    public var now: Date { lock.withLock { current } }
    public func advance(by seconds: TimeInterval) { lock.withLock { current.addTimeInterval(seconds) } }
    public var gatehouseClock: GatehouseClock { GatehouseClock { [self] in self.now } }
}

/// A fresh database for one test: a temporary SQLite file, or a new PostgreSQL schema.
public struct TestDatabase: Sendable {
    public let location: GatehouseConfiguration.DatabaseLocation
    public let cleanup: @Sendable () async -> Void

    public static func make(_ engine: TestEngine) async throws -> TestDatabase {
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

    public static func postgresAdmin(url: String, _ sql: String) async throws {
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

