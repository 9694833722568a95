import FluentKit
import Foundation
import GatehouseFoundation
import SQLKit

/// A client of the OpenID Connect provider as registered (never its secret: its SHA-256).
package struct OpenIDClient: Sendable, Equatable {
    package var id: String
    package var name: String
    package var redirectURIs: [String]
    package var postLogoutRedirectURIs: [String]
    package var secretHash: String?
    package var scopes: [String]
    package var firstParty: Bool
    package var createdAt: Date
    package var disabledAt: Date?

    /// A confidential client authenticates with its secret; a public one (an app on a phone, a page) cannot keep one.
    package var isConfidential: Bool { secretHash != nil }
}

/// An authorization code as kept: its hash and everything it is bound to.
package struct AuthorizationCodeRow: Sendable {
    package var clientID: String
    package var accountID: UUID
    package var redirectURI: String
    package var codeChallenge: String
    package var nonce: String?
    package var scope: String
    package var methods: [AuthMethod]
    package var authTime: Date
    package var expiresAt: Date
    package var usedAt: Date?
    package var grantSessionID: UUID?
}

/// A session the provider opened for a client: the client, what it was granted, when its person signed in.
package struct OpenIDGrant: Sendable, Equatable {
    package var sessionID: UUID
    package var clientID: String
    package var scope: String
    package var authTime: Date
}

