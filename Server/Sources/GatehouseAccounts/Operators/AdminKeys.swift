import FluentKit
import Foundation
import GatehouseFoundation
import GatehousePlatform
import SQLKit

/// What an admin key may do. A key carries only the scopes it was made with.
package enum AdminScope: String, Sendable, CaseIterable, Codable {
    /// Read client records.
    case clientsRead = "clients:read"
    /// Create, replace, delete and import client records.
    case clientsWrite = "clients:write"
}

/// An admin key as it is listed: never the key itself, which is shown once when made.
package struct AdminKeyRecord: Sendable, Equatable, Codable {
    package var id: UUID
    package var name: String
    package var hint: String
    package var scopes: [AdminScope]
    package var createdAt: Date
    package var createdBy: String?
    package var lastUsedAt: Date?
    package var disabledAt: Date?

    package func allows(_ scope: AdminScope) -> Bool { disabledAt == nil && scopes.contains(scope) }
}

/// Admin keys: how a business system calls the admin API (docs/operators.md, "The admin API").
/// A key is `ghadm_` and 43 random characters (256 bits), stored as its SHA-256; it is shown
/// once. Made, listed and disabled by `gatehouse admin-keys …`, each change in the audit trail.
package struct AdminKeys: Sendable {
    package let database: DatabaseProvider
    package let clock: GatehouseClock
    package let random: GatehouseRandom
    /// `last_used_at` is written at most this often per key.
    package let lastUsedResolution: TimeInterval = 60

    package init(database: DatabaseProvider, clock: GatehouseClock, random: GatehouseRandom) {
        self.database = database
        self.clock = clock
        self.random = random
    }

    package static let prefix = "ghadm_"

    package static func invalid(_ text: String) -> GatehouseError {
        GatehouseError(.invalidInput, .invalidParameter, LocalizedText("error.plain", [text]))
    }

    /// Makes a key with these scopes; the record and the key, shown this once.
    package func create(name: String, scopes: [AdminScope], by actor: AuditActor) async throws -> (AdminKeyRecord, String) {
        let name = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty, name.count <= 100 else { throw Self.invalid("a key needs a name of at most 100 characters") }
        guard !scopes.isEmpty else { throw Self.invalid("a key needs at least one scope: \(AdminScope.allCases.map(\.rawValue).joined(separator: ", "))") }
        let key = Self.prefix + random.token()
        let scopes = AdminScope.allCases.filter(scopes.contains)
        let record = AdminKeyRecord(id: UUID(), name: name, hint: "…" + key.suffix(4), scopes: scopes, createdAt: clock.now(),
                                    createdBy: actor.id, lastUsedAt: nil, disabledAt: nil)
        try await database.db.transaction { tx in
            try await (tx as! any SQLDatabase).raw("""
                INSERT INTO admin_keys (id, name, key_hash, key_hint, scopes, created_at, created_by)
                VALUES (\(bind: record.id), \(bind: name), \(bind: Secrets.sha256Hex(key)), \(bind: record.hint),
                        \(bind: scopes.map(\.rawValue).joined(separator: " ")), \(bind: record.createdAt), \(bind: record.createdBy))
                """).run()
            try await AuditLog(database: database, clock: clock).record(AuditEvent(
                .adminKeyCreated, by: actor, account: nil,
                detail: ["key": record.id.uuidString.lowercased(), "name": name, "scopes": scopes.map(\.rawValue).joined(separator: " ")]), on: tx)
        }
        return (record, key)
    }

    package func list() async throws -> [AdminKeyRecord] {
        try await database.sql.raw("SELECT * FROM admin_keys ORDER BY created_at, id").all().map(Self.record)
    }

    /// Disables a key for good; false when there is no such enabled key.
    package func disable(_ id: UUID, by actor: AuditActor) async throws -> Bool {
        let now = clock.now()
        return try await database.db.transaction { tx in
            let changed = try await (tx as! any SQLDatabase).raw("""
                UPDATE admin_keys SET disabled_at = \(bind: now) WHERE id = \(bind: id) AND disabled_at IS NULL RETURNING name
                """).all()
            guard let name = try changed.first?.decode(column: "name", as: String.self) else { return false }
            try await AuditLog(database: database, clock: clock).record(AuditEvent(
                .adminKeyDisabled, by: actor, account: nil, detail: ["key": id.uuidString.lowercased(), "name": name]), on: tx)
            return true
        }
    }

    /// The enabled key this text is, or nil.
    package func authenticate(_ key: String) async throws -> AdminKeyRecord? {
        guard key.hasPrefix(Self.prefix), key.utf8.count <= 100 else { return nil }
        guard let row = try await database.sql.raw("""
            SELECT * FROM admin_keys WHERE key_hash = \(bind: Secrets.sha256Hex(key)) AND disabled_at IS NULL
            """).first() else { return nil }
        let record = try Self.record(row)
        let now = clock.now()
        if record.lastUsedAt.map({ now.timeIntervalSince($0) > lastUsedResolution }) ?? true {
            try await database.sql.raw("UPDATE admin_keys SET last_used_at = \(bind: now) WHERE id = \(bind: record.id)").run()
        }
        return record
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
