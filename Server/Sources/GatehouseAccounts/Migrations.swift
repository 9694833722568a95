import FluentKit
import Foundation
import GatehouseFoundation
import SQLKit

// The accounts' tables: accounts, sessions, codes, avatars. Never edit a migration that has landed: add the next.

package struct M001CreateAccounts: SQLMigration {
    package var name: String { "001_CreateAccounts" }
    package func prepare(on database: any GatehouseDatabase) async throws {
        try await database.schema("accounts")
            .id()
            .field("phone", .string)
            .field("phone_verified_at", .datetime)
            .field("email", .string)
            .field("email_confirmed_at", .datetime)
            .field("pending_email", .string)
            .field("username", .string)
            .field("username_key", .string)
            .field("password_hash", .string, .required)
            .field("first_name", .string)
            .field("last_name", .string)
            .field("middle_name", .string)
            .field("birthday", .datetime)
            .field("locale", .string)
            .field("fcm_token", .string)
            .field("created_at", .datetime, .required)
            .field("updated_at", .datetime, .required)
            .unique(on: "phone", name: "uq_accounts_phone")
            .unique(on: "email", name: "uq_accounts_email")
            .unique(on: "username_key", name: "uq_accounts_username_key")
            .create()
        try await database.create(index: "ix_accounts_pending_email").on("accounts").column("pending_email").run()
    }
    package func revert(on database: any GatehouseDatabase) async throws {
        try await database.schema("accounts").delete()
    }

    package init() {

    }
}

package struct M002CreateSessions: SQLMigration {
    package var name: String { "002_CreateSessions" }
    package func prepare(on database: any GatehouseDatabase) async throws {
        try await database.schema("sessions")
            .id()
            .field("account_id", .uuid, .required, .references("accounts", "id", onDelete: .cascade))
            .field("token_hash", .string, .required)
            .field("created_at", .datetime, .required)
            .field("expires_at", .datetime, .required)
            .field("last_used_at", .datetime, .required)
            .field("device", .string)
            .field("ip", .string)
            .unique(on: "token_hash", name: "uq_sessions_token_hash")
            .create()
        try await database.create(index: "ix_sessions_account").on("sessions").column("account_id").run()
        try await database.create(index: "ix_sessions_expires").on("sessions").column("expires_at").run()
    }
    package func revert(on database: any GatehouseDatabase) async throws {
        try await database.schema("sessions").delete()
    }

    package init() {

    }
}

package struct M003CreateVerificationCodes: SQLMigration {
    package var name: String { "003_CreateVerificationCodes" }
    package func prepare(on database: any GatehouseDatabase) async throws {
        try await database.schema("verification_codes")
            .id()
            .field("purpose", .string, .required)
            .field("destination", .string, .required)
            .field("account_id", .uuid, .references("accounts", "id", onDelete: .cascade))
            .field("secret_hash", .string, .required)
            .field("attempts", .int, .required)
            .field("max_attempts", .int, .required)
            .field("created_at", .datetime, .required)
            .field("expires_at", .datetime, .required)
            .field("consumed_at", .datetime)
            .field("ip", .string)
            .create()
        try await database.create(index: "ix_codes_destination").on("verification_codes").column("destination").column("purpose").column("created_at").run()
        try await database.create(index: "ix_codes_secret").on("verification_codes").column("secret_hash").run()
        try await database.create(index: "ix_codes_account").on("verification_codes").column("account_id").run()
    }
    package func revert(on database: any GatehouseDatabase) async throws {
        try await database.schema("verification_codes").delete()
    }

    package init() {

    }
}

package struct M006CreateAvatars: SQLMigration {
    package var name: String { "006_CreateAvatars" }
    package func prepare(on database: any GatehouseDatabase) async throws {
        try await database.schema("avatars")
            .id()
            .field("account_id", .uuid, .required, .references("accounts", "id", onDelete: .cascade))
            .field("content_type", .string, .required)
            .field("bytes", .data, .required)
            .field("created_at", .datetime, .required)
            .create()
        try await database.create(index: "ix_avatars_account").on("avatars").column("account_id").run()
        try await database.schema("accounts").field("avatar_id", .uuid).update()
    }
    package func revert(on database: any GatehouseDatabase) async throws {
        try await database.schema("accounts").deleteField("avatar_id").update()
        try await database.schema("avatars").delete()
    }

    package init() {

    }
}

