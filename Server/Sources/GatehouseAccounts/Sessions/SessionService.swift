import FluentKit
import Foundation
import GatehouseFoundation
import GatehousePlatform
import SQLKit

/// A session as the surfaces see it after authentication.
package struct AuthenticatedSession: Sendable {
    package var id: UUID
    package var accountID: UUID
    package var expiresAt: Date

    package init(id: UUID, accountID: UUID, expiresAt: Date) {
        self.id = id
        self.accountID = accountID
        self.expiresAt = expiresAt
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
}

/// One session table for every surface (REST bearer tokens, the WebSocket gateway's token).
package struct SessionService: Sendable {
    package let database: DatabaseProvider
    package let clock: GatehouseClock
    package let ttl: TimeInterval
    package let cache: SessionCache
    package let bus: any EventBus
    package let random: GatehouseRandom
    /// `last_used_at` is written at most this often per session, keeping the hot read path read-only.
    package let lastUsedResolution: TimeInterval = 60

    /// Opens a session, unless the account is locked (`account_locked`) or asks for a second
    /// factor the caller did not check (`second_factor_required`): the one place every way in
    /// (password, code, temporary password, signature, sign-up) passes, so a lock and a second
    /// factor hold on every surface. One statement: the insert takes the account's row as its condition.
    package func create(accountID: UUID, device: String?, ip: String?, secondFactorChecked: Bool = false,
                        on db: (any Database)? = nil) async throws -> IssuedSession {
        let token = random.token()
        let now = clock.now()
        let id = OrderedID.make()
        let expiresAt = now.addingTimeInterval(ttl)
        let sql = (db ?? database.db) as! any SQLDatabase
        let opened = try await sql.raw("""
            INSERT INTO sessions (id, account_id, token_hash, created_at, expires_at, last_used_at, device, ip)
            SELECT \(bind: id), id, \(bind: Secrets.sha256Hex(token)), \(bind: now), \(bind: expiresAt), \(bind: now),
                   \(bind: device.map { String($0.prefix(200)) }), \(bind: ip)
            FROM accounts WHERE id = \(bind: accountID) AND locked_at IS NULL\(unsafeRaw: secondFactorChecked ? "" : " AND second_factor_at IS NULL")
            RETURNING id
            """).all()
        guard !opened.isEmpty else {
            let locked = try await sql.raw("SELECT locked_at FROM accounts WHERE id = \(bind: accountID)").first()?
                .decode(column: "locked_at", as: Date?.self) != nil
            throw locked ? GatehouseError.accountLocked : GatehouseError.secondFactorRequired()
        }
        return IssuedSession(token: token, id: id, accountID: accountID, expiresAt: expiresAt)
    }

    /// The session for a bearer token, or nil when it is unknown, revoked or expired.
    /// One indexed lookup by the token's hash.
    /// Served from the session cache while its copy is fresh; otherwise the session by the
    /// token's hash and its account, which the cache then keeps for its TTL.
    package func authenticate(token: String) async throws -> SessionWithAccount? {
        guard !token.isEmpty, token.utf8.count <= 512 else { return nil }
        let tokenHash = Secrets.sha256Hex(token)
        guard let found = try await cache.value(tokenHash: tokenHash, load: { try await self.load(tokenHash: tokenHash) }),
              found.session.expiresAt > clock.now()
        else { return nil }
        return SessionWithAccount(session: found.session, account: found.account)
    }

    /// The session, its account and the account's client record in one query, decoded by hand:
    /// Fluent's reflection and query building cost more than the database itself on this path
    /// (docs/performance.md), and the record read on its own was 60% of `GET /api/users/user`.
    /// Prepared on PostgreSQL: planning the join cost the database nine times what running it
    /// did, on every request whose session was not cached.
    private func load(tokenHash: String) async throws -> SessionCache.Value? {
        let now = clock.now()
        guard let row = try await database.sql.preparedRows("""
            SELECT s.id AS session_id, s.expires_at AS session_expires_at, s.last_used_at AS session_last_used_at,
                   a.id, a.phone, a.phone_verified_at, a.email, a.email_confirmed_at, a.pending_email, a.username,
                   a.first_name, a.last_name, a.middle_name, a.birthday, a.locale, a.fcm_token, a.avatar_id,
                   a.created_at, a.updated_at,
                   c.phone AS client_phone, c.first_name AS client_first_name, c.last_name AS client_last_name,
                   c.middle_name AS client_middle_name, c.email AS client_email, c.birthday AS client_birthday,
                   c.room AS client_room, c.base AS client_base, c.parts AS client_parts
            FROM sessions s JOIN accounts a ON a.id = s.account_id LEFT JOIN client_records c ON c.account_id = a.id
            WHERE s.token_hash = \(bind: tokenHash) AND a.deletion_requested_at IS NULL AND a.locked_at IS NULL
            """).first
        else { return nil }
        let sessionID = try row.decode(column: "session_id", as: UUID.self)
        let expiresAt = try row.decode(column: "session_expires_at", as: Date.self)
        guard expiresAt > now else { return nil }
        let account = try AccountSnapshot(
            id: row.decode(column: "id", as: UUID.self),
            phone: row.decode(column: "phone", as: String?.self),
            phoneVerifiedAt: row.decode(column: "phone_verified_at", as: Date?.self),
            email: row.decode(column: "email", as: String?.self),
            emailConfirmedAt: row.decode(column: "email_confirmed_at", as: Date?.self),
            pendingEmail: row.decode(column: "pending_email", as: String?.self),
            username: row.decode(column: "username", as: String?.self),
            firstName: row.decode(column: "first_name", as: String?.self),
            lastName: row.decode(column: "last_name", as: String?.self),
            middleName: row.decode(column: "middle_name", as: String?.self),
            birthday: row.decode(column: "birthday", as: Date?.self),
            locale: row.decode(column: "locale", as: String?.self),
            fcmToken: row.decode(column: "fcm_token", as: String?.self),
            avatarID: row.decode(column: "avatar_id", as: UUID?.self),
            createdAt: row.decode(column: "created_at", as: Date.self),
            updatedAt: row.decode(column: "updated_at", as: Date.self),
            clientRecord: row.decode(column: "client_phone", as: String?.self) == nil ? nil : ClientRecords.record(row, prefix: "client_")
        )
        if now.timeIntervalSince(try row.decode(column: "session_last_used_at", as: Date.self)) > lastUsedResolution {
            try await database.sql.raw("UPDATE sessions SET last_used_at = \(bind: now) WHERE id = \(bind: sessionID)").run()
        }
        return (AuthenticatedSession(id: sessionID, accountID: account.id, expiresAt: expiresAt), account)
    }

    package func revoke(sessionID: UUID) async throws {
        let ended = try await (database.db as! any SQLDatabase).raw("""
            DELETE FROM sessions WHERE id = \(bind: sessionID) RETURNING account_id
            """).all()
        for row in ended { try await sessionsEnded(accountID: try row.decode(column: "account_id", as: UUID.self)) }
    }

    /// Ends one session if it belongs to the account, with its event in the audit trail; false
    /// when there is no such session.
    package func revoke(sessionID: UUID, ofAccount accountID: UUID, by actor: AuditActor, origin: AuditOrigin) async throws -> Bool {
        try await database.db.transaction { tx in
            let ended = try await (tx as! any SQLDatabase).raw("""
                DELETE FROM sessions WHERE id = \(bind: sessionID) AND account_id = \(bind: accountID) RETURNING id
                """).all()
            guard !ended.isEmpty else { return false }
            try await AuditLog(database: database, clock: clock).record(
                AuditEvent(.sessionRevoked, by: actor, account: accountID, origin: origin, detail: ["session": sessionID.uuidString.lowercased()]), on: tx)
            try await sessionsEnded(accountID: accountID, on: tx)
            return true
        }
    }

    /// `revokeAll` as a person or an operator asks for it, with its event in the audit trail.
    package func revokeAll(accountID: UUID, keeping: UUID?, by actor: AuditActor, origin: AuditOrigin, reason: String? = nil) async throws -> Int {
        try await database.db.transaction { tx in
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
        guard let expires = try await database.sql.raw("SELECT expires_at FROM sessions WHERE id = \(bind: sessionID)")
            .first(decodingColumn: "expires_at", as: Date.self) else { return false }
        return expires > clock.now()
    }

    /// When a session was opened (with a password or a code), or nil for none.
    package func openedAt(sessionID: UUID?) async throws -> Date? {
        guard let sessionID else { return nil }
        return try await SessionModel.find(sessionID, on: database.db)?.createdAt
    }

    /// Ends every session of the account except `keeping`; returns how many ended.
    @discardableResult
    package func revokeAll(accountID: UUID, keeping: UUID? = nil, on db: (any Database)? = nil) async throws -> Int {
        let sql = (db ?? database.db) as! any SQLDatabase
        let ended = if let keeping {
            try await sql.raw("DELETE FROM sessions WHERE account_id = \(bind: accountID) AND id <> \(bind: keeping) RETURNING id").all()
        } else {
            try await sql.raw("DELETE FROM sessions WHERE account_id = \(bind: accountID) RETURNING id").all()
        }
        try await sessionsEnded(accountID: accountID, on: db)
        return ended.count
    }

    /// Sessions of the account ended: forgotten here at once, and on every other instance when
    /// the event arrives (with `db` a transaction, when it commits).
    private func sessionsEnded(accountID: UUID, on db: (any Database)? = nil) async throws {
        try await accountChanged(accountID, on: db)
    }

    /// Something the session lookup reads with the account changed outside the account's row (its
    /// client record): its cached sessions are forgotten here at once, and on every other instance
    /// when the event arrives (with `db` a transaction, when it commits).
    package func accountChanged(_ accountID: UUID, on db: (any Database)? = nil) async throws {
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
