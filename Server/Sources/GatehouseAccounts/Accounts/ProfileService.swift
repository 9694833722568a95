import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform

/// The profile: names, birthday, tag, locale, the phone spec's combined change, attaching a phone.
package struct ProfileService: Sendable {
    package let rules: AccountRules
    package let database: DatabaseProvider
    package let clock: GatehouseClock
    package let sessions: SessionService
    package let verification: VerificationService
    package let outbox: Outbox
    package let composer: MessageComposer
    package let codes: CodeIssuer
    package let proofs: AddressProofs
    package let passwords: PasswordChanges
    package let pushDevices: PushDevices
    package let audit: AuditLog
    package var limits: GatehouseConfiguration.Limits { rules.limits }
    package var store: AccountStore { AccountStore(database: database) }

    // MARK: Profile


    package struct ProfileChange: Sendable {
        /// `.some(nil)` clears a field; `nil` leaves it alone.
        package var firstName: String??
        package var lastName: String??
        package var middleName: String??
        package var birthday: Date??
        package var fcmToken: String??
        /// The tag (the `username` column): can be replaced, not removed.
        package var tag: String??
        package var locale: String??
        package var email: String?
        /// The phone is the login and cannot change: sending the current one (a client posting
        /// its whole form) is fine, another one is refused.
        package var phone: String?
        /// Needed when `email` changes the address: the email is a way into the account.
        package var currentPassword: String?
    
        package init(firstName: String?? = nil, lastName: String?? = nil, middleName: String?? = nil, birthday: Date?? = nil, fcmToken: String?? = nil, tag: String?? = nil, locale: String?? = nil, email: String? = nil, phone: String? = nil, currentPassword: String? = nil) {
            self.firstName = firstName
            self.lastName = lastName
            self.middleName = middleName
            self.birthday = birthday
            self.fcmToken = fcmToken
            self.tag = tag
            self.locale = locale
            self.email = email
            self.phone = phone
            self.currentPassword = currentPassword
        }
}

    /// `sessionID`: the session asking, which stays open when an email change ends the others.
    package func updateProfile(accountID: UUID, sessionID: UUID?, change: ProfileChange, origin: RequestOrigin) async throws -> AccountSnapshot {
        let account = try await store.accountRow(id: accountID)
        let emailChanges = try change.email.map { try rules.normalizeEmail($0) != account.displayedEmail } ?? false
        if emailChanges {
            // The phone-first spec's "wrong email" screen sends no password: right after a login
            // (the flow it is part of), a session that has no confirmed email to lose may fix
            // the address without one. Anything else needs the current password.
            let recentLogin = try await sessions.openedAt(sessionID: sessionID).map { clock.now().timeIntervalSince($0) <= limits.recentLoginWindow } ?? false
            if change.currentPassword != nil || account.emailConfirmedAt != nil || !recentLogin {
                try await passwords.requireCurrentPassword(change.currentPassword, of: account)
            }
        }
        if let phone = change.phone, try rules.normalizePhone(phone) != account.phone {
            throw GatehouseError.invalid(.phoneChangeNotAllowed, "error.phoneChange")
        }
        let now = clock.now()
        // What the business's systems hear of (an `account.updated` webhook, docs/webhooks.md); addresses have events of
        // their own, a device token is nobody's business.
        var changed: [String] = []
        if let v = change.firstName, v != account.firstName { changed.append("firstName") }
        if let v = change.lastName, v != account.lastName { changed.append("lastName") }
        if let v = change.middleName, v != account.middleName { changed.append("middleName") }
        if let v = change.birthday, v != account.birthday { changed.append("birthday") }
        if let v = change.firstName { account.firstName = v }
        if let v = change.lastName { account.lastName = v }
        if let v = change.middleName { account.middleName = v }
        if let v = change.birthday { account.birthday = v }
        if let v = change.fcmToken { account.fcmToken = v }
        if let v = change.locale { account.locale = try v.map(rules.validateLocale) }
        var newTag: String?
        if let v = change.tag {
            guard let raw = v else { throw GatehouseError.invalid(.invalidParameter, "error.tagRequired").on(field: "tag") }
            let tag = try rules.validateTag(raw)
            if tag != account.usernameKey {
                if try await store.isTagTaken(tag, except: accountID) { throw AccountRules.tagTaken }
                account.username = tag
                account.usernameKey = tag
                newTag = tag
                changed.append("tag")
            }
        }
        let profileEvent = changed.isEmpty ? nil
            : AuditEvent(.accountUpdated, by: .account(accountID), account: accountID, origin: origin.audit, detail: ["changed": changed.joined(separator: " ")])
        let previousEmail = account.displayedEmail
        let notice: OutgoingMessage? = if let raw = change.email {
            try await applyEmailChange(account, to: rules.normalizeEmail(raw))
        } else {
            nil
        }
        // A confirmed address stays until the new one is confirmed (`EmailService.verifyEmailChange`
        // records that); an unconfirmed one is replaced here.
        let event = AuditEvent(.emailChanged, by: .account(accountID), account: accountID, origin: origin.audit,
                               detail: ["from": maskedForAudit(previousEmail), "to": maskedForAudit(account.displayedEmail),
                                        "state": account.pendingEmail == nil ? "changed" : "pending confirmation"])
        account.updatedAt = now
        do {
            try await database.db.withTransaction { tx in
                try await account.update(on: tx)
                // The phone-first spec's `fcm`: an FCM device of the session that sent it (none when cleared).
                if let fcm = change.fcmToken, let sessionID {
                    if let token = fcm {
                        _ = try await pushDevices.register(DeviceRegistration(platform: .fcm, token: token,
                                                                                            language: account.language.rawValue),
                                                                 accountID: accountID, sessionID: sessionID, on: tx)
                    } else {
                        try await pushDevices.remove(sessionID: sessionID, platform: .fcm, on: tx)
                    }
                }
                if let notice { try await outbox.enqueue(notice, on: tx) }
                if emailChanges {
                    try await sessions.revokeAll(accountID: accountID, keeping: sessionID, on: tx)
                    try await audit.record(event, on: tx)
                }
                if let profileEvent { try await audit.record(profileEvent, on: tx) }
            }
        } catch where error.isConstraintViolation {
            if let newTag, try await store.isTagTaken(newTag, except: accountID) {
                throw AccountRules.tagTaken
            }
            throw GatehouseError.conflict(.emailTaken, "error.emailTaken")
        }
        if notice != nil { outbox.signal.wake() }
        return account.snapshot
    }

    /// The pending-address state machine (docs/architecture.md). A confirmed address stays in use (and
    /// for login) until the new one is confirmed, and is told of the change; an unconfirmed one
    /// is simply replaced. Returns the notice for the old address, if any.
    private func applyEmailChange(_ account: AccountModel, to email: String) async throws -> OutgoingMessage? {
        if email == account.displayedEmail { return nil }
        if email == account.email {
            account.pendingEmail = nil   // back to the confirmed address: cancel the change
            return nil
        }
        if try await store.isEmailTaken(email, except: account.id!) {
            throw GatehouseError.conflict(.emailTaken, "error.emailTaken")
        }
        if let old = account.email, account.emailConfirmedAt != nil {
            account.pendingEmail = email
            return composer.emailChangeNotice(to: old, newEmail: email, language: account.language)
        }
        account.email = email
        account.emailConfirmedAt = nil
        account.pendingEmail = nil
        return nil
    }

    // MARK: Phone verification

    /// Sends an SMS code to attach a phone to an existing account (the wallet spec's "add phone").
    /// Needs the current password: the phone becomes a way into the account.
    package func requestPhoneVerification(accountID: UUID, phone raw: String, currentPassword: String?, origin: RequestOrigin) async throws -> CodeIssued {
        let phone = try rules.normalizePhone(raw)
        let account = try await store.accountRow(id: accountID)
        if account.phone == phone, account.phoneVerifiedAt != nil {
            throw GatehouseError.invalid(.phoneAlreadyVerified, "error.phoneAlreadyVerified").on(field: "phone")
        }
        try await passwords.requireCurrentPassword(currentPassword, of: account)
        if let holder = try await store.owner(of: .phone(phone)), holder.id != accountID {
            throw GatehouseError.conflict(.phoneTaken, "error.phoneTaken").on(field: "phone")
        }
        return try await codes.issueCode(.phoneVerification, to: .phone(phone), accountID: accountID, origin: origin) { code in
            composer.code(.signup, to: phone, channel: .sms, code: code, ttl: limits.codeTTL, language: account.language)
        }
    }

    /// Attaches the phone the code proves. The phone it replaces, if it was verified, is told;
    /// every other session ends.
    package func verifyPhone(accountID: UUID, sessionID: UUID?, phone raw: String, code: String, origin: RequestOrigin? = nil) async throws -> AccountSnapshot {
        let phone = try rules.normalizePhone(raw)
        let account = try await store.accountRow(id: accountID)
        let row = try await verification.check(code: code, purpose: .phoneVerification, destination: phone)
        guard row.accountID == accountID else { throw GatehouseError.invalid(.invalidCode, "error.invalidCode") }
        let notice: OutgoingMessage? = if let old = account.phone, old != phone, account.phoneVerifiedAt != nil {
            composer.phoneChangeNotice(to: old, newPhone: phone, language: account.language)
        } else {
            nil
        }
        let now = clock.now()
        let event = AuditEvent(.phoneChanged, by: .account(accountID), account: accountID, origin: origin?.audit ?? AuditOrigin(),
                               detail: ["from": maskedForAudit(account.phoneVerifiedAt == nil ? nil : account.phone), "to": maskedForAudit(phone)])
        account.phone = phone
        account.phoneVerifiedAt = now
        account.updatedAt = now
        try await proofs.spend(row, saving: account, claiming: .phone(phone), keepingSession: sessionID, notice: notice,
                        conflict: GatehouseError.conflict(.phoneTaken, "error.phoneTaken").on(field: "phone"), audit: event)
        return account.snapshot
    }

    // MARK: My security events

    /// The account's own security events (`AuditKind.ownSecurity`) as its owner sees them, newest
    /// first, `limit` (50 by default, at most 200) after the cursor's, and the cursor of the next
    /// page. What an operator or a business system did shows who did it, never their address,
    /// their browser or their internal reason (a ticket, a fraud score): the trail keeps those for
    /// operators; only the person's own requests show where they came from.
    package func securityEvents(accountID: UUID, cursor: String?, limit: Int?) async throws -> (events: [AuditRecord], next: String?) {
        let size = min(max(limit ?? 50, 1), 200)
        var query = AuditLog.Query(account: accountID, kinds: AuditKind.ownSecurity)
        if let parts = try PageCursor.read(cursor, parts: 1) {
            guard let after = UUID(uuidString: parts[0]) else { throw PageCursor.invalid }
            query.after = after
        }
        query.limit = size + 1
        let rows = try await audit.events(query)
        let page = Array(rows.prefix(size))
        let staff: Set<String> = [AuditActor.operator("").type, AuditActor.adminKey("").type]
        let shown = page.map { event -> AuditRecord in
            guard staff.contains(event.actorType) else { return event }
            var event = event
            event.ip = nil
            event.device = nil
            event.detail["reason"] = nil
            return event
        }
        return (shown, rows.count > size ? page.last.map { PageCursor.make([$0.id.uuidString]) } : nil)
    }

    package init(rules: AccountRules, database: DatabaseProvider, clock: GatehouseClock, sessions: SessionService,
                 verification: VerificationService, outbox: Outbox, composer: MessageComposer, codes: CodeIssuer, proofs: AddressProofs,
                 passwords: PasswordChanges, pushDevices: PushDevices, audit: AuditLog) {
        self.rules = rules
        self.database = database
        self.clock = clock
        self.sessions = sessions
        self.verification = verification
        self.outbox = outbox
        self.composer = composer
        self.codes = codes
        self.proofs = proofs
        self.passwords = passwords
        self.pushDevices = pushDevices
        self.audit = audit
    }
}
