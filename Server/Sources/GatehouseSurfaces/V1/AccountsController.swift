import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import Hummingbird

/// `/v1` accounts (docs/api-v1.md): sign-up, tags, recovery, the profile, email and phone
/// changes, avatars — each operation as `V1.Accounts` declares it, each answered by
/// the account services (`SignupService`, `RecoveryService`, `ProfileService`, `EmailService`, `AvatarService`).
package struct AccountsController: Sendable {
    package let signup: SignupService
    package let login: LoginService
    package let recovery: RecoveryService
    package let profile: ProfileService
    package let email: EmailService
    package let avatars: AvatarService
    package let deletion: AccountDeletionService
    /// A fresh sign-in with an identity: the proof an account without a password gives to be deleted.
    package let social: SocialSignIn
    package let answers: SessionAnswers
    package let limits: GatehouseConfiguration.Limits
    package let edge: SurfaceEdge

    private var read: V1Request { V1Request(edge: edge) }

    package func addRoutes(to v1: some RouterMethods<GatehouseRequestContext>) {
        typealias E = V1.Accounts
        v1.on(E.signupCode, limits: limits, use: signupCode)
        v1.on(E.signup, limits: limits, use: signup)
        v1.on(E.tag, limits: limits, use: tag)
        v1.on(E.recoveryCode, limits: limits, use: recoveryCode)
        v1.on(E.recover, limits: limits, use: recover)
        v1.on(E.me, limits: limits, use: me)
        v1.on(E.updateProfile, limits: limits, use: updateProfile)
        v1.on(E.deleteMe, limits: limits, use: deleteMe)
        v1.on(E.myEvents, limits: limits, use: myEvents)
        v1.on(E.registerDevice, limits: limits, use: registerDevice)
        v1.on(E.devices, limits: limits, use: devices)
        v1.on(E.removeDevice, limits: limits, use: removeDevice)
        v1.on(E.notificationSettings, limits: limits, use: notificationSettings)
        v1.on(E.updateNotificationSettings, limits: limits, use: updateNotificationSettings)
        v1.on(E.changePassword, limits: limits, use: changePassword)
        v1.on(E.requestEmailChange, limits: limits, use: requestEmailChange)
        v1.on(E.cancelEmailChange, limits: limits, use: cancelEmailChange)
        v1.on(E.verifyEmailChange, limits: limits, use: verifyEmailChange)
        v1.on(E.requestPhoneVerification, limits: limits, use: requestPhoneVerification)
        v1.on(E.verifyPhone, limits: limits, use: verifyPhone)
        v1.on(E.uploadAvatar, raw: uploadAvatar)
        v1.on(E.removeAvatar, limits: limits, use: removeAvatar)
        v1.on(E.avatarImage, raw: avatarImage)
    }

    // MARK: Helpers

    private func codeSent(_ issued: CodeIssued) -> CodeSent {
        let channel: CodeChannel = if case .phone = issued.destination { .sms } else { .email }
        return CodeSent(channel: channel, destination: issued.destination.value, expiresAt: issued.expiresAt,
                        resendAvailableAt: issued.resendAllowedAt, attemptsAllowed: issued.attemptsAllowed, codeLength: issued.codeLength)
    }

    private func calendarDate(_ raw: String?, field: String) throws -> Date? {
        guard let raw else { return nil }
        guard let date = WireDates.parseCalendarDate(raw) else {
            throw GatehouseError.invalid(.invalidDate, "error.invalidCalendarDate", String(raw.prefix(40))).on(field: field)
        }
        return date
    }

    // MARK: Sign-up

    @Sendable package func signupCode(_ input: CodeRequest, _ request: Request, context: GatehouseRequestContext) async throws -> CodeSent {
        let destination = try signup.destination(email: input.email, phone: input.phone)
        return codeSent(try await signup.requestSignupCode(to: destination, origin: read.origin(request, context)))
    }

    @Sendable package func signup(_ input: SignupRequest, _ request: Request, context: GatehouseRequestContext) async throws -> AuthSession {
        let signup = SignupService.CodeSignup(
            destination: try signup.destination(email: input.email, phone: input.phone),
            code: input.code,
            password: input.password,
            firstName: read.text(input.firstName),
            lastName: read.text(input.lastName),
            tag: read.text(input.tag),
            birthday: try calendarDate(read.text(input.birthday), field: "birthday"),
            locale: read.text(input.locale),
            device: read.text(input.device)
        )
        let (account, session) = try await self.signup.signup(signup, origin: read.origin(request, context))
        return try await answers.answer(session, account: account, kind: input.tokens)
    }

    @Sendable package func tag(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> TagAvailability {
        let (tag, available) = try await signup.tagAvailability(context.parameters.get("tag") ?? "")
        return TagAvailability(tag: tag, available: available)
    }

    // MARK: Recovery

    @Sendable package func recoveryCode(_ input: CodeRequest, _ request: Request, context: GatehouseRequestContext) async throws -> CodeSent {
        let destination = try recovery.destination(email: input.email, phone: input.phone)
        return codeSent(try await recovery.requestRecoveryCode(to: destination, origin: read.origin(request, context)))
    }

    @Sendable package func recover(_ input: RecoveryRequest, _ request: Request, context: GatehouseRequestContext) async throws -> NoContent {
        let destination = try recovery.destination(email: input.email, phone: input.phone)
        try await recovery.recoverPassword(destination: destination, code: input.code, newPassword: input.password, origin: read.origin(request, context))
        return NoContent()
    }

    // MARK: Profile

    @Sendable package func me(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> Account {
        read.account(try context.requireSessionAccount())
    }

    @Sendable package func updateProfile(_ input: ProfileUpdate, _ request: Request, context: GatehouseRequestContext) async throws -> Account {
        let session = try context.requireSession()
        /// Trimmed; an empty string clears like `null`.
        func member(_ value: String??) -> String?? {
            guard let value else { return nil }
            return .some(read.text(value))
        }
        var change = ProfileService.ProfileChange()
        change.firstName = member(input.firstName)
        change.lastName = member(input.lastName)
        change.middleName = member(input.middleName)
        change.tag = input.tag   // as sent: an empty tag is invalid, not a removal
        change.locale = member(input.locale)
        if let birthday = member(input.birthday) {
            change.birthday = .some(try calendarDate(birthday, field: "birthday"))
        }
        return read.account(try await profile.updateProfile(accountID: session.accountID, sessionID: session.id, change: change, origin: read.origin(request, context)))
    }

    @Sendable package func deleteMe(_ input: AccountDeletionRequest, _ request: Request, context: GatehouseRequestContext) async throws -> AccountDeletion {
        let session = try context.requireSession()
        if let reauth = input.reauthentication, (input.currentPassword ?? "").isEmpty {
            try await social.reauthenticate(accountID: session.accountID, provider: reauth.provider, token: reauth.idToken,
                                            nonce: reauth.nonce, origin: read.origin(request, context))
            return try await deletion.request(accountID: session.accountID, reauthenticatedWith: reauth.provider.rawValue, origin: read.origin(request, context))
        }
        return try await deletion.request(accountID: session.accountID, currentPassword: input.currentPassword, origin: read.origin(request, context))
    }

    @Sendable package func changePassword(_ input: PasswordChange, _ request: Request, context: GatehouseRequestContext) async throws -> NoContent {
        let session = try context.requireSession()
        try await login.changePassword(accountID: session.accountID, sessionID: session.id, current: input.currentPassword, new: input.newPassword, origin: read.origin(request, context))
        return NoContent()
    }

    @Sendable package func requestEmailChange(_ input: EmailChangeRequest, _ request: Request, context: GatehouseRequestContext) async throws -> CodeSent {
        let session = try context.requireSession()
        return codeSent(try await email.requestEmailChange(accountID: session.accountID, email: input.email, currentPassword: input.currentPassword, origin: read.origin(request, context)))
    }

    @Sendable package func myEvents(_ input: PageQuery, _ request: Request, context: GatehouseRequestContext) async throws -> SecurityEventPage {
        let session = try context.requireSession()
        let (events, next) = try await profile.securityEvents(accountID: session.accountID, cursor: input.cursor, limit: input.limit)
        return SecurityEventPage(items: events.map {
            SecurityEvent(id: $0.id, at: $0.at, kind: $0.kind, actor: $0.actorType, ip: $0.ip, device: $0.device, detail: $0.detail, count: $0.count)
        }, nextCursor: next)
    }

    // MARK: Push devices

    private func device(_ record: PushDeviceRecord, current: UUID) -> PushDevice {
        PushDevice(id: record.id, platform: record.platform, tokenHint: String(record.token.suffix(6)), bundleId: record.bundleID,
                   environment: record.environment, language: record.language, current: record.sessionID == current, createdAt: record.createdAt)
    }

    @Sendable package func registerDevice(_ input: DeviceRegistration, _ request: Request, context: GatehouseRequestContext) async throws -> PushDevice {
        let session = try context.requireSession()
        let record = try await profile.pushDevices.register(input, accountID: session.accountID, sessionID: session.id)
        return device(record, current: session.id)
    }

    @Sendable package func devices(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> PushDeviceList {
        let session = try context.requireSession()
        return PushDeviceList(items: try await profile.pushDevices.list(accountID: session.accountID).map { device($0, current: session.id) })
    }

    @Sendable package func removeDevice(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> NoContent {
        let session = try context.requireSession()
        let id = try context.id()
        guard try await profile.pushDevices.remove(id, accountID: session.accountID) else {
            throw GatehouseError.notFound(.deviceNotFound, "error.plain").withText("There is no such device.")
        }
        return NoContent()
    }

    @Sendable package func notificationSettings(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> NotificationSettings {
        let session = try context.requireSession()
        return NotificationSettings(previews: try await profile.pushDevices.previews(accountID: session.accountID))
    }

    @Sendable package func updateNotificationSettings(_ input: NotificationSettingsUpdate, _ request: Request, context: GatehouseRequestContext) async throws -> NotificationSettings {
        let session = try context.requireSession()
        if let previews = input.previews { try await profile.pushDevices.setPreviews(previews, accountID: session.accountID) }
        return NotificationSettings(previews: try await profile.pushDevices.previews(accountID: session.accountID))
    }

    @Sendable package func cancelEmailChange(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> Account {
        let session = try context.requireSession()
        return read.account(try await email.cancelEmailChange(accountID: session.accountID))
    }

    @Sendable package func verifyEmailChange(_ input: CodeVerification, _ request: Request, context: GatehouseRequestContext) async throws -> Account {
        let session = try context.requireSession()
        return read.account(try await email.verifyEmailChange(accountID: session.accountID, sessionID: session.id, code: input.code,
                                                                 origin: read.origin(request, context)))
    }

    @Sendable package func requestPhoneVerification(_ input: PhoneVerificationRequest, _ request: Request, context: GatehouseRequestContext) async throws -> CodeSent {
        let session = try context.requireSession()
        return codeSent(try await profile.requestPhoneVerification(accountID: session.accountID, phone: input.phone, currentPassword: input.currentPassword, origin: read.origin(request, context)))
    }

    @Sendable package func verifyPhone(_ input: CodeVerification, _ request: Request, context: GatehouseRequestContext) async throws -> Account {
        let session = try context.requireSession()
        guard let phone = read.text(input.phone) else {
            throw GatehouseError.invalid(.missingParameter, "error.missingParameter", "phone").on(field: "phone")
        }
        return read.account(try await profile.verifyPhone(accountID: session.accountID, sessionID: session.id, phone: phone, code: input.code,
                                                             origin: read.origin(request, context)))
    }

    // MARK: Avatar

    @Sendable package func uploadAvatar(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let session = try context.requireSession()
        let format = try avatars.avatarFormat(contentType: request.headers[.contentType])
        let buffer = try await request.collectBody(upTo: limits.avatarMaxBytes)
        let account = try await avatars.setAvatar(accountID: session.accountID, format: format, bytes: Data(buffer.readableBytesView))
        return JSONResponse.make(read.account(account), status: .init(code: V1.Accounts.uploadAvatar.successStatus))
    }

    @Sendable package func removeAvatar(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> Account {
        let session = try context.requireSession()
        return read.account(try await avatars.removeAvatar(accountID: session.accountID))
    }

    @Sendable package func avatarImage(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let id = try context.id()
        guard let avatar = try await avatars.avatar(id: id) else {
            throw GatehouseError(.notFound, .notFound, LocalizedText("error.notFound"))
        }
        return Response(
            status: .ok,
            headers: [
                .contentType: avatar.contentType,
                .cacheControl: "public, max-age=31536000, immutable",
                .init("X-Content-Type-Options")!: "nosniff",
                // Opened on its own, it is an image and nothing else: no script, no framing.
                .contentDisposition: "inline; filename=\"avatar.\(avatar.contentType.split(separator: "/").last ?? "img")\"",
                .contentSecurityPolicy: "default-src 'none'; sandbox; frame-ancestors 'none'",
            ],
            body: .init(byteBuffer: ByteBuffer(data: avatar.bytes))
        )
    }

    package init(signup: SignupService, login: LoginService, recovery: RecoveryService, profile: ProfileService, email: EmailService, avatars: AvatarService,
                 deletion: AccountDeletionService, social: SocialSignIn, answers: SessionAnswers, limits: GatehouseConfiguration.Limits, edge: SurfaceEdge) {
        self.signup = signup
        self.login = login
        self.recovery = recovery
        self.profile = profile
        self.email = email
        self.avatars = avatars
        self.deletion = deletion
        self.social = social
        self.answers = answers
        self.limits = limits
        self.edge = edge
    }
}
