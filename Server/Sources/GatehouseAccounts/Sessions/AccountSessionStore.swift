import FluentKit
import Foundation
import GatehouseFoundation
import SQLKit

/// Every statement of the `sessions` table (`SessionService` holds the rules: tokens, the cache, the events).
package struct AccountSessionStore: Sendable {
    package let database: DatabaseProvider

    package init(database: DatabaseProvider) {
        self.database = database
    }

    /// Opens a session for an account that is not locked (and, unless a second factor was checked, has none on): one
    /// statement, the account's row as its condition. False when the account's state refused it.
    package func open(_ id: UUID, accountID: UUID, tokenHash: String, at now: Date, expiresAt: Date, device: String?, ip: String?,
                      methods: [AuthMethod], secondFactorChecked: Bool, on db: (any GatehouseDatabase)?) async throws -> Bool {
        try await !(db ?? database.db).raw("""
            INSERT INTO sessions (id, account_id, token_hash, created_at, expires_at, last_used_at, device, ip, methods)
            SELECT \(bind: id), id, \(bind: tokenHash), \(bind: now), \(bind: expiresAt), \(bind: now), \(bind: device), \(bind: ip),
                   \(bind: AuthMethod.stored(methods))
            FROM accounts WHERE id = \(bind: accountID) AND locked_at IS NULL\(unsafeRaw: secondFactorChecked ? "" : " AND second_factor_at IS NULL")
            RETURNING id
            """).all().isEmpty
    }

    /// Notes the sign-in on the account (what the admin API lists and filters by), at most once a minute per account:
    /// a burst of sessions rewrites the row once.
    package func noteSignIn(_ accountID: UUID, at now: Date, on db: (any GatehouseDatabase)?) async throws {
        try await (db ?? database.db).raw("""
            UPDATE accounts SET last_sign_in_at = \(bind: now)
            WHERE id = \(bind: accountID) AND (last_sign_in_at IS NULL OR last_sign_in_at < \(bind: now.addingTimeInterval(-60)))
            """).run()
    }

    package func isLocked(_ accountID: UUID, on db: (any GatehouseDatabase)?) async throws -> Bool {
        try await (db ?? database.db).raw("SELECT locked_at FROM accounts WHERE id = \(bind: accountID)").first()?
            .decode(column: "locked_at", as: Date?.self) != nil
    }

    /// How a session is looked up.
    package enum SessionKey: Sendable {
        /// A bearer token's hash.
        case tokenHash(String)
        /// A session's id (a signed token's `sid`).
        case id(UUID)
    }

    /// The session by its token's hash (or its id) with its account (not locked, not being deleted) and the account's client record,
    /// in one query decoded by hand: Fluent's reflection and query building cost more than the database itself on this
    /// path (docs/performance.md), and the record read on its own was 60% of `GET /api/users/user`. Prepared on
    /// PostgreSQL: planning the join cost the database nine times what running it did. With when it was last used.
    package func withAccount(_ key: SessionKey) async throws -> (AuthenticatedSession, AccountSnapshot, lastUsedAt: Date)? {
        let condition: SQLQueryString = switch key {
        case .tokenHash(let hash): "s.token_hash = \(bind: hash)"
        case .id(let id): "s.id = \(bind: id)"
        }
        guard let row = try await database.db.preparedRows("""
            SELECT s.id AS session_id, s.expires_at AS session_expires_at, s.last_used_at AS session_last_used_at, s.methods AS session_methods,
                   a.id, a.phone, a.phone_verified_at, a.email, a.email_confirmed_at, a.pending_email, a.username,
                   a.first_name, a.last_name, a.middle_name, a.birthday, a.locale, a.fcm_token, a.avatar_id,
                   a.created_at, a.updated_at,
                   c.phone AS client_phone, c.first_name AS client_first_name, c.last_name AS client_last_name,
                   c.middle_name AS client_middle_name, c.email AS client_email, c.birthday AS client_birthday,
                   c.room AS client_room, c.base AS client_base, c.parts AS client_parts
            FROM sessions s JOIN accounts a ON a.id = s.account_id LEFT JOIN client_records c ON c.account_id = a.id
            WHERE \(condition) AND a.deletion_requested_at IS NULL AND a.locked_at IS NULL
            """).first
        else { return nil }
        let sessionID = try row.decode(column: "session_id", as: UUID.self)
        let expiresAt = try row.decode(column: "session_expires_at", as: Date.self)
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
            clientRecord: row.decode(column: "client_phone", as: String?.self) == nil ? nil : ClientRecord(row: row, prefix: "client_")
        )
        return (AuthenticatedSession(id: sessionID, accountID: account.id, expiresAt: expiresAt,
                                     methods: AuthMethod.read(try row.decode(column: "session_methods", as: String.self))), account,
                try row.decode(column: "session_last_used_at", as: Date.self))
    }

    package func touch(_ id: UUID, at now: Date) async throws {
        try await database.db.raw("UPDATE sessions SET last_used_at = \(bind: now) WHERE id = \(bind: id)").run()
    }

    package func expiry(of id: UUID) async throws -> Date? {
        try await database.db.raw("SELECT expires_at FROM sessions WHERE id = \(bind: id)").first(decodingColumn: "expires_at", as: Date.self)
    }

    /// Ends a session: its account, nil when there was none.
    package func remove(_ id: UUID) async throws -> UUID? {
        try await database.db.raw("DELETE FROM sessions WHERE id = \(bind: id) RETURNING account_id").first(decodingColumn: "account_id", as: UUID.self)
    }

    /// Ends a session of the account: false when the account has none with this id.
    package func remove(_ id: UUID, of accountID: UUID, on tx: any GatehouseDatabase) async throws -> Bool {
        try await !tx.raw("DELETE FROM sessions WHERE id = \(bind: id) AND account_id = \(bind: accountID) RETURNING id").all().isEmpty
    }

    /// Ends every session of the account but `keeping`: how many.
    package func removeAll(of accountID: UUID, keeping: UUID?, on db: (any GatehouseDatabase)?) async throws -> Int {
        let db = db ?? database.db
        if let keeping {
            return try await db.raw("DELETE FROM sessions WHERE account_id = \(bind: accountID) AND id <> \(bind: keeping) RETURNING id").all().count
        }
        return try await db.raw("DELETE FROM sessions WHERE account_id = \(bind: accountID) RETURNING id").all().count
    }
}
