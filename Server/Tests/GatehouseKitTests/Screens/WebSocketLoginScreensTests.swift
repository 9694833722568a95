import Foundation
import GatehouseAPI
import GatehouseKit
import GatehouseScreens
import GatehouseTestSupport
import Testing

/// The two-screen app of `docs/websocket-login.md` through its view models, against the real
/// gateway of an in-process server.
@Suite("WebSocket login through the view models")
@MainActor
struct WebSocketLoginScreensTests {
    func makeFlow(_ server: LiveServer, store: any SessionStore, timeout: TimeInterval = 10) -> WebSocketLoginFlow {
        let client = CustomerGatewayClient(url: CustomerGatewayClient.gatewayURL(for: server.baseURL), sessionStore: store,
                                           timeout: timeout, now: { [clock = server.clock] in clock.now })
        return WebSocketLoginFlow(environment: WebSocketLoginEnvironment(client: client, localizer: Localizer(language: "en")))
    }

    @Test("no token: login screen; email validated as typed; errors shown from error_description; success opens the app screen")
    func loginPath() async throws {
        try await withLiveServer { server in
            try await server.makeAccount(phone: "+79000000001", email: "fpi@bk.ru", confirmed: true)
            let store = InMemorySessionStore()
            let flow = makeFlow(server, store: store)
            flow.launch()
            guard case .login(let login) = flow.state.screen else { Issue.record("expected login"); return }
            #expect(login.state.submitTitle == "Login" && !login.state.isSubmitEnabled)
            login.setEmail("fpi@")
            #expect(login.state.emailError == "Enter an email address such as name@example.com")
            login.setEmail("fpi@bk.ru")
            #expect(login.state.emailError == nil)
            #expect(login.state.passwordContentType == .password)

            login.setPassword("newPassword")
            await login.submit()
            #expect(login.state.errorOutput == "Customer not found")
            login.setEmail("123@gmail.com")
            await login.submit()
            #expect(login.state.errorOutput == "Customer not found")
            guard case .login = flow.state.screen else { Issue.record("left login"); return }

            login.setEmail("fpi@bk.ru")
            login.setPassword("secret-91!")
            #expect(login.state.errorOutput == nil, "editing clears the error output")
            await login.submit()
            guard case .app(let app) = flow.state.screen else { Issue.record("expected app: \(login.state.errorOutput ?? "")"); return }
            let stored = try #require(try store.load())
            #expect(app.state.expiresAt == stored.expiresAt)
            #expect(abs(stored.expiresAt.timeIntervalSince(server.clock.now) - 86_400) < 2)
            #expect(app.state.information == "You are logged in. The session expires on \(WireDates.iso8601String(from: stored.expiresAt).replacingOccurrences(of: "T", with: " ").replacingOccurrences(of: "Z", with: " UTC")).")
            // the gateway's token is a Gatehouse session on the REST surface too
            let rest = server.client(store: InMemorySessionStore(stored))
            #expect(try await rest.currentUser().email == "fpi@bk.ru")
        }
    }

    @Test("launch with a stored, unexpired token opens the app screen with its date; an expired one the login screen")
    func launchPaths() async throws {
        try await withLiveServer { server in
            let expiry = server.clock.now.addingTimeInterval(3600)
            let store = InMemorySessionStore(GatehouseSession(token: "stored-token", expiresAt: expiry))
            let flow = makeFlow(server, store: store)
            flow.launch()
            guard case .app(let app) = flow.state.screen else { Issue.record("expected app"); return }
            #expect(app.state.expiresAt == expiry)

            server.clock.advance(by: 3601)
            let later = makeFlow(server, store: store)
            later.launch()
            guard case .login = later.state.screen else { Issue.record("expected login"); return }
            let remaining = try store.load()
            #expect(remaining == nil)
        }
    }

    @Test("throttling and an unreachable server are shown in the error output")
    func otherErrors() async throws {
        try await withLiveServer { server in
            try await server.makeAccount(phone: "+79000000001", email: "t@example.com", confirmed: true)
            let flow = makeFlow(server, store: InMemorySessionStore())
            guard case .login(let login) = flow.state.screen else { return }
            login.setEmail("t@example.com")
            for _ in 0..<10 {
                login.setPassword("wrong-1!")
                await login.submit()
            }
            login.setPassword("secret-91!")
            await login.submit()
            #expect(login.state.errorOutput?.hasPrefix("Too many failed logins") == true, "\(login.state.errorOutput ?? "")")
        }
        let offline = CustomerGatewayClient(url: URL(string: "ws://127.0.0.1:9/customer-gateway/customer")!, timeout: 3)
        let login = WebSocketLoginViewModel(environment: WebSocketLoginEnvironment(client: offline, localizer: Localizer(language: "en")))
        login.setEmail("a@example.com")
        login.setPassword("x")
        await login.submit()
        #expect(login.state.errorOutput?.hasPrefix("cannot connect") == true, "\(login.state.errorOutput ?? "")")
        #expect(login.state.isSubmitEnabled)
    }

    @Test("the app screen's log out forgets the token and returns to login")
    func logout() async throws {
        try await withLiveServer { server in
            let store = InMemorySessionStore(GatehouseSession(token: "t", expiresAt: server.clock.now.addingTimeInterval(60)))
            let flow = makeFlow(server, store: store)
            flow.launch()
            guard case .app(let app) = flow.state.screen else { return }
            await app.logout()
            guard case .login = flow.state.screen else { Issue.record("expected login"); return }
            let remaining = try store.load()
            #expect(remaining == nil)
        }
    }
}

@Suite("CustomerGatewayClient")
struct CustomerGatewayClientTests {
    @Test("concurrent logins through one client are matched by sequence_id; reconnect works")
    func concurrentAndReconnect() async throws {
        try await withLiveServer { server in
            try await server.makeAccount(phone: "+79000000001", email: "c@example.com", confirmed: true)
            let client = CustomerGatewayClient(url: CustomerGatewayClient.gatewayURL(for: server.baseURL), timeout: 10)
            // At most 8 at once: every attempt in flight holds a slot of the failure budgets (10 per
            // connection and per account), so more could be refused with tooManyAttempts by timing.
            let results = try await withThrowingTaskGroup(of: Bool.self) { group in
                for i in 0..<8 {
                    group.addTask {
                        do {
                            _ = try await client.login(email: "c@example.com", password: i.isMultiple(of: 4) ? "wrong-1!" : "secret-91!")
                            return true
                        } catch CustomerGatewayError.customer(let code, _) {
                            #expect(code == "customer.notFound")
                            return false
                        }
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(results.filter { $0 }.count == 6)
            try await client.reconnect()
            _ = try await client.login(email: "c@example.com", password: "secret-91!")
            await client.disconnect()
        }
    }

    /// A gateway that accepts frames and never answers.
    struct SilentTransport: WebSocketTransport {
        final class Silent: WebSocketConnection, @unchecked Sendable {
            func send(_ text: String) async throws {}
            func receive() async throws -> String? {
                try await Task.sleep(nanoseconds: 60_000_000_000)
                return nil
            }
            func close() async {}
        }
        func connect(to url: URL) async throws -> any WebSocketConnection { Silent() }
    }

    @Test("no answer within the timeout is a timeout")
    func timeout() async throws {
        let client = CustomerGatewayClient(url: URL(string: "ws://gateway.test/customer-gateway/customer")!, transport: SilentTransport(), timeout: 0.2)
        await #expect(throws: CustomerGatewayError.timeout) { _ = try await client.login(email: "a@b.cd", password: "x") }
    }
}
