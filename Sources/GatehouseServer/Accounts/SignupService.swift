import FluentKit
import Foundation
import GatehouseAPI

/// Sign-up: a code to an email or a phone, then the account (the `/v1` flow with a session, the
/// phone spec's flow with a generated password).
struct SignupService: AccountConcept {
    let core: AccountCore

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
}
