import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import SQLKit

/// Identities from Apple and Google (docs/social-login.md): an identity is `(provider, subject)`, joined to one
/// account; the identity tokens spent (each signs in once); the link offers of `identity_link_required`.
package struct M033CreateIdentities: SQLMigration {
    package var name: String { "033_CreateIdentities" }

    package func prepare(on database: any GatehouseDatabase) async throws {
        try await database.schema("account_identities")
            .field("id", .uuid, .identifier(auto: false))
            .field("account_id", .uuid, .required, .references("accounts", "id", onDelete: .cascade))
            .field("provider", .string, .required)
            // The provider's `sub`: stable for the app's team, the identity's key.
            .field("subject", .string, .required)
            // What the provider last said of the person's address (information, never a key to an account).
            .field("email", .string)
            .field("email_verified", .bool, .required)
            .field("private_email", .bool, .required)
            // Whether mail to the address reaches the person (Apple's `email-disabled` / `email-enabled`), and the time
            // of the newest such notification acted on (an older one, replayed, changes nothing).
            .field("email_forwarding", .bool, .required)
            .field("email_event_at", .datetime)
            // The client id the provider's token was for (the bundle id or service id Apple's code was issued to).
            .field("audience", .string, .required)
            // Apple's refresh token, sealed (AES-GCM, a key derived from the server secret): used only to revoke.
            .field("refresh_token_sealed", .string)
            .field("created_at", .datetime, .required)
            .field("last_used_at", .datetime)
            .unique(on: "provider", "subject", name: "uq_account_identities_subject")
            .create()
        try await database.create(index: "ix_account_identities_account").on("account_identities").column("account_id").run()
        try await database.schema("identity_token_uses")
            // SHA-256 of the token: kept until the token expires, so that it signs in once.
            .field("token_hash", .string, .identifier(auto: false))
            .field("expires_at", .datetime, .required)
            .create()
        try await database.create(index: "ix_identity_token_uses_expires").on("identity_token_uses").column("expires_at").run()
        try await database.schema("identity_links")
            .field("id", .uuid, .identifier(auto: false))
            .field("token_hash", .string, .required)
            .field("account_id", .uuid, .required, .references("accounts", "id", onDelete: .cascade))
            .field("provider", .string, .required)
            .field("subject", .string, .required)
            .field("email", .string, .required)
            .field("private_email", .bool, .required)
            .field("audience", .string, .required)
            .field("refresh_token_sealed", .string)
            .field("created_at", .datetime, .required)
            .field("expires_at", .datetime, .required)
            .field("used_at", .datetime)
            .unique(on: "token_hash", name: "uq_identity_links_token")
            .create()
        try await database.create(index: "ix_identity_links_account").on("identity_links").column("account_id").run()
        // A second step after a provider's token: which way in it follows (nil: a password).
        try await database.schema("login_challenges").field("first_method", .string).update()
    }

    package func revert(on database: any GatehouseDatabase) async throws {
        try await database.schema("login_challenges").deleteField("first_method").update()
        try await database.schema("identity_links").delete()
        try await database.schema("identity_token_uses").delete()
        try await database.schema("account_identities").delete()
    }

    package init() {}
}

