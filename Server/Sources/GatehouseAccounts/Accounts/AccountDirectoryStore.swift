import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import SQLKit

/// The admin API's reading of accounts: one query for a page with its filters, and the second factors and session
/// counts of the page's accounts in one query each (never one per account).
struct AccountDirectoryStore: Sendable {
    let database: DatabaseProvider

    struct Filter: Sendable {
        var id: UUID?
        var email: String?
        var phone: String?
        var tagKey: String?
        var externalID: String?
        var state: AdminAccountState?
        var createdAfter: Date?
        var createdBefore: Date?
        var signedInAfter: Date?
        var signedInBefore: Date?
    }

    /// The identifiers an import row is known by (`LoginName.key` of its tag).
    package struct Identifiers: Sendable {
        var externalIDs: Set<String> = []
        var emails: Set<String> = []
        var phones: Set<String> = []
        var tagKeys: Set<String> = []

        mutating func insert(_ row: AccountImport.Checked) {
            if let id = row.row.externalId { externalIDs.insert(id) }
            if let email = row.email { emails.insert(email) }
            if let phone = row.phone { phones.insert(phone) }
            if let tag = row.tag { tagKeys.insert(LoginName.key(tag)) }
        }

        func holdsAny(of row: AccountImport.Checked) -> Bool {
            row.row.externalId.map(externalIDs.contains) == true || row.email.map(emails.contains) == true
                || row.phone.map(phones.contains) == true || row.tag.map { tagKeys.contains(LoginName.key($0)) } == true
        }
    }

    /// Which of these identifiers an account holds already (an email or phone held unproven too, as `isEmailTaken`
    /// counts it): one query per kind.
    func taken(_ wanted: Identifiers) async throws -> Identifiers {
        func held(_ column: String, _ values: Set<String>) async throws -> Set<String> {
            guard !values.isEmpty else { return [] }
            return Set(try await database.db.raw("SELECT \(ident: column) AS value FROM accounts WHERE \(ident: column) IN (\(binds: Array(values)))").all()
                .map { try $0.decode(column: "value", as: String.self) })
        }
        return Identifiers(externalIDs: try await held("external_id", wanted.externalIDs), emails: try await held("email", wanted.emails),
                           phones: try await held("phone", wanted.phones), tagKeys: try await held("username_key", wanted.tagKeys))
    }

    func phoneHolder(_ phone: String) async throws -> UUID? {
        try await database.db.raw("SELECT id FROM accounts WHERE phone = \(bind: phone)").first(decodingColumn: "id", as: UUID.self)
    }

    /// Every code outstanding for the account (an address the business replaced must not still take one sent to it).
    func dropCodes(of accountID: UUID, on tx: any GatehouseDatabase) async throws {
        try await tx.raw("DELETE FROM verification_codes WHERE account_id = \(bind: accountID)").run()
    }

    func externalIDHolder(_ id: String) async throws -> UUID? {
        try await database.db.raw("SELECT id FROM accounts WHERE external_id = \(bind: id)").first(decodingColumn: "id", as: UUID.self)
    }

