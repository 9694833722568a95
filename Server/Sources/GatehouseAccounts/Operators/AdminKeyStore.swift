import FluentKit
import Foundation
import GatehouseFoundation
import SQLKit

/// Every statement of `admin_keys` (`AdminKeys` holds the rules: the key's form, scopes, audits).
package struct AdminKeyStore: Sendable {
    package let database: DatabaseProvider

    package init(database: DatabaseProvider) {
        self.database = database
    }

    package func insert(_ record: AdminKeyRecord, keyHash: String, on tx: any GatehouseDatabase) async throws {
        try await tx.raw("""
            INSERT INTO admin_keys (id, name, key_hash, key_hint, scopes, created_at, created_by)
            VALUES (\(bind: record.id), \(bind: record.name), \(bind: keyHash), \(bind: record.hint),
                    \(bind: record.scopes.map(\.rawValue).joined(separator: " ")), \(bind: record.createdAt), \(bind: record.createdBy))
            """).run()
    }

    package func all() async throws -> [AdminKeyRecord] {
        try await database.db.raw("SELECT * FROM admin_keys ORDER BY created_at, id").all().map(Self.record)
    }

    /// Disables an enabled key: its name, nil when there is no such enabled key.
    package func disable(_ id: UUID, at now: Date, on tx: any GatehouseDatabase) async throws -> String? {
        try await tx.raw("UPDATE admin_keys SET disabled_at = \(bind: now) WHERE id = \(bind: id) AND disabled_at IS NULL RETURNING name")
            .first(decodingColumn: "name", as: String.self)
    }

    /// The enabled key with this hash.
    package func enabled(keyHash: String) async throws -> AdminKeyRecord? {
        try await database.db.raw("SELECT * FROM admin_keys WHERE key_hash = \(bind: keyHash) AND disabled_at IS NULL").first().map(Self.record)
    }

    package func touch(_ id: UUID, at now: Date) async throws {
        try await database.db.raw("UPDATE admin_keys SET last_used_at = \(bind: now) WHERE id = \(bind: id)").run()
    }

    static func record(_ row: any SQLRow) throws -> AdminKeyRecord {
        AdminKeyRecord(
            id: try row.decode(column: "id", as: UUID.self), name: try row.decode(column: "name", as: String.self),
            hint: try row.decode(column: "key_hint", as: String.self),
            scopes: try row.decode(column: "scopes", as: String.self).split(separator: " ").compactMap { AdminScope(rawValue: String($0)) },
            createdAt: try row.decode(column: "created_at", as: Date.self), createdBy: try row.decode(column: "created_by", as: String?.self),
            lastUsedAt: try row.decode(column: "last_used_at", as: Date?.self), disabledAt: try row.decode(column: "disabled_at", as: Date?.self))
    }
}
