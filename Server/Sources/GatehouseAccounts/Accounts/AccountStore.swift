import FluentKit
import Foundation
import GatehouseFoundation
import SQLKit

/// The `accounts` table: every query the account services make of it, in one place (DESIGN §7:
/// stores own the queries; services hand surfaces values). A proven address names an account, an
/// unproven one is only a claim (docs/security.md, "Claims"). `db` is a transaction's database
/// when the read belongs to one.
package struct AccountStore: Sendable {
    package let database: DatabaseProvider

    package init(database: DatabaseProvider) {
        self.database = database
    }

    // MARK: Lookups the account services share

    /// The account an identifier names (`AccountRules.identifier`). Only a confirmed email or a
    /// verified phone names an account: an unconfirmed one is a claim anybody could have typed
    /// (docs/security.md, "Claims").
    package func find(_ identifier: AccountRules.Identifier?) async throws -> AccountModel? {
        switch identifier {
        case nil: return nil
        case .email(let email): return try await owner(of: .email(email))
        case .nameOrPhone(let name, let phone):
            if let byName = try await named(name) { return byName }
            guard let phone else { return nil }
            return try await owner(of: .phone(phone))
        }
    }

    /// The account's row, for the rules that change it; 401 when it is gone (its session with it).
    package func accountRow(id: UUID) async throws -> AccountModel {
        guard let account = try await row(id: id) else { throw GatehouseError.unauthorized }
        return account
    }

    /// The account as a value (what surfaces show).
    package func account(id: UUID) async throws -> AccountSnapshot {
        try await accountRow(id: id).snapshot
    }

    /// Whether another account has the tag (or a login of that name).
    package func isTagTaken(_ tag: String, except accountID: UUID? = nil) async throws -> Bool {
        try await isNameTaken(tag.lowercased(), except: accountID)
    }

    /// A new account, in the caller's transaction (a sign-up, or Sign To Login's enrolment).
    package func create(_ account: AccountModel, on db: any GatehouseDatabase) async throws {
        try await account.create(on: db)
    }

    /// Accounts made together (an import's batch) in one statement, in the caller's transaction: the columns a new
    /// account can have set, the others left to their defaults. `AccountUpkeep` writes what follows from them.
    package func create(_ accounts: [AccountModel], on db: any GatehouseDatabase) async throws {
        guard !accounts.isEmpty else { return }
        for account in accounts where account.id == nil { account.id = UUID() }
        let rows = accounts.map { a -> SQLQueryString in
            """
            (\(bind: a.id), \(bind: a.phone), \(bind: a.phoneVerifiedAt), \(bind: a.email), \(bind: a.emailConfirmedAt), \(bind: a.username),
             \(bind: a.usernameKey), \(bind: a.passwordHash), \(bind: a.firstName), \(bind: a.lastName), \(bind: a.locale), \(bind: a.externalID),
             \(bind: a.createdAt), \(bind: a.updatedAt))
            """
        }
        try await db.raw("""
            INSERT INTO accounts (id, phone, phone_verified_at, email, email_confirmed_at, username, username_key, password_hash, first_name,
                                  last_name, locale, external_id, created_at, updated_at)
            VALUES \(rows.joined(separator: ", "))
            """).run()
    }

    /// Whether an account was imported with this external id.
    package func hasExternalID(_ id: String) async throws -> Bool {
        try await database.db.raw("SELECT 1 AS one FROM accounts WHERE external_id = \(bind: id)").first() != nil
    }

    /// A password hash another system made, replaced by Gatehouse's own at the login that proved it (unless it
    /// changed meanwhile).
    package func upgradePasswordHash(_ id: UUID, from old: String, to new: String, on db: any GatehouseDatabase) async throws {
        try await db.raw("UPDATE accounts SET password_hash = \(bind: new) WHERE id = \(bind: id) AND password_hash = \(bind: old)").run()
    }

    package func row(id: UUID, on db: (any GatehouseDatabase)? = nil) async throws -> AccountModel? {
        try await AccountModel.find(id, on: db ?? database.db)
    }

    /// The account whose confirmed email (or verified phone) this is.
    package func owner(of destination: Destination) async throws -> AccountModel? {
        switch destination {
        case .email(let email):
            try await AccountModel.query(on: database.db).filter(\.$email == email).filter(\.$emailConfirmedAt != nil).first()
        case .phone(let phone):
            try await AccountModel.query(on: database.db).filter(\.$phone == phone).filter(\.$phoneVerifiedAt != nil).first()
        }
    }

    /// Another account holding `destination` unconfirmed (a claim), inside the caller's transaction.
    package func claimant(of destination: Destination, except accountID: UUID?, on tx: any GatehouseDatabase) async throws -> AccountModel? {
        var query = AccountModel.query(on: tx)
        switch destination {
        case .email(let email): query = query.filter(\.$email == email).filter(\.$emailConfirmedAt == nil)
        case .phone(let phone): query = query.filter(\.$phone == phone).filter(\.$phoneVerifiedAt == nil)
        }
        if let accountID { query = query.filter(\.$id != accountID) }
        return try await query.first()
    }

    /// The account with this login name or tag (`key`: as `LoginName.key` folds it).
    package func named(_ key: String) async throws -> AccountModel? {
        try await AccountModel.query(on: database.db).filter(\.$usernameKey == key).first()
    }

    package func isNameTaken(_ key: String, except accountID: UUID? = nil) async throws -> Bool {
        var query = AccountModel.query(on: database.db).filter(\.$usernameKey == key)
        if let accountID { query = query.filter(\.$id != accountID) }
        return try await query.count() > 0
    }

    /// Whether any account holds the address, proven or not.
    package func isEmailTaken(_ email: String, except accountID: UUID? = nil) async throws -> Bool {
        var query = AccountModel.query(on: database.db).filter(\.$email == email)
        if let accountID { query = query.filter(\.$id != accountID) }
        return try await query.count() > 0
    }

    package func isPhoneTaken(_ phone: String) async throws -> Bool {
        try await AccountModel.query(on: database.db).filter(\.$phone == phone).count() > 0
    }

    // MARK: Locks

    /// When and why the account was locked; nil when it is not.
    package func lock(of id: UUID) async throws -> (at: Date, reason: String)? {
        guard let row = try await database.db.raw("SELECT locked_at, locked_reason FROM accounts WHERE id = \(bind: id)").first(),
              let at = try row.decode(column: "locked_at", as: Date?.self) else { return nil }
        return (at, try row.decode(column: "locked_reason", as: String?.self) ?? "")
    }

    /// Locks the account unless it is locked or erased: false when nothing changed.
    package func setLock(_ id: UUID, reason: String, at now: Date, on tx: any GatehouseDatabase) async throws -> Bool {
        try await !tx.raw("""
            UPDATE accounts SET locked_at = \(bind: now), locked_reason = \(bind: reason), updated_at = \(bind: now)
            WHERE id = \(bind: id) AND locked_at IS NULL AND erased_at IS NULL RETURNING id
            """).all().isEmpty
    }

    /// Unlocks a locked account: false when it was not locked.
    package func clearLock(_ id: UUID, at now: Date, on tx: any GatehouseDatabase) async throws -> Bool {
        try await !tx.raw("""
            UPDATE accounts SET locked_at = NULL, locked_reason = NULL, updated_at = \(bind: now)
            WHERE id = \(bind: id) AND locked_at IS NOT NULL RETURNING id
            """).all().isEmpty
    }

    // MARK: Avatars kept in the database (before migration 008)

    /// One avatar still in the database, if any is left.
    package func avatarInDatabase() async throws -> AvatarMove.Row? {
        try await database.db.raw("SELECT id, account_id, content_type, bytes, created_at FROM avatars LIMIT 1").first(decoding: AvatarMove.Row.self)
    }

    package func removeAvatarFromDatabase(_ id: UUID, on tx: any GatehouseDatabase) async throws {
        try await tx.raw("DELETE FROM avatars WHERE id = \(bind: id)").run()
    }

    // MARK: Deletion

    private func sql(_ db: (any GatehouseDatabase)?) -> any SQLDatabase { db ?? database.db }

    /// Marks the account as being deleted from `now`, unless it is already; answers when it was asked.
    package func requestDeletion(_ id: UUID, at now: Date, on tx: any GatehouseDatabase) async throws -> Date {
        try await sql(tx).raw("""
            UPDATE accounts SET deletion_requested_at = \(bind: now), updated_at = \(bind: now)
            WHERE id = \(bind: id) AND deletion_requested_at IS NULL AND erased_at IS NULL
            """).run()
        guard let requested = try await sql(tx).raw("SELECT deletion_requested_at FROM accounts WHERE id = \(bind: id)")
            .first(decodingColumn: "deletion_requested_at", as: Date?.self) ?? nil
        else { throw GatehouseError(.internal, .internalError, LocalizedText("error.internal")) }
        return requested
    }

    /// Forgets a deletion request not yet carried out; false when the account was erased
    /// meanwhile (there is nothing left to sign in to).
    package func cancelDeletion(_ id: UUID, on tx: (any GatehouseDatabase)? = nil) async throws -> Bool {
        try await sql(tx).raw("""
            UPDATE accounts SET deletion_requested_at = NULL WHERE id = \(bind: id) AND erased_at IS NULL RETURNING id
            """).first() != nil
    }

    /// Accounts asked to be deleted before `cutoff` and not erased yet, oldest request first.
    package func deletionsDue(before cutoff: Date, limit: Int) async throws -> [UUID] {
        try await sql(nil).raw("""
            SELECT id FROM accounts WHERE deletion_requested_at <= \(bind: cutoff) AND erased_at IS NULL
            ORDER BY deletion_requested_at LIMIT \(literal: limit)
            """).all().map { try $0.decode(column: "id", as: UUID.self) }
    }

    /// Takes a due account for erasure in the caller's transaction: false when a login cancelled
    /// the request or another instance took it.
    package func takeForErasure(_ id: UUID, requestedBefore cutoff: Date, at now: Date, on tx: any GatehouseDatabase) async throws -> Bool {
        try await sql(tx).raw("""
            UPDATE accounts SET erased_at = \(bind: now), updated_at = \(bind: now)
            WHERE id = \(bind: id) AND erased_at IS NULL AND deletion_requested_at <= \(bind: cutoff) RETURNING id
            """).first() != nil
    }

    /// Unlinks the identities (Sign in with Apple or Google) joined to the account after `since` and after the account
    /// was made: a password recovery undoes the ways in added in its window, and the identity that made the account
    /// stays. Their providers' names.
    package func removeIdentitiesLinked(to accountID: UUID, after since: Date, on tx: any GatehouseDatabase) async throws -> [String] {
        let rows = try await sql(tx).raw("""
            SELECT i.id, i.provider FROM account_identities i JOIN accounts a ON a.id = i.account_id
            WHERE i.account_id = \(bind: accountID) AND i.created_at > \(bind: since) AND i.created_at > a.created_at
            """).all()
        for row in rows {
            try await sql(tx).raw("DELETE FROM account_identities WHERE id = \(bind: try row.decode(column: "id", as: UUID.self))").run()
        }
        return try rows.map { try $0.decode(column: "provider", as: String.self) }
    }

    /// Erases the account's own personal data in the caller's transaction: its addresses, names,
    /// birthday, device token and password; its codes, its avatars (their blobs go with the
    /// collector) and the mails and SMS that were written to it. The row stays, anonymous.
    package func eraseAccount(_ id: UUID, on tx: any GatehouseDatabase) async throws {
        let sql = sql(tx)
        if let row = try await sql.raw("SELECT email, pending_email, phone FROM accounts WHERE id = \(bind: id)").first() {
            let destinations = try ["email", "pending_email", "phone"].compactMap { try row.decode(column: $0, as: String?.self) }
            if !destinations.isEmpty {
                try await sql.raw("DELETE FROM outbox_messages WHERE destination IN (\(binds: destinations))").run()
            }
        }
        try await sql.raw("DELETE FROM verification_codes WHERE account_id = \(bind: id)").run()
        try await sql.raw("DELETE FROM login_challenges WHERE account_id = \(bind: id)").run()
        try await sql.raw("DELETE FROM recovery_codes WHERE account_id = \(bind: id)").run()
        try await sql.raw("DELETE FROM account_totp WHERE account_id = \(bind: id)").run()
        try await sql.raw("DELETE FROM webauthn_challenges WHERE account_id = \(bind: id)").run()
        try await sql.raw("DELETE FROM passkeys WHERE account_id = \(bind: id)").run()
        try await sql.raw("DELETE FROM oidc_consents WHERE account_id = \(bind: id)").run()
        try await sql.raw("DELETE FROM oidc_codes WHERE account_id = \(bind: id)").run()
        // The business's client record is its own data: it stays, unbound.
        try await sql.raw("UPDATE client_records SET account_id = NULL, bound_at = NULL WHERE account_id = \(bind: id)").run()
        try await sql.raw("DELETE FROM avatar_images WHERE account_id = \(bind: id)").run()
        try await sql.raw("DELETE FROM avatars WHERE account_id = \(bind: id)").run()
        // An unusable hash: no password verifies against it.
        try await sql.raw("""
            UPDATE accounts SET phone = NULL, phone_verified_at = NULL, email = NULL, email_confirmed_at = NULL, pending_email = NULL,
                username = NULL, username_key = NULL, password_hash = '!', first_name = NULL, last_name = NULL, middle_name = NULL,
                birthday = NULL, locale = NULL, fcm_token = NULL, avatar_id = NULL, second_factor_at = NULL, external_id = NULL
            WHERE id = \(bind: id)
            """).run()
    }
}
