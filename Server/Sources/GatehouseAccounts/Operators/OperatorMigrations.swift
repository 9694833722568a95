import FluentKit
import GatehouseFoundation
import SQLKit

/// The operator's side: operators (their own accounts, with a role and a TOTP second factor),
/// their console sessions, and the admin keys business systems call the admin API with.
package struct M022CreateOperators: SQLMigration {
    package var name: String { "022_CreateOperators" }

    package func prepare(on database: any GatehouseDatabase) async throws {
        try await database.schema("operators")
            .field("id", .uuid, .identifier(auto: false))
            // The name they sign in with, lower-cased: unique.
            .field("name", .string, .required)
            .field("role", .string, .required)
            .field("password_hash", .string, .required)
            // The TOTP secret, sealed with a key derived from the server secret (AES-GCM).
            .field("totp_sealed", .string, .required)
            // The last time step a code was accepted for: a code works once.
            .field("totp_last_step", .int64, .required)
            .field("disabled_at", .datetime)
            .field("created_at", .datetime, .required)
            .field("updated_at", .datetime, .required)
            .unique(on: "name", name: "uq_operators_name")
            .create()
        try await database.schema("operator_sessions")
            .field("id", .uuid, .identifier(auto: false))
            .field("operator_id", .uuid, .required, .references("operators", "id", onDelete: .cascade))
            .field("token_hash", .string, .required)
            .field("created_at", .datetime, .required)
            // Short: idle and absolute limits (docs/operators.md).
            .field("last_seen_at", .datetime, .required)
            .field("expires_at", .datetime, .required)
            .field("ip", .string)
            .field("device", .string)
            .unique(on: "token_hash", name: "uq_operator_sessions_token")
            .create()
        try await database.create(index: "ix_operator_sessions_operator").on("operator_sessions").column("operator_id").run()
        try await database.schema("admin_keys")
            .field("id", .uuid, .identifier(auto: false))
            .field("name", .string, .required)
            .field("key_hash", .string, .required)
            .field("key_hint", .string, .required)
            // Space-separated scopes (`clients:read clients:write`).
            .field("scopes", .string, .required)
            .field("created_at", .datetime, .required)
            .field("created_by", .string)
            .field("last_used_at", .datetime)
            .field("disabled_at", .datetime)
            .unique(on: "key_hash", name: "uq_admin_keys_hash")
            .create()
        // An operator unbound the record from this account: its logins never bind it again.
        try await database.schema("client_records").field("unbound_account_id", .uuid).update()
    }

    package func revert(on database: any GatehouseDatabase) async throws {
        try await database.schema("client_records").deleteField("unbound_account_id").update()
        try await database.schema("admin_keys").delete()
        try await database.schema("operator_sessions").delete()
        try await database.schema("operators").delete()
    }

    package init() {}
}
