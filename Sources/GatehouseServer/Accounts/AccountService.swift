import FluentKit
import Foundation
import GatehouseAPI

/// Who is asking, for limits and for the language of what they are sent.
struct RequestOrigin: Sendable {
    var ip: String?
    var language: AppLanguage
    var device: String?
}

/// The account rules every surface shares: sign-up, login, profile, email confirmation,
/// password recovery. Surfaces translate wire formats and call these; no rule lives in a surface.
struct AccountService: Sendable {
    let database: DatabaseProvider
    let clock: GatehouseClock
    let configuration: GatehouseConfiguration
    let hasher: PasswordHasher
    let passwordRules: PasswordRules
    let sessions: SessionService
    let verification: VerificationService
    let outbox: Outbox
    let composer: MessageComposer
    let secrets: Secrets
    let rateLimiter: RateLimiter
    let blobs: any BlobStore

    var limits: GatehouseConfiguration.Limits { configuration.limits }

    // MARK: Identifiers

    func normalizePhone(_ raw: String) throws -> String {
        guard let phone = PhoneNumber.normalize(raw, defaultCountryCode: configuration.defaultCountryCode) else {
            throw GatehouseError.invalid(.invalidPhone, "error.invalidPhone", String(raw.prefix(40))).on(field: "phone")
        }
        return phone
    }

    func normalizeEmail(_ raw: String) throws -> String {
        guard let email = EmailAddress.normalize(raw) else {
            throw GatehouseError.invalid(.invalidEmail, "error.invalidEmail", String(raw.prefix(80))).on(field: "email")
        }
        return email
    }

    /// Finds the account an identifier names: an email (contains `@`), a login/tag, or a phone
    /// in any common format. Only a confirmed email or a verified phone names an account: an
    /// unconfirmed one is a claim anybody could have typed (docs/security.md, "Claims").
    func findAccount(identifier raw: String) async throws -> AccountModel? {
        var identifier = raw.trimmingCharacters(in: .whitespaces)
        // `@handle` is how people write a tag; a tag never contains a second `@`.
        if identifier.hasPrefix("@"), !identifier.dropFirst().contains("@") { identifier.removeFirst() }
        guard !identifier.isEmpty else { return nil }
        if identifier.contains("@") {
            guard let email = EmailAddress.normalize(identifier) else { return nil }
            return try await accountByDestination(.email(email))
        }
        if let byName = try await AccountModel.query(on: database.db).filter(\.$usernameKey == LoginName.key(identifier)).first() {
            return byName
        }
        if let phone = PhoneNumber.normalize(identifier, defaultCountryCode: configuration.defaultCountryCode) {
            return try await accountByDestination(.phone(phone))
        }
        return nil
    }

    /// The account as a value (what surfaces show).
    func account(id: UUID) async throws -> AccountSnapshot {
        try await accountRow(id: id).snapshot
    }

    /// The account's row, for the rules here that change it.
    func accountRow(id: UUID) async throws -> AccountModel {
        guard let account = try await AccountModel.find(id, on: database.db) else { throw GatehouseError.unauthorized }
        return account
    }

    // MARK: Phone sign-up

    /// Sends a sign-up code by SMS to a phone that has no account yet. The phone spec answers
    /// a taken phone openly (`phone_taken`); `/v1` sends a notice instead (`requestSignupCode`).
    /// The open answer costs what a code costs (cooldown, daily and per-client budgets, recorded
    /// as a decoy nobody is sent), so the form cannot be used to test phones in bulk.
    func requestPhoneSignupCode(phone raw: String, origin: RequestOrigin) async throws -> CodeIssued {
        let phone = try normalizePhone(raw)
        if try await accountByDestination(.phone(phone)) != nil {
            try await verification.issue(.init(
                purpose: .phoneSignup, destination: phone, accountID: nil, secretHash: Secrets.sha256Hex(secrets.token()),
                ttl: limits.codeTTL, message: nil, ip: origin.ip
            ))
            throw GatehouseError.conflict(.phoneTaken, "error.phoneTaken")
        }
        return try await requestSignupCode(to: .phone(phone), origin: origin)
    }

