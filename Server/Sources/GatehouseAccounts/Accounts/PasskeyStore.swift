import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import SQLKit

/// Every query of the passkeys' tables (`passkeys`, `webauthn_challenges`). `Passkeys` holds the ceremonies' rules;
/// this holds the rows.
package struct PasskeyStore: Sendable {
    package let database: DatabaseProvider

    package init(database: DatabaseProvider) {
        self.database = database
    }

    /// A passkey as an assertion is checked against it.
    package struct Stored: Sendable {
        package var id: UUID
        package var accountID: UUID
        package var publicKey: String
        package var signCount: Int64
        package var name: String
    }

    /// A credential the platform made, to keep.
    package struct New: Sendable {
        package var id: UUID
        package var accountID: UUID
        package var credentialID: String
        package var publicKey: String
        package var signCount: Int64
        package var backupEligible: Bool
        package var name: String
        package var createdAt: Date
    }

    // MARK: Passkeys

    package func count(of accountID: UUID, on db: (any GatehouseDatabase)? = nil) async throws -> Int {
        try await (db ?? database.db).raw("SELECT COUNT(*) AS n FROM passkeys WHERE account_id = \(bind: accountID)").first()?
            .decode(column: "n", as: Int.self) ?? 0
    }

    package func hasAny(_ accountID: UUID) async throws -> Bool {
        try await database.db.raw("SELECT id FROM passkeys WHERE account_id = \(bind: accountID) LIMIT 1").first() != nil
    }

    /// The account's credential ids, oldest first (what a new registration excludes).
    package func credentialIDs(of accountID: UUID) async throws -> [String] {
        try await database.db.raw("SELECT credential_id FROM passkeys WHERE account_id = \(bind: accountID) ORDER BY created_at").all()
            .map { try $0.decode(column: "credential_id", as: String.self) }
    }

    /// The account's passkeys, newest first.
    package func list(of accountID: UUID) async throws -> [Passkey] {
        try await database.db.raw("""
            SELECT id, name, created_at, last_used_at, backup_eligible FROM passkeys WHERE account_id = \(bind: accountID) ORDER BY created_at DESC
            """).all().map { row in
            Passkey(id: try row.decode(column: "id", as: UUID.self), name: try row.decode(column: "name", as: String.self),
                    createdAt: try row.decode(column: "created_at", as: Date.self), lastUsedAt: try row.decode(column: "last_used_at", as: Date?.self),
                    synced: try row.decode(column: "backup_eligible", as: Bool.self))
        }
    }

    /// A registered credential may be one already kept: the insert then fails on the key (a constraint violation).
    package func insert(_ new: New, on tx: any GatehouseDatabase) async throws {
        try await tx.raw("""
            INSERT INTO passkeys (id, account_id, credential_id, public_key, sign_count, backup_eligible, name, created_at, last_used_at)
            VALUES (\(bind: new.id), \(bind: new.accountID), \(bind: new.credentialID), \(bind: new.publicKey),
                    \(bind: new.signCount), \(bind: new.backupEligible), \(bind: new.name), \(bind: new.createdAt), NULL)
            """).run()
    }

    package func find(credentialID: String) async throws -> Stored? {
        guard let row = try await database.db.raw("""
            SELECT id, account_id, public_key, sign_count, name FROM passkeys WHERE credential_id = \(bind: credentialID)
            """).first() else { return nil }
        return Stored(id: try row.decode(column: "id", as: UUID.self), accountID: try row.decode(column: "account_id", as: UUID.self),
                      publicKey: try row.decode(column: "public_key", as: String.self), signCount: try row.decode(column: "sign_count", as: Int64.self),
                      name: try row.decode(column: "name", as: String.self))
    }

    /// Moves the counter from `from` to `to`: false when another request with the same passkey moved it first.
    package func advanceCounter(of id: UUID, from: Int64, to: Int64, at now: Date, on tx: any GatehouseDatabase) async throws -> Bool {
        try await !tx.raw("""
            UPDATE passkeys SET sign_count = \(bind: to), last_used_at = \(bind: now)
            WHERE id = \(bind: id) AND sign_count = \(bind: from) RETURNING id
            """).all().isEmpty
    }

    /// Removes one of the account's passkeys: its name, nil when the account has none with this id.
    package func remove(_ id: UUID, of accountID: UUID, on tx: any GatehouseDatabase) async throws -> String? {
        try await tx.raw("DELETE FROM passkeys WHERE id = \(bind: id) AND account_id = \(bind: accountID) RETURNING name").first()?
            .decode(column: "name", as: String.self)
    }

    /// Removes the account's passkeys (those made after `since`, when given): their names.
    package func removeAll(of accountID: UUID, madeAfter since: Date? = nil, only ids: [UUID]? = nil, on tx: any GatehouseDatabase) async throws -> [String] {
        if let ids, ids.isEmpty { return [] }
        let after: SQLQueryString = since.map { "AND created_at > \(bind: $0)" } ?? ""
        let only: SQLQueryString = ids.map { " AND id IN (\(binds: $0))" } ?? ""
        return try await tx.raw("DELETE FROM passkeys WHERE account_id = \(bind: accountID) \(after)\(only) RETURNING name").all()
            .map { try $0.decode(column: "name", as: String.self) }
    }

    // MARK: Ceremonies' challenges

    /// A challenge kept as its hash with what it is for; expired ones of anyone go first.
    package func addChallenge(_ hash: String, purpose: String, accountID: UUID?, loginChallengeID: UUID?, at now: Date, expiresAt: Date) async throws {
        let db = database.db
        try await db.raw("DELETE FROM webauthn_challenges WHERE expires_at < \(bind: now.addingTimeInterval(-60))").run()
        try await db.raw("""
            INSERT INTO webauthn_challenges (id, challenge_hash, purpose, account_id, login_challenge_id, created_at, expires_at, used_at)
            VALUES (\(bind: UUID()), \(bind: hash), \(bind: purpose), \(bind: accountID), \(bind: loginChallengeID),
                    \(bind: now), \(bind: expiresAt), NULL)
            """).run()
    }

    /// Spends a live, unused challenge issued for `purpose`, this account (or none) and this login (when given):
    /// false when there is none.
    package func takeChallenge(_ hash: String, purpose: String, accountID: UUID?, loginChallengeID: UUID?, at now: Date) async throws -> Bool {
        let accountCondition: SQLQueryString = accountID.map { "AND account_id = \(bind: $0)" } ?? "AND account_id IS NULL"
        let loginCondition: SQLQueryString = loginChallengeID.map { "AND login_challenge_id = \(bind: $0)" } ?? ""
        return try await !database.db.raw("""
            UPDATE webauthn_challenges SET used_at = \(bind: now)
            WHERE challenge_hash = \(bind: hash) AND purpose = \(bind: purpose) AND used_at IS NULL AND expires_at > \(bind: now)
            \(accountCondition) \(loginCondition)
            RETURNING id
            """).all().isEmpty
    }
}
