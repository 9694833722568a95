import Foundation
import GatehouseAPI
import GatehouseKit
import GatehouseTestSupport
import NIOConcurrencyHelpers
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The SDK with signed tokens (docs/oidc.md): it asks for them at sign-in, keeps the refresh token, renews the
/// access token before it expires and after a refused call — once, however many calls wait — and ends the session
/// when the server refuses the renewal. Against the live server.
@Suite("SDK: signed tokens")
struct SignedTokensClientTests {
    /// URLSession's transport, counting the refreshes that go out.
    final class CountingTransport: HTTPTransport, @unchecked Sendable {
        let inner = URLSessionTransport()
        let refreshes = NIOLockedValueBox(0)
        func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
            if request.url?.path == V1.Sessions.refresh.path { refreshes.withLockedValue { $0 += 1 } }
            return try await inner.send(request)
        }
    }

    static func client(_ server: LiveServer, store: InMemorySessionStore, transport: CountingTransport) -> AccountsClient {
        AccountsClient(core: GatehouseClient(baseURL: server.baseURL, sessionStore: store, transport: transport, language: "en",
                                             now: { [clock = server.clock] in clock.now }, tokens: .signed))
    }

    @Test("ten calls at once with a token about to expire: one refresh, all ten answered, the new token and refresh token kept")
    func renewsOnceForConcurrentCalls() async throws {
        try await withLiveServer { server in
            // setup
            try await server.makeV1Account(email: "ann@example.com", tag: "ann")
            let store = InMemorySessionStore()
            let transport = CountingTransport()
            let client = Self.client(server, store: store, transport: transport)
            let first = try await client.login(identifier: "ann@example.com", password: "Secret-42!")
            server.clock.advance(by: server.configuration.tokens.accessTokenTTL - 10)

            // MUT
            let accounts = try await withThrowingTaskGroup(of: Account.self) { group in
                for _ in 0..<10 { group.addTask { try await client.me() } }
                return try await group.reduce(into: []) { $0.append($1) }
            }

            // validate
            #expect(first.refreshToken != nil && first.token.split(separator: ".").count == 3)
            #expect(accounts.count == 10 && Set(accounts.map(\.id)).count == 1)
            #expect(transport.refreshes.withLockedValue { $0 } == 1)
            let kept = try #require(try store.load())
            #expect(kept.token != first.token && kept.refreshToken != first.refreshToken && kept.refreshToken != nil)
        }
    }

    @Test("a token the server refuses is renewed once and the call sent again; a session the server ended is over for the client")
    func renewsAfterRefusalAndEndsWithTheSession() async throws {
        try await withLiveServer { server in
            try await server.makeV1Account(email: "ann@example.com", tag: "ann")
            let store = InMemorySessionStore()
            let transport = CountingTransport()
            let client = Self.client(server, store: store, transport: transport)
            _ = try await client.login(identifier: "ann@example.com", password: "Secret-42!")

            // A token the client believes good but the server does not (its clock ran ahead): one refresh, the call answered.
            var stored = try #require(try store.load())
            stored.expiresAt = server.clock.now.addingTimeInterval(3_600)
            try store.save(stored)
            server.clock.advance(by: server.configuration.tokens.accessTokenTTL + 1)
            #expect(try await client.me().email == "ann@example.com")
            #expect(transport.refreshes.withLockedValue { $0 } == 1)

            // The session ended elsewhere (another device's logout of all others): the renewal is refused, the client logged out.
            let other = AccountsClient(core: GatehouseClient(baseURL: server.baseURL, language: "en", now: { [clock = server.clock] in clock.now }))
            _ = try await other.login(identifier: "ann@example.com", password: "Secret-42!")
            _ = try await other.endOtherSessions()
            server.clock.advance(by: server.configuration.tokens.accessTokenTTL + 1)
            await #expect(throws: GatehouseClientError.self) { try await client.me() }
            #expect(try store.load() == nil)
        }
    }
}