    struct PhoneRegistration: Sendable {
        var phone: String
        var code: String
        var login: String?
        var password: String?
        var firstName: String?
        var lastName: String?
        var middleName: String?
        var email: String?
        var birthday: Date?
    }

    struct Registered: Sendable {
        var account: AccountSnapshot
        var generatedPassword: String?
    }

    /// Creates an account from a phone sign-up code. The form's syntax is checked before the
    /// code, so a typo does not burn an attempt; whether the login or email is taken only after
    /// the code, so the form cannot be used to test addresses without one. The code is consumed,
    /// an unverified claim on the phone dropped and the account created in one transaction.
    func registerWithPhone(_ input: PhoneRegistration, origin: RequestOrigin) async throws -> Registered {
        let phone = try normalizePhone(input.phone)
        let login = try input.login.map(LoginName.validate)
        let email = try input.email.map(normalizeEmail)
        var generated: String?
        let password: String
        if let given = input.password {
            try passwordRules.validate(given)
            password = given
        } else {
            generated = passwordRules.generate()
            password = generated!
        }
        let codeRow = try await verification.check(code: input.code, purpose: .phoneSignup, destination: phone)
        let db = database.db
        if try await accountByDestination(.phone(phone)) != nil {
            throw GatehouseError.conflict(.phoneTaken, "error.phoneTaken")
        }
        if let login, try await AccountModel.query(on: db).filter(\.$usernameKey == LoginName.key(login)).count() > 0 {
            throw GatehouseError.conflict(.loginTaken, "error.loginTaken")
        }
        if let email, try await AccountModel.query(on: db).filter(\.$email == email).count() > 0 {
            throw GatehouseError.conflict(.emailTaken, "error.emailTaken")
        }
        let hash = try await hasher.hash(password)
        let now = clock.now()
        let account = AccountModel(passwordHash: hash, now: now)
        account.phone = phone
        account.phoneVerifiedAt = now
        account.username = login
        account.usernameKey = login.map(LoginName.key)
        account.email = email
        account.firstName = input.firstName
        account.lastName = input.lastName
        account.middleName = input.middleName
        account.birthday = input.birthday
        account.locale = origin.language.rawValue
        do {
            let notice = try await db.transaction { tx in
                try await verification.consume(codeRow, on: tx)
                let notice = try await dropUnverifiedClaim(on: .phone(phone), on: tx)
                try await account.create(on: tx)
                return notice
            }
            if notice != nil { outbox.signal.wake() }
        } catch where error.isConstraintViolation {
            throw try await duplicateError(phone: phone, username: login, email: email, usernameTaken: .conflict(.loginTaken, "error.loginTaken"))
        }
        return Registered(account: account.snapshot, generatedPassword: generated)
    }

    /// Which unique field a concurrent write took first. `usernameTaken` is the surface's word
    /// for the username (the phone spec's login, the messenger's tag).
    func duplicateError(phone: String?, username: String?, email: String?, usernameTaken: GatehouseError) async throws -> GatehouseError {
        let db = database.db
        if let phone, try await AccountModel.query(on: db).filter(\.$phone == phone).count() > 0 {
            return .conflict(.phoneTaken, "error.phoneTaken")
        }
        if let username, try await AccountModel.query(on: db).filter(\.$usernameKey == LoginName.key(username)).count() > 0 {
            return usernameTaken
        }
        return .conflict(.emailTaken, "error.emailTaken")
    }

    // MARK: Login

