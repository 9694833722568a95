import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform

/// Second factors (docs/security.md, "Second factors"): an authenticator app's codes (TOTP,
/// RFC 6238; the secret sealed with a key derived from the server secret, each code's step
/// accepted once) and ten single-use recovery codes (stored as keyed hashes) that stand in for it.
///
/// With one on, `accounts.second_factor_at` is set, and `SessionService.create` opens a session for
/// the account only when the caller says a second factor was checked: a password login answers a
/// challenge instead (`LoginService`), which the code finishes; every other way in (a surface with
/// no second step, an emailed code) is refused with `second_factor_required`.
///
/// Wrong codes are counted twice, slot first: per challenge (`attemptsPerChallenge`) and per
/// account across challenges (`failuresPerAccount` per login failure window), so knowing the
/// password buys a guesser no more than those.
package struct SecondFactors: Sendable {
    package let database: DatabaseProvider
    package let clock: GatehouseClock
    package let settings: GatehouseConfiguration.SecondFactors
    /// The login failure budget's window, which wrong codes count against too.
    package let loginFailureWindow: TimeInterval
    package let accounts: AccountStore
    package let secrets: Secrets
    package let rateLimiter: RateLimiter
    package let outbox: Outbox
    package let audit: AuditLog
    package let notices: SecurityNotices
    package let passwords: PasswordChanges
    package let assertions: PasskeyAssertions
    private var store: SecondFactorStore { SecondFactorStore(database: database) }
    private var passkeys: PasskeyStore { PasskeyStore(database: database) }
    private static let totpPurpose = "account totp"
    private static let budget = "second-factor-account"
    /// Recovery codes: 10 characters of an alphabet without look-alikes (about 49 bits), shown as `xxxxx-xxxxx`.
    private static let recoveryAlphabet = Array("abcdefghjkmnpqrstuvwxyz23456789")
    package static let recoveryCodeCount = 10

    package init(database: DatabaseProvider, clock: GatehouseClock, settings: GatehouseConfiguration.SecondFactors, loginFailureWindow: TimeInterval,
                 accounts: AccountStore, secrets: Secrets, rateLimiter: RateLimiter, outbox: Outbox, audit: AuditLog, notices: SecurityNotices,
                 passwords: PasswordChanges, assertions: PasskeyAssertions) {
        self.database = database
        self.clock = clock
        self.settings = settings
        self.loginFailureWindow = loginFailureWindow
        self.accounts = accounts
        self.secrets = secrets
        self.rateLimiter = rateLimiter
        self.outbox = outbox
        self.audit = audit
        self.notices = notices
        self.passwords = passwords
        self.assertions = assertions
    }

    // MARK: What the account has

    package func status(accountID: UUID) async throws -> SecondFactorStatus {
        let since = try await store.app(of: accountID)?.confirmedAt
        let left = try await store.unusedRecoveryCodes(of: accountID)
        return SecondFactorStatus(totp: since != nil, totpSince: since, recoveryCodesLeft: since == nil ? 0 : left,
                                  passkeys: try await passkeys.count(of: accountID))
    }

    private func totpIsOn(_ accountID: UUID) async throws -> Bool {
        try await store.app(of: accountID)?.isOn ?? false
    }

    // MARK: Turning the authenticator app on and off

    /// A new secret for the authenticator app, waiting for its first code (`confirmTOTP`); asking
    /// again replaces a waiting one. Needs a step-up (the current password, and one of the
    /// account's passkeys when it has any), spent here.
    package func enrolTOTP(accountID: UUID, stepUp: StepUp, origin: RequestOrigin) async throws -> TOTPEnrolment {
        let account = try await accounts.accountRow(id: accountID)
        guard try await !totpIsOn(accountID) else { throw Self.alreadyOn }
        let proof = try await self.stepUp(account, stepUp, origin: origin)
        let secret = TOTP.newSecret()
        let sealed = try secrets.seal(secret, purpose: Self.totpPurpose)
        let now = clock.now()
        do {
            try await database.db.withTransaction { tx in
                if let proof, try await !spend(proof, accountID: accountID, on: tx) { throw Self.wrongCode(proof) }
                try await store.startEnrolment(accountID, sealedSecret: sealed, at: now, on: tx)
            }
        } catch where error.isConstraintViolation {
            throw Self.alreadyOn  // confirmed by a concurrent request meanwhile
        }
        let label = account.email ?? account.username.map { "@" + $0 } ?? account.phone ?? accountID.uuidString.lowercased()
        return TOTPEnrolment(uri: TOTP(secret: secret).uri(issuer: settings.issuer, account: label), secret: Base32.encode(secret),
                             digits: TOTP.digits, period: Int(TOTP.period), expiresAt: now.addingTimeInterval(settings.enrolmentTTL))
    }

    /// Turns the waiting secret on with a first code from the app: logins ask for a code from now
    /// on. Answers the ten recovery codes, shown this once; the owner is told.
    package func confirmTOTP(accountID: UUID, code: String, origin: RequestOrigin) async throws -> RecoveryCodes {
        let now = clock.now()
        guard let app = try await store.app(of: accountID) else { throw Self.notOn }
        guard !app.isOn else { throw Self.alreadyOn }
        guard app.createdAt.addingTimeInterval(settings.enrolmentTTL) > now else {
            throw GatehouseError.invalid(.codeExpired, "error.totpEnrolmentExpired").on(field: "code")
        }
        let secret = try secrets.open(app.sealedSecret, purpose: Self.totpPurpose)
        try await takeSlot(accountID)
        guard let step = TOTP(secret: secret).match(code, at: now, after: 0) else {
            try await countFailure(accountID, origin: origin)
            throw GatehouseError.invalid(.invalidCode, "error.invalidCode").on(field: "code")
        }
        let account = try await accounts.accountRow(id: accountID)
        let codes = Self.newRecoveryCodes()
        let notice = self.notice(.totpOn, [String(Int(settings.recoveryUndoesWithin / 86_400))], to: account)
        try await database.db.withTransaction { tx in
            guard try await store.confirm(accountID, step: step, at: now, on: tx) else { throw Self.alreadyOn }
            try await replaceRecoveryCodes(accountID, with: codes, now: now, on: tx)
            try await rateLimiter.release(Self.budget, key: accountID.uuidString, window: loginFailureWindow, on: tx)
            try await audit.record(AuditEvent(.secondFactorAdded, by: .account(accountID), account: accountID, origin: origin.audit,
                                                    detail: ["factor": "totp"]), on: tx)
            if let notice { try await outbox.enqueue(notice, on: tx) }
        }
        if notice != nil { outbox.signal.wake() }
        return RecoveryCodes(codes: codes)
    }

    /// Turns the authenticator app off after a step-up (the current password and a code, a
    /// recovery code or a passkey): the recovery codes and pending login challenges go with it;
    /// the owner is told.
    package func disableTOTP(accountID: UUID, stepUp: StepUp, origin: RequestOrigin) async throws {
        let account = try await accounts.accountRow(id: accountID)
        guard try await totpIsOn(accountID) else { throw Self.notOn }
        guard let proof = try await self.stepUp(account, stepUp, origin: origin) else { throw Self.notOn }
        let notice = self.notice(.totpOff, to: account)
        try await database.db.withTransaction { tx in
            guard try await spend(proof, accountID: accountID, on: tx) else { throw Self.wrongCode(proof) }
            try await remove(accountID, on: tx)
            try await audit.record(AuditEvent(.secondFactorRemoved, by: .account(accountID), account: accountID, origin: origin.audit,
                                                    detail: ["factor": "totp"]), on: tx)
            if let notice { try await outbox.enqueue(notice, on: tx) }
        }
        if notice != nil { outbox.signal.wake() }
    }

    /// Turns every second factor off for an operator — the authenticator app and every passkey (a
    /// person who lost their phone and their recovery codes, or whose account a thief added one
    /// to, and who proved who they are another way), with the reason in the audit trail; the
    /// owner is told. False when none was on.
    package func removeAll(accountID: UUID, reason: String, by actor: AuditActor, origin: AuditOrigin) async throws -> Bool {
        try await remove(accountID: accountID, only: nil, reason: reason, by: actor, origin: origin) > 0
    }

    /// `removeAll`, or only these (the admin API's choice): the authenticator app when `totp`, the passkeys of these
    /// ids (another account's are not touched). How many factors went.
    package func remove(accountID: UUID, only: (totp: Bool, passkeys: [UUID])?, reason: String, by actor: AuditActor, origin: AuditOrigin) async throws -> Int {
        let account = try await accounts.accountRow(id: accountID)
        let totpNotice = self.notice(.totpOff, to: account)
        let (removed, told) = try await database.db.withTransaction { tx -> (Int, Bool) in
            let on = only?.totp == false ? false : try await store.app(of: accountID, on: tx)?.isOn ?? false
            let passkeys = try await self.passkeys.removeAll(of: accountID, only: only?.passkeys, on: tx)
            guard on || !passkeys.isEmpty else { return (0, false) }
            var told = false
            if on {
                try await remove(accountID, on: tx)
                try await audit.record(AuditEvent(.secondFactorRemoved, by: actor, account: accountID, origin: origin,
                                                        detail: ["factor": "totp", "reason": reason]), on: tx)
                if let totpNotice { try await outbox.enqueue(totpNotice, on: tx); told = true }
            }
            for name in passkeys {
                try await audit.record(AuditEvent(.secondFactorRemoved, by: actor, account: accountID, origin: origin,
                                                        detail: ["factor": "passkey", "name": name, "reason": reason]), on: tx)
                if let notice = self.notice(.passkeyRemoved, [name], to: account) { try await outbox.enqueue(notice, on: tx); told = true }
            }
            return ((on ? 1 : 0) + passkeys.count, told)
        }
        if told { outbox.signal.wake() }
        return removed
    }

    /// A recovery by email or SMS (a recovery code, a temporary password) proves the person holds
    /// the mailbox or the phone the notices of new factors went to: every factor added in the
    /// `GATEHOUSE_RECOVERY_UNDOES_FACTORS_DAYS` before it goes (the way to undo a factor a password
    /// thief added, which its notice names), in the recovery's transaction, each audited. Older
    /// factors stay: a mailbox alone does not switch off a second factor the owner has had longer.
    package func undoRecentFactors(of accountID: UUID, on tx: any GatehouseDatabase) async throws {
        let now = clock.now()
        let since = now.addingTimeInterval(-settings.recoveryUndoesWithin)
        let passkeys = try await self.passkeys.removeAll(of: accountID, madeAfter: since, on: tx)
        for name in passkeys {
            try await audit.record(AuditEvent(.secondFactorRemoved, by: .system(nil), account: accountID, origin: AuditOrigin(),
                                                    detail: ["factor": "passkey", "name": name, "reason": "password recovery"]), on: tx)
        }
        // An identity linked in those days (not the one the account was made with) goes too.
        for provider in try await accounts.removeIdentitiesLinked(to: accountID, after: since, on: tx) {
            try await audit.record(AuditEvent(.identityUnlinked, by: .system(nil), account: accountID, origin: AuditOrigin(),
                                              detail: ["provider": provider, "reason": "password recovery"]), on: tx)
        }
        if let app = try await store.app(of: accountID, on: tx), (app.confirmedAt.map { $0 > since } ?? true) {
            let wasOn = app.isOn
            try await remove(accountID, on: tx)
            if wasOn {
                try await audit.record(AuditEvent(.secondFactorRemoved, by: .system(nil), account: accountID, origin: AuditOrigin(),
                                                        detail: ["factor": "totp", "reason": "password recovery"]), on: tx)
            }
        }
    }

    /// Whether the authenticator app was on before the recovery window (`undoRecentFactors` keeps
    /// it): a login with a temporary password then still needs its second step.
    package func hasLastingApp(_ accountID: UUID) async throws -> Bool {
        let since = clock.now().addingTimeInterval(-settings.recoveryUndoesWithin)
        return try await store.app(of: accountID)?.confirmedAt.map { $0 <= since } ?? false
    }

    private func remove(_ accountID: UUID, on tx: any GatehouseDatabase) async throws {
        try await store.removeApp(of: accountID, at: clock.now(), on: tx)
    }

    /// Ten new recovery codes after a step-up; the old ones stop working.
    package func renewRecoveryCodes(accountID: UUID, stepUp: StepUp, origin: RequestOrigin) async throws -> RecoveryCodes {
        let account = try await accounts.accountRow(id: accountID)
        guard try await totpIsOn(accountID) else { throw Self.notOn }
        guard let proof = try await self.stepUp(account, stepUp, origin: origin) else { throw Self.notOn }
        let codes = Self.newRecoveryCodes()
        let notice = self.notice(.recoveryCodesRenewed, to: account)
        let now = clock.now()
        try await database.db.withTransaction { tx in
            guard try await spend(proof, accountID: accountID, on: tx) else { throw Self.wrongCode(proof) }
            try await replaceRecoveryCodes(accountID, with: codes, now: now, on: tx)
            try await audit.record(AuditEvent(.recoveryCodesRenewed, by: .account(accountID), account: accountID, origin: origin.audit), on: tx)
            if let notice { try await outbox.enqueue(notice, on: tx) }
        }
        if notice != nil { outbox.signal.wake() }
        return RecoveryCodes(codes: codes)
    }

    // MARK: Login challenges

    /// A pending second step of a password login (`LoginService`).
    package struct PendingLogin: Sendable {
        package var id: UUID
        package var accountID: UUID
        /// A temporary password that becomes the password when the second step succeeds: its
        /// verification row and the new hash.
        package var temporaryCodeID: UUID?
        package var newPasswordHash: String?
        /// The way in the second step follows: nil for a password, else the identity provider's name
        /// (`SocialSignIn`).
        package var firstMethod: String?
    }

    /// A challenge for the second step of a login whose password (or temporary password) was right.
    package func challenge(for accountID: UUID, origin: RequestOrigin, temporary: (codeID: UUID, passwordHash: String)? = nil,
                           firstMethod: String? = nil) async throws -> SecondFactorChallenge {
        let token = secrets.token()
        let now = clock.now()
        let expiresAt = now.addingTimeInterval(settings.challengeTTL)
        try await store.addChallenge(Secrets.sha256Hex(token), for: accountID, at: now, expiresAt: expiresAt, ip: origin.ip.map { String($0.prefix(64)) },
                                     device: origin.device.map { String($0.prefix(200)) }, temporary: temporary, firstMethod: firstMethod)
        let passkey = try await passkeys.hasAny(accountID)
        return SecondFactorChallenge(challenge: token, methods: ["totp", "recovery_code"] + (passkey ? ["passkey"] : []), expiresAt: expiresAt)
    }

    /// Takes one attempt of a live challenge, slot first: past its attempts, used or expired, it
    /// is `login_challenge_invalid`. Answers the challenge and the attempts left after this one.
    package func takeAttempt(challenge token: String) async throws -> (PendingLogin, attemptsLeft: Int) {
        guard !token.isEmpty, token.utf8.count <= 200 else { throw Self.challengeInvalid }
        let now = clock.now()
        let limit = settings.attemptsPerChallenge
        guard let (pending, attempts) = try await store.takeAttempt(Secrets.sha256Hex(token), at: now, limit: limit) else { throw Self.challengeInvalid }
        return (pending, limit - attempts)
    }

    /// A live, unused challenge, read without taking an attempt (for the passkey options of its
    /// second step); `login_challenge_invalid` otherwise.
    package func pending(challenge token: String) async throws -> PendingLogin {
        guard !token.isEmpty, token.utf8.count <= 200,
              let pending = try await store.pendingChallenge(Secrets.sha256Hex(token), at: clock.now(), limit: settings.attemptsPerChallenge)
        else { throw Self.challengeInvalid }
        return pending
    }

    /// Marks the challenge used, in the transaction that opens the session; false when another
    /// request used it first.
    package func use(_ pending: PendingLogin, on tx: any GatehouseDatabase) async throws -> Bool {
        try await store.useChallenge(pending.id, at: clock.now(), on: tx)
    }

    // MARK: Step-up

    /// What a change to how the account signs in is asked with: the current password, and one
    /// proof of a second factor — the authenticator app's code, a recovery code, or an assertion
    /// of one of the account's passkeys (its options from `Passkeys.stepUpOptions`).
    package struct StepUp: Sendable {
        package var currentPassword: String?
        package var code: String?
        package var recoveryCode: String?
        package var passkey: PasskeyAssertion?

        package init(currentPassword: String?, code: String? = nil, recoveryCode: String? = nil, passkey: PasskeyAssertion? = nil) {
            self.currentPassword = currentPassword
            self.code = code
            self.recoveryCode = recoveryCode
            self.passkey = passkey
        }
    }

    /// A step-up (docs/security.md, "Step-up"): adding or removing a second factor or a passkey,
    /// or renewing recovery codes, needs what a login needs — the current password and, when the
    /// account has any second factor (the authenticator app or a passkey), one proof of one of
    /// them — so a password alone cannot add a way in to an account that has more than a
    /// password. Answers the proof for the caller to spend in the transaction of its change (nil
    /// when the password was all the account had); 403 `second_factor_required` (with no
    /// challenge) when a proof is needed and none came.
    package func stepUp(_ account: AccountModel, _ input: StepUp, origin: RequestOrigin) async throws -> Proof? {
        try await passwords.requireCurrentPassword(input.currentPassword, of: account)
        return try await secondProof(account, input, origin: origin)
    }

    /// The second half of a step-up, once its first factor was shown another way (a fresh sign-in with a linked
    /// identity, `SocialSignIn`): nil when the account has no second factor, else one proof of it (403
    /// `second_factor_required` when none came).
    package func secondProof(_ account: AccountModel, _ input: StepUp, origin: RequestOrigin) async throws -> Proof? {
        let accountID = account.id!
        let app = try await totpIsOn(accountID)
        let passkeys = try await self.passkeys.hasAny(accountID)
        guard app || passkeys else { return nil }
        let given = [input.code, input.recoveryCode].contains { !($0?.trimmingCharacters(in: .whitespaces).isEmpty ?? true) } || input.passkey != nil
        guard given else {
            throw GatehouseError(.forbidden, .secondFactorRequired, LocalizedText("error.stepUpRequired"), field: app ? "code" : "passkey")
        }
        return try await check(accountID, code: input.code, recoveryCode: input.recoveryCode, passkey: input.passkey, origin: origin)
    }

    // MARK: Codes

    /// What a right code proved, to be spent in the transaction it allows.
    package enum Proof: Sendable {
        case totp(step: Int64)
        case recoveryCode(hash: String)
        case passkey(Passkeys.Verified)

        package var method: String {
            switch self {
            case .totp: "totp"
            case .recoveryCode: "recovery code"
            case .passkey: "passkey"
            }
        }

        /// As a session's `amr` says it.
        package var authMethod: AuthMethod {
            switch self {
            case .totp, .recoveryCode: .otp
            case .passkey(let verified): verified.method
            }
        }
    }

    /// Checks a code from the authenticator app or a recovery code, after taking a slot of the
    /// account's budget (kept when the code is wrong). `attemptsLeft`: what a wrong code reports.
    /// A `passkey` assertion (the second step of `pending`, or else a step-up) is checked by `Passkeys` instead.
    package func check(_ accountID: UUID, code: String?, recoveryCode: String?, passkey: PasskeyAssertion? = nil, pending: PendingLogin? = nil,
                       attemptsLeft: Int? = nil, origin: RequestOrigin) async throws -> Proof {
        let ceremony: Passkeys.Ceremony = pending.map { .secondStep($0) } ?? .stepUp(accountID)
        let typed = code.map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
        let recovery = recoveryCode.map(Self.normalizeRecoveryCode).flatMap { $0.isEmpty ? nil : $0 }
        guard [typed != nil, recovery != nil, passkey != nil].filter({ $0 }).count == 1 else {
            throw GatehouseError(.invalidInput, .missingParameter, LocalizedText("error.secondFactorMissing"), field: "code")
        }
        try await takeSlot(accountID)
        if let passkey {
            do {
                return .passkey(try await assertions.verify(passkey, for: ceremony, origin: origin))
            } catch let error as GatehouseError where error.code == .passkeyInvalid {
                try await countFailure(accountID, origin: origin)
                throw error
            }
        }
        let wrong = { () async throws -> Never in
            try await self.countFailure(accountID, origin: origin)
            var error = GatehouseError.invalid(.invalidCode, "error.invalidCode").on(field: typed != nil ? "code" : "recoveryCode")
            error.attemptsLeft = attemptsLeft
            throw error
        }
        if let typed {
            guard let app = try await store.app(of: accountID), app.isOn,
                  let secret = try? secrets.open(app.sealedSecret, purpose: Self.totpPurpose)
            else { try await wrong() }
            let lastStep = app.lastStep
            let totp = TOTP(secret: secret)
            if let step = totp.match(typed, at: clock.now(), after: lastStep) { return .totp(step: step) }
            if totp.wasUsed(typed, at: clock.now(), upTo: lastStep) {
                // The right code, already spent (typed twice, or the app still shows it): refused all
                // the same, but said so, and neither counted as a failure nor kept against the budget:
                // the person knows the code; a guesser gains nothing by hitting a spent one.
                try? await rateLimiter.release(Self.budget, key: accountID.uuidString, window: loginFailureWindow)
                var error = GatehouseError.invalid(.invalidCode, "error.totpCodeUsed").on(field: "code")
                error.attemptsLeft = attemptsLeft
                throw error
            }
            try await wrong()
        }
        let hash = recoveryHash(recovery!, accountID: accountID)
        guard try await store.hasUnusedRecoveryCode(hash, of: accountID) else { try await wrong() }
        return .recoveryCode(hash: hash)
    }

    /// Spends what `check` proved, in the caller's transaction: the step is the newest accepted (a
    /// code works once), the recovery code is used. False when a concurrent request spent it
    /// first (the caller refuses, as for a wrong code). A spent proof gives the budget slot back.
    package func spend(_ proof: Proof, accountID: UUID, on tx: any GatehouseDatabase) async throws -> Bool {
        let spent: Bool
        switch proof {
        case .totp(let step):
            spent = try await store.spendStep(step, of: accountID, on: tx)
        case .recoveryCode(let hash):
            spent = try await store.spendRecoveryCode(hash, of: accountID, at: clock.now(), on: tx)
        case .passkey(let verified):
            spent = try await assertions.spend(verified, on: tx)
        }
        if spent {
            try await rateLimiter.release(Self.budget, key: accountID.uuidString, window: loginFailureWindow, on: tx)
        }
        return spent
    }

    /// A recovery code was used to sign in: in the audit trail, and told to the owner with the count left.
    package func recordRecoveryCodeUse(_ account: AccountModel, origin: RequestOrigin, on tx: any GatehouseDatabase) async throws {
        let accountID = account.id!
        let left = try await store.unusedRecoveryCodes(of: accountID, on: tx)
        try await audit.record(AuditEvent(.recoveryCodeUsed, by: .account(accountID), account: accountID, origin: origin.audit,
                                                detail: ["left": String(left)]), on: tx)
        if let notice = notice(.recoveryCodeUsed, [String(left)], to: account) { try await outbox.enqueue(notice, on: tx) }
    }

    package static func wrongCode(_ proof: Proof) -> GatehouseError {
        if case .passkey = proof {
            return GatehouseError(.invalidInput, .passkeyInvalid, LocalizedText("error.passkeyInvalid", ["the sign counter moved meanwhile: try again"]),
                                  field: "credential")
        }
        if case .recoveryCode = proof { return GatehouseError.invalid(.invalidCode, "error.invalidCode").on(field: "recoveryCode") }
        return GatehouseError.invalid(.invalidCode, "error.invalidCode").on(field: "code")
    }

    package static let challengeInvalid = GatehouseError(.invalidInput, .loginChallengeInvalid, LocalizedText("error.loginChallengeInvalid"), field: "challenge")
    private static let alreadyOn = GatehouseError.conflict(.totpAlreadyEnabled, "error.totpAlreadyEnabled")
    private static let notOn = GatehouseError.conflict(.totpNotEnabled, "error.totpNotEnabled")

    private func takeSlot(_ accountID: UUID) async throws {
        try await rateLimiter.hit(Self.budget, key: accountID.uuidString, limit: settings.failuresPerAccount,
                                        window: loginFailureWindow, messageKey: "error.loginThrottled")
    }

    private func countFailure(_ accountID: UUID, origin: RequestOrigin) async throws {
        try await audit.countFailure(AuditEvent(.secondFactorFailed, by: .account(accountID), account: accountID, origin: origin.audit))
    }

    // MARK: Recovery codes

    private func replaceRecoveryCodes(_ accountID: UUID, with codes: [String], now: Date, on tx: any GatehouseDatabase) async throws {
        let hashes = codes.map { recoveryHash(Self.normalizeRecoveryCode($0), accountID: accountID) }
        try await store.replaceRecoveryCodes(of: accountID, withHashes: hashes, at: now, on: tx)
    }

    /// Random, so a keyed hash (HMAC under the server secret, per account) is enough: a copy of the
    /// database alone cannot test guesses against it.
    private func recoveryHash(_ normalized: String, accountID: UUID) -> String {
        secrets.mac(normalized, purpose: "recovery code " + accountID.uuidString.lowercased())
    }

    package static func newRecoveryCodes() -> [String] {
        var generator = SystemRandomNumberGenerator()
        return (0..<recoveryCodeCount).map { _ in
            let characters = (0..<10).map { _ in recoveryAlphabet[Int.random(in: 0..<recoveryAlphabet.count, using: &generator)] }
            return String(characters[0..<5]) + "-" + String(characters[5...])
        }
    }

    /// One field that takes either (a web form's): six digits are the app's code, anything else a recovery code.
    package static func split(_ typed: String) -> (code: String?, recoveryCode: String?) {
        let compact = typed.filter { !$0.isWhitespace }
        let isAppCode = compact.count == TOTP.digits && compact.allSatisfy { $0.isASCII && $0.isNumber }
        return isAppCode ? (compact, nil) : (nil, compact)
    }

    /// As typed: any case, with or without the dash and spaces.
    package static func normalizeRecoveryCode(_ typed: String) -> String {
        String(typed.lowercased().filter { $0 != "-" && !$0.isWhitespace }.prefix(64))
    }

    private func notice(_ kind: MessageComposer.SecondFactorNotice, _ arguments: [String] = [], to account: AccountModel) -> OutgoingMessage? {
        notices.securityNotice(kind, arguments, to: account)
    }
}
