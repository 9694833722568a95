import FluentKit
import Foundation
import SQLKit

/// The registry of signed documents (the spec's `/savedocument/` and `/opendocument/`): a
/// document is a chain of versions, each known by the hash the app computed of the saved PDF;
/// a save names the hash it started from, and extends the chain whose newest version has it.
struct SignatureDocuments: AccountConcept {
    let core: AccountCore
    let signatures: SignatureService

    private var sql: any SQLDatabase { database.sql }

    enum Saved: Equatable, Sendable {
        case saved(documentID: String)
        case unknownUser
        /// A signature id that is not one of the caller's attempts.
        case foreignSignature(String)
        /// `previous_hash` is an older version of a document another save has already extended.
        case conflict
    }

    /// Records a saved version. With a `previous_hash` that is a document's newest version, the
    /// chain grows by one (compare-and-set on the newest hash, so two saves from the same version
    /// make one chain and the second is `conflict`); with an unknown or empty one, a new document.
    func save(email: String, previousHash: String?, documentHash: String, signatureIDs: [String], appID: UUID) async throws -> Saved {
        guard let account = try await signatures.account(email: email) else { return .unknownUser }
        let accountID = account.id!
        for id in signatureIDs {
            let mine = try await sql.raw("SELECT 1 AS found FROM signature_attempts WHERE id = \(bind: id) AND account_id = \(bind: accountID)").first()
            if mine == nil { return .foreignSignature(id) }
        }
        let now = clock.now()
        return try await database.db.transaction { tx in
            let sql = tx as! any SQLDatabase
            var documentID: String?
            var seq = 1
            if let previousHash, !previousHash.isEmpty {
                if let current = try await sql.raw("""
                    SELECT id FROM signature_documents WHERE latest_hash = \(bind: previousHash) ORDER BY updated_at DESC, id LIMIT 1
                    """).first(decodingColumn: "id", as: String.self) {
                    // Compare and set: only a save from the newest version extends the chain.
                    guard let versions = try await sql.raw("""
                        UPDATE signature_documents SET latest_hash = \(bind: documentHash), versions = versions + 1, updated_at = \(bind: now)
                        WHERE id = \(bind: current) AND latest_hash = \(bind: previousHash) RETURNING versions
                        """).first(decodingColumn: "versions", as: Int.self) else { return .conflict }
                    documentID = current
                    seq = versions
                } else if try await sql.raw("""
                    SELECT 1 AS found FROM signature_document_versions WHERE document_hash = \(bind: previousHash) LIMIT 1
                    """).first() != nil {
                    return .conflict
                }
            }
            if documentID == nil {
                let id = SignatureService.randomHex(bytes: 10)
                try await sql.raw("""
                    INSERT INTO signature_documents (id, latest_hash, versions, created_at, updated_at)
                    VALUES (\(bind: id), \(bind: documentHash), 1, \(bind: now), \(bind: now))
                    """).run()
                documentID = id
            }
            try await sql.raw("""
                INSERT INTO signature_document_versions (document_id, seq, document_hash, account_id, app_id, created_at)
                VALUES (\(bind: documentID!), \(bind: seq), \(bind: documentHash), \(bind: accountID), \(bind: appID), \(bind: now))
                """).run()
            for (position, id) in signatureIDs.enumerated() {
                try await sql.raw("""
                    INSERT INTO signature_version_signatures (document_id, seq, position, signature_id)
                    VALUES (\(bind: documentID!), \(bind: seq), \(bind: position), \(bind: id))
                    """).run()
            }
            return .saved(documentID: documentID!)
        }
    }

    /// One signing in a document's history.
    struct Entry: Equatable, Sendable {
        var signer: String
        var similarity: Double
        /// Below `GATEHOUSE_SIGNATURE_WARN_BELOW`: a low match the history shows a warning for.
        var lowMatch: Bool
        var signedAt: Date
        var clientTime: String?
        var location: String?
        var country: String?
        var city: String?
        var address: String?
        var photoURL: String?
        var signatureID: String
        /// The document's hash after the save that added this signature.
        var documentHash: String
    }

    enum Opened: Equatable, Sendable {
        /// The hash is the newest version's.
        case current([Entry])
        /// The document was changed after its last save through the app.
        case changed([Entry])
        case notFound
    }

    func open(documentID: String, documentHash: String) async throws -> Opened {
        guard documentID.count <= 64, documentID.allSatisfy(\.isHexDigit),
              let latest = try await sql.raw("SELECT latest_hash FROM signature_documents WHERE id = \(bind: documentID.lowercased())")
                .first(decodingColumn: "latest_hash", as: String.self) else { return .notFound }
        let history = try await history(documentID: documentID.lowercased())
        return latest == documentHash ? .current(history) : .changed(history)
    }

    func exists(documentID: String) async throws -> Bool {
        try await sql.raw("SELECT 1 AS found FROM signature_documents WHERE id = \(bind: documentID)").first() != nil
    }

    func history(documentID: String) async throws -> [Entry] {
        let rows = try await sql.raw("""
            SELECT a.id AS signature_id, a.similarity, a.created_at, a.client_time, a.location, a.country, a.city, a.address,
                   a.photo_blob_key, v.document_hash, acc.first_name, acc.last_name, acc.email
            FROM signature_version_signatures s
            JOIN signature_document_versions v ON v.document_id = s.document_id AND v.seq = s.seq
            JOIN signature_attempts a ON a.id = s.signature_id
            LEFT JOIN accounts acc ON acc.id = a.account_id
            WHERE s.document_id = \(bind: documentID)
            ORDER BY s.seq, s.position
            """).all()
        let warnBelow = configuration.signature.warnBelow
        return try rows.map { row in
            let names = [try row.decode(column: "first_name", as: String?.self), try row.decode(column: "last_name", as: String?.self)]
                .compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " ")
            let id = try row.decode(column: "signature_id", as: String.self)
            let similarity = try row.decode(column: "similarity", as: Double.self)
            let photo = try row.decode(column: "photo_blob_key", as: String?.self) != nil
            return Entry(
                signer: names.isEmpty ? (try row.decode(column: "email", as: String?.self) ?? "") : names,
                similarity: similarity, lowMatch: similarity < warnBelow, signedAt: try row.decode(column: "created_at", as: Date.self),
                clientTime: try row.decode(column: "client_time", as: String?.self), location: try row.decode(column: "location", as: String?.self),
                country: try row.decode(column: "country", as: String?.self), city: try row.decode(column: "city", as: String?.self),
                address: try row.decode(column: "address", as: String?.self),
                photoURL: photo ? configuration.publicURL + "/signature-photos/" + id : nil,
                signatureID: id, documentHash: try row.decode(column: "document_hash", as: String.self))
        }
    }

    /// An attempt's photo (public by its unguessable id, as the history that names it).
    func photo(signatureID: String) async throws -> Data? {
        guard signatureID.count <= 64, signatureID.allSatisfy(\.isHexDigit),
              let hex = try await sql.raw("SELECT photo_blob_key FROM signature_attempts WHERE id = \(bind: signatureID)")
                .first(decodingColumn: "photo_blob_key", as: String?.self) ?? nil,
              let key = BlobKey(hex: hex) else { return nil }
        return try await blobs.get(key)
    }
}
