import FluentKit
import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import GatehouseServer
import GatehouseTestSupport
import SQLKit
import Testing

/// The in-process session cache: fresh for its TTL, forgotten at once on this instance's own
/// changes, and never older than the TTL for changes made elsewhere.
@Suite("Session cache")
struct SessionCacheTests {

    func session(_ account: UUID) -> AuthenticatedSession {
        AuthenticatedSession(id: UUID(), accountID: account, expiresAt: Date().addingTimeInterval(3600))
    }

    func snapshot(_ id: UUID) -> AccountSnapshot {
        AccountModel(id: id, passwordHash: "x", now: Date()).snapshot
    }

    @Test("concurrent lookups of one token after it expired share one load")
    func cache_concurrentMisses_shareOneLoad() async throws {
        // A TTL no loaded machine outlasts: the entry must still be there when the 50 lookups are done.
        let cache = SessionCache(ttl: 60)
        let id = UUID()
        let loads = Counter()
        let value = (session(id), snapshot(id))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    let found = try await cache.value(tokenHash: "t") {
                        loads.increment()
                        try await Task.sleep(for: .milliseconds(50))
                        return value
                    }
                    #expect(found?.session.accountID == id)
                }
            }
            try await group.waitForAll()
        }
        #expect(loads.value == 1)
        #expect(cache.lookup(tokenHash: "t") != nil, "kept for the TTL")
    }

    @Test("a lookup racing an invalidation does not store what it read before it")
    func cache_loadRacingInvalidation_isNotStored() async throws {
        let cache = SessionCache(ttl: 1)
        let id = UUID()
        let found = try await cache.value(tokenHash: "t") {
            cache.invalidate(accountID: id)  // a logout lands while the lookup is reading
            return (session(id), snapshot(id))
        }
        #expect(found != nil, "the caller still gets its answer")
        #expect(cache.lookup(tokenHash: "t") == nil, "but the cache does not keep it")
    }

    @Test("an entry lives for the TTL; invalidating an account drops all of its sessions only")
    func cache_ttlAndInvalidation() async throws {
        // setup
        let cache = SessionCache(ttl: 0.2)
        let ann = UUID(), bob = UUID()
        cache.store(tokenHash: "a1", session: session(ann), account: snapshot(ann))
        cache.store(tokenHash: "a2", session: session(ann), account: snapshot(ann))
        cache.store(tokenHash: "b1", session: session(bob), account: snapshot(bob))

        // MUT + validate
        #expect(cache.lookup(tokenHash: "a1") != nil)
        cache.invalidate(accountID: ann)
        #expect(cache.lookup(tokenHash: "a1") == nil && cache.lookup(tokenHash: "a2") == nil)
        #expect(cache.lookup(tokenHash: "b1")?.session.accountID == bob)
        try await Task.sleep(for: .milliseconds(250))
        #expect(cache.lookup(tokenHash: "b1") == nil, "older than the TTL")
    }

    @Test("while the bus proves its delivery an entry outlives the TTL, up to its max age; a proof that ages, or that came before the read, does not keep it; an event still drops it at once")
    func cache_provenDelivery_keepsEntriesPastTheTTL() async throws {
        // setup: a TTL of 0.2 s, a max age of 3 s, a bus whose proof the test sets
        let bus = ProvingBus()
        let cache = SessionCache(ttl: 0.2, maxAge: 3)
        cache.follow(bus)
        #expect(cache.heartbeat == .milliseconds(100), "half the TTL: a proof kept up is never older than it")
        let ann = UUID(), bob = UUID(), cat = UUID()
        for (token, id) in [("a", ann), ("b", bob), ("c", cat)] { cache.store(tokenHash: token, session: session(id), account: snapshot(id)) }
        try await Task.sleep(for: .milliseconds(300))

        // MUT + validate: past the TTL, kept by a fresh proof
        bus.proof = .now
        #expect(cache.lookup(tokenHash: "a") != nil && cache.lookup(tokenHash: "b") != nil)
        cache.invalidate(accountID: bob)
        #expect(cache.lookup(tokenHash: "b") == nil, "an event drops it whatever the proof")
        // A proof older than the TTL keeps nothing.
        bus.proof = .now - .milliseconds(300)
        #expect(cache.lookup(tokenHash: "c") == nil)

        // A proof from before the read proves nothing about what came after it.
        bus.proof = .now
        cache.store(tokenHash: "d", session: session(cat), account: snapshot(cat))
        try await Task.sleep(for: .milliseconds(300))
        #expect(cache.lookup(tokenHash: "d") == nil)

        // The max age bounds what no event tells of, however fresh the proof.
        let ageing = Task { while !Task.isCancelled { bus.proof = .now; try? await Task.sleep(for: .milliseconds(20)) } }
        defer { ageing.cancel() }
        try await Task.sleep(for: .milliseconds(300))
        #expect(cache.lookup(tokenHash: "a") != nil, "read about 0.9 s ago: past the TTL, within the max age")
        try await Task.sleep(for: .milliseconds(2_500))
        #expect(cache.lookup(tokenHash: "a") == nil, "older than the max age")

        // A max age not above the TTL is the TTL: no heartbeat asked for, no proof read.
        let plain = SessionCache(ttl: 0.2, maxAge: 0)
        plain.follow(bus)
        #expect(plain.heartbeat == .zero && plain.maxAge == plain.ttl)
        plain.store(tokenHash: "p", session: session(ann), account: snapshot(ann))
        try await Task.sleep(for: .milliseconds(300))
        bus.proof = .now
        #expect(plain.lookup(tokenHash: "p") == nil)
    }

    @Test("the cache's max age and the bus's silence are read, with their defaults; a value out of range is refused by name")
    func settings() throws {
        let defaults = try GatehouseConfiguration.fromEnvironment([:])
        #expect(defaults.limits.sessionCacheMaxAge == 30 && defaults.eventBusSilence == 15)
        let set = try GatehouseConfiguration.fromEnvironment(["GATEHOUSE_SESSION_CACHE_MAX_SECONDS": "0", "GATEHOUSE_EVENT_BUS_SILENCE_SECONDS": "60"])
        #expect(set.limits.sessionCacheMaxAge == 0 && set.eventBusSilence == 60)
        #expect(SessionCache(ttl: set.limits.sessionCacheTTL, maxAge: set.limits.sessionCacheMaxAge).heartbeat == .zero, "0: the TTL alone")
        for (name, value) in [("GATEHOUSE_SESSION_CACHE_MAX_SECONDS", "301"), ("GATEHOUSE_SESSION_CACHE_MAX_SECONDS", "-1"),
                              ("GATEHOUSE_EVENT_BUS_SILENCE_SECONDS", "0"), ("GATEHOUSE_EVENT_BUS_SILENCE_SECONDS", "soon")] {
            #expect(throws: ConfigurationError.self, "\(name)=\(value)") { try GatehouseConfiguration.fromEnvironment([name: value]) }
        }
    }

    @Test("a TTL of 0 turns the cache off; a full cache makes room instead of growing")
    func cache_disabledAndBounded() {
        let off = SessionCache(ttl: 0)
        let id = UUID()
        off.store(tokenHash: "t", session: session(id), account: snapshot(id))
        #expect(off.lookup(tokenHash: "t") == nil)

        let small = SessionCache(ttl: 1, capacity: 3)
        for i in 0..<10 {
            let account = UUID()
            small.store(tokenHash: "t\(i)", session: session(account), account: snapshot(account))
        }
        #expect((0..<10).filter { small.lookup(tokenHash: "t\($0)") != nil }.count <= 3)
        #expect(small.lookup(tokenHash: "t9") != nil, "the newest entry is kept")
    }

    @Test("a cached read answers what the database holds, without the password hash", .tags(.engine), arguments: TestEngine.all)
    func cachedRead_matchesTheDatabase(engine: TestEngine) async throws {
        // A TTL no loaded machine outlasts between the second read and the look into the cache.
        try await withApp(engine, configure: { $0.limits.sessionCacheTTL = 60 }) { app in
            // setup: an account with most optional fields set
            let signup = try await app.v1.signedUp(email: "ann@example.com", tag: "ann.lee")
            let db = app.services.database.db
            let account = try #require(try await AccountModel.find(signup.account.id, on: db))
            account.phone = "+79123456789"
            account.phoneVerifiedAt = Date(timeIntervalSince1970: 1_700_000_000)
            account.middleName = "M"
            account.birthday = Date(timeIntervalSince1970: 600_000_000)
            account.fcmToken = "fcm"
            try await account.update(on: db)

            // MUT: the first read fills the cache, the second is served from it
            let first = try await app.v1.me(signup.token)
            let second = try await app.v1.me(signup.token)

            // validate
            let fresh = try #require(try await AccountModel.find(signup.account.id, on: db))
            #expect(first == fresh.snapshot.v1Account(publicURL: app.configuration.publicURL))
            #expect(second == first)
            #expect(second.middleName == "M" && second.phoneVerified)
            // On PostgreSQL the update's invalidation comes by NOTIFY and may land after the reads
            // (a loaded CI run): then the entry is gone, and one more read fills it again.
            var cached = app.services.sessions.cache.lookup(tokenHash: Secrets.sha256Hex(signup.token))
            if cached == nil {
                _ = try await app.v1.me(signup.token)
                cached = app.services.sessions.cache.lookup(tokenHash: Secrets.sha256Hex(signup.token))
            }
            let hit = try #require(cached)
            #expect(!String(describing: hit.account).contains(fresh.passwordHash))
        }
    }

    @Test("a read after a minute records the session's last use, which the session list shows", .tags(.engine), arguments: TestEngine.all)
    func read_afterAMinute_recordsLastUse(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.limits.sessionCacheTTL = 0 }) { app in
            // setup
            let signup = try await app.v1.signedUp(email: "ann@example.com", tag: "ann.lee")
            let before = try #require(try await app.v1.sessions(signup.token).first)

            // MUT: a read 2 minutes later (the lookup writes last_used_at at most once a minute)
            app.clock.advance(by: 120)
            _ = try await app.v1.me(signup.token)

            // validate: written by the raw lookup, read back by Fluent
            let after = try #require(try await app.v1.sessions(signup.token).first)
            #expect(after.lastUsedAt.timeIntervalSince(before.lastUsedAt) >= 119)
            #expect(after.id == before.id)
        }
    }

    @Test("a change to the account shows at once in the next read, on /v1 and /api", .tags(.engine), arguments: TestEngine.all)
    func ownChange_isReadBackAtOnce(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup: the read is cached
            let signup = try await app.v1.signedUp(email: "ann@example.com", tag: "ann.lee")
            #expect(try await app.v1.me(signup.token).firstName == "Ann")

            // MUT
            let patched = try await app.v1.patch(V1.Accounts.me.path, ProfileUpdate(firstName: "Anna"), token: signup.token)
            #expect(patched.status == .ok)

            // validate
            #expect(try await app.v1.me(signup.token).firstName == "Anna")
            let user = try await app.get(PhoneAccountsAPI.Path.user, headers: [.authorization: "Bearer \(signup.token)"])
            #expect(user.text.contains("\"firstName\":\"Anna\""))
        }
    }

    @Test("a session ended with no event (a DELETE typed by hand) is refused here within the cache's max age", .tags(.engine), arguments: TestEngine.all)
    func sessionEndedWithoutAnEvent_isRefusedWithinTheMaxAge(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.limits.sessionCacheTTL = 0.3; $0.limits.sessionCacheMaxAge = 1.5 }) { app in
            // setup
            let signup = try await app.v1.signedUp(email: "ann@example.com", tag: "ann.lee")
            _ = try await app.v1.me(signup.token)

            // MUT: the database changed with no event about it
            try await app.services.database.sql.raw("DELETE FROM sessions").run()

            // validate: served from memory for at most the max age (the TTL where the bus proves
            // nothing), then refused. (That an entry's age is a hard bound is the cache's own test;
            // here, a bounded poll that a cache which never forgets would fail.)
            let refused = await eventually(within: .seconds(10)) {
                (try? await app.v1.get(V1.Accounts.me.path, token: signup.token).status) == .unauthorized
            }
            #expect(refused)
        }
    }
}

/// A bus whose proof of delivery the test sets (`EventBus.deliveredThrough`); it carries no events.
final class ProvingBus: EventBus, @unchecked Sendable {
    private let lock = NSLock()
    private var _proof: ContinuousClock.Instant?
    var proof: ContinuousClock.Instant? {
        get { lock.withLock { _proof } }
        set { lock.withLock { _proof = newValue } }
    }
    var deliveredThrough: ContinuousClock.Instant? { proof }
    var isConnected: Bool { true }
    func publish(_ event: BusEvent, on db: (any GatehouseDatabase)?) async throws {}
    func subscribe(topic: String, account: UUID?, _ handler: @escaping @Sendable (BusEvent) -> Void) -> BusSubscription { BusSubscription {} }
    func onGap(_ handler: @escaping @Sendable () -> Void) {}
}

/// A thread-safe count for tests.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func increment() { lock.withLock { count += 1 } }
}