    func accounts(_ filter: Filter, after: (Date, UUID)?, limit: Int, now: Date, grace: TimeInterval) async throws -> [AdminAccount] {
        var conditions: [SQLQueryString] = ["erased_at IS NULL"]
        if let id = filter.id { conditions.append("id = \(bind: id)") }
        if let email = filter.email { conditions.append("email = \(bind: email)") }
        if let phone = filter.phone { conditions.append("phone = \(bind: phone)") }
        if let key = filter.tagKey { conditions.append("username_key = \(bind: key)") }
        if let external = filter.externalID { conditions.append("external_id = \(bind: external)") }
        switch filter.state {
        case nil: break
        case .active: conditions.append("locked_at IS NULL AND deletion_requested_at IS NULL")
        case .locked: conditions.append("locked_at IS NOT NULL")
        case .deleting: conditions.append("deletion_requested_at IS NOT NULL")
        }
        if let date = filter.createdAfter { conditions.append("created_at >= \(bind: date)") }
        if let date = filter.createdBefore { conditions.append("created_at < \(bind: date)") }
        if let date = filter.signedInAfter { conditions.append("last_sign_in_at >= \(bind: date)") }
        if let date = filter.signedInBefore { conditions.append("last_sign_in_at < \(bind: date)") }
        if let (at, id) = after { conditions.append("(created_at < \(bind: at) OR (created_at = \(bind: at) AND id < \(bind: id)))") }
        let query: SQLQueryString = """
            SELECT id, external_id, email, email_confirmed_at, phone, phone_verified_at, username, first_name, last_name, middle_name, locale,
                   password_hash, locked_at, locked_reason, deletion_requested_at, created_at, last_sign_in_at
            FROM accounts WHERE
            """ + " " + conditions.joined(separator: " AND ") + " ORDER BY created_at DESC, id DESC LIMIT \(unsafeRaw: String(limit))"
        let rows = try await database.db.raw(query).all()
        guard !rows.isEmpty else { return [] }
        var accounts: [AdminAccount] = []
        for row in rows {
            let lockedAt = try row.decode(column: "locked_at", as: Date?.self)
            let deletionAt = try row.decode(column: "deletion_requested_at", as: Date?.self)
            let hash = try row.decode(column: "password_hash", as: String.self)
            accounts.append(AdminAccount(
                id: try row.decode(column: "id", as: UUID.self), externalId: try row.decode(column: "external_id", as: String?.self),
                email: try row.decode(column: "email", as: String?.self), emailVerified: try row.decode(column: "email_confirmed_at", as: Date?.self) != nil,
                phone: try row.decode(column: "phone", as: String?.self), phoneVerified: try row.decode(column: "phone_verified_at", as: Date?.self) != nil,
                tag: try row.decode(column: "username", as: String?.self), firstName: try row.decode(column: "first_name", as: String?.self),
                lastName: try row.decode(column: "last_name", as: String?.self), middleName: try row.decode(column: "middle_name", as: String?.self),
                locale: try row.decode(column: "locale", as: String?.self),
                state: deletionAt != nil ? .deleting : lockedAt != nil ? .locked : .active, hasPassword: hash != PasswordHasher.unusable,
                lockedAt: lockedAt, lockedReason: try row.decode(column: "locked_reason", as: String?.self),
                erasesAt: deletionAt?.addingTimeInterval(grace), totp: false, passkeys: [], sessions: 0,
                createdAt: try row.decode(column: "created_at", as: Date.self), lastSignInAt: try row.decode(column: "last_sign_in_at", as: Date?.self)))
        }
        let ids = accounts.map(\.id)
        let totp = Set(try await database.db.raw("SELECT account_id FROM account_totp WHERE confirmed_at IS NOT NULL AND account_id IN (\(binds: ids))").all()
            .map { try $0.decode(column: "account_id", as: UUID.self) })
        var passkeys: [UUID: [AdminPasskey]] = [:]
        for row in try await database.db.raw("""
            SELECT id, account_id, name, created_at, last_used_at FROM passkeys WHERE account_id IN (\(binds: ids)) ORDER BY created_at, id
            """).all() {
            passkeys[try row.decode(column: "account_id", as: UUID.self), default: []].append(AdminPasskey(
                id: try row.decode(column: "id", as: UUID.self), name: try row.decode(column: "name", as: String.self),
                createdAt: try row.decode(column: "created_at", as: Date.self), lastUsedAt: try row.decode(column: "last_used_at", as: Date?.self)))
        }
        var sessions: [UUID: Int] = [:]
        for row in try await database.db.raw("""
            SELECT account_id, COUNT(*) AS live FROM sessions WHERE account_id IN (\(binds: ids)) AND expires_at > \(bind: now) GROUP BY account_id
            """).all() {
            sessions[try row.decode(column: "account_id", as: UUID.self)] = try row.decode(column: "live", as: Int.self)
        }
        return accounts.map { account in
            var account = account
            account.totp = totp.contains(account.id)
            account.passkeys = passkeys[account.id] ?? []
            account.sessions = sessions[account.id] ?? 0
            return account
        }
    }
}