/// Every statement of the provider's tables (`OpenIDProvider` and `OpenIDClients` hold the rules).
package struct OpenIDStore: Sendable {
    package let database: DatabaseProvider

    package init(database: DatabaseProvider) {
        self.database = database
    }

    // MARK: Clients

    package func insert(_ client: OpenIDClient) async throws {
        try await database.db.raw("""
            INSERT INTO oidc_clients (id, name, redirect_uris, post_logout_redirect_uris, secret_hash, scopes, first_party, created_at)
            VALUES (\(bind: client.id), \(bind: client.name), \(bind: client.redirectURIs.joined(separator: "\n")),
                    \(bind: client.postLogoutRedirectURIs.joined(separator: "\n")), \(bind: client.secretHash), \(bind: client.scopes.joined(separator: " ")),
                    \(bind: client.firstParty), \(bind: client.createdAt))
            """).run()
    }

    package func client(_ id: String) async throws -> OpenIDClient? {
        try await database.db.raw("SELECT * FROM oidc_clients WHERE id = \(bind: id)").first().map(Self.client)
    }

    package func clients() async throws -> [OpenIDClient] {
        try await database.db.raw("SELECT * FROM oidc_clients ORDER BY created_at, id").all().map(Self.client)
    }

    package func disable(_ id: String, at now: Date) async throws -> Bool {
        try await !database.db.raw("UPDATE oidc_clients SET disabled_at = \(bind: now) WHERE id = \(bind: id) AND disabled_at IS NULL RETURNING id")
            .all().isEmpty
    }

    package func setSecret(_ id: String, hash: String) async throws -> Bool {
        try await !database.db.raw("UPDATE oidc_clients SET secret_hash = \(bind: hash) WHERE id = \(bind: id) AND secret_hash IS NOT NULL RETURNING id")
            .all().isEmpty
    }

    static func client(_ row: any SQLRow) throws -> OpenIDClient {
        func lines(_ column: String) throws -> [String] { try row.decode(column: column, as: String.self).split(separator: "\n").map(String.init) }
        return OpenIDClient(
            id: try row.decode(column: "id", as: String.self), name: try row.decode(column: "name", as: String.self),
            redirectURIs: try lines("redirect_uris"), postLogoutRedirectURIs: try lines("post_logout_redirect_uris"),
            secretHash: try row.decode(column: "secret_hash", as: String?.self),
            scopes: try row.decode(column: "scopes", as: String.self).split(separator: " ").map(String.init),
            firstParty: try row.decode(column: "first_party", as: Bool.self), createdAt: try row.decode(column: "created_at", as: Date.self),
            disabledAt: try row.decode(column: "disabled_at", as: Date?.self))
    }

    // MARK: Codes

    package func insertCode(hash: String, _ code: AuthorizationCodeRow, at now: Date) async throws {
        try await database.db.raw("""
            INSERT INTO oidc_codes (code_hash, client_id, account_id, redirect_uri, code_challenge, nonce, scope, methods, auth_time, created_at, expires_at)
            VALUES (\(bind: hash), \(bind: code.clientID), \(bind: code.accountID), \(bind: code.redirectURI), \(bind: code.codeChallenge), \(bind: code.nonce),
                    \(bind: code.scope), \(bind: AuthMethod.stored(code.methods)), \(bind: code.authTime), \(bind: now), \(bind: code.expiresAt))
            """).run()
    }

    /// The code by its hash, locked for its exchange on PostgreSQL (two exchanges of one code are decided one after the other).
    package func code(hash: String, postgres: Bool, on tx: any GatehouseDatabase) async throws -> AuthorizationCodeRow? {
        try await tx.raw("SELECT * FROM oidc_codes WHERE code_hash = \(bind: hash)\(unsafeRaw: postgres ? " FOR UPDATE" : "")").first().map { row in
            AuthorizationCodeRow(
                clientID: try row.decode(column: "client_id", as: String.self), accountID: try row.decode(column: "account_id", as: UUID.self),
                redirectURI: try row.decode(column: "redirect_uri", as: String.self), codeChallenge: try row.decode(column: "code_challenge", as: String.self),
                nonce: try row.decode(column: "nonce", as: String?.self), scope: try row.decode(column: "scope", as: String.self),
                methods: AuthMethod.read(try row.decode(column: "methods", as: String.self)), authTime: try row.decode(column: "auth_time", as: Date.self),
                expiresAt: try row.decode(column: "expires_at", as: Date.self), usedAt: try row.decode(column: "used_at", as: Date?.self),
                grantSessionID: try row.decode(column: "grant_session_id", as: UUID?.self))
        }
    }

    /// Marks the code used, unless it was: whether this use is the first.
    package func useCode(hash: String, at now: Date, on tx: any GatehouseDatabase) async throws -> Bool {
        try await !tx.raw("UPDATE oidc_codes SET used_at = \(bind: now) WHERE code_hash = \(bind: hash) AND used_at IS NULL RETURNING code_hash").all().isEmpty
    }

    package func setGrantSession(codeHash: String, session: UUID, on tx: any GatehouseDatabase) async throws {
        try await tx.raw("UPDATE oidc_codes SET grant_session_id = \(bind: session) WHERE code_hash = \(bind: codeHash)").run()
    }

    /// Codes past their end (used ones included: a reuse after the end is refused as unknown).
    package func purgeCodes(before now: Date) async throws {
        try await database.db.raw("DELETE FROM oidc_codes WHERE expires_at < \(bind: now)").run()
    }

    // MARK: Consents and grants

    package func consent(account: UUID, client: String) async throws -> [String] {
        try await database.db.raw("SELECT scope FROM oidc_consents WHERE account_id = \(bind: account) AND client_id = \(bind: client)").first()
            .map { try $0.decode(column: "scope", as: String.self).split(separator: " ").map(String.init) } ?? []
    }

    package func saveConsent(account: UUID, client: String, scope: [String], at now: Date) async throws {
        try await database.db.withTransaction { tx in
            try await tx.raw("DELETE FROM oidc_consents WHERE account_id = \(bind: account) AND client_id = \(bind: client)").run()
            try await tx.raw("""
                INSERT INTO oidc_consents (account_id, client_id, scope, granted_at)
                VALUES (\(bind: account), \(bind: client), \(bind: scope.joined(separator: " ")), \(bind: now))
                """).run()
        }
    }

    package func insertGrant(_ grant: OpenIDGrant, on tx: any GatehouseDatabase) async throws {
        try await tx.raw("""
            INSERT INTO oidc_grants (session_id, client_id, scope, auth_time)
            VALUES (\(bind: grant.sessionID), \(bind: grant.clientID), \(bind: grant.scope), \(bind: grant.authTime))
            """).run()
    }

    /// The grant of a session, when the provider opened it for a client.
    package func grant(session: UUID) async throws -> OpenIDGrant? {
        try await database.db.raw("SELECT * FROM oidc_grants WHERE session_id = \(bind: session)").first().map { row in
            OpenIDGrant(sessionID: try row.decode(column: "session_id", as: UUID.self), clientID: try row.decode(column: "client_id", as: String.self),
                        scope: try row.decode(column: "scope", as: String.self), authTime: try row.decode(column: "auth_time", as: Date.self))
        }
    }
}
