import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import SQLKit

/// The business's own code over accounts (the admin API, docs/operators.md "The admin API"): find, list, create, change,
/// and the console's actions — lock, unlock, end sessions, remove second factors, start a deletion — through the very
/// services the console calls, so a lock or a removed factor is the same change whoever made it. Every call is in the
/// audit trail as its actor (an admin key), reads included.
package struct AccountAdministration: Sendable {
    package let database: DatabaseProvider
    package let clock: GatehouseClock
    package let rules: AccountRules
    package let accountImport: AccountImport
    package let hasher: PasswordHasher
    package let passwordRules: PasswordRules
    package let sessions: SessionService
    package let locks: AccountLocks
    package let secondFactors: SecondFactors
    package let deletion: AccountDeletionService
    package let recovery: RecoveryService
    package let audit: AuditLog
    private var store: AccountStore { AccountStore(database: database) }
    private var directory: AccountDirectoryStore { AccountDirectoryStore(database: database) }

    package init(database: DatabaseProvider, clock: GatehouseClock, rules: AccountRules, accountImport: AccountImport, hasher: PasswordHasher,
                 passwordRules: PasswordRules, sessions: SessionService, locks: AccountLocks, secondFactors: SecondFactors,
                 deletion: AccountDeletionService, recovery: RecoveryService, audit: AuditLog) {
        self.database = database
        self.clock = clock
        self.rules = rules
        self.accountImport = accountImport
        self.hasher = hasher
        self.passwordRules = passwordRules
        self.sessions = sessions
        self.locks = locks
        self.secondFactors = secondFactors
        self.deletion = deletion
        self.recovery = recovery
        self.audit = audit
    }

    /// The most a page holds, and what it holds when the caller does not say.
    package static let maxPage = 200
    package static let defaultPage = 50

    package static var notFound: GatehouseError { GatehouseError.notFound(.accountNotFound, "error.plain").withText("There is no such account.") }

    private static func invalid(_ text: String, field: String? = nil) -> GatehouseError {
        var error = GatehouseError(.invalidInput, .invalidParameter, LocalizedText("error.plain", [text]))
        if let field { error = error.on(field: field) }
        return error
    }

    // MARK: Reading

    /// One account, audited as read; 404 for no account or an erased one.
    package func account(_ id: UUID, by actor: AuditActor, origin: AuditOrigin) async throws -> AdminAccount {
        guard let found = try await directory.accounts(AccountDirectoryStore.Filter(id: id), after: nil, limit: 1, now: clock.now(), grace: deletion.grace).first
        else { throw Self.notFound }
        try await audit.record(AuditEvent(.accountRead, by: actor, account: id, origin: origin))
        return found
    }

    /// A page of accounts, newest first, by the filters; audited once with the filters (addresses masked).
    package func list(_ query: AdminAccountQuery, by actor: AuditActor, origin: AuditOrigin) async throws -> AdminAccountPage {
        var filter = AccountDirectoryStore.Filter()
        if let email = query.email {
            guard let normalized = EmailAddress.normalize(email) else { throw Self.invalid("email is not an email address", field: "email") }
            filter.email = normalized
        }
        if let phone = query.phone {
            guard let normalized = PhoneNumber.normalize(phone, defaultCountryCode: rules.defaultCountryCode) else {
                throw Self.invalid("phone is not a phone number", field: "phone")
            }
            filter.phone = normalized
        }
        filter.tagKey = query.tag.map { LoginName.key($0.hasPrefix("@") ? String($0.dropFirst()) : $0) }
        filter.externalID = query.externalId
        filter.state = query.state
        filter.createdAfter = query.createdAfter.flatMap(WireDates.parseFlexible)
        filter.createdBefore = query.createdBefore.flatMap(WireDates.parseFlexible)
        filter.signedInAfter = query.signedInAfter.flatMap(WireDates.parseFlexible)
        filter.signedInBefore = query.signedInBefore.flatMap(WireDates.parseFlexible)
        var after: (Date, UUID)?
        if let parts = try PageCursor.read(query.cursor, parts: 2) {
            guard let seconds = Double(parts[0]), let id = UUID(uuidString: parts[1]) else { throw PageCursor.invalid }
            after = (Date(timeIntervalSince1970: seconds), id)
        }
        let size = min(query.limit ?? Self.defaultPage, Self.maxPage)
        let rows = try await directory.accounts(filter, after: after, limit: size + 1, now: clock.now(), grace: deletion.grace)
        let items = Array(rows.prefix(size))
        var detail: [String: String] = ["count": String(items.count)]
        if let email = filter.email { detail["email"] = maskedForAudit(email) }
        if let phone = filter.phone { detail["phone"] = maskedForAudit(phone) }
        if let tag = query.tag { detail["tag"] = String(tag.prefix(40)) }
        if let external = filter.externalID { detail["externalId"] = String(external.prefix(60)) }
        if let state = filter.state { detail["state"] = state.rawValue }
        try await audit.record(AuditEvent(.accountsListed, by: actor, account: items.count == 1 ? items[0].id : nil, origin: origin, detail: detail))
        let next = rows.count > size ? items.last.map { PageCursor.make([String($0.createdAt.timeIntervalSince1970), $0.id.uuidString]) } : nil
        return AdminAccountPage(items: items, nextCursor: next)
    }

    private func reread(_ id: UUID) async throws -> AdminAccount {
        guard let found = try await directory.accounts(AccountDirectoryStore.Filter(id: id), after: nil, limit: 1, now: clock.now(), grace: deletion.grace).first
        else { throw Self.notFound }
        return found
    }

    /// The account of an id, unless it is missing or erased: what every change starts from.
    private func existing(_ id: UUID) async throws -> AccountModel {
        guard let row = try await store.row(id: id), row.erasedAt == nil else { throw Self.notFound }
        return row
    }

    // MARK: Creating

    /// A new account, checked as an import row is; with a password (the password rules apply) or without one, and then
    /// with an invitation when asked: a code to its verified email (else its verified phone) that sets the password
    /// through "forgot password". An address or tag another account holds is 409.
    package func create(_ input: AdminAccountCreation, by actor: AuditActor, origin: RequestOrigin) async throws -> AdminAccount {
        let row = AccountImport.Row(externalId: input.externalId, email: input.email, emailVerified: input.emailVerified, phone: input.phone,
                                    phoneVerified: input.phoneVerified, tag: input.tag, firstName: input.firstName, lastName: input.lastName,
                                    locale: input.locale, createdAt: nil, passwordHash: nil, salt: nil, scrypt: nil)
        var checked: AccountImport.Checked
        switch accountImport.check(row, options: .init()) {
        case .success(let value): checked = value
        case .failure(let refusal): throw Self.invalid(refusal.reason)
        }
        let invite = input.invite == true
        if invite {
            guard input.password == nil else { throw Self.invalid("an invitation is for an account without a password: give one or the other", field: "invite") }
            guard (checked.email != nil && input.emailVerified == true) || (checked.phone != nil && input.phoneVerified == true) else {
                throw Self.invalid("an invitation goes to a verified email or phone: set emailVerified or phoneVerified", field: "invite")
            }
        }
        if let password = input.password {
            try await passwordRules.validate(password)
            checked.hash = try await hasher.hash(password)
        }
        try await refuseTaken(email: checked.email, phone: checked.phone, tag: checked.tag, externalID: checked.row.externalId, except: nil)
        let account = checked.account(now: clock.now())
        do {
            try await database.db.withTransaction { tx in
                try await store.create(account, on: tx)
                try await audit.record(AuditEvent(.accountCreated, by: actor, account: account.id!, origin: origin.audit,
                                                  detail: ["with": "admin", "password": input.password == nil ? "none" : "set"]), on: tx)
            }
        } catch where error.isConstraintViolation {
            try await refuseTaken(email: checked.email, phone: checked.phone, tag: checked.tag, externalID: checked.row.externalId, except: nil)
            throw error
        }
        if invite {
            let destination: Destination = if let email = checked.email, input.emailVerified == true { .email(email) } else { .phone(checked.phone!) }
            let language = AppLanguage(rawValue: checked.locale) ?? origin.language
            // No address: the per-address budgets of code requests are for anonymous callers; a key inviting many people
            // from one server is not one (the budget per destination still holds).
            _ = try await recovery.requestRecoveryCode(to: destination, origin: RequestOrigin(ip: nil, language: language, device: origin.device,
                                                                                            requestID: origin.requestID),
                                                       by: actor, reason: "invitation", invitation: true)
        }
        return try await reread(account.id!)
    }

    /// 409 naming what another account holds; 400 for another account's external id.
    private func refuseTaken(email: String?, phone: String?, tag: String?, externalID: String?, except id: UUID?) async throws {
        if let email, try await store.isEmailTaken(email, except: id) { throw GatehouseError(.conflict, .emailTaken, LocalizedText("error.emailTaken")).on(field: "email") }
        if let phone, try await directory.phoneHolder(phone).map({ $0 != id }) ?? false {
            throw GatehouseError(.conflict, .phoneTaken, LocalizedText("error.phoneTaken")).on(field: "phone")
        }
        if let tag, try await store.isNameTaken(LoginName.key(tag), except: id) { throw GatehouseError(.conflict, .tagTaken, LocalizedText("error.tagTaken")).on(field: "tag") }
        if let externalID, try await directory.externalIDHolder(externalID).map({ $0 != id }) ?? false {
            throw Self.invalid("externalId belongs to another account", field: "externalId")
        }
    }

    // MARK: Changing

    /// The members given change; an email or phone given without its verified flag is unverified, and a replaced one
    /// takes no code sent before. Audited as
    /// `account.updated` with the changed members' names; the account's sessions see the change at once.
    package func update(_ id: UUID, _ change: AdminAccountChange, by actor: AuditActor, origin: AuditOrigin) async throws -> AdminAccount {
        let account = try await existing(id)
        var changed: [String] = []
        func text(_ value: String?, _ name: String, max: Int) throws -> String?? {
            guard let value else { return .none }
            let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
            guard trimmed.count <= max, !InputText.hasNUL(trimmed) else { throw Self.invalid("\(name) is at most \(max) characters", field: name) }
            return .some(trimmed.isEmpty ? nil : trimmed)
        }
        let now = clock.now()
        if let email = change.email {
            guard let normalized = EmailAddress.normalize(email) else { throw Self.invalid("email is not an email address", field: "email") }
            if normalized != account.email {
                try await refuseTaken(email: normalized, phone: nil, tag: nil, externalID: nil, except: id)
                account.email = normalized
                account.pendingEmail = nil
                account.emailConfirmedAt = change.emailVerified == true ? now : nil
                changed.append("email")
            }
        }
        if let verified = change.emailVerified, account.email != nil, verified != (account.emailConfirmedAt != nil) {
            account.emailConfirmedAt = verified ? now : nil
            changed.append("emailVerified")
        }
        if let phone = change.phone {
            guard let normalized = PhoneNumber.normalize(phone, defaultCountryCode: rules.defaultCountryCode) else {
                throw Self.invalid("phone is not a phone number", field: "phone")
            }
            if normalized != account.phone {
                try await refuseTaken(email: nil, phone: normalized, tag: nil, externalID: nil, except: id)
                account.phone = normalized
                account.phoneVerifiedAt = change.phoneVerified == true ? now : nil
                changed.append("phone")
            }
        }
        if let verified = change.phoneVerified, account.phone != nil, verified != (account.phoneVerifiedAt != nil) {
            account.phoneVerifiedAt = verified ? now : nil
            changed.append("phoneVerified")
        }
        if let raw = change.tag {
            let tag: String
            do { tag = try rules.validateTag(raw) } catch { throw Self.invalid("tag is not a tag (3 to 32 letters, digits, dots and underscores)", field: "tag") }
            if tag != account.username {
                try await refuseTaken(email: nil, phone: nil, tag: tag, externalID: nil, except: id)
                account.username = tag
                account.usernameKey = LoginName.key(tag)
                changed.append("tag")
            }
        }
        if case .some(let value) = try text(change.firstName, "firstName", max: 100), value != account.firstName { account.firstName = value; changed.append("firstName") }
        if case .some(let value) = try text(change.lastName, "lastName", max: 100), value != account.lastName { account.lastName = value; changed.append("lastName") }
        if case .some(let value) = try text(change.middleName, "middleName", max: 100), value != account.middleName { account.middleName = value; changed.append("middleName") }
        if case .some(let value) = try text(change.externalId, "externalId", max: 200), value != account.externalID {
            if let value { try await refuseTaken(email: nil, phone: nil, tag: nil, externalID: value, except: id) }
            account.externalID = value
            changed.append("externalId")
        }
        if let raw = change.locale {
            let locale: String
            do { locale = try rules.validateLocale(raw) } catch { throw Self.invalid("locale is not one Gatehouse writes in", field: "locale") }
            if locale != account.locale { account.locale = locale; changed.append("locale") }
        }
        guard !changed.isEmpty else { return try await reread(id) }
        let detail = ["changed": changed.joined(separator: " ")]
        let newAddress = changed.contains("email") || changed.contains("phone")
        account.updatedAt = now
        do {
            try await database.db.withTransaction { tx in
                try await account.update(on: tx)
                if newAddress { try await directory.dropCodes(of: id, on: tx) }
                try await audit.record(AuditEvent(.accountUpdated, by: actor, account: id, origin: origin, detail: detail), on: tx)
                try await sessions.accountChanged(id, on: tx)
            }
        } catch where error.isConstraintViolation {
            try await refuseTaken(email: account.email, phone: account.phone, tag: account.username, externalID: account.externalID, except: id)
            throw error
        }
        return try await reread(id)
    }

    // MARK: The console's actions

    package static func reason(_ text: String) throws -> String {
        let reason = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (3...500).contains(reason.count), !InputText.hasNUL(reason) else { throw invalid("a reason of 3 to 500 characters is required", field: "reason") }
        return reason
    }

    /// Locks it and ends its sessions (a locked one stays as it is).
    package func lock(_ id: UUID, reason: String, by actor: AuditActor, origin: AuditOrigin) async throws -> AdminAccount {
        _ = try await existing(id)
        _ = try await locks.lock(id, reason: try Self.reason(reason), by: actor, origin: origin)
        return try await reread(id)
    }

    package func unlock(_ id: UUID, reason: String, by actor: AuditActor, origin: AuditOrigin) async throws -> AdminAccount {
        _ = try await existing(id)
        _ = try await locks.unlock(id, reason: try Self.reason(reason), by: actor, origin: origin)
        return try await reread(id)
    }

    package func endSessions(_ id: UUID, reason: String, by actor: AuditActor, origin: AuditOrigin) async throws -> AdminAccountChanged {
        _ = try await existing(id)
        let ended = try await sessions.revokeAll(accountID: id, keeping: nil, by: actor, origin: origin, reason: try Self.reason(reason))
        return AdminAccountChanged(count: ended, account: try await reread(id))
    }

    /// The authenticator app, passkeys by id, or (neither named) every factor; the owner is told of each. A passkey id
    /// the account does not have is 404.
    package func removeSecondFactors(_ id: UUID, _ removal: AdminFactorRemoval, by actor: AuditActor, origin: AuditOrigin) async throws -> AdminAccountChanged {
        _ = try await existing(id)
        let reason = try Self.reason(removal.reason)
        let ids = removal.passkeyIds ?? []
        guard ids.count <= 100 else { throw Self.invalid("at most 100 passkey ids", field: "passkeyIds") }
        let only: (totp: Bool, passkeys: [UUID])? = removal.totp == nil && removal.passkeyIds == nil ? nil : (removal.totp == true, ids)
        if !ids.isEmpty {
            let held = Set(try await reread(id).passkeys.map(\.id))
            guard ids.allSatisfy(held.contains) else { throw GatehouseError.notFound(.passkeyNotFound, "error.plain").withText("The account has no passkey of this id.") }
        }
        let removed = try await secondFactors.remove(accountID: id, only: only, reason: reason, by: actor, origin: origin)
        return AdminAccountChanged(count: removed, account: try await reread(id))
    }

    /// Starts the deletion as the owner's own would (every app's check first: money in a wallet, apps in use); the owner's
    /// password login within the grace period still cancels it.
    package func delete(_ id: UUID, reason: String, by actor: AuditActor, origin: AuditOrigin) async throws -> AdminAccount {
        _ = try await existing(id)
        _ = try await deletion.request(accountID: id, reason: try Self.reason(reason), by: actor, origin: origin)
        return try await reread(id)
    }
}
