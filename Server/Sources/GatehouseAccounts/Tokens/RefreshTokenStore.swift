import FluentKit
import Foundation
import GatehouseFoundation
import SQLKit

/// A refresh token as it is kept (never the token: its SHA-256), with its session as the exchange reads it.
package struct RefreshTokenRow: Sendable {
    package var id: UUID
    package var familyID: UUID
    package var sessionID: UUID
    package var accountID: UUID
    package var expiresAt: Date
    package var usedAt: Date?
    /// The session's end (a refresh never outlives it) and how its person signed in.
    package var sessionExpiresAt: Date
    package var methods: [AuthMethod]
    /// The OpenID Connect client the session was opened for (`oidc_grants`), and what it was granted; nil for a
    /// session of a sign-in on `/v1`.
    package var clientID: String?
    package var scope: String?
}

/// Every statement of `refresh_tokens` (`RefreshTokens` holds the rules: rotation, reuse, the session's end).
package struct RefreshTokenStore: Sendable {
    package let database: DatabaseProvider

    package init(database: DatabaseProvider) {
        self.database = database
    }

    package func insert(id: UUID, family: UUID, session: UUID, tokenHash: String, at now: Date, expiresAt: Date, on tx: any GatehouseDatabase) async throws {
        try await tx.raw("""
            INSERT INTO refresh_tokens (id, family_id, session_id, token_hash, created_at, expires_at)
            VALUES (\(bind: id), \(bind: family), \(bind: session), \(bind: tokenHash), \(bind: now), \(bind: expiresAt))
            """).run()
    }

    /// The token by its hash, with its session (an ended session has taken its tokens with it) of an account neither
    /// locked nor being deleted; locked
    /// for the exchange on PostgreSQL, so two refreshes of one token are decided one after the other.
    package func find(tokenHash: String, postgres: Bool, on tx: any GatehouseDatabase) async throws -> RefreshTokenRow? {
        try await tx.raw("""
            SELECT r.id, r.family_id, r.session_id, r.expires_at, r.used_at, s.account_id, s.expires_at AS session_expires_at, s.methods,
                   g.client_id, g.scope
            FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id JOIN accounts a ON a.id = s.account_id
            LEFT JOIN oidc_grants g ON g.session_id = r.session_id
            WHERE r.token_hash = \(bind: tokenHash) AND a.locked_at IS NULL AND a.deletion_requested_at IS NULL\(unsafeRaw: postgres ? " FOR UPDATE OF r" : "")
            """).first().map { row in
            RefreshTokenRow(
                id: try row.decode(column: "id", as: UUID.self), familyID: try row.decode(column: "family_id", as: UUID.self),
                sessionID: try row.decode(column: "session_id", as: UUID.self), accountID: try row.decode(column: "account_id", as: UUID.self),
                expiresAt: try row.decode(column: "expires_at", as: Date.self), usedAt: try row.decode(column: "used_at", as: Date?.self),
                sessionExpiresAt: try row.decode(column: "session_expires_at", as: Date.self),
                methods: AuthMethod.read(try row.decode(column: "methods", as: String.self)),
                clientID: try row.decode(column: "client_id", as: String?.self), scope: try row.decode(column: "scope", as: String?.self))
        }
    }

    /// Marks the token exchanged, unless it was already: whether this exchange is the first.
    package func use(_ id: UUID, at now: Date, on tx: any GatehouseDatabase) async throws -> Bool {
        try await !tx.raw("UPDATE refresh_tokens SET used_at = \(bind: now) WHERE id = \(bind: id) AND used_at IS NULL RETURNING id").all().isEmpty
    }

    /// The token by its hash with its session and client, without locking it (introspection).
    package func peek(tokenHash: String) async throws -> RefreshTokenRow? {
        try await find(tokenHash: tokenHash, postgres: false, on: database.db)
    }

    /// Expired tokens.
    package func purge(before now: Date) async throws {
        try await database.db.raw("DELETE FROM refresh_tokens WHERE expires_at < \(bind: now)").run()
    }
}
