import FluentKit
import Foundation
import GatehouseFoundation
import SQLKit

/// Signature models, enrolments in progress, authentication attempts and the enrolment
/// profile (docs/sign-to-login.md, "Model").
package struct M011CreateSignatureModels: SQLMigration {
    package var name: String { "011_CreateSignatureModels" }

    package func prepare(on database: any GatehouseDatabase) async throws {
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
        try await database.create(index: "ix_signature_attempts_account").on("signature_attempts").column("account_id").run()
        try await database.create(index: "ix_signature_attempts_photo").on("signature_attempts").column("photo_blob_key").run()

        // What the spec's registration form says of the person, beside the account's name.
        try await database.schema("signature_profiles")
            .field("account_id", .uuid, .identifier(auto: false), .references("accounts", "id", onDelete: .cascade))
            .field("profile", .string, .required)
            .field("photo_blob_key", .string)
            .field("updated_at", .datetime, .required)
            .create()
        try await database.create(index: "ix_signature_profiles_photo").on("signature_profiles").column("photo_blob_key").run()
    }

    package func revert(on database: any GatehouseDatabase) async throws {
        for table in ["signature_profiles", "signature_attempts", "signature_enrolments", "signature_models"] {
            try await database.schema(table).delete()
        }
    }

    package init() {

    }
}

/// Signed documents: a chain of versions by hash, and the signatures each version added.
package struct M012CreateSignatureDocuments: SQLMigration {
    package var name: String { "012_CreateSignatureDocuments" }

    package func prepare(on database: any GatehouseDatabase) async throws {
        try await database.schema("signature_documents")
            .field("id", .string, .identifier(auto: false))
            .field("latest_hash", .string, .required)
            .field("versions", .int, .required)
            .field("created_at", .datetime, .required)
            .field("updated_at", .datetime, .required)
            .create()
        try await database.create(index: "ix_signature_documents_latest").on("signature_documents").column("latest_hash").run()
        try await database.schema("signature_document_versions")
            .field("document_id", .string, .required, .references("signature_documents", "id", onDelete: .cascade))
            .field("seq", .int, .required)
            .field("document_hash", .string, .required)
            .field("account_id", .uuid, .references("accounts", "id", onDelete: .setNull))
            .field("app_id", .uuid)
            .field("created_at", .datetime, .required)
            .compositeIdentifier(over: "document_id", "seq")
            .create()
        try await database.create(index: "ix_signature_document_versions_hash").on("signature_document_versions").column("document_hash").run()
        try await database.schema("signature_version_signatures")
            .field("document_id", .string, .required, .references("signature_documents", "id", onDelete: .cascade))
            .field("seq", .int, .required)
            .field("position", .int, .required)
            .field("signature_id", .string, .required, .references("signature_attempts", "id", onDelete: .cascade))
            .compositeIdentifier(over: "document_id", "seq", "position")
            .create()
    }

    package func revert(on database: any GatehouseDatabase) async throws {
        for table in ["signature_version_signatures", "signature_document_versions", "signature_documents"] {
            try await database.schema(table).delete()
        }
    }

    package init() {

    }
}

