import FluentKit
import Foundation
import GatehouseAPI

/// The code-based flows of `/v1` (any surface may use them): sign-up with an email or SMS code,
/// password recovery with a code, the email change, attaching a phone, password change.
extension AccountService {
    /// An email address or a phone, normalised: where a code goes.
    enum Destination: Sendable, Equatable {
        case email(String)
        case phone(String)

        var value: String {
            switch self {
            case .email(let email): email
            case .phone(let phone): phone
            }
        }

        var channel: OutgoingMessage.Kind {
            switch self {
            case .email: .email
            case .phone: .sms
            }
        }
    }

    /// Exactly one of an email or a phone.
    func destination(email: String?, phone: String?) throws -> Destination {
        let email = email.flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 }
        let phone = phone.flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 }
        switch (email, phone) {
        case (let email?, nil): return .email(try normalizeEmail(email))
        case (nil, let phone?): return .phone(try normalizePhone(phone))
        case (nil, nil): throw GatehouseError.invalid(.missingParameter, "error.destinationRequired").on(field: "email")
        case (_?, _?): throw GatehouseError.invalid(.invalidParameter, "error.oneDestination").on(field: "phone")
        }
    }

    /// What a code request answers: when the code dies, when another may be asked for.
    struct CodeIssued: Sendable {
        var destination: Destination
        var expiresAt: Date
        var resendAllowedAt: Date
        var attemptsAllowed: Int
        var codeLength: Int
        /// The outbox message carrying it (nil when nothing was sent).
        var messageID: UUID?
    }

    private func issued(_ destination: Destination, _ issued: VerificationService.Issued) -> CodeIssued {
        CodeIssued(destination: destination, expiresAt: issued.expiresAt, resendAllowedAt: issued.resendAllowedAt,
                   attemptsAllowed: limits.codeMaxAttempts, codeLength: limits.codeLength, messageID: issued.messageID)
    }

    /// Issues a numeric code for `purpose` to `destination`. `message` builds what is sent for
    /// the code: when it does not carry the code (a notice, or nil for nothing at all) the stored
    /// secret is a decoy nobody is told, so an unknown or taken address costs the same cooldowns
    /// and budgets as any other and no code for it can work.
    private func issueCode(_ purpose: VerificationPurpose, to destination: Destination, accountID: UUID?, origin: RequestOrigin,
                           message: (String) -> OutgoingMessage?) async throws -> CodeIssued {
        let code = secrets.numericCode(length: limits.codeLength)
        let outgoing = message(code)
        let secretHash = outgoing?.code == code
            ? secrets.codeHash(code, purpose: purpose.rawValue, destination: destination.value)
            : Secrets.sha256Hex(secrets.token())
        let result = try await verification.issue(.init(
            purpose: purpose, destination: destination.value, accountID: accountID,
            secretHash: secretHash, ttl: limits.codeTTL, message: outgoing, ip: origin.ip
        ))
        return issued(destination, result)
    }

    /// Spends a checked code and saves what it proved, in one transaction: an unconfirmed claim
    /// on the proven address elsewhere is dropped, the account's other sessions end (a new way
    /// into the account is a change its other devices must sign in again for), and `notice` is
    /// queued. A unique field taken meanwhile by another account is `conflict`.
    private func spend(_ row: VerificationCodeModel, saving account: AccountModel, claiming destination: Destination,
                       keepingSession: UUID?, notice: OutgoingMessage? = nil, conflict: GatehouseError) async throws {
        do {
            try await database.db.transaction { tx in
                try await verification.consume(row, on: tx)
                try await dropUnverifiedClaim(on: destination, except: account.id, on: tx)
                try await account.update(on: tx)
                try await sessions.revokeAll(accountID: account.id!, keeping: keepingSession, on: tx)
                if let notice { try await outbox.enqueue(notice, on: tx) }
            }
            outbox.signal.wake()
        } catch where error.isConstraintViolation {
            throw conflict
        }
    }

    /// The account a confirmed email or a verified phone belongs to. An unconfirmed address is
    /// only a claim: it names no account (docs/security.md, "Claims").
    func accountByDestination(_ destination: Destination) async throws -> AccountModel? {
        let db = database.db
        switch destination {
        case .email(let email):
            return try await AccountModel.query(on: db).filter(\.$email == email).filter(\.$emailConfirmedAt != nil).first()
        case .phone(let phone):
            return try await AccountModel.query(on: db).filter(\.$phone == phone).filter(\.$phoneVerifiedAt != nil).first()
        }
    }

    /// A proven address wins over an unproven claim on it: another account holding `destination`
    /// unconfirmed loses it, inside the caller's transaction, and is told where it can still be
    /// reached (its verified phone or confirmed email). Returns that notice, already queued.
    @discardableResult
    func dropUnverifiedClaim(on destination: Destination, except accountID: UUID? = nil, on tx: any Database) async throws -> OutgoingMessage? {
        var query = AccountModel.query(on: tx)
        switch destination {
        case .email(let email): query = query.filter(\.$email == email).filter(\.$emailConfirmedAt == nil)
        case .phone(let phone): query = query.filter(\.$phone == phone).filter(\.$phoneVerifiedAt == nil)
        }
        if let accountID { query = query.filter(\.$id != accountID) }
        guard let claimant = try await query.first() else { return nil }
        let notice: OutgoingMessage?
        switch destination {
        case .email(let email):
            claimant.email = nil
            claimant.emailConfirmedAt = nil
            notice = claimant.phoneVerifiedAt != nil ? claimant.phone.map {
                composer.claimLost(to: $0, channel: .sms, address: email, language: claimant.language)
            } : nil
        case .phone(let phone):
            claimant.phone = nil
            claimant.phoneVerifiedAt = nil
            notice = claimant.emailConfirmedAt != nil ? claimant.email.map {
                composer.claimLost(to: $0, channel: .email, address: phone, language: claimant.language)
            } : nil
        }
        claimant.updatedAt = clock.now()
        try await claimant.update(on: tx)
        if let notice { try await outbox.enqueue(notice, on: tx) }
        return notice
    }

    /// A recovery by email proves the email, not the phone: a phone verified before the email
    /// was confirmed may be somebody else's (the one who created the account with a stranger's
    /// address), so it stops being a way in until the account verifies it again. The account's
    /// model is changed here; the returned notice to the phone is for the caller's transaction.
    func unverifyPhoneAfterEmailRecovery(_ account: AccountModel) -> OutgoingMessage? {
        guard let phone = account.phone, let verifiedAt = account.phoneVerifiedAt,
              let confirmedAt = account.emailConfirmedAt, verifiedAt <= confirmedAt else { return nil }
        account.phoneVerifiedAt = nil
        return composer.phoneUnverified(to: phone, language: account.language)
    }

    private func signupPurpose(_ destination: Destination) -> VerificationPurpose {
        if case .phone = destination { return .phoneSignup }
        return .emailSignup
    }

    // MARK: Sign-up with a code

    /// Sends a sign-up code. An address that already has an account gets a notice instead, and
    /// the answer is the same, so the form tells a stranger nothing.
    /// An unconfirmed claim on the address does not make it taken: the sign-up will take it over.
    /// The notice to an existing account goes out in the account owner's language, not the asker's.
    func requestSignupCode(to destination: Destination, origin: RequestOrigin) async throws -> CodeIssued {
        let owner = try await accountByDestination(destination)
        return try await issueCode(signupPurpose(destination), to: destination, accountID: nil, origin: origin) { code in
            if let owner {
                composer.accountExists(to: destination.value, channel: destination.channel, language: owner.language)
            } else {
                composer.code(.signup, to: destination.value, channel: destination.channel, code: code, ttl: limits.codeTTL, language: origin.language)
            }
        }
    }

    struct CodeSignup: Sendable {
        var destination: Destination
        var code: String
        var password: String
        var firstName: String?
        var lastName: String?
        var tag: String?
        var birthday: Date?
        var locale: String?
        var device: String?
    }

    /// Creates an account whose address the code proves, and opens its first session. The form
    /// is checked before the code, so a typo does not burn an attempt; the code is consumed, the
    /// account created and the session opened in one transaction.
    func signup(_ input: CodeSignup, origin: RequestOrigin) async throws -> (AccountSnapshot, IssuedSession) {
        try passwordRules.validate(input.password)
        let tag = try input.tag.map(validateTag)
        let locale = try input.locale.map(validateLocale)
        if let tag, try await isTagTaken(tag) { throw Self.tagTaken }
        let purpose = signupPurpose(input.destination)
        let codeRow = try await verification.check(code: input.code, purpose: purpose, destination: input.destination.value)
        let hash = try await hasher.hash(input.password)
        let now = clock.now()
        let account = AccountModel(passwordHash: hash, now: now)
        switch input.destination {
        case .email(let email):
            account.email = email
            account.emailConfirmedAt = now
        case .phone(let phone):
            account.phone = phone
            account.phoneVerifiedAt = now
        }
        account.username = tag
        account.usernameKey = tag
        account.firstName = input.firstName
        account.lastName = input.lastName
        account.birthday = input.birthday
        account.locale = locale ?? origin.language.rawValue
        do {
            let session = try await database.db.transaction { tx in
                try await verification.consume(codeRow, on: tx)
                try await dropUnverifiedClaim(on: input.destination, on: tx)
                try await account.create(on: tx)
                return try await sessions.create(accountID: account.id!, device: input.device ?? origin.device, ip: origin.ip, on: tx)
            }
            outbox.signal.wake()
            return (account.snapshot, session)
        } catch where error.isConstraintViolation {
            throw try await duplicateError(phone: account.phone, username: tag, email: account.email, usernameTaken: Self.tagTaken)
        }
    }

    // MARK: Tags and locales

    static let tagTaken = GatehouseError.conflict(.tagTaken, "error.tagTaken").on(field: "tag")

    /// The tag lower-cased, or `invalid_tag`.
    func validateTag(_ raw: String) throws -> String {
        guard let tag = TagRule.normalize(raw) else {
            throw GatehouseError.invalid(.invalidTag, "error.invalidTag").on(field: "tag")
        }
        return tag
    }

    func isTagTaken(_ tag: String, except accountID: UUID? = nil) async throws -> Bool {
        var query = AccountModel.query(on: database.db).filter(\.$usernameKey == tag.lowercased())
        if let accountID { query = query.filter(\.$id != accountID) }
        return try await query.count() > 0
    }

    /// A locale whose language Gatehouse writes in (`en`, `ru`, `ru-RU`, `en_GB`…), as given.
    func validateLocale(_ raw: String) throws -> String {
        let locale = raw.trimmingCharacters(in: .whitespaces)
        let wellFormed = locale.count <= 35 && locale.split(separator: "-", omittingEmptySubsequences: false).count <= 4
            && locale.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
        guard wellFormed, AppLanguage(localeIdentifier: locale) != nil else {
            throw GatehouseError.invalid(.invalidLocale, "error.invalidLocale", String(raw.prefix(40))).on(field: "locale")
        }
        return locale
    }

    // MARK: Password recovery with a code

    /// Sends a recovery code to a confirmed address or a verified phone. Anything else (no
    /// account, an unconfirmed address) is sent nothing but answers the same and costs the same
    /// budgets, so the form cannot tell who has an account.
    func requestRecoveryCode(to destination: Destination, origin: RequestOrigin) async throws -> CodeIssued {
        let account = try await accountByDestination(destination)
        let verified: Bool = switch destination {
        case .email: account?.emailConfirmedAt != nil
        case .phone: account?.phoneVerifiedAt != nil
        }
        let live = verified ? account : nil
        return try await issueCode(.passwordReset, to: destination, accountID: live?.id, origin: origin) { code in
            live.map { composer.code(.recovery, to: destination.value, channel: destination.channel, code: code, ttl: limits.codeTTL, language: $0.language) }
        }
    }

    /// Sets a new password with a recovery code: every session of the account ends, every
    /// outstanding temporary password and recovery code dies, and the account is told.
    func recoverPassword(destination: Destination, code: String, newPassword: String, origin: RequestOrigin) async throws {
        try passwordRules.validate(newPassword)
        let row = try await verification.check(code: code, purpose: .passwordReset, destination: destination.value)
        guard let accountID = row.accountID else { throw GatehouseError.invalid(.invalidCode, "error.invalidCode") }
        let account = try await accountRow(id: accountID)
        let hash = try await hasher.hash(newPassword)
        let phoneNotice: OutgoingMessage? = if case .email = destination { unverifyPhoneAfterEmailRecovery(account) } else { nil }
        try await setPassword(account, hash: hash, consuming: row, keepingSession: nil, extraNotice: phoneNotice)
    }

    /// Writes a new password hash, ends the sessions (all, or all but one), kills every live
    /// reset secret and queues the notice, in one transaction.
    /// `tellOwner` false: the owner was told already (a temporary password is used, which its
    /// own message announced). `openingSessionFor`: also open a session in the same transaction
    /// (a login that sets the password) and return it.
    @discardableResult
    func setPassword(_ account: AccountModel, hash: String, consuming row: VerificationCodeModel?, keepingSession: UUID?,
                     extraNotice: OutgoingMessage? = nil, tellOwner: Bool = true,
                     openingSessionFor origin: RequestOrigin? = nil) async throws -> IssuedSession? {
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
        let session = try await database.db.transaction { tx -> IssuedSession? in
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
            try await sessions.revokeAll(accountID: account.id!, keeping: keepingSession, on: tx)
            if let notice { try await outbox.enqueue(notice, on: tx) }
            if let extraNotice { try await outbox.enqueue(extraNotice, on: tx) }
            guard let origin else { return nil }
            return try await sessions.create(accountID: account.id!, device: origin.device, ip: origin.ip, on: tx)
        }
        if notice != nil || extraNotice != nil { outbox.signal.wake() }
        return session
    }

    // MARK: Password change

    /// Changes the password of a signed-in account. The current password is checked against the
    /// same failure budget as logins, so a stolen token cannot be used to guess it.
    /// `current` nil or empty: `current_password_required`.
    func changePassword(accountID: UUID, sessionID: UUID, current: String?, new: String, origin: RequestOrigin) async throws {
        let account = try await accountRow(id: accountID)
        try await requireCurrentPassword(current, of: account)
        do {
            try passwordRules.validate(new)
        } catch let error as GatehouseError {
            throw error.on(field: "newPassword")
        }
        let hash = try await hasher.hash(new)
        try await setPassword(account, hash: hash, consuming: nil, keepingSession: sessionID)
    }

    /// Proof that the person holding a session also knows the password, before anything that
    /// could lock the owner out (password, email or phone change). Checked against the same
    /// failure budget as logins, slot first, so a stolen token cannot be used to guess it.
    /// Every account has a password: sign-ups without one get a generated one.
    func requireCurrentPassword(_ password: String?, of account: AccountModel) async throws {
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

    // MARK: Email change with a code

    /// Starts an email change: the new address is pending and gets a code; the address in use
    /// stays in use (display, login, recovery) until then, and is told. Needs the current password.
    func requestEmailChange(accountID: UUID, email raw: String, currentPassword: String?, origin: RequestOrigin) async throws -> CodeIssued {
        let email = try normalizeEmail(raw)
        let account = try await accountRow(id: accountID)
        if email == account.email { throw GatehouseError.invalid(.emailUnchanged, "error.emailUnchanged").on(field: "email") }
        try await requireCurrentPassword(currentPassword, of: account)
        if try await accountByDestination(.email(email)) != nil {
            throw GatehouseError.conflict(.emailTaken, "error.emailTaken").on(field: "email")
        }
        let result = try await issueCode(.emailChange, to: .email(email), accountID: accountID, origin: origin) { code in
            composer.code(.emailChange, to: email, channel: .email, code: code, ttl: limits.codeTTL, language: account.language)
        }
        let notice: OutgoingMessage? = if let old = account.email, account.emailConfirmedAt != nil, account.pendingEmail != email {
            composer.emailChangeNotice(to: old, newEmail: email, language: account.language)
        } else {
            nil
        }
        account.pendingEmail = email
        account.updatedAt = clock.now()
        try await database.db.transaction { tx in
            try await account.update(on: tx)
            if let notice { try await outbox.enqueue(notice, on: tx) }
        }
        if notice != nil { outbox.signal.wake() }
        return result
    }

    /// Confirms the pending address with its code: it becomes the account's confirmed address,
    /// an unconfirmed claim on it elsewhere is dropped, and every other session ends.
    func verifyEmailChange(accountID: UUID, sessionID: UUID?, code: String) async throws -> AccountSnapshot {
        let account = try await accountRow(id: accountID)
        guard let pending = account.pendingEmail else { throw GatehouseError.invalid(.noPendingEmail, "error.noPendingEmail") }
        let row = try await verification.check(code: code, purpose: .emailChange, destination: pending)
        guard row.accountID == accountID else { throw GatehouseError.invalid(.invalidCode, "error.invalidCode") }
        let now = clock.now()
        account.email = pending
        account.pendingEmail = nil
        account.emailConfirmedAt = now
        account.updatedAt = now
        try await spend(row, saving: account, claiming: .email(pending), keepingSession: sessionID, conflict: .conflict(.emailTaken, "error.emailTaken"))
        return account.snapshot
    }

    func cancelEmailChange(accountID: UUID) async throws -> AccountSnapshot {
        let account = try await accountRow(id: accountID)
        guard account.pendingEmail != nil else { throw GatehouseError.invalid(.noPendingEmail, "error.noPendingEmail") }
        account.pendingEmail = nil
        account.updatedAt = clock.now()
        try await account.update(on: database.db)
        return account.snapshot
    }

    // MARK: Phone verification

    /// Sends an SMS code to attach a phone to an existing account (the wallet spec's "add phone").
    /// Needs the current password: the phone becomes a way into the account.
    func requestPhoneVerification(accountID: UUID, phone raw: String, currentPassword: String?, origin: RequestOrigin) async throws -> CodeIssued {
        let phone = try normalizePhone(raw)
        let account = try await accountRow(id: accountID)
        if account.phone == phone, account.phoneVerifiedAt != nil {
            throw GatehouseError.invalid(.phoneAlreadyVerified, "error.phoneAlreadyVerified").on(field: "phone")
        }
        try await requireCurrentPassword(currentPassword, of: account)
        if let holder = try await accountByDestination(.phone(phone)), holder.id != accountID {
            throw GatehouseError.conflict(.phoneTaken, "error.phoneTaken").on(field: "phone")
        }
        return try await issueCode(.phoneVerification, to: .phone(phone), accountID: accountID, origin: origin) { code in
            composer.code(.signup, to: phone, channel: .sms, code: code, ttl: limits.codeTTL, language: account.language)
        }
    }

    /// Attaches the phone the code proves. The phone it replaces, if it was verified, is told;
    /// every other session ends.
    func verifyPhone(accountID: UUID, sessionID: UUID?, phone raw: String, code: String) async throws -> AccountSnapshot {
        let phone = try normalizePhone(raw)
        let account = try await accountRow(id: accountID)
        let row = try await verification.check(code: code, purpose: .phoneVerification, destination: phone)
        guard row.accountID == accountID else { throw GatehouseError.invalid(.invalidCode, "error.invalidCode") }
        let notice: OutgoingMessage? = if let old = account.phone, old != phone, account.phoneVerifiedAt != nil {
            composer.phoneChangeNotice(to: old, newPhone: phone, language: account.language)
        } else {
            nil
        }
        let now = clock.now()
        account.phone = phone
        account.phoneVerifiedAt = now
        account.updatedAt = now
        try await spend(row, saving: account, claiming: .phone(phone), keepingSession: sessionID, notice: notice,
                        conflict: GatehouseError.conflict(.phoneTaken, "error.phoneTaken").on(field: "phone"))
        return account.snapshot
    }
}
