import FluentKit
import Foundation
import GatehouseFoundation
import SQLKit

/// Every query of the second factors' tables (`account_totp`, `recovery_codes`, `login_challenges`) and of the
/// account's flag that `SessionService.create` reads (`accounts.second_factor_at`). `SecondFactors` holds the rules
/// (what a code proves, budgets, audits, notices); this holds the rows. A write that belongs to a caller's transaction
/// takes it; a read takes one when the caller is in one.
package struct SecondFactorStore: Sendable {
    package let database: DatabaseProvider

    package init(database: DatabaseProvider) {
        self.database = database
    }

    /// The authenticator app's row: the sealed secret, the newest step accepted, when it was made and confirmed.
    package struct App: Sendable {
        package var sealedSecret: String
        package var lastStep: Int64
        package var createdAt: Date
        /// Nil while it waits for its first code.
        package var confirmedAt: Date?
        package var isOn: Bool { confirmedAt != nil }
    }

    // MARK: The authenticator app

    package func app(of accountID: UUID, on db: (any GatehouseDatabase)? = nil) async throws -> App? {
        guard let row = try await (db ?? database.db).raw("""
            SELECT secret_sealed, last_step, created_at, confirmed_at FROM account_totp WHERE account_id = \(bind: accountID)
            """).first() else { return nil }
        return App(sealedSecret: try row.decode(column: "secret_sealed", as: String.self), lastStep: try row.decode(column: "last_step", as: Int64.self),
                   createdAt: try row.decode(column: "created_at", as: Date.self), confirmedAt: try row.decode(column: "confirmed_at", as: Date?.self))
    }

    /// A new secret waiting for its first code, in place of a waiting one. A confirmed one makes the insert fail on
    /// the key (a constraint violation: the caller's "already on").
    package func startEnrolment(_ accountID: UUID, sealedSecret: String, at now: Date, on tx: any GatehouseDatabase) async throws {
        try await tx.raw("DELETE FROM account_totp WHERE account_id = \(bind: accountID) AND confirmed_at IS NULL").run()
        try await tx.raw("""
            INSERT INTO account_totp (account_id, secret_sealed, last_step, confirmed_at, created_at)
            VALUES (\(bind: accountID), \(bind: sealedSecret), \(bind: Int64(0)), NULL, \(bind: now))
            """).run()
    }

    /// Turns the waiting secret on with the step of its first code, and sets the account's flag; false when nothing
    /// was waiting (a concurrent confirmation got there first).
    package func confirm(_ accountID: UUID, step: Int64, at now: Date, on tx: any GatehouseDatabase) async throws -> Bool {
        let turned = try await tx.raw("""
            UPDATE account_totp SET confirmed_at = \(bind: now), last_step = \(bind: step)
            WHERE account_id = \(bind: accountID) AND confirmed_at IS NULL RETURNING account_id
            """).all()
        guard !turned.isEmpty else { return false }
        try await tx.raw("UPDATE accounts SET second_factor_at = \(bind: now), updated_at = \(bind: now) WHERE id = \(bind: accountID)").run()
        return true
    }

    /// The app, its recovery codes and the logins waiting for a second step go; the account's flag is cleared.
    package func removeApp(of accountID: UUID, at now: Date, on tx: any GatehouseDatabase) async throws {
        try await tx.raw("DELETE FROM account_totp WHERE account_id = \(bind: accountID)").run()
        try await tx.raw("DELETE FROM recovery_codes WHERE account_id = \(bind: accountID)").run()
        try await tx.raw("DELETE FROM login_challenges WHERE account_id = \(bind: accountID)").run()
        try await tx.raw("UPDATE accounts SET second_factor_at = NULL, updated_at = \(bind: now) WHERE id = \(bind: accountID)").run()
    }

    /// Makes `step` the newest accepted, when it is newer than the last: false when a concurrent request spent it.
    package func spendStep(_ step: Int64, of accountID: UUID, on tx: any GatehouseDatabase) async throws -> Bool {
        try await !tx.raw("""
            UPDATE account_totp SET last_step = \(bind: step)
            WHERE account_id = \(bind: accountID) AND confirmed_at IS NOT NULL AND last_step < \(bind: step) RETURNING account_id
            """).all().isEmpty
    }

    // MARK: Recovery codes

    package func replaceRecoveryCodes(of accountID: UUID, withHashes hashes: [String], at now: Date, on tx: any GatehouseDatabase) async throws {
        try await tx.raw("DELETE FROM recovery_codes WHERE account_id = \(bind: accountID)").run()
        for hash in hashes {
            try await tx.raw("""
                INSERT INTO recovery_codes (id, account_id, code_hash, used_at, created_at)
                VALUES (\(bind: UUID()), \(bind: accountID), \(bind: hash), NULL, \(bind: now))
                """).run()
        }
    }

    package func unusedRecoveryCodes(of accountID: UUID, on db: (any GatehouseDatabase)? = nil) async throws -> Int {
        try await (db ?? database.db).raw("""
            SELECT COUNT(*) AS n FROM recovery_codes WHERE account_id = \(bind: accountID) AND used_at IS NULL
            """).first()?.decode(column: "n", as: Int.self) ?? 0
    }

    package func hasUnusedRecoveryCode(_ hash: String, of accountID: UUID) async throws -> Bool {
        try await database.db.raw("""
            SELECT id FROM recovery_codes WHERE account_id = \(bind: accountID) AND code_hash = \(bind: hash) AND used_at IS NULL
            """).first() != nil
    }

    /// Uses the code: false when a concurrent request used it first.
    package func spendRecoveryCode(_ hash: String, of accountID: UUID, at now: Date, on tx: any GatehouseDatabase) async throws -> Bool {
        try await !tx.raw("""
            UPDATE recovery_codes SET used_at = \(bind: now)
            WHERE account_id = \(bind: accountID) AND code_hash = \(bind: hash) AND used_at IS NULL RETURNING id
            """).all().isEmpty
    }

    // MARK: Login challenges

    /// A challenge for a login's second step, stored by its token's hash; old challenges of any account go first (the
    /// table stays small).
    package func addChallenge(_ tokenHash: String, for accountID: UUID, at now: Date, expiresAt: Date, ip: String?, device: String?,
                              temporary: (codeID: UUID, passwordHash: String)?, firstMethod: String? = nil) async throws {
        let db = database.db
        try await db.raw("DELETE FROM login_challenges WHERE expires_at < \(bind: now.addingTimeInterval(-60))").run()
        try await db.raw("""
            INSERT INTO login_challenges (id, account_id, token_hash, created_at, expires_at, attempts, used_at, ip, device,
                                          temporary_code_id, new_password_hash, first_method)
            VALUES (\(bind: UUID()), \(bind: accountID), \(bind: tokenHash), \(bind: now), \(bind: expiresAt), \(bind: 0), NULL,
                    \(bind: ip), \(bind: device), \(bind: temporary?.codeID), \(bind: temporary?.passwordHash), \(bind: firstMethod))
            """).run()
    }

    /// Takes one attempt of a live, unused challenge with attempts left: the challenge and the attempts made, this one
    /// included; nil for any other.
    package func takeAttempt(_ tokenHash: String, at now: Date, limit: Int) async throws -> (SecondFactors.PendingLogin, attempts: Int)? {
        guard let row = try await database.db.raw("""
            UPDATE login_challenges SET attempts = attempts + 1
            WHERE token_hash = \(bind: tokenHash) AND used_at IS NULL AND expires_at > \(bind: now) AND attempts < \(bind: limit)
            RETURNING id, account_id, attempts, temporary_code_id, new_password_hash, first_method
            """).first() else { return nil }
        return (try Self.pending(row), try row.decode(column: "attempts", as: Int.self))
    }

    /// A live, unused challenge with attempts left, read without taking one.
    package func pendingChallenge(_ tokenHash: String, at now: Date, limit: Int) async throws -> SecondFactors.PendingLogin? {
        try await database.db.raw("""
            SELECT id, account_id, temporary_code_id, new_password_hash, first_method FROM login_challenges
            WHERE token_hash = \(bind: tokenHash) AND used_at IS NULL AND expires_at > \(bind: now) AND attempts < \(bind: limit)
            """).first().map(Self.pending)
    }

    /// Marks the challenge used: false when another request used it first.
    package func useChallenge(_ id: UUID, at now: Date, on tx: any GatehouseDatabase) async throws -> Bool {
        try await !tx.raw("UPDATE login_challenges SET used_at = \(bind: now) WHERE id = \(bind: id) AND used_at IS NULL RETURNING id").all().isEmpty
    }

    private static func pending(_ row: any SQLRow) throws -> SecondFactors.PendingLogin {
        SecondFactors.PendingLogin(id: try row.decode(column: "id", as: UUID.self), accountID: try row.decode(column: "account_id", as: UUID.self),
                                   temporaryCodeID: try row.decode(column: "temporary_code_id", as: UUID?.self),
                                   newPasswordHash: try row.decode(column: "new_password_hash", as: String?.self),
                                   firstMethod: try row.decode(column: "first_method", as: String?.self))
    }
}
