import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform

/// Changing and checking an account's password (docs/security.md): a new hash with everything
/// that must go with it in one transaction, the current password asked before changes that could
/// lock the owner out, a temporary password's keyed hash.
package struct PasswordChanges: Sendable {
    package let database: DatabaseProvider
    package let clock: GatehouseClock
    package let limits: GatehouseConfiguration.Limits
    package let hasher: PasswordHasher
    package let secrets: Secrets
    package let rateLimiter: RateLimiter
    package let verification: VerificationService
    package let sessions: SessionService
    package let outbox: Outbox
    package let composer: MessageComposer
    package let audit: AuditLog
    package let binding: ClientBinding

    package init(database: DatabaseProvider, clock: GatehouseClock, limits: GatehouseConfiguration.Limits, hasher: PasswordHasher, secrets: Secrets,
                 rateLimiter: RateLimiter, verification: VerificationService, sessions: SessionService, outbox: Outbox, composer: MessageComposer,
                 audit: AuditLog, binding: ClientBinding) {
        self.database = database
        self.clock = clock
        self.limits = limits
        self.hasher = hasher
        self.secrets = secrets
        self.rateLimiter = rateLimiter
        self.verification = verification
        self.sessions = sessions
        self.outbox = outbox
        self.composer = composer
        self.audit = audit
        self.binding = binding
    }

    /// How a temporary password is stored: keyed with the server secret and bound to its account.
    package func temporaryPasswordHash(_ password: String, accountID: UUID) -> String {
        secrets.codeHash(password, purpose: VerificationPurpose.temporaryPassword.rawValue, destination: accountID.uuidString)
    }

    /// Writes a new password hash, ends the sessions (all, or all but one), kills every live
    /// reset secret and queues the notice, in one transaction.
    /// `tellOwner` false: the owner was told already (a temporary password is used, which its
    /// own message announced). `openingSessionFor`: also open a session in the same transaction
    /// (a login that sets the password) and return it; `secondFactorChecked` as `SessionService.create`
    /// takes it. `also`: more to write in the same transaction, first (a second factor spent).
    @discardableResult
    package func setPassword(_ account: AccountModel, hash: String, consuming row: VerificationCodeModel?, keepingSession: UUID?,
                     extraNotice: OutgoingMessage? = nil, tellOwner: Bool = true,
                     openingSessionFor origin: RequestOrigin? = nil, methods: [AuthMethod] = [], secondFactorChecked: Bool = false,
                     also: (@Sendable (any GatehouseDatabase) async throws -> Void)? = nil,
                     how: String, from requester: RequestOrigin?) async throws -> IssuedSession? {
        let now = clock.now()
        let notice: OutgoingMessage? = if !tellOwner {
            nil
        } else if let email = account.email, account.emailConfirmedAt != nil {
            composer.passwordChanged(to: email, channel: .email, language: account.language)
        } else if let phone = account.phone, account.phoneVerifiedAt != nil {
            composer.passwordChanged(to: phone, channel: .sms, language: account.language)
        } else {
            nil
        }
        let session = try await database.db.withTransaction { tx -> IssuedSession? in
            try await also?(tx)
            if let row { try await verification.consume(row, on: tx) }
            try await VerificationCodeModel.query(on: tx)
                .filter(\.$accountID == account.id!)
                .filter(\.$purpose ~~ [VerificationPurpose.temporaryPassword.rawValue, VerificationPurpose.passwordReset.rawValue])
                .filter(\.$consumedAt == nil)
                .set(\.$consumedAt, to: now)
                .update()
            account.passwordHash = hash
            account.updatedAt = now
            try await account.update(on: tx)
            // A recovery by email may have stopped the phone being a way in (`unverifyPhoneAfterEmailRecovery`).
            if account.phoneVerifiedAt == nil { try await binding.followPhone(account, origin: requester?.audit ?? AuditOrigin(), on: tx) }
            try await sessions.revokeAll(accountID: account.id!, keeping: keepingSession, on: tx)
            if let notice { try await outbox.enqueue(notice, on: tx) }
            if let extraNotice { try await outbox.enqueue(extraNotice, on: tx) }
            try await audit.record(AuditEvent(.passwordChanged, by: .account(account.id!), account: account.id!,
                                              origin: requester?.audit ?? AuditOrigin(), detail: ["how": how]), on: tx)
            guard let origin else { return nil }
            try await audit.record(AuditEvent(.loginSucceeded, by: .account(account.id!), account: account.id!, origin: origin.audit,
                                              detail: ["with": "temporary password"]), on: tx)
            return try await sessions.create(accountID: account.id!, methods: methods, device: origin.device, ip: origin.ip,
                                             secondFactorChecked: secondFactorChecked, on: tx)
        }
        if notice != nil || extraNotice != nil { outbox.signal.wake() }
        return session
    }

    /// Proof that the person holding a session also knows the password, before anything that
    /// could lock the owner out (password, email or phone change). Checked against the same
    /// failure budget as logins, slot first, so a stolen token cannot be used to guess it.
    /// Every account has a password: sign-ups without one get a generated one.
    package func requireCurrentPassword(_ password: String?, of account: AccountModel) async throws {
        guard let password, !password.isEmpty else {
            throw GatehouseError.invalid(.currentPasswordRequired, "error.currentPasswordRequired").on(field: "currentPassword")
        }
        let key = account.id!.uuidString
        try await rateLimiter.hit("login-account", key: key, limit: limits.loginFailuresPerAccount, window: limits.loginFailureWindow, messageKey: "error.loginThrottled")
        guard try await hasher.verify(password, hash: account.passwordHash) else {
            throw GatehouseError.invalidCredentials.on(field: "currentPassword")
        }
        try? await rateLimiter.release("login-account", key: key, window: limits.loginFailureWindow)
    }
}
