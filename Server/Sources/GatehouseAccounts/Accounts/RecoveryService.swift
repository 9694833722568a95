import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform

/// Password recovery: a temporary password (the phone spec) or a code (`/v1`).
package struct RecoveryService: Sendable {
    package let rules: AccountRules
    package let store: AccountStore
    package let hasher: PasswordHasher
    package let passwordRules: PasswordRules
    package let verification: VerificationService
    package let composer: MessageComposer
    package let secrets: Secrets
    package let codes: CodeIssuer
    package let notices: SecurityNotices
    package let passwords: PasswordChanges
    package let audit: AuditLog
    package let secondFactors: SecondFactors
    package var limits: GatehouseConfiguration.Limits { rules.limits }

    // MARK: Password recovery with a code

    /// Sends a recovery code to a confirmed address or a verified phone. Anything else (no
    /// account, an unconfirmed address) is sent nothing but answers the same and costs the same
    /// budgets, so the form cannot tell who has an account.
    /// `actor` and `reason`: an operator sent it (the console); the trail says who and why.
    /// `invitation`: the admin API's first code to an account made without a password (the same code, in words
    /// that say an account was made).
    package func requestRecoveryCode(to destination: Destination, origin: RequestOrigin, by actor: AuditActor? = nil, reason: String? = nil,
                                     invitation: Bool = false) async throws -> CodeIssued {
        let account = try await store.owner(of: destination)
        let verified: Bool = switch destination {
        case .email: account?.emailConfirmedAt != nil
        case .phone: account?.phoneVerifiedAt != nil
        }
        let live = verified ? account : nil
        let issued = try await codes.issueCode(.passwordReset, to: destination, accountID: live?.id, origin: origin) { code in
            live.map { composer.code(invitation ? .invitation : .recovery, to: destination.value, channel: destination.channel, code: code, ttl: limits.codeTTL, language: $0.language) }
        }
        if let id = live?.id {
            var detail = ["sent": destination.channel == .sms ? "code by SMS" : "code by email"]
            if let reason { detail["reason"] = reason }
            // Anyone may ask for a code to someone's address: the trail says it was nobody signed in
            // (or the operator who sent it), not the account's owner.
            try await audit.record(AuditEvent(.recoveryRequested, by: actor ?? .anonymous, account: id, origin: origin.audit, detail: detail))
        }
        return issued
    }

    /// Sets a new password with a recovery code: every session of the account ends, every
    /// outstanding temporary password and recovery code dies, every second factor and passkey
    /// added in the days before goes (`SecondFactors.undoRecentFactors`), and the account is told.
    package func recoverPassword(destination: Destination, code: String, newPassword: String, origin: RequestOrigin) async throws {
        try await passwordRules.validate(newPassword)
        let row = try await verification.check(code: code, purpose: .passwordReset, destination: destination.value)
        guard let accountID = row.accountID else { throw GatehouseError.invalid(.invalidCode, "error.invalidCode") }
        let account = try await store.accountRow(id: accountID)
        let hash = try await hasher.hash(newPassword)
        let phoneNotice: OutgoingMessage? = if case .email = destination { notices.unverifyPhoneAfterEmailRecovery(account) } else { nil }
        let factors = secondFactors
        try await passwords.setPassword(account, hash: hash, consuming: row, keepingSession: nil, extraNotice: phoneNotice,
                                    also: { tx in try await factors.undoRecentFactors(of: accountID, on: tx) }, how: "recovery code", from: origin)
    }


    // MARK: Password recovery

    package enum RecoveryChannel: Sendable { case sms, email }

    /// Sends a temporary password. The old password keeps working until the temporary one is
    /// used, so nobody can lock a stranger out by asking for a reset. Only a confirmed email or a
    /// verified phone receives one. The spec answers an unknown account openly
    /// (`account_not_found`), so that answer costs the same budgets as a real restore: a decoy
    /// secret is recorded for the identifier.
    package func restorePassword(identifier: String, channel: RecoveryChannel, origin: RequestOrigin) async throws {
        guard let account = try await store.find(rules.identifier(identifier)), let accountID = account.id else {
            let key = "restore:" + LoginName.key(identifier).prefix(100)
            try await verification.issue(.init(
                purpose: .temporaryPassword, destination: key, accountID: nil, secretHash: Secrets.sha256Hex(secrets.token()),
                ttl: limits.temporaryPasswordTTL, message: nil, ip: origin.ip
            ))
            throw GatehouseError(.notFound, .accountNotFound, LocalizedText("error.accountNotFound"))
        }
        let destination: String
        let kind: OutgoingMessage.Kind
        switch channel {
        case .sms:
            guard let phone = account.phone, account.phoneVerifiedAt != nil else { throw GatehouseError.invalid(.noPhone, "error.noPhone") }
            destination = phone
            kind = .sms
        case .email:
            guard let email = account.email else { throw GatehouseError.invalid(.noEmail, "error.noEmail") }
            // An unconfirmed address may be a typo or someone else's: never send a password there.
            guard account.emailConfirmedAt != nil else { throw GatehouseError.invalid(.emailNotConfirmed, "error.emailNotConfirmed") }
            destination = email
            kind = .email
        }
        let password = passwordRules.generate()
        try await verification.issue(.init(
            purpose: .temporaryPassword, destination: destination, accountID: accountID,
            secretHash: passwords.temporaryPasswordHash(password, accountID: accountID), ttl: limits.temporaryPasswordTTL,
            message: composer.temporaryPassword(kind: kind, to: destination, password: password, ttl: limits.temporaryPasswordTTL, language: account.language),
            ip: origin.ip,
            supersedeAcrossDestinations: true
        ))
        try await audit.record(AuditEvent(.recoveryRequested, by: .anonymous, account: accountID, origin: origin.audit,
                                                detail: ["sent": kind == .sms ? "temporary password by SMS" : "temporary password by email"]))
    }

    /// Exactly one of an email or a phone, read by the account rules (400 otherwise).
    package func destination(email: String?, phone: String?) throws -> Destination {
        try rules.destination(email: email, phone: phone)
    }

    package init(rules: AccountRules, store: AccountStore, hasher: PasswordHasher, passwordRules: PasswordRules,
                 verification: VerificationService, composer: MessageComposer, secrets: Secrets, codes: CodeIssuer,
                 notices: SecurityNotices, passwords: PasswordChanges, audit: AuditLog, secondFactors: SecondFactors) {
        self.rules = rules
        self.store = store
        self.hasher = hasher
        self.passwordRules = passwordRules
        self.verification = verification
        self.composer = composer
        self.secrets = secrets
        self.codes = codes
        self.notices = notices
        self.passwords = passwords
        self.audit = audit
        self.secondFactors = secondFactors
    }
}
