import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform

/// An address as the audit trail shows it: enough to tell which one it was, not the whole of it
/// ("a…@example.com", "+7…67").
package func maskedForAudit(_ address: String?) -> String {
    guard let address, !address.isEmpty else { return "none" }
    if let at = address.firstIndex(of: "@") { return String(address.prefix(1)) + "…" + address[at...] }
    return String(address.prefix(2)) + "…" + String(address.suffix(2))
}

/// Who is asking, for limits and for the language of what they are sent.
package struct RequestOrigin: Sendable {
    package var ip: String?
    package var language: AppLanguage
    package var device: String?
    /// The request's id (`X-Request-Id`), for the audit trail.
    package var requestID: String?

    package init(ip: String? = nil, language: AppLanguage, device: String? = nil, requestID: String? = nil) {
        self.ip = ip
        self.language = language
        self.device = device
        self.requestID = requestID
    }

    /// As the audit trail keeps it.
    package var audit: AuditOrigin { AuditOrigin(ip: ip, device: device, requestID: requestID) }
}

/// The rules the account services share — identifiers, codes, claims, tags, passwords — and
/// what they need to apply them. Each concept is its own service (`SignupService`, `LoginService`,
/// `RecoveryService`, `ProfileService`, `EmailService`, `AvatarService`, and Sign To Login's
/// enrolment), given these rules and only the other dependencies it uses.
package struct AccountRules: Sendable {
    package let database: DatabaseProvider
    package let clock: GatehouseClock
    package let configuration: GatehouseConfiguration
    package let hasher: PasswordHasher
    package let sessions: SessionService
    package let verification: VerificationService
    package let outbox: Outbox
    package let composer: MessageComposer
    package let secrets: Secrets
    package let rateLimiter: RateLimiter
    /// The audit trail, where every change to how an account signs in is written with it.
    package var audit: AuditLog {
        AuditLog(database: database, clock: clock, retention: configuration.audit.retention, failureWindow: configuration.audit.failureWindow)
    }

    /// Push devices (docs/push.md).
    package var pushDevices: PushDevices {
        PushDevices(database: database, clock: clock, maxPerAccount: configuration.delivery.push.devicesPerAccount)
    }

    /// The business's client records, which an account is bound to by its verified phone.
    package var clients: ClientRecords {
        ClientRecords(database: database, clock: clock, sessions: sessions, defaultCountryCode: configuration.defaultCountryCode,
                      maxRows: configuration.operators.importMaxRows)
    }

    /// Binds the client record of the account's verified phone, if one is unbound, in the
    /// caller's transaction, with its event; the record.
    @discardableResult
    package func bindClientRecord(_ account: AccountModel, origin: AuditOrigin, on tx: any GatehouseDatabase) async throws -> ClientRecord? {
        guard let phone = account.phone, account.phoneVerifiedAt != nil, let id = account.id,
              let record = try await clients.bind(phone: phone, to: id, on: tx) else { return nil }
        try await audit.record(AuditEvent(.clientBound, by: .system(nil), account: id, origin: origin, detail: ["phone": maskedForAudit(phone)]), on: tx)
        return record
    }

    /// The client record follows the account's verified phone, in the caller's transaction: a
    /// record of a phone the account no longer has verified is unbound (`client.unbound`), and the
    /// record of its verified phone, if one is free, is bound. Called wherever the phone or its
    /// verification changes.
    package func followPhone(_ account: AccountModel, origin: AuditOrigin, on tx: any GatehouseDatabase) async throws {
        guard let id = account.id else { return }
        let current = account.phoneVerifiedAt != nil ? account.phone : nil
        if let old = try await clients.unbindStale(accountID: id, keeping: current, on: tx) {
            try await audit.record(AuditEvent(.clientUnbound, by: .system(nil), account: id, origin: origin,
                                              detail: ["phone": maskedForAudit(old), "reason": "the account's verified phone changed"]), on: tx)
        }
        try await bindClientRecord(account, origin: origin, on: tx)
    }

    package init(database: DatabaseProvider, clock: GatehouseClock, configuration: GatehouseConfiguration, hasher: PasswordHasher,
                 sessions: SessionService, verification: VerificationService, outbox: Outbox, composer: MessageComposer,
                 secrets: Secrets, rateLimiter: RateLimiter) {
        self.database = database
        self.clock = clock
        self.configuration = configuration
        self.hasher = hasher
        self.sessions = sessions
        self.verification = verification
        self.outbox = outbox
        self.composer = composer
        self.secrets = secrets
        self.rateLimiter = rateLimiter
    }

    package var limits: GatehouseConfiguration.Limits { configuration.limits }
    package var store: AccountStore { AccountStore(database: database) }

    // MARK: Identifiers

    package func normalizePhone(_ raw: String) throws -> String {
        guard let phone = PhoneNumber.normalize(raw, defaultCountryCode: configuration.defaultCountryCode) else {
            throw GatehouseError.invalid(.invalidPhone, "error.invalidPhone", String(raw.prefix(40))).on(field: "phone")
        }
        return phone
    }

    package func normalizeEmail(_ raw: String) throws -> String {
        guard let email = EmailAddress.normalize(raw) else {
            throw GatehouseError.invalid(.invalidEmail, "error.invalidEmail", String(raw.prefix(80))).on(field: "email")
        }
        return email
    }

    /// Finds the account an identifier names: an email (contains `@`), a login/tag, or a phone
    /// in any common format. Only a confirmed email or a verified phone names an account: an
    /// unconfirmed one is a claim anybody could have typed (docs/security.md, "Claims").
    package func findAccount(identifier raw: String) async throws -> AccountModel? {
        var identifier = raw.trimmingCharacters(in: .whitespaces)
        // `@handle` is how people write a tag; a tag never contains a second `@`.
        if identifier.hasPrefix("@"), !identifier.dropFirst().contains("@") { identifier.removeFirst() }
        guard !identifier.isEmpty else { return nil }
        if identifier.contains("@") {
            guard let email = EmailAddress.normalize(identifier) else { return nil }
            return try await accountByDestination(.email(email))
        }
        if let byName = try await store.named(LoginName.key(identifier)) {
            return byName
        }
        if let phone = PhoneNumber.normalize(identifier, defaultCountryCode: configuration.defaultCountryCode) {
            return try await accountByDestination(.phone(phone))
        }
        return nil
    }

    /// The account as a value (what surfaces show).
    package func account(id: UUID) async throws -> AccountSnapshot {
        try await accountRow(id: id).snapshot
    }

    /// The account's row, for the rules here that change it.
    package func accountRow(id: UUID) async throws -> AccountModel {
        guard let account = try await store.row(id: id) else { throw GatehouseError.unauthorized }
        return account
    }



    /// Exactly one of an email or a phone.
    package func destination(email: String?, phone: String?) throws -> Destination {
        let email = email.flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 }
        let phone = phone.flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 }
        switch (email, phone) {
        case (let email?, nil): return .email(try normalizeEmail(email))
        case (nil, let phone?): return .phone(try normalizePhone(phone))
        case (nil, nil): throw GatehouseError.invalid(.missingParameter, "error.destinationRequired").on(field: "email")
        case (_?, _?): throw GatehouseError.invalid(.invalidParameter, "error.oneDestination").on(field: "phone")
        }
    }


    package func issued(_ destination: Destination, _ issued: VerificationService.Issued) -> CodeIssued {
        CodeIssued(destination: destination, expiresAt: issued.expiresAt, resendAllowedAt: issued.resendAllowedAt,
                   attemptsAllowed: limits.codeMaxAttempts, codeLength: limits.codeLength, messageID: issued.messageID)
    }

    /// Issues a numeric code for `purpose` to `destination`. `message` builds what is sent for
    /// the code: when it does not carry the code (a notice, or nil for nothing at all) the stored
    /// secret is a decoy nobody is told, so an unknown or taken address costs the same cooldowns
    /// and budgets as any other and no code for it can work.
    package func issueCode(_ purpose: VerificationPurpose, to destination: Destination, accountID: UUID?, origin: RequestOrigin,
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
    package func spend(_ row: VerificationCodeModel, saving account: AccountModel, claiming destination: Destination,
                       keepingSession: UUID?, notice: OutgoingMessage? = nil, conflict: GatehouseError, audit event: AuditEvent) async throws {
        do {
            try await database.db.withTransaction { tx in
                try await verification.consume(row, on: tx)
                try await dropUnverifiedClaim(on: destination, except: account.id, on: tx)
                try await account.update(on: tx)
                if case .phone = destination { try await followPhone(account, origin: event.origin, on: tx) }
                try await sessions.revokeAll(accountID: account.id!, keeping: keepingSession, on: tx)
                if let notice { try await outbox.enqueue(notice, on: tx) }
                try await audit.record(event, on: tx)
            }
            outbox.signal.wake()
        } catch where error.isConstraintViolation {
            throw conflict
        }
    }

    /// The account a confirmed email or a verified phone belongs to. An unconfirmed address is
    /// only a claim: it names no account (docs/security.md, "Claims").
    package func accountByDestination(_ destination: Destination) async throws -> AccountModel? {
        try await store.owner(of: destination)
    }

    /// A proven address wins over an unproven claim on it: another account holding `destination`
    /// unconfirmed loses it, inside the caller's transaction, and is told where it can still be
    /// reached (its verified phone or confirmed email). Returns that notice, already queued.
    @discardableResult
    package func dropUnverifiedClaim(on destination: Destination, except accountID: UUID? = nil, on tx: any GatehouseDatabase) async throws -> OutgoingMessage? {
        guard let claimant = try await store.claimant(of: destination, except: accountID, on: tx) else { return nil }
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
        if case .phone = destination { try await followPhone(claimant, origin: AuditOrigin(), on: tx) }
        if let notice { try await outbox.enqueue(notice, on: tx) }
        return notice
    }

    /// A recovery by email proves the email, not the phone: a phone verified before the email
    /// was confirmed may be somebody else's (the one who created the account with a stranger's
    /// address), so it stops being a way in until the account verifies it again. The account's
    /// model is changed here; the returned notice to the phone is for the caller's transaction.
    package func unverifyPhoneAfterEmailRecovery(_ account: AccountModel) -> OutgoingMessage? {
        guard let phone = account.phone, let verifiedAt = account.phoneVerifiedAt,
              let confirmedAt = account.emailConfirmedAt, verifiedAt <= confirmedAt else { return nil }
        account.phoneVerifiedAt = nil
        return composer.phoneUnverified(to: phone, language: account.language)
    }

    package func signupPurpose(_ destination: Destination) -> VerificationPurpose {
        if case .phone = destination { return .phoneSignup }
        return .emailSignup
    }

    // MARK: Tags and locales

    package static var tagTaken: GatehouseError { GatehouseError.conflict(.tagTaken, "error.tagTaken").on(field: "tag") }

    /// The tag lower-cased, or `invalid_tag`.
    package func validateTag(_ raw: String) throws -> String {
        guard let tag = TagRule.normalize(raw) else {
            throw GatehouseError.invalid(.invalidTag, "error.invalidTag").on(field: "tag")
        }
        return tag
    }

    package func isTagTaken(_ tag: String, except accountID: UUID? = nil) async throws -> Bool {
        try await store.isNameTaken(tag.lowercased(), except: accountID)
    }

    /// A locale whose language Gatehouse writes in (`en`, `ru`, `ru-RU`, `en_GB`…), as given.
    package func validateLocale(_ raw: String) throws -> String {
        let locale = raw.trimmingCharacters(in: .whitespaces)
        let wellFormed = locale.count <= 35 && locale.split(separator: "-", omittingEmptySubsequences: false).count <= 4
            && locale.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
        guard wellFormed, AppLanguage(localeIdentifier: locale) != nil else {
            throw GatehouseError.invalid(.invalidLocale, "error.invalidLocale", String(raw.prefix(40))).on(field: "locale")
        }
        return locale
    }

    // MARK: Passwords

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
                     openingSessionFor origin: RequestOrigin? = nil, secondFactorChecked: Bool = false,
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
            if account.phoneVerifiedAt == nil { try await followPhone(account, origin: requester?.audit ?? AuditOrigin(), on: tx) }
            try await sessions.revokeAll(accountID: account.id!, keeping: keepingSession, on: tx)
            if let notice { try await outbox.enqueue(notice, on: tx) }
            if let extraNotice { try await outbox.enqueue(extraNotice, on: tx) }
            try await audit.record(AuditEvent(.passwordChanged, by: .account(account.id!), account: account.id!,
                                              origin: requester?.audit ?? AuditOrigin(), detail: ["how": how]), on: tx)
            guard let origin else { return nil }
            try await audit.record(AuditEvent(.loginSucceeded, by: .account(account.id!), account: account.id!, origin: origin.audit,
                                              detail: ["with": "temporary password"]), on: tx)
            return try await sessions.create(accountID: account.id!, device: origin.device, ip: origin.ip, secondFactorChecked: secondFactorChecked, on: tx)
        }
        if notice != nil || extraNotice != nil { outbox.signal.wake() }
        return session
    }

    /// A change to how the account signs in, told to its owner: by email to a confirmed address,
    /// else by SMS to a verified phone, else to nobody.
    package func securityNotice(_ kind: MessageComposer.SecondFactorNotice, _ arguments: [String] = [], to account: AccountModel) -> OutgoingMessage? {
        if let email = account.email, account.emailConfirmedAt != nil {
            return composer.secondFactorNotice(kind, arguments, to: email, channel: .email, language: account.language)
        }
        if let phone = account.phone, account.phoneVerifiedAt != nil {
            return composer.secondFactorNotice(kind, arguments, to: phone, channel: .sms, language: account.language)
        }
        return nil
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

/// Which identifiers a login surface takes: any (email, login/tag, phone) or email only
/// (the WebSocket gateway, whose spec identifies customers by email).
package enum LoginIdentifierKinds: Sendable { case any, emailOnly }

/// An email address or a phone, normalised: where a code goes.
package enum Destination: Sendable, Equatable {
    case email(String)
    case phone(String)

    package var value: String {
        switch self {
        case .email(let email): email
        case .phone(let phone): phone
        }
    }

    package var channel: OutgoingMessage.Kind {
        switch self {
        case .email: .email
        case .phone: .sms
        }
    }
}

/// What a code request answers: when the code dies, when another may be asked for.
package struct CodeIssued: Sendable {
    package var destination: Destination
    package var expiresAt: Date
    package var resendAllowedAt: Date
    package var attemptsAllowed: Int
    package var codeLength: Int
    /// The outbox message carrying it (nil when nothing was sent).
    package var messageID: UUID?
}
