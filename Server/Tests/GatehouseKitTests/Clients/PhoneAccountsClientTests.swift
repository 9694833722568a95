import Foundation
import GatehouseAPI
import GatehouseKit
import GatehouseTestSupport
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("GatehouseKit: the client and session storage")
struct PhoneAccountsClientTests {
    @Test("refusals are typed: code and the server's message; 401 is 'session expired' and forgets the session")
    func errors_areTyped() async throws {
        try await withLiveServer { server in
            let store = InMemorySessionStore()
            let client = server.client(store: store, language: "en")
            await #expect(throws: GatehouseClientError.rejected(code: .invalidPhone, message: "\"12\" is not a valid phone number.")) {
                try await client.sendRegistrationCode(phone: "12")
            }
            try await client.sendRegistrationCode(phone: "+79000000001")
            do {
                try await client.sendRegistrationCode(phone: "+79000000001")
                Issue.record("expected a limit")
            } catch GatehouseClientError.rateLimited(let code, _, let retryAfter) {
                #expect(code == .resendTooSoon && retryAfter == 60)
            }
            await #expect(throws: GatehouseClientError.notLoggedIn) { _ = try await client.currentUser() }

            // a token the server no longer accepts
            try store.save(GatehouseSession(token: "revoked", expiresAt: server.clock.now.addingTimeInterval(3600)))
            do {
                _ = try await client.currentUser()
                Issue.record("expected 401")
            } catch let error as GatehouseClientError {
                guard case .sessionExpired = error else { Issue.record("\(error)"); return }
            }
            #expect(try store.load() == nil)
        }
    }

    @Test("no server: a transport error, not a crash")
    func transportError() async throws {
        let client = PhoneAccountsClient(baseURL: URL(string: "http://127.0.0.1:9")!, transport: URLSessionTransport(timeout: 5))
        do {
            try await client.sendRegistrationCode(phone: "+79000000001")
            Issue.record("expected an error")
        } catch let error as GatehouseClientError {
            guard case .transport = error else { Issue.record("\(error)"); return }
        }
    }

    /// A network that never answers: the request only ends when it is cancelled.
    struct StalledTransport: HTTPTransport {
        func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
            try await Task.sleep(nanoseconds: 60_000_000_000)
            throw GatehouseClientError.transport("not reached")
        }
    }

    @Test("cancelling the task ends a stalled request at once with CancellationError")
    func cancellation() async throws {
        let client = PhoneAccountsClient(baseURL: URL(string: "http://127.0.0.1:9")!, transport: StalledTransport())
        let task = Task { try await client.sendRegistrationCode(phone: "+79000000001") }
        try await Task.sleep(nanoseconds: 50_000_000)
        task.cancel()
        // Not a timing check: uncancelled, the stalled transport ends after a minute with another error.
        let result = await task.result
        guard case .failure(let error) = result else { Issue.record("a cancelled request cannot succeed"); return }
        #expect(error is CancellationError, "\(error)")
    }

    @Test("login stores the session with the server's expiry; restore on launch only while valid")
    func sessionLifecycle() async throws {
        try await withLiveServer { server in
            try await server.makeAccount(phone: "+79000000001", email: nil)
            let store = InMemorySessionStore()
            let client = server.client(store: store)
            let session = try await client.login(login: "+79000000001", password: "secret-91!")
            #expect(abs(session.expiresAt.timeIntervalSince(server.clock.now) - 86_400) < 2)
            #expect(try store.load() == session)
            #expect(client.restoreSession() == session)
            #expect(try await client.currentUser().phone == "+79000000001")
            server.clock.advance(by: 86_401)
            #expect(client.restoreSession() == nil)
            #expect(try store.load() == nil)
        }
    }

    /// A store whose disk is full.
    struct FullDiskStore: SessionStore {
        func load() throws -> GatehouseSession? { nil }
        func save(_ session: GatehouseSession) throws { throw CocoaError(.fileWriteOutOfSpace) }
        func clear() throws {}
    }

    @Test("a session that cannot be saved fails the login instead of failing every later call")
    func login_withUnsavableSession_throws() async throws {
        try await withLiveServer { server in
            try await server.makeAccount(phone: "+79000000001", email: nil)
            let client = server.client(store: FullDiskStore())
            await #expect(throws: CocoaError.self) { try await client.login(login: "+79000000001", password: "secret-91!") }
        }
    }

    @Test("the file store writes atomically with mode 0600 and round-trips")
    func fileStore() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-store-\(UUID().uuidString)")
        let store = FileSessionStore(url: directory.appendingPathComponent("session.json"))
        #expect(try store.load() == nil)
        let session = GatehouseSession(token: "t0ken", expiresAt: Date(timeIntervalSince1970: 1_900_000_000))
        try store.save(session)
        #expect(try store.load() == session)
        let attributes = try FileManager.default.attributesOfItem(atPath: store.url.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        try store.save(GatehouseSession(token: "second", expiresAt: session.expiresAt))
        #expect(try store.load()?.token == "second")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["session.json"], "no temporary files left")
        try store.clear()
        #expect(try store.load() == nil)
    }

    @Test("form encoding escapes what a form body must")
    func formEncoding() {
        #expect(FormURLEncoding.encode([("phone", "+7 912"), ("p", "a&b=c%")]) == "phone=%2B7%20912&p=a%26b%3Dc%25")
        #expect(FormURLEncoding.encode([("name", "Иван")]) == "name=%D0%98%D0%B2%D0%B0%D0%BD")
    }
}
