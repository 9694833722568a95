import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform

/// Sign-up: a code to an email or a phone, then the account (the `/v1` flow with a session, the
/// phone spec's flow with a generated password).
package struct SignupService: Sendable {
    package let rules: AccountRules
    package let database: DatabaseProvider
    package let clock: GatehouseClock
    package let hasher: PasswordHasher
    package let passwordRules: PasswordRules
    package let sessions: SessionService
    package let verification: VerificationService
    package let outbox: Outbox
    package let composer: MessageComposer
    package let secrets: Secrets
    package let codes: CodeIssuer
    package let proofs: AddressProofs
    package let binding: ClientBinding
    package let audit: AuditLog
    package var limits: GatehouseConfiguration.Limits { rules.limits }
    package var store: AccountStore { AccountStore(database: database) }

    // MARK: Phone sign-up

    /// Sends a sign-up code by SMS to a phone that has no account yet. The phone spec answers
    /// a taken phone openly (`phone_taken`); `/v1` sends a notice instead (`requestSignupCode`).
    /// The open answer costs what a code costs (cooldown, daily and per-client budgets, recorded
    /// as a decoy nobody is sent), so the form cannot be used to test phones in bulk.
    package func requestPhoneSignupCode(phone raw: String, origin: RequestOrigin) async throws -> CodeIssued {
        let phone = try rules.normalizePhone(raw)
        if try await store.owner(of: .phone(phone)) != nil {
            try await verification.issue(.init(
                purpose: .phoneSignup, destination: phone, accountID: nil, secretHash: Secrets.sha256Hex(secrets.token()),
                ttl: limits.codeTTL, message: nil, ip: origin.ip
            ))
            throw GatehouseError.conflict(.phoneTaken, "error.phoneTaken")
        }
        return try await requestSignupCode(to: .phone(phone), origin: origin)
    }

    package struct PhoneRegistration: Sendable {
        package var phone: String
        package var code: String
        package var login: String?
        package var password: String?
        package var firstName: String?
        package var lastName: String?
        package var middleName: String?
        package var email: String?
        package var birthday: Date?
    
        package init(phone: String, code: String, login: String? = nil, password: String? = nil, firstName: String? = nil, lastName: String? = nil, middleName: String? = nil, email: String? = nil, birthday: Date? = nil) {
            self.phone = phone
            self.code = code
            self.login = login
            self.password = password
            self.firstName = firstName
            self.lastName = lastName
            self.middleName = middleName
            self.email = email
            self.birthday = birthday
        }
}

    package struct Registered: Sendable {
        package var account: AccountSnapshot
        package var generatedPassword: String?
    }

    /// Creates an account from a phone sign-up code (the phone spec's form): the phone is proven,
    /// the login and an extra email are optional, the password may be generated. The form's syntax
    /// is checked before the code, so a typo does not burn an attempt; whether the login or email is
    /// taken only after the code, so the form cannot be used to test addresses without one.
    package func registerWithPhone(_ input: PhoneRegistration, origin: RequestOrigin) async throws -> Registered {
        let phone = try rules.normalizePhone(input.phone)
        let login = try input.login.map(LoginName.validate)
        let email = try input.email.map(rules.normalizeEmail)
        if let given = input.password { try await passwordRules.validate(given) }
        let created = try await create(NewAccount(
            destination: .phone(phone), code: input.code, password: input.password, name: login,
            nameTaken: .conflict(.loginTaken, "error.loginTaken"), nameCheckedBeforeCode: false, email: email,
            firstName: input.firstName, lastName: input.lastName, middleName: input.middleName, birthday: input.birthday,
            locale: origin.language.rawValue, session: nil
        ))
        return Registered(account: created.account, generatedPassword: created.generatedPassword)
    }

    /// What both sign-up flows create: an account whose `destination` the code proves.
    package struct NewAccount: Sendable {
        package var destination: Destination
        package var code: String
        /// Already checked against the password rules; nil: generate one (the phone spec).
        package var password: String?
        /// The login or tag, already validated.
        package var name: String?
        /// The surface's word for a taken name (the phone spec's login, the messenger's tag).
        package var nameTaken: GatehouseError
        /// `/v1` says a tag is taken before the code (tags are public: `GET /v1/tags/{tag}`); the
        /// phone spec only after it, so its form cannot be used to test logins.
        package var nameCheckedBeforeCode: Bool
        /// An extra address, unconfirmed (the phone spec's optional email).
        package var email: String?
        package var firstName: String?
        package var lastName: String?
        package var middleName: String?
        package var birthday: Date?
        package var locale: String
        /// Open a first session for this device and address (`/v1`), or none.
        package var session: (device: String?, ip: String?)?
    }

    /// The one way an account is made. The code is checked (an attempt spent on a wrong one), the
    /// proven address and the names checked again after it, and then the code is consumed, an
    /// unproven claim on the address dropped (its holder told), the account created and its
    /// first session opened in one transaction. A unique field taken meanwhile by a concurrent
    /// sign-up is the same conflict as one taken before.
    package func create(_ new: NewAccount) async throws -> (account: AccountSnapshot, session: IssuedSession?, generatedPassword: String?) {
        if new.nameCheckedBeforeCode, let name = new.name, try await store.isNameTaken(LoginName.key(name)) { throw new.nameTaken }
        let codeRow = try await verification.check(code: new.code, purpose: rules.signupPurpose(new.destination), destination: new.destination.value)
        if try await store.owner(of: new.destination) != nil {
            switch new.destination {
            case .phone: throw GatehouseError.conflict(.phoneTaken, "error.phoneTaken")
            case .email: throw GatehouseError.conflict(.emailTaken, "error.emailTaken")
            }
        }
        if !new.nameCheckedBeforeCode, let name = new.name, try await store.isNameTaken(LoginName.key(name)) { throw new.nameTaken }
        if let email = new.email, try await store.isEmailTaken(email) { throw GatehouseError.conflict(.emailTaken, "error.emailTaken") }
        let generated = new.password == nil ? passwordRules.generate() : nil
        let hash = try await hasher.hash(new.password ?? generated!)
        let now = clock.now()
        let account = AccountModel(passwordHash: hash, now: now)
        switch new.destination {
        case .email(let email):
            account.email = email
            account.emailConfirmedAt = now
        case .phone(let phone):
            account.phone = phone
            account.phoneVerifiedAt = now
            account.email = new.email
        }
        account.username = new.name
        account.usernameKey = new.name.map(LoginName.key)
        account.firstName = new.firstName
        account.lastName = new.lastName
        account.middleName = new.middleName
        account.birthday = new.birthday
        account.locale = new.locale
        do {
            let session = try await database.db.withTransaction { tx -> IssuedSession? in
                try await verification.consume(codeRow, on: tx)
                try await proofs.dropUnverifiedClaim(on: new.destination, on: tx)
                try await account.create(on: tx)
                // The client the proven phone belongs to, if the business has one: bound, its data
                // left as it is. Nothing of it is copied into the account: a number is recycled, and
                // the names and birthday the business kept may be the previous holder's.
                let origin = AuditOrigin(ip: new.session?.ip, device: new.session?.device)
                try await binding.bindClientRecord(account, origin: origin, on: tx)
                try await audit.record(AuditEvent(.accountCreated, by: .account(account.id!), account: account.id!, origin: origin,
                                                        detail: ["with": new.destination.channel == .sms ? "phone" : "email"]), on: tx)
                guard let opening = new.session else { return nil }
                return try await sessions.create(accountID: account.id!, methods: [new.destination.channel == .sms ? .sms : .mail], device: opening.device,
                                                 ip: opening.ip, on: tx)
            }
            outbox.signal.wake()
            return (account.snapshot, session, generated)
        } catch where error.isConstraintViolation {
            throw try await duplicateError(phone: account.phone, username: new.name, email: account.email, usernameTaken: new.nameTaken)
        }
    }

    /// Which unique field a concurrent write took first. `usernameTaken` is the surface's word
    /// for the username (the phone spec's login, the messenger's tag).
    package func duplicateError(phone: String?, username: String?, email: String?, usernameTaken: GatehouseError) async throws -> GatehouseError {
        if let phone, try await store.isPhoneTaken(phone) {
            return .conflict(.phoneTaken, "error.phoneTaken")
        }
        if let username, try await store.isNameTaken(LoginName.key(username)) {
            return usernameTaken
        }
        return .conflict(.emailTaken, "error.emailTaken")
    }

    // MARK: Sign-up with a code

    /// Sends a sign-up code. An address that already has an account gets a notice instead, and
    /// the answer is the same, so the form tells a stranger nothing.
    /// An unconfirmed claim on the address does not make it taken: the sign-up will take it over.
    /// The notice to an existing account goes out in the account owner's language, not the asker's.
    package func requestSignupCode(to destination: Destination, origin: RequestOrigin) async throws -> CodeIssued {
        let owner = try await store.owner(of: destination)
        return try await codes.issueCode(rules.signupPurpose(destination), to: destination, accountID: nil, origin: origin) { code in
            if let owner {
                composer.accountExists(to: destination.value, channel: destination.channel, language: owner.language)
            } else {
                composer.code(.signup, to: destination.value, channel: destination.channel, code: code, ttl: limits.codeTTL, language: origin.language)
            }
        }
    }

    package struct CodeSignup: Sendable {
        package var destination: Destination
        package var code: String
        package var password: String
        package var firstName: String?
        package var lastName: String?
        package var tag: String?
        package var birthday: Date?
        package var locale: String?
        package var device: String?
    
        package init(destination: Destination, code: String, password: String, firstName: String? = nil, lastName: String? = nil, tag: String? = nil, birthday: Date? = nil, locale: String? = nil, device: String? = nil) {
            self.destination = destination
            self.code = code
            self.password = password
            self.firstName = firstName
            self.lastName = lastName
            self.tag = tag
            self.birthday = birthday
            self.locale = locale
            self.device = device
        }
}

    /// Creates an account whose address the code proves, and opens its first session (`/v1`).
    /// The form is checked before the code, so a typo does not burn an attempt.
    package func signup(_ input: CodeSignup, origin: RequestOrigin) async throws -> (AccountSnapshot, IssuedSession) {
        try await passwordRules.validate(input.password)
        let tag = try input.tag.map(rules.validateTag)
        let locale = try input.locale.map(rules.validateLocale)
        let created = try await create(NewAccount(
            destination: input.destination, code: input.code, password: input.password, name: tag,
            nameTaken: AccountRules.tagTaken, nameCheckedBeforeCode: true, email: nil,
            firstName: input.firstName, lastName: input.lastName, middleName: nil, birthday: input.birthday,
            locale: locale ?? origin.language.rawValue, session: (input.device ?? origin.device, origin.ip)
        ))
        return (created.account, created.session!)
    }

    /// Exactly one of an email or a phone, read by the account rules (400 otherwise).
    package func destination(email: String?, phone: String?) throws -> Destination {
        try rules.destination(email: email, phone: phone)
    }

    /// A tag as it would be stored, and whether nobody has it yet (`invalid_tag` when it breaks the rule).
    package func tagAvailability(_ raw: String) async throws -> (tag: String, available: Bool) {
        let tag = try rules.validateTag(raw)
        return (tag, try await !store.isTagTaken(tag))
    }

    package init(rules: AccountRules, database: DatabaseProvider, clock: GatehouseClock, hasher: PasswordHasher,
                 passwordRules: PasswordRules, sessions: SessionService, verification: VerificationService, outbox: Outbox,
                 composer: MessageComposer, secrets: Secrets, codes: CodeIssuer, proofs: AddressProofs, binding: ClientBinding,
                 audit: AuditLog) {
        self.rules = rules
        self.database = database
        self.clock = clock
        self.hasher = hasher
        self.passwordRules = passwordRules
        self.sessions = sessions
        self.verification = verification
        self.outbox = outbox
        self.composer = composer
        self.secrets = secrets
        self.codes = codes
        self.proofs = proofs
        self.binding = binding
        self.audit = audit
    }
}
