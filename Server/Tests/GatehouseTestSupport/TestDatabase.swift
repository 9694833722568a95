import FluentPostgresDriver
import Foundation
import GatehouseFoundation
import GatehouseServer
import Logging
import Testing

/// The database engines a test runs on.
///
/// A test whose behaviour depends on the database (persistence, the ledger, idempotency, group commit,
/// sessions across instances, the outbox, the event bus, races, migrations, backups) carries the
/// `.engine` tag and runs on `TestEngine.all`: SQLite, and PostgreSQL when `POSTGRES_URL` is set (CI
/// sets it). Every other database test runs `TestEngine.once`: on SQLite, or on every engine in the
/// full check (`GATEHOUSE_TEST_EVERY_ENGINE=1`, scripts/full-check.sh). `GATEHOUSE_TEST_ENGINES=sqlite`
/// narrows a local run. scripts/check-test-engines.py keeps the tag and the list together.
public enum TestEngine: String, CustomTestStringConvertible, Sendable, CaseIterable {
    case sqlite, postgres

    /// Every engine of this run: for the tests tagged `.engine`.
    public static var all: [TestEngine] {
        let env = ProcessInfo.processInfo.environment
        var engines: [TestEngine] = [.sqlite]
        if let url = env["POSTGRES_URL"], !url.isEmpty { engines.append(.postgres) }
        if let only = env["GATEHOUSE_TEST_ENGINES"] {
            let wanted = Set(only.split(separator: ",").map(String.init))
            engines = engines.filter { wanted.contains($0.rawValue) }
        }
        return engines
    }

    /// One engine (the first of `all`) for a test whose behaviour does not depend on it; every engine in the full check.
    public static var once: [TestEngine] {
        ProcessInfo.processInfo.environment["GATEHOUSE_TEST_EVERY_ENGINE"] == "1" ? all : Array(all.prefix(1))
    }

    public var testDescription: String { rawValue }
}

extension Tag {
    /// The test's behaviour depends on the database engine: it runs on every engine (`TestEngine.all`).
    @Tag public static var engine: Self
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

/// A database for one test: a temporary SQLite file, or a PostgreSQL database of its own.
///
/// `migrated` (what almost every test wants) copies a template that the run migrated once per engine:
/// a file copy on SQLite, `CREATE DATABASE … TEMPLATE` on PostgreSQL, so a test pays for a copy, not
/// for every migration. `make` is an empty database, for the tests of migrations and of a first start.
public struct TestDatabase: Sendable {
    public let location: GatehouseConfiguration.DatabaseLocation
    /// Removes the database (and a SQLite file's blob folder).
    public let cleanup: @Sendable () async -> Void
    /// Empties it, as a lost disk would: the database is there again, with nothing in it (a restore's target).
    public let wipe: @Sendable () async throws -> Void

    /// A database on a server the test started itself (and stops): nothing to remove, it goes with the server.
    public static func existing(_ location: GatehouseConfiguration.DatabaseLocation) -> TestDatabase {
        TestDatabase(location: location, cleanup: {}, wipe: { throw TestDatabaseError("a database on the test's own server is not wiped") })
    }

    /// An empty database.
    public static func make(_ engine: TestEngine) async throws -> TestDatabase {
        try await make(engine, template: nil)
    }

    /// A database with every migration applied, copied from the run's template of `engine`.
    public static func migrated(_ engine: TestEngine) async throws -> TestDatabase {
        switch engine {
        case .sqlite: return try await make(.sqlite, template: try await sqliteTemplate.value)
        case .postgres: return try await make(.postgres, template: try await postgresTemplate.value)
        }
    }

