import Foundation
import GatehouseAPI
import GatehouseKit
import Testing

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

    @Test("cancellation stops a request")
    func cancellation() async throws {
        try await withLiveServer { server in
            let client = server.client()
            let task = Task { try await client.sendRegistrationCode(phone: "+79000000001") }
            task.cancel()
            _ = await task.result
            // whichever way the race went, the client is usable afterwards
            try await client.sendRegistrationCode(phone: "+79000000002")
        }
    }

    @Test("login stores the session with the server's expiry; restore on launch only while valid")
    func sessionLifecycle() async throws {
        try await withLiveServer { server in
            try await server.makeAccount(phone: "+79000000001", email: nil)
            let store = InMemorySessionStore()
            let client = server.client(store: store)
            let session = try await client.login(login: "+79000000001", password: "secret1!")
            #expect(abs(session.expiresAt.timeIntervalSince(server.clock.now) - 86_400) < 2)
            #expect(try store.load() == session)
            #expect(client.restoreSession() == session)
            #expect(try await client.currentUser().phone == "+79000000001")
            server.clock.advance(by: 86_401)
            #expect(client.restoreSession() == nil)
            #expect(try store.load() == nil)
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