    /// Password login with any identifier. Unknown account and wrong password look the same,
    /// cost the same bcrypt time and count against the same throttles.
    ///
    /// Every attempt takes its slot in the failure budgets *before* the password is checked and
    /// gives it back only when it succeeds, so concurrent guesses cannot slip past the limit.
    func login(identifier: String, password: String, origin: RequestOrigin, accepting kinds: LoginIdentifierKinds = .any) async throws -> IssuedSession {
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
                session = try await sessions.create(accountID: accountID, device: origin.device, ip: origin.ip)
            } else if let temporary = try await loginWithTemporaryPassword(account: account, password: password, origin: origin) {
                session = temporary
            } else {
                throw GatehouseError.invalidCredentials
            }
        } catch let error as GatehouseError where error.code == .invalidCredentials {
            throw error  // a failure: the slots stay spent
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
    private func loginWithTemporaryPassword(account: AccountModel, password: String, origin: RequestOrigin) async throws -> IssuedSession? {
        let now = clock.now()
        let accountID = account.id!
        let candidates = try await VerificationCodeModel.query(on: database.db)
            .filter(\.$accountID == accountID)
            .filter(\.$purpose == VerificationPurpose.temporaryPassword.rawValue)
            .filter(\.$consumedAt == nil)
            .filter(\.$expiresAt > now)
            .all()
        let offered = temporaryPasswordHash(password, accountID: accountID)
        guard let match = candidates.first(where: { Secrets.constantTimeEquals(offered, $0.secretHash) }) else { return nil }
        let hash = try await hasher.hash(password)
        let phoneNotice = match.destination.contains("@") ? unverifyPhoneAfterEmailRecovery(account) : nil
        // It becomes the password: every other temporary password and reset code dies, every
        // other session ends.
        return try await setPassword(account, hash: hash, consuming: match, keepingSession: nil, extraNotice: phoneNotice,
                                     tellOwner: false, openingSessionFor: origin)
    }

    /// How a temporary password is stored: keyed with the server secret and bound to its account.
    func temporaryPasswordHash(_ password: String, accountID: UUID) -> String {
        secrets.codeHash(password, purpose: VerificationPurpose.temporaryPassword.rawValue, destination: accountID.uuidString)
    }

    // MARK: Profile

    /// Which identifiers a login surface takes: any (email, login/tag, phone) or email only
    /// (the WebSocket gateway, whose spec identifies customers by email).
    enum LoginIdentifierKinds: Sendable { case any, emailOnly }

    struct ProfileChange: Sendable {
        /// `.some(nil)` clears a field; `nil` leaves it alone.
        var firstName: String??
        var lastName: String??
        var middleName: String??
        var birthday: Date??
        var fcmToken: String??
        /// The tag (the `username` column): can be replaced, not removed.
        var tag: String??
        var locale: String??
        var email: String?
        /// The phone is the login and cannot change: sending the current one (a client posting
        /// its whole form) is fine, another one is refused.
        var phone: String?
        /// Needed when `email` changes the address: the email is a way into the account.
        var currentPassword: String?
    }

    /// `sessionID`: the session asking, which stays open when an email change ends the others.
    func updateProfile(accountID: UUID, sessionID: UUID?, change: ProfileChange, origin: RequestOrigin) async throws -> AccountSnapshot {
        let account = try await accountRow(id: accountID)
        let emailChanges = try change.email.map { try normalizeEmail($0) != account.displayedEmail } ?? false
        if emailChanges {
            // The phone-first spec's "wrong email" screen sends no password: right after a login
            // (the flow it is part of), a session that has no confirmed email to lose may fix
            // the address without one. Anything else needs the current password.
            let recentLogin = try await sessions.openedAt(sessionID: sessionID).map { clock.now().timeIntervalSince($0) <= limits.recentLoginWindow } ?? false
            if change.currentPassword != nil || account.emailConfirmedAt != nil || !recentLogin {
                try await requireCurrentPassword(change.currentPassword, of: account)
            }
        }
        if let phone = change.phone, try normalizePhone(phone) != account.phone {
            throw GatehouseError.invalid(.phoneChangeNotAllowed, "error.phoneChange")
        }
        let now = clock.now()
        if let v = change.firstName { account.firstName = v }
        if let v = change.lastName { account.lastName = v }
        if let v = change.middleName { account.middleName = v }
        if let v = change.birthday { account.birthday = v }
        if let v = change.fcmToken { account.fcmToken = v }
        if let v = change.locale { account.locale = try v.map(validateLocale) }
        var newTag: String?
        if let v = change.tag {
            guard let raw = v else { throw GatehouseError.invalid(.invalidParameter, "error.tagRequired").on(field: "tag") }
            let tag = try validateTag(raw)
            if tag != account.usernameKey {
                if try await isTagTaken(tag, except: accountID) { throw Self.tagTaken }
                account.username = tag
                account.usernameKey = tag
                newTag = tag
            }
        }
        let notice: OutgoingMessage? = if let raw = change.email {
            try await applyEmailChange(account, to: normalizeEmail(raw))
        } else {
            nil
        }
        account.updatedAt = now
        do {
            try await database.db.transaction { tx in
                try await account.update(on: tx)
                if let notice { try await outbox.enqueue(notice, on: tx) }
                if emailChanges { try await sessions.revokeAll(accountID: accountID, keeping: sessionID, on: tx) }
            }
        } catch where error.isConstraintViolation {
            if let newTag, try await isTagTaken(newTag, except: accountID) {
                throw Self.tagTaken
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
        if try await AccountModel.query(on: database.db).filter(\.$email == email).filter(\.$id != account.id!).count() > 0 {
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

    // MARK: Email confirmation

    /// Sends a confirmation link to the account's displayed address.
    @discardableResult
    func sendEmailConfirmation(accountID: UUID, origin: RequestOrigin) async throws -> VerificationService.Issued {
        let account = try await accountRow(id: accountID)
        guard let email = account.displayedEmail else { throw GatehouseError.invalid(.noEmail, "error.noEmail") }
        if account.isEmailConfirmed { throw GatehouseError.invalid(.emailAlreadyConfirmed, "error.emailAlreadyConfirmed") }
        let token = secrets.token()
        return try await verification.issue(.init(
            purpose: .emailConfirmation, destination: email, accountID: accountID,
            secretHash: Secrets.sha256Hex(token), ttl: limits.confirmationLinkTTL,
            message: composer.confirmationMail(to: email, token: token, linkTTL: limits.confirmationLinkTTL, language: account.language),
            ip: origin.ip
        ))
    }

    enum ConfirmationOutcome: Sendable, Equatable {
        /// A live link, not used yet: the page asks for the click that confirms it.
        case pending(email: String, token: String)
        case confirmed(email: String)
        case alreadyConfirmed
        case invalid
    }

    /// What a confirmation link would do, without doing it (the page a GET shows).
    func inspectConfirmation(token: String) async throws -> ConfirmationOutcome {
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
            let account = try await AccountModel.find(accountID, on: db)
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
    func confirmEmail(token: String) async throws -> ConfirmationOutcome {
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
            try await db.transaction { tx in
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

    // MARK: Password recovery

    enum RecoveryChannel: Sendable { case sms, email }

    /// Sends a temporary password. The old password keeps working until the temporary one is
    /// used, so nobody can lock a stranger out by asking for a reset. Only a confirmed email or a
    /// verified phone receives one. The spec answers an unknown account openly
    /// (`account_not_found`), so that answer costs the same budgets as a real restore: a decoy
    /// secret is recorded for the identifier.
    func restorePassword(identifier: String, channel: RecoveryChannel, origin: RequestOrigin) async throws {
        guard let account = try await findAccount(identifier: identifier), let accountID = account.id else {
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
            secretHash: temporaryPasswordHash(password, accountID: accountID), ttl: limits.temporaryPasswordTTL,
            message: composer.temporaryPassword(kind: kind, to: destination, password: password, ttl: limits.temporaryPasswordTTL, language: account.language),
            ip: origin.ip,
            supersedeAcrossDestinations: true
        ))
    }
}
