import FluentKit
import Foundation
import GatehouseFoundation
import GatehousePlatform

/// What an admin key may do. A key carries only the scopes it was made with.
package enum AdminScope: String, Sendable, CaseIterable, Codable {
    /// Read client records.
    case clientsRead = "clients:read"
    /// Create, replace, delete and import client records.
    case clientsWrite = "clients:write"
    /// Import accounts with their old password hashes (docs/migrating.md).
    case accountsImport = "accounts:import"
    /// Find, list and read accounts.
    case accountsRead = "accounts:read"
    /// Create and change accounts; lock, unlock, end sessions, remove second factors, start a deletion.
    case accountsWrite = "accounts:write"
    /// Add, list and disable webhook endpoints, rotate their secrets, read and retry their deliveries.
    case webhooksWrite = "webhooks:write"
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
    private var store: AdminKeyStore { AdminKeyStore(database: database) }

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
        try await database.db.withTransaction { tx in
            try await store.insert(record, keyHash: Secrets.sha256Hex(key), on: tx)
            try await AuditLog(database: database, clock: clock).record(AuditEvent(
                .adminKeyCreated, by: actor, account: nil,
                detail: ["key": record.id.uuidString.lowercased(), "name": name, "scopes": scopes.map(\.rawValue).joined(separator: " ")]), on: tx)
        }
        return (record, key)
    }

    package func list() async throws -> [AdminKeyRecord] {
        try await store.all()
    }

    /// Disables a key for good; false when there is no such enabled key.
    package func disable(_ id: UUID, by actor: AuditActor) async throws -> Bool {
        let now = clock.now()
        return try await database.db.withTransaction { tx in
            guard let name = try await store.disable(id, at: now, on: tx) else { return false }
            try await AuditLog(database: database, clock: clock).record(AuditEvent(
                .adminKeyDisabled, by: actor, account: nil, detail: ["key": id.uuidString.lowercased(), "name": name]), on: tx)
            return true
        }
    }

    /// The enabled key this text is, or nil.
    package func authenticate(_ key: String) async throws -> AdminKeyRecord? {
        guard key.hasPrefix(Self.prefix), key.utf8.count <= 100 else { return nil }
        guard let record = try await store.enabled(keyHash: Secrets.sha256Hex(key)) else { return nil }
        let now = clock.now()
        if record.lastUsedAt.map({ now.timeIntervalSince($0) > lastUsedResolution }) ?? true {
            try await store.touch(record.id, at: now)
        }
        return record
    }
}
