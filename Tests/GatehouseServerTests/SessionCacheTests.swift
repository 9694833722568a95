import FluentKit
import Foundation
import GatehouseAPI
import SQLKit
import Testing
@testable import GatehouseServer

/// The in-process session cache: fresh for its TTL, forgotten at once on this instance's own
/// changes, and never older than the TTL for changes made elsewhere.
@Suite("Session cache")
struct SessionCacheTests {
    typealias P = AccountsV1API.Path

    func session(_ account: UUID) -> AuthenticatedSession {
        AuthenticatedSession(id: UUID(), accountID: account, expiresAt: Date().addingTimeInterval(3600))
    }

    @Test("an entry lives for the TTL; invalidating an account drops all of its sessions only")
    func cache_ttlAndInvalidation() async throws {
        // setup
        let cache = SessionCache(ttl: 0.2)
        let ann = UUID(), bob = UUID()
        cache.store(tokenHash: "a1", session: session(ann), account: AccountModel(id: ann, passwordHash: "x", now: Date()))
        cache.store(tokenHash: "a2", session: session(ann), account: AccountModel(id: ann, passwordHash: "x", now: Date()))
        cache.store(tokenHash: "b1", session: session(bob), account: AccountModel(id: bob, passwordHash: "x", now: Date()))

        // MUT + validate
        #expect(cache.lookup(tokenHash: "a1") != nil)
        cache.invalidate(accountID: ann)
        #expect(cache.lookup(tokenHash: "a1") == nil && cache.lookup(tokenHash: "a2") == nil)
        #expect(cache.lookup(tokenHash: "b1")?.session.accountID == bob)
        try await Task.sleep(for: .milliseconds(250))
        #expect(cache.lookup(tokenHash: "b1") == nil, "older than the TTL")
    }

    @Test("a TTL of 0 turns the cache off; a full cache makes room instead of growing")
    func cache_disabledAndBounded() {
        let off = SessionCache(ttl: 0)
        let id = UUID()
        off.store(tokenHash: "t", session: session(id), account: AccountModel(id: id, passwordHash: "x", now: Date()))
        #expect(off.lookup(tokenHash: "t") == nil)

        let small = SessionCache(ttl: 1, capacity: 3)
        for i in 0..<10 {
            let account = UUID()
            small.store(tokenHash: "t\(i)", session: session(account), account: AccountModel(id: account, passwordHash: "x", now: Date()))
        }
        #expect((0..<10).filter { small.lookup(tokenHash: "t\($0)") != nil }.count <= 3)
        #expect(small.lookup(tokenHash: "t9") != nil, "the newest entry is kept")
    }

    @Test("the copy a request reads carries every stored field of the account", arguments: TestEngine.available)
    func detachedCopy_hasEveryField(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup: an account with every optional field set
            let signup = try await app.v1.signedUp(email: "ann@example.com", tag: "ann.lee")
            let db = app.services.database.db
            let account = try #require(try await AccountModel.find(signup.account.id, on: db))
            account.phone = "+79123456789"
            account.phoneVerifiedAt = Date(timeIntervalSince1970: 1_700_000_000)
            account.pendingEmail = "new@example.com"
            account.middleName = "M"
            account.birthday = Date(timeIntervalSince1970: 600_000_000)
            account.fcmToken = "fcm"
            account.avatarID = UUID()
            try await account.update(on: db)
            let fresh = try #require(try await AccountModel.find(signup.account.id, on: db))

            // MUT
            let copy = fresh.detachedCopy()

            // validate: Codable encodes every field Fluent knows, by reflection
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            #expect(String(decoding: try encoder.encode(copy), as: UTF8.self) == String(decoding: try encoder.encode(fresh), as: UTF8.self))
            #expect(copy.$id.exists)
        }
    }

    @Test("a change to the account shows at once in the next read, on /v1 and /api", arguments: TestEngine.available)
    func ownChange_isReadBackAtOnce(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup: the read is cached
            let signup = try await app.v1.signedUp(email: "ann@example.com", tag: "ann.lee")
            #expect(try await app.v1.me(signup.token).firstName == "Ann")

            // MUT
            let patched = try await app.v1.patch(P.me, ProfileUpdate(firstName: "Anna"), token: signup.token)
            #expect(patched.status == .ok)

            // validate
            #expect(try await app.v1.me(signup.token).firstName == "Anna")
            let user = try await app.get(PhoneAccountsAPI.Path.user, headers: [.authorization: "Bearer \(signup.token)"])
            #expect(user.text.contains("\"firstName\":\"Anna\""))
        }
    }

    @Test("a session ended elsewhere (another instance) is refused here once the TTL has passed", arguments: TestEngine.available)
    func sessionEndedElsewhere_isRefusedWithinTheTTL(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.limits.sessionCacheTTL = 0.3 }) { app in
            // setup
            let signup = try await app.v1.signedUp(email: "ann@example.com", tag: "ann.lee")
            _ = try await app.v1.me(signup.token)

            // MUT: what another instance's logout does to the shared database
            try await app.services.database.sql.raw("DELETE FROM sessions").run()

            // validate: served from memory for at most the TTL, then refused
            let started = ContinuousClock.now
            var status = try await app.v1.get(P.me, token: signup.token).status
            while status == .ok && ContinuousClock.now - started < .seconds(2) {
                try await Task.sleep(for: .milliseconds(20))
                status = try await app.v1.get(P.me, token: signup.token).status
            }
            #expect(status == .unauthorized)
            #expect(ContinuousClock.now - started < .milliseconds(600), "refused within the TTL (0.3 s), with scheduling slack")
        }
    }
}
