import FluentKit
import Foundation
import SQLKit

/// Signature models, enrolments in progress, authentication attempts and the enrolment
/// profile (docs/signature-identity.md, "Model").
struct M011CreateSignatureModels: AsyncMigration {
    var name: String { "011_CreateSignatureModels" }

    func prepare(on database: any Database) async throws {
        let sql = database as! any SQLDatabase
        // One model per account and type of device (iPhone, iPad, iPod, other).
        try await database.schema("signature_models")
            .id()
            .field("account_id", .uuid, .required, .references("accounts", "id", onDelete: .cascade))
            .field("device_class", .string, .required)
            .field("app_id", .uuid)
            .field("model", .string, .required)
            .field("device", .string, .required)
            .field("created_at", .datetime, .required)
            .unique(on: "account_id", "device_class", name: "uq_signature_models_device")
            .create()

        // The signatures accepted so far of an enrolment the client completes with the missing ones.
        try await database.schema("signature_enrolments")
            .id()
            .field("email", .string, .required)
            .field("device_class", .string, .required)
            .field("accepted", .string, .required)
            .field("expires_at", .datetime, .required)
            .unique(on: "email", "device_class", name: "uq_signature_enrolments")
            .create()

        try await database.schema("signature_attempts")
            .field("id", .string, .identifier(auto: false))
            .field("account_id", .uuid, .required, .references("accounts", "id", onDelete: .cascade))
            .field("app_id", .uuid)
            .field("similarity", .double, .required)
            .field("points", .string, .required)
            .field("photo_blob_key", .string)
            .field("location", .string)
            .field("country", .string)
            .field("city", .string)
            .field("address", .string)
            .field("client_time", .string)
            .field("created_at", .datetime, .required)
            .create()
        try await sql.create(index: "ix_signature_attempts_account").on("signature_attempts").column("account_id").run()
        try await sql.create(index: "ix_signature_attempts_photo").on("signature_attempts").column("photo_blob_key").run()

        // What the spec's registration form says of the person, beside the account's name.
        try await database.schema("signature_profiles")
            .field("account_id", .uuid, .identifier(auto: false), .references("accounts", "id", onDelete: .cascade))
            .field("profile", .string, .required)
            .field("photo_blob_key", .string)
            .field("updated_at", .datetime, .required)
            .create()
        try await sql.create(index: "ix_signature_profiles_photo").on("signature_profiles").column("photo_blob_key").run()
    }

    func revert(on database: any Database) async throws {
        for table in ["signature_profiles", "signature_attempts", "signature_enrolments", "signature_models"] {
            try await database.schema(table).delete()
        }
    }
}
