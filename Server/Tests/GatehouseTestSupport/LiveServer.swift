import Foundation
import GatehouseAPI
import GatehouseDevSupport
import GatehouseKit
import GatehouseServer
import Logging
import ServiceLifecycle
#if canImport(FoundationNetworking)
import FoundationNetworking
import GatehouseFoundation
#endif

/// A real Gatehouse server in this process, on a loopback port, with a fresh database: what the
/// SDK and screens suites talk to, through the same clients an app uses.
public struct LiveServer: Sendable {
    public let baseURL: URL
    /// Shared by the server and the SDK's clients, moved by hand.
    public let clock: TestClock
    /// The server's configuration: what the operator's commands (`WalletCommands`) run against.
    public let configuration: GatehouseConfiguration

    /// The development outbox: what a phone or a mailbox would receive.
    public var outbox: DevOutboxClient { DevOutboxClient(baseURL: baseURL) }

    /// A client as an app would make one, sharing the server's clock.
    public func client(store: any SessionStore = InMemorySessionStore(), language: String = "en") -> PhoneAccountsClient {
        PhoneAccountsClient(baseURL: baseURL, sessionStore: store, language: language, now: { [clock] in clock.now })
    }

    public func latestCode(to destination: String) async throws -> String {
        guard let code = try await outbox.latestCode(to: destination) else { throw LiveServerError("no message to \(destination)") }
        return code
    }

    /// Opens the newest confirmation link mailed to `email`, as the user would in a browser.
    public func followConfirmationLink(to email: String) async throws {
        guard try await outbox.openLatestLink(to: email) else { throw LiveServerError("no working confirmation link for \(email)") }
    }

    /// Registers an account straight through the client (setup for login scenarios).
    public func makeAccount(phone: String, password: String = "secret-91!", email: String?, confirmed: Bool = false) async throws {
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

public struct LiveServerError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Runs `body` against a fresh server; stops it afterwards. SQLite by default; with
/// `GATEHOUSE_SDK_TEST_ENGINE=postgres` and `POSTGRES_URL` (scripts/full-check.sh runs both) a PostgreSQL database;
/// either a copy of the run's migrated template. `configure` changes the server's configuration first.
public func withLiveServer(isolation: isolated (any Actor)? = #isolation, configure: (inout GatehouseConfiguration) -> Void = { _ in },
                           _ body: (LiveServer) async throws -> Void) async throws {
    let environment = ProcessInfo.processInfo.environment
    let engine: TestEngine = environment["GATEHOUSE_SDK_TEST_ENGINE"] == "postgres" && !(environment["POSTGRES_URL"] ?? "").isEmpty ? .postgres : .sqlite
    let database = try await TestDatabase.migrated(engine)
    var configuration = GatehouseConfiguration.testing(database: database.location)
    // The SDK's own limits are what an app meets: the server's defaults, not the raised test ones.
    configuration.limits.codeRequestsPerAddressPerDestination = GatehouseConfiguration().limits.codeRequestsPerAddressPerDestination
    configure(&configuration)
    let clock = TestClock(Date())
    var logger = Logger(label: "gatehouse-sdk-test")
    logger.logLevel = .warning
    let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
    let app = try await buildApplication(
        configuration: configuration, dependencies: .init(clock: clock.gatehouseClock), logger: logger,
        onServerRunning: { port in continuation.yield(port) }
    )
    let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
    let task = Task { try await group.run() }
    var iterator = ports.makeAsyncIterator()
    guard let port = await iterator.next() else { throw LiveServerError("server did not start") }
    func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
        await database.cleanup()
        if let blobs = configuration.storage.directory { try? FileManager.default.removeItem(atPath: blobs) }
    }
    do {
        try await body(LiveServer(baseURL: URL(string: "http://127.0.0.1:\(port)")!, clock: clock, configuration: configuration))
    } catch {
        await stop()
        throw error
    }
    await stop()
}