    private static func make(_ engine: TestEngine, template: String?) async throws -> TestDatabase {
        switch engine {
        case .sqlite:
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-test-\(UUID().uuidString).sqlite").path
            let remove: @Sendable () -> Void = {
                for suffix in ["", "-wal", "-shm", ".lock", ".blobs"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            }
            if let template { try FileManager.default.copyItem(atPath: template, toPath: path) }
            return TestDatabase(location: .sqlite(path: path), cleanup: remove, wipe: remove)
        case .postgres:
            let server = try PostgresServer.shared()
            let name = server.newName("t")
            try await server.admin(createStatement(name, template: template))
            return TestDatabase(location: .postgres(url: server.url(of: name)), cleanup: {
                try? await server.admin("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
            }, wipe: {
                try await server.admin("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
                try await server.admin(createStatement(name, template: nil))
            })
        }
    }

    private static func createStatement(_ name: String, template: String?) -> String {
        // template0: a database with nothing of the cluster's `postgres` database in it.
        "CREATE DATABASE \(name) TEMPLATE \(template ?? "template0")"
    }

    /// The SQLite template: migrated once, closed (its WAL folded into the file), then only copied.
    private static let sqliteTemplate = Task<String, any Error> {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-template-\(getpid())-\(UUID().uuidString).sqlite").path
        try await migrate(.sqlite(path: path))
        atexit {
            let folder = FileManager.default.temporaryDirectory
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] where name.hasPrefix("gatehouse-template-\(getpid())-") {
                try? FileManager.default.removeItem(at: folder.appendingPathComponent(name))
            }
        }
        return path
    }

    /// The PostgreSQL template: a database migrated once per run, which nothing connects to afterwards.
    private static let postgresTemplate = Task<String, any Error> {
        let server = try PostgresServer.shared()
        await server.dropLeftovers()
        let name = server.newName("tpl")
        try await server.admin(createStatement(name, template: nil))
        try await migrate(.postgres(url: server.url(of: name)))
        return name
    }

    private static func migrate(_ location: GatehouseConfiguration.DatabaseLocation) async throws {
        var logger = Logger(label: "gatehouse-test-template")
        logger.logLevel = .warning
        let provider = try DatabaseProvider(location: location, poolSize: 1, threadPool: .singleton, logger: logger)
        let outcome: Result<Void, any Error>
        do { try await provider.migrate(GatehouseMigrations.all); outcome = .success(()) } catch { outcome = .failure(error) }
        await provider.shutdown()
        try outcome.get()
    }

    /// One text column of what `sql` answers on the PostgreSQL database at `url` (its own short-lived connection).
    public static func postgresStrings(url: String, _ sql: String, column: String) async throws -> [String] {
        try await withPostgres(url: url) { try await $0.raw(SQLQueryString(sql)).all().map { try $0.decode(column: column, as: String.self) } }
    }

    /// One statement on the PostgreSQL server of `url` (its own short-lived connection).
    public static func postgresAdmin(url: String, _ sql: String) async throws {
        try await withPostgres(url: url) { try await $0.raw(SQLQueryString(sql)).run() }
    }

    /// `body` on a provider of its own for `url`, shut down whatever `body` did.
    private static func withPostgres<T: Sendable>(url: String, _ body: (any SQLDatabase) async throws -> T) async throws -> T {
        let provider = try DatabaseProvider(location: .postgres(url: url), poolSize: 1, threadPool: .singleton, logger: Logger(label: "test-admin"))
        do {
            let value = try await body(provider.sql)
            await provider.shutdown()
            return value
        } catch {
            await provider.shutdown()
            throw error
        }
    }
}

/// The PostgreSQL server of `POSTGRES_URL`: the tests' databases are made and dropped through its
/// database, named `gh_<kind>_<process id>_<random>` so that a later run can tell (and drop) what a
/// killed one left behind.
struct PostgresServer: Sendable {
    let base: URLComponents

    static func shared() throws -> PostgresServer {
        guard let url = ProcessInfo.processInfo.environment["POSTGRES_URL"], !url.isEmpty, let parts = URLComponents(string: url) else {
            throw TestDatabaseError("POSTGRES_URL is not set: a PostgreSQL test needs a server (scripts/start-postgres.sh)")
        }
        return PostgresServer(base: parts)
    }

    var adminURL: String { base.string! }

    func url(of database: String) -> String {
        var parts = base
        parts.path = "/" + database
        return parts.string!
    }

    func newName(_ kind: String) -> String {
        "gh_\(kind)_\(getpid())_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
    }

    func admin(_ sql: String) async throws {
        try await TestDatabase.postgresAdmin(url: adminURL, sql)
    }

    /// Drops the databases of test processes that no longer run (a run killed before its clean-up).
    func dropLeftovers() async {
        let provider: DatabaseProvider
        do {
            provider = try DatabaseProvider(location: .postgres(url: adminURL), poolSize: 1, threadPool: .singleton, logger: Logger(label: "test-admin"))
        } catch { return }
        struct Row: Decodable { let datname: String }
        let names = (try? await provider.sql.raw("SELECT datname FROM pg_database WHERE datname LIKE 'gh\\_%'").all(decoding: Row.self)) ?? []
        for name in names.map(\.datname) {
            let parts = name.split(separator: "_")
            guard parts.count == 4, let pid = Int32(parts[2]), pid != getpid(), kill(pid, 0) != 0 else { continue }
            try? await provider.sql.raw(SQLQueryString("DROP DATABASE IF EXISTS \(unsafeRaw: name) WITH (FORCE)")).run()
        }
        await provider.shutdown()
    }
}

struct TestDatabaseError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