/// Every query of the identities' tables.
package struct IdentityStore: Sendable {
    package let database: DatabaseProvider

    package init(database: DatabaseProvider) {
        self.database = database
    }

    package struct Row: Sendable {
        package var id: UUID
        package var accountID: UUID
        package var provider: IdentityProvider
        package var subject: String
        package var email: String?
        package var emailVerified: Bool
        package var privateEmail: Bool
        package var emailForwarding: Bool
        package var createdAt: Date
        package var lastUsedAt: Date?

        package var shown: LinkedIdentity {
            LinkedIdentity(id: id, provider: provider, email: email, createdAt: createdAt, lastUsedAt: lastUsedAt)
        }
    }

    private static let columns: SQLQueryString = "id, account_id, provider, subject, email, email_verified, private_email, email_forwarding, created_at, last_used_at"

    private static func row(_ row: any SQLRow) throws -> Row? {
        guard let provider = IdentityProvider(rawValue: try row.decode(column: "provider", as: String.self)) else { return nil }
        return Row(id: try row.decode(column: "id", as: UUID.self), accountID: try row.decode(column: "account_id", as: UUID.self), provider: provider,
                   subject: try row.decode(column: "subject", as: String.self), email: try row.decode(column: "email", as: String?.self),
                   emailVerified: try row.decode(column: "email_verified", as: Bool.self), privateEmail: try row.decode(column: "private_email", as: Bool.self),
                   emailForwarding: try row.decode(column: "email_forwarding", as: Bool.self), createdAt: try row.decode(column: "created_at", as: Date.self), lastUsedAt: try row.decode(column: "last_used_at", as: Date?.self))
    }

    /// The identity `(provider, subject)`, if it is linked.
    package func find(_ provider: IdentityProvider, subject: String, on db: (any GatehouseDatabase)? = nil) async throws -> Row? {
        try await (db ?? database.db).raw("""
            SELECT \(Self.columns) FROM account_identities WHERE provider = \(bind: provider.rawValue) AND subject = \(bind: subject)
            """).first().flatMap(Self.row)
    }

    /// The account's identities, oldest first.
    package func list(of accountID: UUID, on db: (any GatehouseDatabase)? = nil) async throws -> [Row] {
        try await (db ?? database.db).raw("""
            SELECT \(Self.columns) FROM account_identities WHERE account_id = \(bind: accountID) ORDER BY created_at, id
            """).all().compactMap(Self.row)
    }

    /// Links `identity` to the account, in the caller's transaction (a unique violation: linked elsewhere meanwhile), with
    /// Apple's sealed refresh token when one was obtained.
    package func insert(_ identity: ProviderIdentity, id: UUID, accountID: UUID, refreshTokenSealed: String?, at now: Date,
                        on tx: any GatehouseDatabase) async throws {
        try await tx.raw("""
            INSERT INTO account_identities (id, account_id, provider, subject, email, email_verified, private_email, email_forwarding, audience,
                                            refresh_token_sealed, created_at, last_used_at)
            VALUES (\(bind: id), \(bind: accountID), \(bind: identity.provider.rawValue), \(bind: identity.subject), \(bind: identity.email),
                    \(bind: identity.emailVerified), \(bind: identity.isPrivateEmail), \(bind: true), \(bind: identity.audience), \(bind: refreshTokenSealed),
                    \(bind: now), \(bind: now))
            """).run()
    }

    /// A sign-in with the identity: when, what the provider now says of the address, and a new refresh token if one
    /// was obtained (the old one is kept otherwise).
    package func noteUse(_ id: UUID, identity: ProviderIdentity, refreshTokenSealed: String?, at now: Date, on tx: any GatehouseDatabase) async throws {
        try await tx.raw("""
            UPDATE account_identities SET last_used_at = \(bind: now), email = \(bind: identity.email), email_verified = \(bind: identity.emailVerified),
                private_email = \(bind: identity.isPrivateEmail), audience = \(bind: identity.audience),
                refresh_token_sealed = COALESCE(\(bind: refreshTokenSealed), refresh_token_sealed)
            WHERE id = \(bind: id)
            """).run()
    }

    /// A new refresh token for the identity (the old one, if any, is Apple's to expire).
    package func keepRefreshToken(_ id: UUID, sealed: String, on tx: any GatehouseDatabase) async throws {
        try await tx.raw("UPDATE account_identities SET refresh_token_sealed = \(bind: sealed) WHERE id = \(bind: id)").run()
    }

    /// The account's refresh tokens still held (Apple's, sealed), each with the client id it was issued to, taken
    /// out of their rows in the caller's transaction: the revocations to queue.
    package func takeRefreshTokens(of accountID: UUID, identity: UUID? = nil, on tx: any GatehouseDatabase) async throws -> [(provider: String, clientID: String, sealed: String)] {
        let only: SQLQueryString = identity.map { "AND id = \(bind: $0)" } ?? ""
        let rows = try await tx.raw("""
            SELECT id, provider, audience, refresh_token_sealed FROM account_identities
            WHERE account_id = \(bind: accountID) AND refresh_token_sealed IS NOT NULL \(only)
            """).all()
        var taken: [(provider: String, clientID: String, sealed: String)] = []
        for row in rows {
            try await tx.raw("UPDATE account_identities SET refresh_token_sealed = NULL WHERE id = \(bind: try row.decode(column: "id", as: UUID.self))").run()
            taken.append((try row.decode(column: "provider", as: String.self), try row.decode(column: "audience", as: String.self),
                          try row.decode(column: "refresh_token_sealed", as: String.self)))
        }
        return taken
    }

    /// Every identity of the account and every offer to link one, gone (the account's erasure).
    package func removeAll(of accountID: UUID, on tx: any GatehouseDatabase) async throws {
        try await tx.raw("DELETE FROM account_identities WHERE account_id = \(bind: accountID)").run()
        try await tx.raw("DELETE FROM identity_links WHERE account_id = \(bind: accountID)").run()
    }

    /// Whether mail to the identity's address reaches the person, as a notification of `at` says; a notification
    /// older than the last one acted on changes nothing. True when it changed the row.
    package func noteEmailForwarding(_ id: UUID, _ forwarding: Bool, at eventAt: Date, on tx: any GatehouseDatabase) async throws -> Bool {
        try await tx.raw("""
            UPDATE account_identities SET email_forwarding = \(bind: forwarding), email_event_at = \(bind: eventAt)
            WHERE id = \(bind: id) AND (email_event_at IS NULL OR email_event_at < \(bind: eventAt))
            RETURNING id
            """).first() != nil
    }

    /// Unlinks one of the account's identities: the row it was, or nil when the account has no such identity.
    package func remove(_ id: UUID, of accountID: UUID, on tx: any GatehouseDatabase) async throws -> Row? {
        guard let found = try await tx.raw("SELECT \(Self.columns) FROM account_identities WHERE id = \(bind: id) AND account_id = \(bind: accountID)")
            .first().flatMap(Self.row) else { return nil }
        try await tx.raw("DELETE FROM account_identities WHERE id = \(bind: id)").run()
        return found
    }

    /// Spends an identity token: true the first time, false when it was spent before. Spent tokens are kept until
    /// they expire (a minute's skew after), and those long expired are dropped here.
    package func spendToken(_ token: String, expiresAt: Date, now: Date, on tx: any GatehouseDatabase) async throws -> Bool {
        try await tx.raw("DELETE FROM identity_token_uses WHERE expires_at < \(bind: now.addingTimeInterval(-3_600))").run()
        return try await tx.raw("""
            INSERT INTO identity_token_uses (token_hash, expires_at) VALUES (\(bind: Secrets.sha256Hex(token)), \(bind: expiresAt))
            ON CONFLICT (token_hash) DO NOTHING RETURNING token_hash
            """).first() != nil
    }

    // MARK: Link offers

    package struct Offer: Sendable {
        package var id: UUID
        package var accountID: UUID
        package var provider: IdentityProvider
        package var subject: String
        package var email: String
        package var privateEmail: Bool
        package var audience: String
        package var refreshTokenSealed: String?
    }

    package func addOffer(tokenHash: String, accountID: UUID, identity: ProviderIdentity, email: String, refreshTokenSealed: String?, at now: Date,
                          expiresAt: Date, on tx: any GatehouseDatabase) async throws {
        try await tx.raw("DELETE FROM identity_links WHERE expires_at < \(bind: now.addingTimeInterval(-3_600))").run()
        try await tx.raw("""
            INSERT INTO identity_links (id, token_hash, account_id, provider, subject, email, private_email, audience, refresh_token_sealed,
                                        created_at, expires_at)
            VALUES (\(bind: UUID()), \(bind: tokenHash), \(bind: accountID), \(bind: identity.provider.rawValue), \(bind: identity.subject),
                    \(bind: email), \(bind: identity.isPrivateEmail), \(bind: identity.audience), \(bind: refreshTokenSealed), \(bind: now),
                    \(bind: expiresAt))
            """).run()
    }

    /// A live, unused offer by its token's hash.
    package func offer(tokenHash: String, at now: Date) async throws -> Offer? {
        guard let row = try await database.db.raw("""
            SELECT id, account_id, provider, subject, email, private_email, audience, refresh_token_sealed FROM identity_links
            WHERE token_hash = \(bind: tokenHash) AND used_at IS NULL AND expires_at > \(bind: now)
            """).first(),
            let provider = IdentityProvider(rawValue: try row.decode(column: "provider", as: String.self))
        else { return nil }
        return Offer(id: try row.decode(column: "id", as: UUID.self), accountID: try row.decode(column: "account_id", as: UUID.self), provider: provider,
                     subject: try row.decode(column: "subject", as: String.self), email: try row.decode(column: "email", as: String.self),
                     privateEmail: try row.decode(column: "private_email", as: Bool.self), audience: try row.decode(column: "audience", as: String.self),
                     refreshTokenSealed: try row.decode(column: "refresh_token_sealed", as: String?.self))
    }

    /// Marks the offer used, in the transaction that links; false when another request used it first.
    package func useOffer(_ id: UUID, at now: Date, on tx: any GatehouseDatabase) async throws -> Bool {
        try await tx.raw("UPDATE identity_links SET used_at = \(bind: now) WHERE id = \(bind: id) AND used_at IS NULL RETURNING id").first() != nil
    }
}