/// Login keys become NFKC + Unicode case folding instead of `lowercased()`, so
/// look-alike spellings of one name are one key. Only non-ASCII names can change. Two existing
/// accounts whose names now fold to one key keep their old keys (both go on working; neither
/// loses its name); new sign-ups cannot take either spelling.
package struct M007NormalizeUsernameKeys: SQLMigration {
    package var name: String { "007_NormalizeUsernameKeys" }
    package func prepare(on database: any GatehouseDatabase) async throws {
        struct Row: Decodable { var id: UUID; var username: String; var username_key: String }
        let rows = try await database.raw("SELECT id, username, username_key FROM accounts WHERE username IS NOT NULL").all(decoding: Row.self)
        var taken = Set(rows.map(\.username_key))
        for row in rows where !row.username.allSatisfy(\.isASCII) {
            let key = Self.key(row.username)
            guard key != row.username_key, !taken.contains(key) else { continue }
            try await database.raw("UPDATE accounts SET username_key = \(bind: key) WHERE id = \(bind: row.id)").run()
            taken.remove(row.username_key)
            taken.insert(key)
        }
    }
    package func revert(on database: any GatehouseDatabase) async throws {}

    /// The login key as this migration wrote it (NFKC, trimmed, Unicode case folding): a frozen
    /// copy, so that a later change to the login rules cannot change what an old migration did.
    private static func key(_ name: String) -> String {
        name.precomposedStringWithCompatibilityMapping.trimmingCharacters(in: .whitespaces)
            .folding(options: [.caseInsensitive], locale: nil)
    }

    package init() {

    }
}

/// Avatars move out of the database into the blob store: `avatar_images` names the blob. The rows
/// of the old `avatars` table are moved by `AvatarMove` when the server starts (a migration cannot
/// reach the blob store); the old table stays, empty, until a later migration drops it.
package struct M008CreateAvatarImages: SQLMigration {
    package var name: String { "008_CreateAvatarImages" }
    package func prepare(on database: any GatehouseDatabase) async throws {
        try await database.schema("avatar_images")
            .id()
            .field("account_id", .uuid, .required, .references("accounts", "id", onDelete: .cascade))
            .field("content_type", .string, .required)
            .field("blob_key", .string, .required)
            .field("size", .int, .required)
            .field("created_at", .datetime, .required)
            .create()
        try await database.create(index: "ix_avatar_images_account").on("avatar_images").column("account_id").run()
        try await database.create(index: "ix_avatar_images_blob").on("avatar_images").column("blob_key").run()
    }
    package func revert(on database: any GatehouseDatabase) async throws {
        try await database.schema("avatar_images").delete()
    }

    package init() {

    }
}

/// Account deletion: when the person asked (`deletion_requested_at`; the grace period runs from
/// it) and when their personal data was erased (`erased_at`; the row stays, anonymous, for what
/// other people keep: messages in their chats, the ledger's movements, documents they signed).
package struct M017AccountDeletion: SQLMigration {
    package var name: String { "017_AccountDeletion" }
    package func prepare(on database: any GatehouseDatabase) async throws {
        // One column per statement: SQLite adds one at a time.
        try await database.schema("accounts").field("deletion_requested_at", .datetime).update()
        try await database.schema("accounts").field("erased_at", .datetime).update()
        try await database.create(index: "ix_accounts_deletion").on("accounts").column("deletion_requested_at").run()
    }
    package func revert(on database: any GatehouseDatabase) async throws {
        try await database.drop(index: "ix_accounts_deletion").run()
        try await database.schema("accounts").deleteField("erased_at").update()
        try await database.schema("accounts").deleteField("deletion_requested_at").update()
    }

    package init() {}
}

/// Locked accounts (an operator's action): `locked_at` and the reason shown to operators.
package struct M021AccountLocks: SQLMigration {
    package var name: String { "021_AccountLocks" }
    package func prepare(on database: any GatehouseDatabase) async throws {
        // One column per statement: SQLite adds one at a time.
        try await database.schema("accounts").field("locked_at", .datetime).update()
        try await database.schema("accounts").field("locked_reason", .string).update()
    }
    package func revert(on database: any GatehouseDatabase) async throws {
        try await database.schema("accounts").deleteField("locked_reason").update()
        try await database.schema("accounts").deleteField("locked_at").update()
    }

    package init() {}
}

/// The id an account had in the system it was imported from (docs/migrating.md): what makes an import idempotent.
package struct M029AddExternalIDs: SQLMigration {
    package var name: String { "029_AddExternalIDs" }

    package func prepare(on database: any GatehouseDatabase) async throws {
        try await database.schema("accounts").field("external_id", .string).update()
        try await database.create(index: "uq_accounts_external_id").on("accounts").column("external_id").unique().run()
    }

    package func revert(on database: any GatehouseDatabase) async throws {
        try await database.drop(index: "uq_accounts_external_id").run()
        try await database.schema("accounts").deleteField("external_id").update()
    }

    package init() {}
}

/// When an account last opened a session (`SessionService.create`), and the order the admin API lists accounts in.
package struct M030AddLastSignIn: SQLMigration {
    package var name: String { "030_AddLastSignIn" }

    package func prepare(on database: any GatehouseDatabase) async throws {
        try await database.schema("accounts").field("last_sign_in_at", .datetime).update()
        try await database.create(index: "ix_accounts_created").on("accounts").column("created_at").column("id").run()
    }

    package func revert(on database: any GatehouseDatabase) async throws {
        try await database.drop(index: "ix_accounts_created").run()
        try await database.schema("accounts").deleteField("last_sign_in_at").update()
    }

    package init() {}
}
