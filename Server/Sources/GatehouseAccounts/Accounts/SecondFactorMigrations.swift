import FluentKit
import Foundation
import GatehouseFoundation
import SQLKit

/// Second factors: the authenticator app's sealed secret and its last accepted step, the recovery
/// codes, the challenges of logins waiting for their second step; and the account's flag that
/// `SessionService.create` reads.
package struct M025CreateSecondFactors: SQLMigration {
    package var name: String { "025_CreateSecondFactors" }

    package func prepare(on database: any GatehouseDatabase) async throws {
        try await database.schema("accounts").field("second_factor_at", .datetime).update()
        try await database.schema("account_totp")
            .field("account_id", .uuid, .identifier(auto: false), .references("accounts", "id", onDelete: .cascade))
            // Sealed with a key derived from the server secret (AES-GCM): the server reads it to check codes.
            .field("secret_sealed", .string, .required)
            // The newest step accepted: a code of it or an older step is refused (replay).
            .field("last_step", .int64, .required)
            // Nil while it waits for its first code.
            .field("confirmed_at", .datetime)
            .field("created_at", .datetime, .required)
            .create()
        try await database.schema("recovery_codes")
            .field("id", .uuid, .identifier(auto: false))
            .field("account_id", .uuid, .required, .references("accounts", "id", onDelete: .cascade))
            .field("code_hash", .string, .required)
            .field("used_at", .datetime)
            .field("created_at", .datetime, .required)
            .create()
        try await database.schema("login_challenges")
            .field("id", .uuid, .identifier(auto: false))
            .field("account_id", .uuid, .required, .references("accounts", "id", onDelete: .cascade))
            .field("token_hash", .string, .required)
            .field("created_at", .datetime, .required)
            .field("expires_at", .datetime, .required)
            .field("attempts", .int, .required)
            .field("used_at", .datetime)
            .field("ip", .string)
            .field("device", .string)
            // A temporary password that becomes the password once the second step succeeds.
            .field("temporary_code_id", .uuid)
            .field("new_password_hash", .string)
            .unique(on: "token_hash", name: "uq_login_challenges_token")
            .create()
        try await database.create(index: "ix_recovery_codes_account").on("recovery_codes").column("account_id").run()
        try await database.create(index: "ix_login_challenges_account").on("login_challenges").column("account_id").run()
        try await database.create(index: "ix_login_challenges_expires").on("login_challenges").column("expires_at").run()
    }

    package func revert(on database: any GatehouseDatabase) async throws {
        try await database.schema("login_challenges").delete()
        try await database.schema("recovery_codes").delete()
        try await database.schema("account_totp").delete()
        try await database.schema("accounts").deleteField("second_factor_at").update()
    }

    package init() {}
}

/// Passkeys and the challenges of their ceremonies.
package struct M026CreatePasskeys: SQLMigration {
    package var name: String { "026_CreatePasskeys" }

    package func prepare(on database: any GatehouseDatabase) async throws {
        try await database.schema("passkeys")
            .field("id", .uuid, .identifier(auto: false))
            .field("account_id", .uuid, .required, .references("accounts", "id", onDelete: .cascade))
            // Base64url, as the platform sends it.
            .field("credential_id", .string, .required)
            // The COSE key, base64url.
            .field("public_key", .string, .required)
            .field("sign_count", .int64, .required)
            .field("backup_eligible", .bool, .required)
            .field("name", .string, .required)
            .field("created_at", .datetime, .required)
            .field("last_used_at", .datetime)
            .unique(on: "credential_id", name: "uq_passkeys_credential")
            .create()
        try await database.schema("webauthn_challenges")
            .field("id", .uuid, .identifier(auto: false))
            .field("challenge_hash", .string, .required)
            // register, login, second factor
            .field("purpose", .string, .required)
            .field("account_id", .uuid, .references("accounts", "id", onDelete: .cascade))
            .field("login_challenge_id", .uuid)
            .field("created_at", .datetime, .required)
            .field("expires_at", .datetime, .required)
            .field("used_at", .datetime)
            .unique(on: "challenge_hash", name: "uq_webauthn_challenges_hash")
            .create()
        try await database.create(index: "ix_passkeys_account").on("passkeys").column("account_id").run()
        try await database.create(index: "ix_webauthn_challenges_expires").on("webauthn_challenges").column("expires_at").run()
    }

    package func revert(on database: any GatehouseDatabase) async throws {
        try await database.schema("webauthn_challenges").delete()
        try await database.schema("passkeys").delete()
    }

    package init() {}
}
