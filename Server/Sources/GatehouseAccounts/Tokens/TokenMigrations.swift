import FluentKit
import GatehouseFoundation
import SQLKit

/// Signed tokens (docs/oidc.md): the keys that sign them, how each session's person signed in (its tokens' `amr`),
/// and the refresh tokens that renew them.
package struct M027CreateSignedTokens: SQLMigration {
    package var name: String { "027_CreateSignedTokens" }

    package init() {}

    package func prepare(on database: any GatehouseDatabase) async throws {
        try await database.schema("signing_keys")
            .field("id", .string, .identifier(auto: false))
            .field("public_key", .string, .required)
            // Sealed with a key derived from the server secret (AES-GCM); emptied when the key retires.
            .field("private_key_sealed", .string, .required)
            .field("created_at", .datetime, .required)
            .field("signs_from", .datetime, .required)
            .field("retired_at", .datetime)
            .field("published_until", .datetime)
            .create()
        // Space-separated `AuthMethod`s; sessions opened before this know nothing of theirs.
        try await database.schema("sessions").field("methods", .string, .required, .sql(.default(""))).update()
        try await database.schema("refresh_tokens")
            .field("id", .uuid, .identifier(auto: false))
            // The tokens one sign-in's refreshes made: a reuse revokes them all.
            .field("family_id", .uuid, .required)
            // Ending the session deletes its refresh tokens with it.
            .field("session_id", .uuid, .required, .references("sessions", "id", onDelete: .cascade))
            .field("token_hash", .string, .required)
            .field("created_at", .datetime, .required)
            .field("expires_at", .datetime, .required)
            // When it was exchanged for the next one.
            .field("used_at", .datetime)
            .unique(on: "token_hash", name: "uq_refresh_tokens_hash")
            .create()
        try await database.create(index: "ix_refresh_tokens_family").on("refresh_tokens").column("family_id").run()
        try await database.create(index: "ix_refresh_tokens_session").on("refresh_tokens").column("session_id").run()
    }

    package func revert(on database: any GatehouseDatabase) async throws {
        try await database.schema("refresh_tokens").delete()
        try await database.schema("sessions").deleteField("methods").update()
        try await database.schema("signing_keys").delete()
    }
}
