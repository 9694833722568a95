import FluentKit
import Foundation
import GatehouseFoundation
import GatehousePlatform

/// A session as the surfaces see it after authentication.
package struct AuthenticatedSession: Sendable {
    package var id: UUID
    package var accountID: UUID
    package var expiresAt: Date
    /// How its person signed in (the `amr` of its signed tokens).
    package var methods: [AuthMethod]

    package init(id: UUID, accountID: UUID, expiresAt: Date, methods: [AuthMethod] = []) {
        self.id = id
        self.accountID = accountID
        self.expiresAt = expiresAt
        self.methods = methods
    }
}

/// A session with its account as it was read with it (at most the session cache's TTL ago).
/// For answers that show the account; a change to the account reads it afresh.
package struct SessionWithAccount: Sendable {
    package var session: AuthenticatedSession
    package var account: AccountSnapshot
}

/// A freshly issued session: the only moment the token exists in clear.
package struct IssuedSession: Sendable {
    package var token: String
    package var id: UUID
    package var accountID: UUID
    package var expiresAt: Date
    package var methods: [AuthMethod]
}

/// One session table for every surface (REST bearer tokens, the WebSocket gateway's token).
package struct SessionService: Sendable {
    package let database: DatabaseProvider
    package let clock: GatehouseClock
    package let ttl: TimeInterval
    package let cache: SessionCache
    package let bus: any EventBus
    package let random: GatehouseRandom
    private var store: AccountSessionStore { AccountSessionStore(database: database) }
    /// `last_used_at` is written at most this often per session, keeping the hot read path read-only.
    package let lastUsedResolution: TimeInterval = 60

    /// Opens a session, unless the account is locked (`account_locked`) or asks for a second
    /// factor the caller did not check (`second_factor_required`): the one place every way in
    /// (password, code, temporary password, signature, sign-up) passes, so a lock and a second
    /// factor hold on every surface. One statement: the insert takes the account's row as its condition.
    package func create(accountID: UUID, methods: [AuthMethod], device: String?, ip: String?, secondFactorChecked: Bool = false,
                        on db: (any GatehouseDatabase)? = nil) async throws -> IssuedSession {
        let token = random.token()
        let now = clock.now()
        let id = OrderedID.make()
        let expiresAt = now.addingTimeInterval(ttl)
        guard try await store.open(id, accountID: accountID, tokenHash: Secrets.sha256Hex(token), at: now, expiresAt: expiresAt,
                                   device: device.map { String($0.prefix(200)) }, ip: ip, methods: methods, secondFactorChecked: secondFactorChecked,
                                   on: db) else {
            throw try await store.isLocked(accountID, on: db) ? GatehouseError.accountLocked : GatehouseError.secondFactorRequired()
        }
        try await store.noteSignIn(accountID, at: now, on: db)
        return IssuedSession(token: token, id: id, accountID: accountID, expiresAt: expiresAt, methods: methods)
    }

    /// The session for a bearer token, or nil when it is unknown, revoked or expired.
    /// One indexed lookup by the token's hash.
    /// Served from the session cache while its copy is fresh; otherwise the session by the
    /// token's hash and its account, which the cache then keeps for its TTL.
    package func authenticate(token: String) async throws -> SessionWithAccount? {
        guard !token.isEmpty, token.utf8.count <= 512 else { return nil }
        let tokenHash = Secrets.sha256Hex(token)
        guard let found = try await cache.value(tokenHash: tokenHash, load: { try await self.load(.tokenHash(tokenHash)) }),
              found.session.expiresAt > clock.now()
        else { return nil }
        return SessionWithAccount(session: found.session, account: found.account)
    }

    /// The session a signed access token names (its `sid`), or nil when it has ended: the same lookup and cache as a
    /// bearer token's, so an ended session refuses its signed tokens on Gatehouse's own surfaces at once.
    package func authenticate(sessionID: UUID) async throws -> SessionWithAccount? {
        let key = "sid:" + sessionID.uuidString.lowercased()
        guard let found = try await cache.value(tokenHash: key, load: { try await self.load(.id(sessionID)) }),
              found.session.expiresAt > clock.now()
        else { return nil }
        return SessionWithAccount(session: found.session, account: found.account)
    }

    /// The session, its account and the account's client record (`AccountSessionStore.withAccount`, one prepared
    /// query), its last use written at most every `lastUsedResolution`.
    private func load(_ key: AccountSessionStore.SessionKey) async throws -> SessionCache.Value? {
        let now = clock.now()
        guard let found = try await store.withAccount(key), found.0.expiresAt > now else { return nil }
        if now.timeIntervalSince(found.lastUsedAt) > lastUsedResolution {
            try await store.touch(found.0.id, at: now)
        }
        return (found.0, found.1)
    }

    package func revoke(sessionID: UUID) async throws {
        if let accountID = try await store.remove(sessionID) { try await sessionsEnded(accountID: accountID) }
    }

    /// Ends one session if it belongs to the account, with its event in the audit trail; false
    /// when there is no such session.
    package func revoke(sessionID: UUID, ofAccount accountID: UUID, by actor: AuditActor, origin: AuditOrigin) async throws -> Bool {
        try await database.db.withTransaction { tx in
            guard try await store.remove(sessionID, of: accountID, on: tx) else { return false }
            try await AuditLog(database: database, clock: clock).record(
                AuditEvent(.sessionRevoked, by: actor, account: accountID, origin: origin, detail: ["session": sessionID.uuidString.lowercased()]), on: tx)
            try await sessionsEnded(accountID: accountID, on: tx)
            return true
        }
    }

    /// `revokeAll` as a person or an operator asks for it, with its event in the audit trail.
    package func revokeAll(accountID: UUID, keeping: UUID?, by actor: AuditActor, origin: AuditOrigin, reason: String? = nil) async throws -> Int {
        try await database.db.withTransaction { tx in
            let count = try await revokeAll(accountID: accountID, keeping: keeping, on: tx)
            var detail = ["sessions": String(count), "kept": keeping == nil ? "none" : "the one asking"]
            if let reason { detail["reason"] = reason }
            try await AuditLog(database: database, clock: clock).record(
                AuditEvent(.sessionsRevoked, by: actor, account: accountID, origin: origin, detail: detail), on: tx)
            return count
        }
    }

    /// Whether the session still exists and has not expired (read from the database, not the cache).
    package func isLive(sessionID: UUID) async throws -> Bool {
        guard let expires = try await store.expiry(of: sessionID) else { return false }
        return expires > clock.now()
    }

    /// When a session was opened (with a password or a code), or nil for none.
    package func openedAt(sessionID: UUID?) async throws -> Date? {
        guard let sessionID else { return nil }
        return try await SessionModel.find(sessionID, on: database.db)?.createdAt
    }

    /// Ends every session of the account except `keeping`; returns how many ended.
    @discardableResult
    package func revokeAll(accountID: UUID, keeping: UUID? = nil, on db: (any GatehouseDatabase)? = nil) async throws -> Int {
        let ended = try await store.removeAll(of: accountID, keeping: keeping, on: db)
        try await sessionsEnded(accountID: accountID, on: db)
        return ended
    }

    /// Sessions of the account ended: forgotten here at once, and on every other instance when
    /// the event arrives (with `db` a transaction, when it commits).
    private func sessionsEnded(accountID: UUID, on db: (any GatehouseDatabase)? = nil) async throws {
        try await accountChanged(accountID, on: db)
    }

    /// Something the session lookup reads with the account changed outside the account's row (its
    /// client record): its cached sessions are forgotten here at once, and on every other instance
    /// when the event arrives (with `db` a transaction, when it commits).
    package func accountChanged(_ accountID: UUID, on db: (any GatehouseDatabase)? = nil) async throws {
        cache.invalidate(accountID: accountID)
        try await bus.publish(BusEvent(topic: BusTopic.accountChanged, account: accountID), on: db)
    }

    /// The account's live sessions, newest first.
    /// One live session as the account's owner sees it in a list (no token, no hash).
    package struct Summary: Sendable, Equatable {
        package var id: UUID
        package var device: String?
        package var ip: String?
        package var createdAt: Date
        package var lastUsedAt: Date
        package var expiresAt: Date
    }

    /// The account's live sessions, newest first.
    package func list(accountID: UUID) async throws -> [Summary] {
        try await SessionModel.query(on: database.db)
            .filter(\.$accountID == accountID)
            .filter(\.$expiresAt > clock.now())
            .sort(\.$createdAt, .descending)
            .sort(\.$id, .descending)
            .all()
            .map { Summary(id: $0.id!, device: $0.device, ip: $0.ip, createdAt: $0.createdAt, lastUsedAt: $0.lastUsedAt, expiresAt: $0.expiresAt) }
    }

    package func purgeExpired() async throws {
        try await SessionModel.query(on: database.db).filter(\.$expiresAt < clock.now()).delete()
    }

    package init(database: DatabaseProvider, clock: GatehouseClock, ttl: TimeInterval, cache: SessionCache, bus: any EventBus, random: GatehouseRandom) {
        self.database = database
        self.clock = clock
        self.ttl = ttl
        self.cache = cache
        self.bus = bus
        self.random = random
    }
}
