import FluentKit
import Foundation
import GatehouseFoundation
import SQLKit

/// The developers' apps of the Sign To Login service (docs/sign-to-login.md, "Apps").
package struct M010CreateApps: SQLMigration {
    package var name: String { "010_CreateApps" }

    package func prepare(on database: any GatehouseDatabase) async throws {
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
        try await database.create(index: "ix_apps_owner").on("apps").column("owner_id").run()
        try await database.create(index: "ix_apps_icon_blob").on("apps").column("icon_blob_key").run()
    }

    package func revert(on database: any GatehouseDatabase) async throws {
        try await database.schema("apps").delete()
    }

    package init() {

    }
}

package final class AppModel: Model, @unchecked Sendable {
    package static let schema = "apps"

    @ID(key: .id) package var id: UUID?
    @OptionalField(key: "owner_id") package var ownerID: UUID?
    @Field(key: "name") package var name: String
    @Field(key: "bundle_id") package var bundleID: String
    @Field(key: "email") package var email: String
    @OptionalField(key: "website") package var website: String?
    @OptionalField(key: "icon_blob_key") package var iconBlobKey: String?
    @OptionalField(key: "icon_content_type") package var iconContentType: String?
    @Field(key: "enabled") package var enabled: Bool
    @Field(key: "key_hash") package var keyHash: String
    @Field(key: "key_hint") package var keyHint: String
    @Field(key: "created_at") package var createdAt: Date
    @Field(key: "updated_at") package var updatedAt: Date
    /// The app's own acceptance threshold (nil: the server's `GATEHOUSE_SIGNATURE_ACCEPT_AT`).
    @OptionalField(key: "min_similarity") package var minSimilarity: Double?

    package init() {}
}
