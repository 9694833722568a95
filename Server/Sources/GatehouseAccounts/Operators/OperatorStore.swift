import FluentKit
import Foundation
import GatehouseFoundation
import SQLKit

/// Every statement of `operators` and `operator_sessions` (`Operators` holds the rules: names, passwords, codes,
/// budgets, audits).
package struct OperatorStore: Sendable {
    package let database: DatabaseProvider

    package init(database: DatabaseProvider) {
        self.database = database
    }

    /// An operator as signing in reads them: the record, the password's hash, the sealed TOTP secret and its last step.
    package struct Credentials: Sendable {
        package var record: OperatorRecord
        package var passwordHash: String
        package var sealedSecret: String
        package var lastStep: Int64
    }

    /// A live-looking session with its operator (enabled), before its limits are checked.
    package struct StoredSession: Sendable {
        package var id: UUID
        package var expiresAt: Date
        package var lastSeenAt: Date
        package var who: OperatorRecord
    }

    /// A name taken already makes the insert fail on the key (a constraint violation).
    package func insert(_ record: OperatorRecord, passwordHash: String, sealedSecret: String, on tx: any GatehouseDatabase) async throws {
        try await tx.raw("""
            INSERT INTO operators (id, name, role, password_hash, totp_sealed, totp_last_step, created_at, updated_at)
            VALUES (\(bind: record.id), \(bind: record.name), \(bind: record.role.rawValue), \(bind: passwordHash), \(bind: sealedSecret), 0,
                    \(bind: record.createdAt), \(bind: record.createdAt))
            """).run()
    }

    /// Disables an enabled operator and ends their sessions: false when there is no such enabled one.
    package func disable(name: String, at now: Date, on tx: any GatehouseDatabase) async throws -> Bool {
        guard let id = try await tx.raw("""
            UPDATE operators SET disabled_at = \(bind: now), updated_at = \(bind: now) WHERE name = \(bind: name) AND disabled_at IS NULL RETURNING id
            """).first(decodingColumn: "id", as: UUID.self) else { return false }
        try await tx.raw("DELETE FROM operator_sessions WHERE operator_id = \(bind: id)").run()
        return true
    }

    package func all() async throws -> [OperatorRecord] {
        try await database.db.raw("SELECT id, name, role, disabled_at, created_at FROM operators ORDER BY name").all().map(Self.record)
    }

    package func credentials(name: String) async throws -> Credentials? {
        guard let row = try await database.db.raw("SELECT * FROM operators WHERE name = \(bind: name)").first() else { return nil }
        return Credentials(record: try Self.record(row), passwordHash: try row.decode(column: "password_hash", as: String.self),
                           sealedSecret: try row.decode(column: "totp_sealed", as: String.self),
                           lastStep: try row.decode(column: "totp_last_step", as: Int64.self))
    }

    /// Makes `step` the newest accepted, when it is newer than the last: false when a concurrent sign-in spent it.
    package func spendStep(_ step: Int64, of id: UUID, on tx: any GatehouseDatabase) async throws -> Bool {
        try await !tx.raw("""
            UPDATE operators SET totp_last_step = \(bind: step) WHERE id = \(bind: id) AND totp_last_step < \(bind: step) RETURNING id
            """).all().isEmpty
    }

    package func openSession(_ id: UUID, of operatorID: UUID, tokenHash: String, at now: Date, expiresAt: Date, ip: String?, device: String?,
                             on tx: any GatehouseDatabase) async throws {
        try await tx.raw("""
            INSERT INTO operator_sessions (id, operator_id, token_hash, created_at, last_seen_at, expires_at, ip, device)
            VALUES (\(bind: id), \(bind: operatorID), \(bind: tokenHash), \(bind: now), \(bind: now), \(bind: expiresAt), \(bind: ip), \(bind: device))
            """).run()
    }

    /// The session with this token's hash, of an enabled operator.
    package func session(tokenHash: String) async throws -> StoredSession? {
        guard let row = try await database.db.raw("""
            SELECT s.id AS session_id, s.expires_at, s.last_seen_at, o.id, o.name, o.role, o.disabled_at, o.created_at
            FROM operator_sessions s JOIN operators o ON o.id = s.operator_id
            WHERE s.token_hash = \(bind: tokenHash) AND o.disabled_at IS NULL
            """).first() else { return nil }
        return StoredSession(id: try row.decode(column: "session_id", as: UUID.self), expiresAt: try row.decode(column: "expires_at", as: Date.self),
                             lastSeenAt: try row.decode(column: "last_seen_at", as: Date.self), who: try Self.record(row))
    }

    package func endSession(_ id: UUID) async throws {
        try await database.db.raw("DELETE FROM operator_sessions WHERE id = \(bind: id)").run()
    }

    package func endSession(tokenHash: String) async throws {
        try await database.db.raw("DELETE FROM operator_sessions WHERE token_hash = \(bind: tokenHash)").run()
    }

    package func touchSession(_ id: UUID, at now: Date) async throws {
        try await database.db.raw("UPDATE operator_sessions SET last_seen_at = \(bind: now) WHERE id = \(bind: id)").run()
    }

    /// Sessions past their end or idle since `idleBefore` go.
    package func purgeSessions(endedBefore now: Date, idleBefore: Date) async throws {
        try await database.db.raw("DELETE FROM operator_sessions WHERE expires_at < \(bind: now) OR last_seen_at < \(bind: idleBefore)").run()
    }

    static func record(_ row: any SQLRow) throws -> OperatorRecord {
        OperatorRecord(id: try row.decode(column: "id", as: UUID.self), name: try row.decode(column: "name", as: String.self),
                       role: OperatorRole(rawValue: try row.decode(column: "role", as: String.self)) ?? .readOnly,
                       disabledAt: try row.decode(column: "disabled_at", as: Date?.self), createdAt: try row.decode(column: "created_at", as: Date.self))
    }
}
