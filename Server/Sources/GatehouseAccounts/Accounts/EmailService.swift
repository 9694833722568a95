import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform

/// The email address: confirmation links (the phone spec) and changes with a code (`/v1`).
package struct EmailService: Sendable {
    package let rules: AccountRules
    package let database: DatabaseProvider
    package let clock: GatehouseClock
    package let verification: VerificationService
    package let outbox: Outbox
    package let composer: MessageComposer
    package let secrets: Secrets
    package let codes: CodeIssuer
    package let proofs: AddressProofs
    package let passwords: PasswordChanges
    package let audit: AuditLog
    package var limits: GatehouseConfiguration.Limits { rules.limits }
    package var store: AccountStore { AccountStore(database: database) }

    // MARK: Email confirmation

    /// Sends a confirmation link to the account's displayed address. `actor` and `reason`: an
    /// operator had it sent again (the console); the trail says who and why.
    @discardableResult
    package func sendEmailConfirmation(accountID: UUID, origin: RequestOrigin, by actor: AuditActor? = nil, reason: String? = nil) async throws -> VerificationService.Issued {
        let account = try await store.accountRow(id: accountID)
        guard let email = account.displayedEmail else { throw GatehouseError.invalid(.noEmail, "error.noEmail") }
        if account.isEmailConfirmed { throw GatehouseError.invalid(.emailAlreadyConfirmed, "error.emailAlreadyConfirmed") }
        let token = secrets.token()
        let issued = try await verification.issue(.init(
            purpose: .emailConfirmation, destination: email, accountID: accountID,
            secretHash: Secrets.sha256Hex(token), ttl: limits.confirmationLinkTTL,
            message: composer.confirmationMail(to: email, token: token, linkTTL: limits.confirmationLinkTTL, language: account.language),
            ip: origin.ip
        ))
        if let actor {
            var detail = ["to": maskedForAudit(email)]
            if let reason { detail["reason"] = reason }
            try await audit.record(AuditEvent(.confirmationResent, by: actor, account: accountID, origin: origin.audit, detail: detail))
        }
        return issued
    }

    package enum ConfirmationOutcome: Sendable, Equatable {
        /// A live link, not used yet: the page asks for the click that confirms it.
        case pending(email: String, token: String)
        case confirmed(email: String)
        case alreadyConfirmed
        case invalid
    }

    /// What a confirmation link would do, without doing it (the page a GET shows).
    package func inspectConfirmation(token: String) async throws -> ConfirmationOutcome {
        switch try await confirmationState(token: token) {
        case .ready(let row, _): .pending(email: row.destination, token: token)
        case .done(let outcome): outcome
        }
    }

    private enum ConfirmationState {
        case ready(VerificationCodeModel, AccountModel)
        case done(ConfirmationOutcome)
    }

    private func confirmationState(token: String) async throws -> ConfirmationState {
        guard !token.isEmpty, token.utf8.count <= 128 else { return .done(.invalid) }
        let now = clock.now()
        let db = database.db
        guard let row = try await VerificationCodeModel.query(on: db)
            .filter(\.$secretHash == Secrets.sha256Hex(token))
            .filter(\.$purpose == VerificationPurpose.emailConfirmation.rawValue)
            .first(),
            let accountID = row.accountID,
            let account = try await store.row(id: accountID, on: db)
        else { return .done(.invalid) }
        if row.consumedAt != nil {
            return .done(account.email == row.destination && account.isEmailConfirmed ? .alreadyConfirmed : .invalid)
        }
        guard row.expiresAt > now else { return .done(.invalid) }
        if row.destination == account.pendingEmail || (row.destination == account.email && account.pendingEmail == nil) {
            if row.destination == account.email, account.emailConfirmedAt != nil { return .done(.alreadyConfirmed) }
            return .ready(row, account)
        }
        return .done(.invalid)
    }

    /// Confirms the address of a link (the page's POST). Single use; a link for an address the
    /// account no longer shows is invalid.
    package func confirmEmail(token: String) async throws -> ConfirmationOutcome {
        let (row, account): (VerificationCodeModel, AccountModel)
        switch try await confirmationState(token: token) {
        case .ready(let r, let a): (row, account) = (r, a)
        case .done(let outcome): return outcome
        }
        let now = clock.now()
        let db = database.db
        if row.destination == account.pendingEmail {
            account.email = row.destination
            account.pendingEmail = nil
        }
        account.emailConfirmedAt = now
        account.updatedAt = now
        do {
            try await db.withTransaction { tx in
                try await verification.consume(row, on: tx)
                try await account.update(on: tx)
            }
        } catch where error.isConstraintViolation {
            return .invalid   // another account confirmed this address first
        } catch let error as GatehouseError where error.code == .invalidCode {
            return .alreadyConfirmed
        }
        return .confirmed(email: row.destination)
    }

    // MARK: Email change with a code

    /// Starts an email change: the new address is pending and gets a code; the address in use
    /// stays in use (display, login, recovery) until then, and is told. Needs the current password.
    package func requestEmailChange(accountID: UUID, email raw: String, currentPassword: String?, origin: RequestOrigin) async throws -> CodeIssued {
        let email = try rules.normalizeEmail(raw)
        let account = try await store.accountRow(id: accountID)
        if email == account.email { throw GatehouseError.invalid(.emailUnchanged, "error.emailUnchanged").on(field: "email") }
        try await passwords.requireCurrentPassword(currentPassword, of: account)
        if try await store.owner(of: .email(email)) != nil {
            throw GatehouseError.conflict(.emailTaken, "error.emailTaken").on(field: "email")
        }
        let result = try await codes.issueCode(.emailChange, to: .email(email), accountID: accountID, origin: origin) { code in
            composer.code(.emailChange, to: email, channel: .email, code: code, ttl: limits.codeTTL, language: account.language)
        }
        let notice: OutgoingMessage? = if let old = account.email, account.emailConfirmedAt != nil, account.pendingEmail != email {
            composer.emailChangeNotice(to: old, newEmail: email, language: account.language)
        } else {
            nil
        }
        account.pendingEmail = email
        account.updatedAt = clock.now()
        try await database.db.withTransaction { tx in
            try await account.update(on: tx)
            if let notice { try await outbox.enqueue(notice, on: tx) }
        }
        if notice != nil { outbox.signal.wake() }
        return result
    }

    /// Confirms the pending address with its code: it becomes the account's confirmed address,
    /// an unconfirmed claim on it elsewhere is dropped, and every other session ends.
    package func verifyEmailChange(accountID: UUID, sessionID: UUID?, code: String, origin: RequestOrigin? = nil) async throws -> AccountSnapshot {
        let account = try await store.accountRow(id: accountID)
        guard let pending = account.pendingEmail else { throw GatehouseError.invalid(.noPendingEmail, "error.noPendingEmail") }
        let row = try await verification.check(code: code, purpose: .emailChange, destination: pending)
        guard row.accountID == accountID else { throw GatehouseError.invalid(.invalidCode, "error.invalidCode") }
        let now = clock.now()
        let event = AuditEvent(.emailChanged, by: .account(accountID), account: accountID, origin: origin?.audit ?? AuditOrigin(),
                               detail: ["from": maskedForAudit(account.email), "to": maskedForAudit(pending)])
        account.email = pending
        account.pendingEmail = nil
        account.emailConfirmedAt = now
        account.updatedAt = now
        try await proofs.spend(row, saving: account, claiming: .email(pending), keepingSession: sessionID, conflict: .conflict(.emailTaken, "error.emailTaken"),
                              audit: event)
        return account.snapshot
    }

    package func cancelEmailChange(accountID: UUID) async throws -> AccountSnapshot {
        let account = try await store.accountRow(id: accountID)
        guard account.pendingEmail != nil else { throw GatehouseError.invalid(.noPendingEmail, "error.noPendingEmail") }
        account.pendingEmail = nil
        account.updatedAt = clock.now()
        try await account.update(on: database.db)
        return account.snapshot
    }

    package init(rules: AccountRules, database: DatabaseProvider, clock: GatehouseClock, verification: VerificationService, outbox: Outbox,
                 composer: MessageComposer, secrets: Secrets, codes: CodeIssuer, proofs: AddressProofs, passwords: PasswordChanges,
                 audit: AuditLog) {
        self.rules = rules
        self.database = database
        self.clock = clock
        self.verification = verification
        self.outbox = outbox
        self.composer = composer
        self.secrets = secrets
        self.codes = codes
        self.proofs = proofs
        self.passwords = passwords
        self.audit = audit
    }
}
