import FluentKit
import GatehouseFoundation
import SQLKit

/// The OpenID Connect provider (docs/oidc.md, "The provider"): its registered clients, the authorization codes it
/// gives a browser, the consents people gave third-party clients, and which client each session it opened for one
/// belongs to.
package struct M028CreateOpenID: SQLMigration {
    package var name: String { "028_CreateOpenID" }

    package init() {}

    package func prepare(on database: any GatehouseDatabase) async throws {
        try await database.schema("oidc_clients")
            .field("id", .string, .identifier(auto: false))
            .field("name", .string, .required)
            // One URI per line, each matched byte for byte.
            .field("redirect_uris", .string, .required)
            .field("post_logout_redirect_uris", .string, .required)
            // A confidential client has a secret (its SHA-256); a public one (a phone app, a page) has none.
            .field("secret_hash", .string)
            // Space-separated: what the client may ask for.
            .field("scopes", .string, .required)
            // First-party clients (the team's own) are not asked for consent.
            .field("first_party", .bool, .required)
            .field("created_at", .datetime, .required)
            .field("disabled_at", .datetime)
            .create()
        try await database.schema("oidc_codes")
            .field("code_hash", .string, .identifier(auto: false))
            .field("client_id", .string, .required)
            .field("account_id", .uuid, .required, .references("accounts", "id", onDelete: .cascade))
            .field("redirect_uri", .string, .required)
            .field("code_challenge", .string, .required)
            .field("nonce", .string)
            .field("scope", .string, .required)
            .field("methods", .string, .required)
            .field("auth_time", .datetime, .required)
            .field("created_at", .datetime, .required)
            .field("expires_at", .datetime, .required)
            .field("used_at", .datetime)
            // The session its exchange opened: a second use ends it.
            .field("grant_session_id", .uuid)
            .create()
        try await database.schema("oidc_consents")
            .field("account_id", .uuid, .required, .references("accounts", "id", onDelete: .cascade))
            .field("client_id", .string, .required)
            .field("scope", .string, .required)
            .field("granted_at", .datetime, .required)
            .compositeIdentifier(over: "account_id", "client_id")
            .create()
        try await database.schema("oidc_grants")
            .field("session_id", .uuid, .identifier(auto: false), .references("sessions", "id", onDelete: .cascade))
            .field("client_id", .string, .required)
            .field("scope", .string, .required)
            .field("auth_time", .datetime, .required)
            .create()
    }

    package func revert(on database: any GatehouseDatabase) async throws {
        for table in ["oidc_grants", "oidc_consents", "oidc_codes", "oidc_clients"] { try await database.schema(table).delete() }
    }
}
