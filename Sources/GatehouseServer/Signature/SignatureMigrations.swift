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

/// Signed documents: a chain of versions by hash, and the signatures each version added.
struct M012CreateSignatureDocuments: AsyncMigration {
    var name: String { "012_CreateSignatureDocuments" }

    func prepare(on database: any Database) async throws {
        let sql = database as! any SQLDatabase
        try await database.schema("signature_documents")
            .field("id", .string, .identifier(auto: false))
            .field("latest_hash", .string, .required)
            .field("versions", .int, .required)
            .field("created_at", .datetime, .required)
            .field("updated_at", .datetime, .required)
            .create()
        try await sql.create(index: "ix_signature_documents_latest").on("signature_documents").column("latest_hash").run()
        try await database.schema("signature_document_versions")
            .field("document_id", .string, .required, .references("signature_documents", "id", onDelete: .cascade))
            .field("seq", .int, .required)
            .field("document_hash", .string, .required)
            .field("account_id", .uuid, .references("accounts", "id", onDelete: .setNull))
            .field("app_id", .uuid)
            .field("created_at", .datetime, .required)
            .compositeIdentifier(over: "document_id", "seq")
            .create()
        try await sql.create(index: "ix_signature_document_versions_hash").on("signature_document_versions").column("document_hash").run()
        try await database.schema("signature_version_signatures")
            .field("document_id", .string, .required, .references("signature_documents", "id", onDelete: .cascade))
            .field("seq", .int, .required)
            .field("position", .int, .required)
            .field("signature_id", .string, .required, .references("signature_attempts", "id", onDelete: .cascade))
            .compositeIdentifier(over: "document_id", "seq", "position")
            .create()
    }

    func revert(on database: any Database) async throws {
        for table in ["signature_version_signatures", "signature_document_versions", "signature_documents"] {
            try await database.schema(table).delete()
        }
    }
}
