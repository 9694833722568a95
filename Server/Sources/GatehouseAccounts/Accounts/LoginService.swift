import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform

/// Credentials: password login (with a pending temporary password), password change.
package struct LoginService: Sendable {
    package let rules: AccountRules
    package let database: DatabaseProvider
    package let clock: GatehouseClock
    package let hasher: PasswordHasher
    package let passwordRules: PasswordRules
    package let sessions: SessionService
    package let rateLimiter: RateLimiter
    package let outbox: Outbox
    package let audit: AuditLog
    package let binding: ClientBinding
    package let notices: SecurityNotices
    package let passwords: PasswordChanges
    package let secondFactors: SecondFactors
    package var limits: GatehouseConfiguration.Limits { rules.limits }
    package var store: AccountStore { AccountStore(database: database) }

    // MARK: Login

    /// The id of the account a login identifier names, lower-case; for a surface that may say whose account it is
    /// once the password has been proven right (the WebSocket gateway's `in_event.customer_id`), never before.
    package func accountID(identifier: String) async throws -> String? {
        try await findAccount(identifier: identifier)?.id?.uuidString.lowercased()
    }

    /// Password login with any identifier. Unknown account and wrong password look the same,
    /// cost the same bcrypt time and count against the same throttles.
    ///
    /// Every attempt takes its slot in the failure budgets *before* the password is checked and
    /// gives it back only when it succeeds, so concurrent guesses cannot slip past the limit.
    ///
    /// An account with a second factor gets no session from the password alone: where the surface
    /// has a second step (`secondStep`, `/v1`), `second_factor_required` carries a challenge that
    /// `completeSecondStep` finishes; elsewhere it is refused with the same code and no challenge.
    package func login(identifier: String, password: String, origin: RequestOrigin, accepting kinds: LoginIdentifierKinds = .any,
                       secondStep: Bool = false) async throws -> IssuedSession {
        let ipKey = origin.ip ?? "unknown"
        // An identifier of a kind this surface does not take is an unknown account, with the
        // same bcrypt time and the same budgets.
        // `.emailOnly` means an email address: "@tag" (and "@+7912...") contains an "@" too, and
        // `findAccount` would look it up as a login name or a phone number.
        let acceptable = kinds == .any || EmailAddress.normalize(identifier) != nil
        let account = acceptable ? try await findAccount(identifier: identifier) : nil
        let accountKey = account?.id?.uuidString ?? "id:" + identifier.lowercased().prefix(100)
        try await rateLimiter.hit("login-ip", key: ipKey, limit: limits.loginFailuresPerIP, window: limits.loginFailureWindow, messageKey: "error.loginThrottled")
        do {
            try await rateLimiter.hit("login-account", key: accountKey, limit: limits.loginFailuresPerAccount, window: limits.loginFailureWindow, messageKey: "error.loginThrottled")
        } catch {
            try? await rateLimiter.release("login-ip", key: ipKey, window: limits.loginFailureWindow)
            throw error
        }
        let giveBack = {
            try? await self.rateLimiter.release("login-ip", key: ipKey, window: self.limits.loginFailureWindow)
            try? await self.rateLimiter.release("login-account", key: accountKey, window: self.limits.loginFailureWindow)
        }
        let session: IssuedSession
        do {
            guard let account, let accountID = account.id else {
                _ = try await hasher.verify(password, hash: hasher.dummyHash)
                throw GatehouseError.invalidCredentials
            }
            if try await hasher.verify(password, hash: account.passwordHash) {
                // A hash another system made (docs/migrating.md) becomes Gatehouse's own at the login that proves it.
                let upgraded = ForeignPasswordHash.isNative(account.passwordHash) ? nil : try await hasher.hash(password)
                if account.secondFactorAt != nil {
                    if let upgraded { try await store.upgradePasswordHash(accountID, from: account.passwordHash, to: upgraded, on: database.db) }
                    guard secondStep else { throw GatehouseError.secondFactorRequired() }
                    throw GatehouseError.secondFactorRequired(try await secondFactors.challenge(for: accountID, origin: origin))
                }
                try await takeBack(account, origin: origin)
                session = try await database.db.withTransaction { tx in
                    if let upgraded { try await store.upgradePasswordHash(accountID, from: account.passwordHash, to: upgraded, on: tx) }
                    try await audit.record(AuditEvent(.loginSucceeded, by: .account(accountID), account: accountID, origin: origin.audit,
                                                            detail: ["with": "password"]), on: tx)
                    // A client record imported after the account was made binds now.
                    try await binding.bindClientRecord(account, origin: origin.audit, on: tx)
                    return try await sessions.create(accountID: accountID, methods: [.pwd], device: origin.device, ip: origin.ip, on: tx)
                }
            } else if let temporary = try await loginWithTemporaryPassword(account: account, password: password, origin: origin, secondStep: secondStep) {
                session = temporary
            } else {
                throw GatehouseError.invalidCredentials
            }
        } catch let error as GatehouseError where error.code == .invalidCredentials {
            // A failure: the slots stay spent, and it is counted (never the identifier typed: it
            // may be a password typed in the wrong field).
            let who = account?.id
            try await audit.countFailure(AuditEvent(.loginFailed, by: who.map { .account($0) } ?? .anonymous, account: who,
                                                          origin: origin.audit))
            throw error
        } catch {
            await giveBack()  // not a failed guess (the database was away, say): nothing is spent
            throw error
        }
        await giveBack()
        return session
    }

    /// A temporary password from `restorePassword` works once: it becomes the account's password,
    /// and every other session ends. Temporary passwords are random (about 70 bits), so they are
    /// stored as an HMAC rather than bcrypt: checking one costs microseconds, and a failed login
    /// costs one bcrypt whether or not a restore is pending (docs/security.md, "Timing").
    private func loginWithTemporaryPassword(account: AccountModel, password: String, origin: RequestOrigin, secondStep: Bool) async throws -> IssuedSession? {
        let now = clock.now()
        let accountID = account.id!
        let candidates = try await VerificationCodeModel.query(on: database.db)
            .filter(\.$accountID == accountID)
            .filter(\.$purpose == VerificationPurpose.temporaryPassword.rawValue)
            .filter(\.$consumedAt == nil)
            .filter(\.$expiresAt > now)
            .all()
        let offered = passwords.temporaryPasswordHash(password, accountID: accountID)
        guard let match = candidates.first(where: { Secrets.constantTimeEquals(offered, $0.secretHash) }) else { return nil }
        let hash = try await hasher.hash(password)
        // A temporary password is a recovery: the factors added in the days before go with it
        // (`undoRecentFactors`), so only an authenticator app older than that asks for a second step.
        if account.secondFactorAt != nil, try await secondFactors.hasLastingApp(accountID) {
            // It becomes the password only once the second step succeeds.
            guard secondStep else { throw GatehouseError.secondFactorRequired() }
            throw GatehouseError.secondFactorRequired(try await secondFactors.challenge(for: accountID, origin: origin, temporary: (match.id!, hash)))
        }
        try await takeBack(account, origin: origin)
        let phoneNotice = match.destination.contains("@") ? notices.unverifyPhoneAfterEmailRecovery(account) : nil
        // It becomes the password: every other temporary password and reset code dies, every
        // other session ends.
        let factors = secondFactors
        return try await passwords.setPassword(account, hash: hash, consuming: match, keepingSession: nil, extraNotice: phoneNotice,
                                           tellOwner: false, openingSessionFor: origin, methods: [match.destination.contains("@") ? .mail : .sms],
                                           also: { tx in try await factors.undoRecentFactors(of: accountID, on: tx) },
                                           how: "temporary password", from: origin)
    }


    // MARK: The second step

    /// Finishes a login that answered `second_factor_required`: the challenge (one attempt of it
    /// taken first) and a code from the authenticator app or a recovery code (a slot of the
    /// account's budget taken first). The code is spent, the challenge used and the session
    /// opened in one transaction; a temporary password becomes the password in it.
    package func completeSecondStep(challenge: String, code: String?, recoveryCode: String?, passkey: PasskeyAssertion? = nil,
                                    origin: RequestOrigin) async throws -> IssuedSession {
        let (pending, attemptsLeft) = try await secondFactors.takeAttempt(challenge: challenge)
        let proof = try await secondFactors.check(pending.accountID, code: code, recoveryCode: recoveryCode, passkey: passkey, pending: pending,
                                                  attemptsLeft: attemptsLeft, origin: origin)
        guard let account = try await store.row(id: pending.accountID), account.erasedAt == nil else { throw SecondFactors.challengeInvalid }
        try await takeBack(account, origin: origin)
        let accountID = pending.accountID
        let factors = secondFactors
        let finish: @Sendable (any GatehouseDatabase) async throws -> Void = { tx in
            guard try await factors.spend(proof, accountID: accountID, on: tx) else { throw SecondFactors.wrongCode(proof) }
            guard try await factors.use(pending, on: tx) else { throw SecondFactors.challengeInvalid }
            if case .recoveryCode = proof { try await factors.recordRecoveryCodeUse(account, origin: origin, on: tx) }
        }
        if let codeID = pending.temporaryCodeID, let hash = pending.newPasswordHash {
            guard let match = try await VerificationCodeModel.find(codeID, on: database.db), match.consumedAt == nil, match.expiresAt > clock.now() else {
                throw SecondFactors.challengeInvalid
            }
            let phoneNotice = match.destination.contains("@") ? notices.unverifyPhoneAfterEmailRecovery(account) : nil
            let session = try await passwords.setPassword(account, hash: hash, consuming: match, keepingSession: nil, extraNotice: phoneNotice, tellOwner: false,
                                                      openingSessionFor: origin,
                                                      methods: [match.destination.contains("@") ? .mail : .sms, proof.authMethod], secondFactorChecked: true,
                                                      also: { tx in
                                                          try await finish(tx)
                                                          try await factors.undoRecentFactors(of: accountID, on: tx)
                                                      },
                                                      how: "temporary password", from: origin)
            return session!
        }
        // A password's second step, or (`SocialSignIn`) an identity provider's.
        let first = pending.firstMethod ?? "password"
        return try await database.db.withTransaction { tx in
            try await finish(tx)
            try await audit.record(AuditEvent(.loginSucceeded, by: .account(accountID), account: accountID, origin: origin.audit,
                                                    detail: ["with": "\(first) + \(proof.method)"]), on: tx)
            try await binding.bindClientRecord(account, origin: origin.audit, on: tx)
            return try await sessions.create(accountID: accountID, methods: [pending.firstMethod == nil ? .pwd : .fed, proof.authMethod], device: origin.device,
                                             ip: origin.ip, secondFactorChecked: true, on: tx)
        }
    }

    /// A password login (or an identity provider's: `SocialSignIn`) of an account being deleted takes it back
    /// (docs/security.md, "Account deletion"): in the audit trail, and told to the owner (who may have forgotten they asked, or
    /// may not be the one who signed in). One erased meanwhile has nothing left to sign in to.
    package func takeBack(_ account: AccountModel, origin: RequestOrigin) async throws {
        guard account.deletionRequestedAt != nil, let accountID = account.id else { return }
        let notice = notices.securityNotice(.deletionCancelled, to: account)
        try await database.db.withTransaction { tx in
            guard try await store.cancelDeletion(accountID, on: tx) else { throw GatehouseError.invalidCredentials }
            try await audit.record(AuditEvent(.accountDeletionCancelled, by: .account(accountID), account: accountID, origin: origin.audit,
                                                    detail: ["by": "login"]), on: tx)
            if let notice { try await outbox.enqueue(notice, on: tx) }
        }
    }

    // MARK: Password change

    /// Changes the password of a signed-in account. The current password is checked against the
    /// same failure budget as logins, so a stolen token cannot be used to guess it.
    /// `current` nil or empty: `current_password_required`.
    package func changePassword(accountID: UUID, sessionID: UUID, current: String?, new: String, origin: RequestOrigin) async throws {
        let account = try await store.accountRow(id: accountID)
        try await passwords.requireCurrentPassword(current, of: account)
        do {
            try await passwordRules.validate(new)
        } catch let error as GatehouseError {
            throw error.on(field: "newPassword")
        }
        let hash = try await hasher.hash(new)
        try await passwords.setPassword(account, hash: hash, consuming: nil, keepingSession: sessionID, how: "change", from: origin)
    }

    /// The account a session was opened for, as surfaces show it.
    package func account(id: UUID) async throws -> AccountSnapshot {
        try await store.account(id: id)
    }

    /// The account an identifier names (an email, a login/tag or a phone, as a login reads it): for
    /// the operator's search and the CLI, which find people the way they sign in.
    package func findAccount(identifier: String) async throws -> AccountModel? {
        try await store.find(rules.identifier(identifier))
    }

    package init(rules: AccountRules, database: DatabaseProvider, clock: GatehouseClock, hasher: PasswordHasher,
                 passwordRules: PasswordRules, sessions: SessionService, rateLimiter: RateLimiter, outbox: Outbox, audit: AuditLog,
                 binding: ClientBinding, notices: SecurityNotices, passwords: PasswordChanges, secondFactors: SecondFactors) {
        self.rules = rules
        self.database = database
        self.clock = clock
        self.hasher = hasher
        self.passwordRules = passwordRules
        self.sessions = sessions
        self.rateLimiter = rateLimiter
        self.outbox = outbox
        self.audit = audit
        self.binding = binding
        self.notices = notices
        self.passwords = passwords
        self.secondFactors = secondFactors
    }
}
