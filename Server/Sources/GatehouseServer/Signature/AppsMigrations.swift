import FluentKit
import Foundation
import SQLKit

/// The developers' apps of the signature identity service (docs/signature-identity.md, "Apps").
struct M010CreateApps: AsyncMigration {
    var name: String { "010_CreateApps" }

    func prepare(on database: any Database) async throws {
        try await database.schema("apps")
            .id()
            // Nil for an app an operator registered without naming an owner.
            .field("owner_id", .uuid, .references("accounts", "id", onDelete: .setNull))
            .field("name", .string, .required)
            .field("bundle_id", .string, .required)
            .field("email", .string, .required)
            .field("website", .string)
            .field("icon_blob_key", .string)
            .field("icon_content_type", .string)
            .field("enabled", .bool, .required)
            // SHA-256 of the key; the key itself is shown once and never stored.
            .field("key_hash", .string, .required)
            .field("key_hint", .string, .required)
            .field("created_at", .datetime, .required)
            .field("updated_at", .datetime, .required)
            .unique(on: "key_hash", name: "uq_apps_key_hash")
            .create()
        let sql = database as! any SQLDatabase
        try await sql.create(index: "ix_apps_owner").on("apps").column("owner_id").run()
        try await sql.create(index: "ix_apps_icon_blob").on("apps").column("icon_blob_key").run()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("apps").delete()
    }
}

final class AppModel: Model, @unchecked Sendable {
    static let schema = "apps"

    @ID(key: .id) var id: UUID?
    @OptionalField(key: "owner_id") var ownerID: UUID?
    @Field(key: "name") var name: String
    @Field(key: "bundle_id") var bundleID: String
    @Field(key: "email") var email: String
    @OptionalField(key: "website") var website: String?
    @OptionalField(key: "icon_blob_key") var iconBlobKey: String?
    @OptionalField(key: "icon_content_type") var iconContentType: String?
    @Field(key: "enabled") var enabled: Bool
    @Field(key: "key_hash") var keyHash: String
    @Field(key: "key_hint") var keyHint: String
    @Field(key: "created_at") var createdAt: Date
    @Field(key: "updated_at") var updatedAt: Date
    /// The app's own acceptance threshold (nil: the server's `GATEHOUSE_SIGNATURE_ACCEPT_AT`).
    @OptionalField(key: "min_similarity") var minSimilarity: Double?

    init() {}
}