/// The signature surface's security rules (docs/security.md, "Sign To Login"): a model counts only
/// once an email proof made it (`proven_at`); kept signatures of an unfinished enrolment belong to
/// the sender's token and app (a new table: the old one was keyed by address alone, and its rows
/// were an hour's worth of unfinished work); an app uses a person's model only with their consent
/// (an enrolment through it); an attempt is spent by the save that names it (`used_at`); a save
/// that may not extend a chain starts a fork (`forked_from`); an app may ask for more than the
/// server's acceptance threshold (`apps.min_similarity`).
package struct M015SecureSignatureSurface: SQLMigration {
    package var name: String { "015_SecureSignatureSurface" }

    package func prepare(on database: any GatehouseDatabase) async throws {
        try await database.schema("signature_models").field("proven_at", .datetime).update()
        // A model made before its address was confirmed may be a stranger's (docs/security.md): only
        // the ones made on an address already confirmed stay usable; the others ask for a new
        // enrolment, which needs the address.
        try await database.raw("""
            UPDATE signature_models SET proven_at = created_at
            WHERE EXISTS (SELECT 1 FROM accounts a WHERE a.id = signature_models.account_id
                          AND a.email_confirmed_at IS NOT NULL AND a.email_confirmed_at <= signature_models.created_at)
            """).run()

        try await database.schema("signature_enrolments").delete()
        try await database.schema("signature_enrolment_batches")
            // SHA-256 of the token the client holds (it is shown in the `res 2` answer only).
            .field("token_hash", .string, .identifier(auto: false))
            .field("app_id", .uuid, .required)
            .field("email", .string, .required)
            .field("device_class", .string, .required)
            .field("accepted", .string, .required)
            .field("expires_at", .datetime, .required)
            .create()

        try await database.schema("signature_app_consents")
            .field("account_id", .uuid, .required, .references("accounts", "id", onDelete: .cascade))
            .field("app_id", .uuid, .required)
            .field("created_at", .datetime, .required)
            .compositeIdentifier(over: "account_id", "app_id")
            .create()
        try await database.raw("""
            INSERT INTO signature_app_consents (account_id, app_id, created_at)
            SELECT account_id, app_id, MIN(created_at) FROM signature_models
            WHERE app_id IS NOT NULL AND proven_at IS NOT NULL GROUP BY account_id, app_id
            """).run()

        try await database.schema("signature_attempts").field("used_at", .datetime).update()
        try await database.raw("""
            UPDATE signature_attempts SET used_at = created_at WHERE id IN (SELECT signature_id FROM signature_version_signatures)
            """).run()
        try await database.create(index: "ix_signature_attempts_account_time").on("signature_attempts").column("account_id").column("created_at").run()

        try await database.schema("signature_documents").field("forked_from", .string).update()
        try await database.schema("apps").field("min_similarity", .double).update()
    }

    package func revert(on database: any GatehouseDatabase) async throws {
        try await database.schema("apps").deleteField("min_similarity").update()
        try await database.schema("signature_documents").deleteField("forked_from").update()
        try await database.drop(index: "ix_signature_attempts_account_time").run()
        try await database.schema("signature_attempts").deleteField("used_at").update()
        try await database.schema("signature_app_consents").delete()
        try await database.schema("signature_enrolment_batches").delete()
        try await database.schema("signature_enrolments")
            .id()
            .field("email", .string, .required)
            .field("device_class", .string, .required)
            .field("accepted", .string, .required)
            .field("expires_at", .datetime, .required)
            .unique(on: "email", "device_class", name: "uq_signature_enrolments")
            .create()
        try await database.schema("signature_models").deleteField("proven_at").update()
    }

    package init() {

    }
}

/// Each attempt keeps the replay detector's fingerprint of its points (`ReplayDetector.Fingerprint`,
/// JSON), so a new attempt is checked against the history without reading the history's points.
/// Attempts made before have none: the check reads their points, as it did.
package struct M018SignatureFingerprints: SQLMigration {
    package var name: String { "018_SignatureFingerprints" }

    package func prepare(on database: any GatehouseDatabase) async throws {
        try await database.schema("signature_attempts").field("fingerprint", .string).update()
    }

    package func revert(on database: any GatehouseDatabase) async throws {
        try await database.schema("signature_attempts").deleteField("fingerprint").update()
    }

    package init() {}
}

/// A signing keeps the threshold of the app it was made through, at the time of the save: an
/// attempt below it may sign (the person's own session, above `GATEHOUSE_SIGNATURE_SIGN_FLOOR`),
/// and its document's history warns of it whatever the app's threshold becomes later. Signings
/// made before had to pass that threshold: none, and none is warned of but by the similarity.
package struct M034SigningThresholds: SQLMigration {
    package var name: String { "034_SigningThresholds" }

    package func prepare(on database: any GatehouseDatabase) async throws {
        try await database.schema("signature_attempts").field("signed_threshold", .double).update()
    }

    package func revert(on database: any GatehouseDatabase) async throws {
        try await database.schema("signature_attempts").deleteField("signed_threshold").update()
    }

    package init() {}
}
