import Foundation
import GatehouseAPI
import GatehouseDevSupport
import GatehouseKit
@testable import GatehouseServer
import Logging
import ServiceLifecycle
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A clock the test moves by hand, shared by the server and the SDK.
final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current = Date()
    var now: Date { lock.withLock { current } }
    func advance(by seconds: TimeInterval) { lock.withLock { current.addTimeInterval(seconds) } }
}

/// A real Gatehouse server in this process, on a loopback port, with a fresh SQLite file.
struct LiveServer {
    let baseURL: URL
    let clock: ManualClock

    var outbox: DevOutboxClient { DevOutboxClient(baseURL: baseURL) }

    /// A client as an app would make one, sharing the server's clock.
    func client(store: any SessionStore = InMemorySessionStore(), language: String = "en") -> PhoneAccountsClient {
        PhoneAccountsClient(baseURL: baseURL, sessionStore: store, language: language, now: { [clock] in clock.now })
    }

    func latestCode(to destination: String) async throws -> String {
        guard let code = try await outbox.latestCode(to: destination) else { throw LiveServerError("no message to \(destination)") }
        return code
    }

    /// Opens the newest confirmation link mailed to `email`, as the user would in a browser.
    func followConfirmationLink(to email: String) async throws {
        guard try await outbox.openLatestLink(to: email) else { throw LiveServerError("no working confirmation link for \(email)") }
    }

    /// Registers an account straight through the client (setup for login scenarios).
    func makeAccount(phone: String, password: String = "secret1!", email: String?, confirmed: Bool = false) async throws {
        let client = client()
        try await client.sendRegistrationCode(phone: phone)
        let code = try await latestCode(to: phone)
        _ = try await client.register(PhoneRegisterRequest(phone: phone, code: code, password: password, firstName: "Test", lastName: "User", email: email))
        if confirmed, let email {
            try await client.login(login: phone, password: password)
            try await client.sendConfirmationEmail()
            try await followConfirmationLink(to: email)
            await client.logout()
        }
        clock.advance(by: 61)   // past the resend cooldown of any address used here
    }
}

struct LiveServerError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Runs `body` against a fresh server; stops it afterwards.
func withLiveServer(isolation: isolated (any Actor)? = #isolation, _ body: (LiveServer) async throws -> Void) async throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-sdk-\(UUID().uuidString).sqlite").path
    var configuration = GatehouseConfiguration()
    configuration.port = 0
    configuration.database = .sqlite(path: path)
    // The SDK suites run on PostgreSQL too (CI does both): GATEHOUSE_SDK_TEST_ENGINE=postgres with POSTGRES_URL.
    let environment = ProcessInfo.processInfo.environment
    var schema: (url: String, name: String)?
    if environment["GATEHOUSE_SDK_TEST_ENGINE"] == "postgres", let url = environment["POSTGRES_URL"], !url.isEmpty {
        let name = "sdk_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try await postgresAdmin(url: url, "CREATE SCHEMA \(name)")
        schema = (url, name)
        configuration.database = .postgres(url: url, searchPath: name)
        configuration.storage.directory = path + ".blobs"
    }
    configuration.publicURL = "http://gatehouse.test"
    configuration.passwords.bcryptCost = 4
    configuration.delivery.pollInterval = .milliseconds(50)
    let clock = ManualClock()
    var logger = Logger(label: "gatehouse-sdk-test")
    logger.logLevel = .warning
    let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
    let app = try await buildApplication(
        configuration: configuration, dependencies: .init(clock: GatehouseClock { clock.now }), logger: logger,
        onServerRunning: { port in continuation.yield(port) }
    )
    let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
    let task = Task { try await group.run() }
    var iterator = ports.makeAsyncIterator()
    guard let port = await iterator.next() else { throw LiveServerError("server did not start") }
    func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
        for suffix in ["", "-wal", "-shm", ".blobs"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        if let schema { try? await postgresAdmin(url: schema.url, "DROP SCHEMA \(schema.name) CASCADE") }
    }
    do {
        try await body(LiveServer(baseURL: URL(string: "http://127.0.0.1:\(port)")!, clock: clock))
    } catch {
        await stop()
        throw error
    }
    await stop()
}

/// One statement on the PostgreSQL server of `url` (creating and dropping a test's schema).
func postgresAdmin(url: String, _ statement: String) async throws {
    let provider = try DatabaseProvider(location: .postgres(url: url), poolSize: 1, threadPool: .singleton, logger: Logger(label: "sdk-test-admin"))
    do {
        try await provider.run(statement: statement)
    } catch {
        await provider.shutdown()
        throw error
    }
    await provider.shutdown()
}
