import FluentKit
import Foundation
import GatehouseFoundation
import SQLKit

/// A signing key as it is kept: its public half in clear, its private half sealed with a key derived from
/// `GATEHOUSE_SECRET` (emptied when the key retires: nothing signs with it again).
package struct SigningKeyRow: Sendable, Equatable {
    /// The `kid`: 128 random bits, base64url.
    package var id: String
    /// The public key, x9.63 (65 bytes), base64.
    package var publicKey: String
    /// The private key (32 bytes), sealed; "" once retired.
    package var sealedPrivateKey: String
    package var createdAt: Date
    /// When it starts signing: one access-token lifetime after it is published, so that every cache of the key
    /// set has it before the first token it signs.
    package var signsFrom: Date
    /// When the next key took over.
    package var retiredAt: Date?
    /// Until when it is published: its retirement and the longest lifetime of a token it signed.
    package var publishedUntil: Date?
}

/// Every statement of `signing_keys` (`SigningKeys` holds the rules: when a key signs, retires, is published).
package struct SigningKeyStore: Sendable {
    package let database: DatabaseProvider

    package init(database: DatabaseProvider) {
        self.database = database
    }

    package func insert(_ row: SigningKeyRow) async throws {
        try await database.db.raw("""
            INSERT INTO signing_keys (id, public_key, private_key_sealed, created_at, signs_from)
            VALUES (\(bind: row.id), \(bind: row.publicKey), \(bind: row.sealedPrivateKey), \(bind: row.createdAt), \(bind: row.signsFrom))
            """).run()
    }

    /// Every key still published or not yet retired, the oldest first.
    package func live(at now: Date) async throws -> [SigningKeyRow] {
        try await database.db.raw("""
            SELECT * FROM signing_keys WHERE published_until IS NULL OR published_until > \(bind: now) ORDER BY signs_from, id
            """).all().map(Self.row)
    }

    /// Retires a key that signs no more: its private half is emptied.
    package func retire(_ id: String, at retiredAt: Date, publishedUntil: Date) async throws {
        try await database.db.raw("""
            UPDATE signing_keys SET retired_at = \(bind: retiredAt), published_until = \(bind: publishedUntil), private_key_sealed = ''
            WHERE id = \(bind: id) AND retired_at IS NULL
            """).run()
    }

    static func row(_ row: any SQLRow) throws -> SigningKeyRow {
        SigningKeyRow(
            id: try row.decode(column: "id", as: String.self), publicKey: try row.decode(column: "public_key", as: String.self),
            sealedPrivateKey: try row.decode(column: "private_key_sealed", as: String.self),
            createdAt: try row.decode(column: "created_at", as: Date.self), signsFrom: try row.decode(column: "signs_from", as: Date.self),
            retiredAt: try row.decode(column: "retired_at", as: Date?.self), publishedUntil: try row.decode(column: "published_until", as: Date?.self))
    }
}
