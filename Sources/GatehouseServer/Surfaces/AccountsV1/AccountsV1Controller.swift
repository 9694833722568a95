import Foundation
import GatehouseAPI
import Hummingbird

/// The JSON account API `/v1` (docs/api-v1.md). Decodes `GatehouseAPI` request types, calls
/// `AccountService`/`SessionService`, and encodes domain values as `GatehouseAPI` responses;
/// errors become problem documents in `ProblemMiddleware`.
struct AccountsV1Controller: Sendable {
    let services: GatehouseServices

    var accounts: AccountService { services.accounts }
    var configuration: GatehouseConfiguration { services.configuration }
    var limits: GatehouseConfiguration.Limits { configuration.limits }

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        typealias P = AccountsV1API.Path
        let v1 = router.group().add(middleware: BearerSessionMiddleware(sessions: services.sessions))
        v1.post(RouterPath(P.signupCode), use: signupCode)
        v1.post(RouterPath(P.signup), use: signup)
        v1.get(RouterPath(P.tag), use: tag)
        v1.post(RouterPath(P.sessions), use: login)
        v1.get(RouterPath(P.sessions), use: listSessions)
        v1.delete(RouterPath(P.sessions), use: endOtherSessions)
        v1.delete(RouterPath(P.currentSession), use: logout)
        v1.delete(RouterPath(P.session), use: endSession)
        v1.post(RouterPath(P.recoveryCode), use: recoveryCode)
        v1.post(RouterPath(P.recovery), use: recover)
        v1.get(RouterPath(P.me), use: me)
        v1.patch(RouterPath(P.me), use: updateProfile)
        v1.post(RouterPath(P.password), use: changePassword)
        v1.post(RouterPath(P.email), use: requestEmailChange)
        v1.delete(RouterPath(P.email), use: cancelEmailChange)
        v1.post(RouterPath(P.emailVerify), use: verifyEmailChange)
        v1.post(RouterPath(P.phone), use: requestPhoneVerification)
        v1.post(RouterPath(P.phoneVerify), use: verifyPhone)
        v1.put(RouterPath(P.avatar), use: uploadAvatar)
        v1.delete(RouterPath(P.avatar), use: removeAvatar)
        v1.get(RouterPath(P.avatarImage), use: avatarImage)
    }

    // MARK: Helpers

    private func body<T: Decodable>(_ type: T.Type, _ request: Request) async throws -> T {
        try await V1JSON.decode(type, from: request, limits: limits)
    }

    private func origin(_ request: Request, _ context: GatehouseRequestContext, device: String? = nil) -> RequestOrigin {
        RequestOrigin(
            ip: request.clientIP(context: context, trustForwardedFor: configuration.trustForwardedFor),
            language: AppLanguage.negotiate(request.headers[.acceptLanguage], fallback: .en),
            device: device ?? request.headers[.userAgent]
        )
    }

    private func account(_ model: AccountModel) -> Account {
        model.v1Account(publicURL: configuration.publicURL)
    }

    private func account(_ snapshot: AccountSnapshot) -> Account {
        snapshot.v1Account(publicURL: configuration.publicURL)
    }

    private func codeSent(_ issued: AccountService.CodeIssued) -> CodeSent {
        let channel: CodeChannel = if case .phone = issued.destination { .sms } else { .email }
        return CodeSent(channel: channel, destination: issued.destination.value, expiresAt: issued.expiresAt,
                        resendAvailableAt: issued.resendAllowedAt, attemptsAllowed: issued.attemptsAllowed, codeLength: issued.codeLength)
    }

    private func authSession(_ session: IssuedSession, _ model: AccountModel) -> AuthSession {
        AuthSession(token: session.token, sessionId: session.id, expiresAt: session.expiresAt, account: account(model))
    }

    private func calendarDate(_ raw: String?, field: String) throws -> Date? {
        guard let raw else { return nil }
        guard let date = WireDates.parseCalendarDate(raw) else {
            throw GatehouseError.invalid(.invalidDate, "error.invalidCalendarDate", String(raw.prefix(40))).on(field: field)
        }
        return date
    }

    /// Empty strings are absent.
    private func text(_ value: String?) -> String? {
        guard let trimmed = value?.trimmingCharacters(in: .whitespaces), !trimmed.isEmpty else { return nil }
        return trimmed
    }

    // MARK: Sign-up

    @Sendable func signupCode(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let input = try await body(CodeRequest.self, request)
        let destination = try accounts.destination(email: input.email, phone: input.phone)
        return try V1JSON.response(codeSent(try await accounts.requestSignupCode(to: destination, origin: origin(request, context))), status: .accepted)
    }

    @Sendable func signup(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let input = try await body(SignupRequest.self, request)
        let signup = AccountService.CodeSignup(
            destination: try accounts.destination(email: input.email, phone: input.phone),
            code: input.code,
            password: input.password,
            firstName: text(input.firstName),
            lastName: text(input.lastName),
            tag: text(input.tag),
            birthday: try calendarDate(text(input.birthday), field: "birthday"),
            locale: text(input.locale),
            device: text(input.device)
        )
        let (model, session) = try await accounts.signup(signup, origin: origin(request, context))
        return try V1JSON.response(authSession(session, model), status: .created)
    }

    @Sendable func tag(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let raw = context.parameters.get("tag") ?? ""
        let tag = try accounts.validateTag(raw)
        return try V1JSON.response(TagAvailability(tag: tag, available: try await !accounts.isTagTaken(tag)))
    }

    // MARK: Sessions

    @Sendable func login(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let input = try await body(LoginRequest.self, request)
        let session = try await accounts.login(identifier: input.identifier, password: input.password, origin: origin(request, context, device: text(input.device)))
        return try V1JSON.response(authSession(session, try await accounts.account(id: session.accountID)), status: .created)
    }

    @Sendable func listSessions(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let current = try context.requireSession()
        let list = try await services.sessions.list(accountID: current.accountID).map { row in
            SessionInfo(id: row.id!, device: row.device, ip: row.ip, createdAt: row.createdAt, lastUsedAt: row.lastUsedAt, expiresAt: row.expiresAt, current: row.id == current.id)
        }
        return try V1JSON.response(SessionList(sessions: list))
    }

    @Sendable func endOtherSessions(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let current = try context.requireSession()
        guard request.uri.queryParameters.get("scope") == "others" else {
            throw GatehouseError.invalid(.invalidParameter, "error.invalidScope").on(field: "scope")
        }
        let revoked = try await services.sessions.revokeAll(accountID: current.accountID, keeping: current.id)
        return try V1JSON.response(SessionsRevoked(revoked: revoked))
    }

    @Sendable func logout(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let current = try context.requireSession()
        try await services.sessions.revoke(sessionID: current.id)
        return V1JSON.noContent()
    }

    @Sendable func endSession(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let current = try context.requireSession()
        guard let id = context.parameters.get("id").flatMap(UUID.init(uuidString:)),
              try await services.sessions.revoke(sessionID: id, ofAccount: current.accountID) else {
            throw GatehouseError(.notFound, .sessionNotFound, LocalizedText("error.sessionNotFound"))
        }
        return V1JSON.noContent()
    }

    // MARK: Recovery

    @Sendable func recoveryCode(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let input = try await body(CodeRequest.self, request)
        let destination = try accounts.destination(email: input.email, phone: input.phone)
        return try V1JSON.response(codeSent(try await accounts.requestRecoveryCode(to: destination, origin: origin(request, context))), status: .accepted)
    }

    @Sendable func recover(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let input = try await body(RecoveryRequest.self, request)
        let destination = try accounts.destination(email: input.email, phone: input.phone)
        try await accounts.recoverPassword(destination: destination, code: input.code, newPassword: input.password, origin: origin(request, context))
        return V1JSON.noContent()
    }

    // MARK: Profile

    @Sendable func me(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        try V1JSON.response(account(try context.requireSessionAccount()))
    }

    @Sendable func updateProfile(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let session = try context.requireSession()
        let input = try await body(ProfileUpdate.self, request)
        /// Trimmed; an empty string clears like `null`.
        func member(_ value: String??) -> String?? {
            guard let value else { return nil }
            return .some(text(value))
        }
        var change = AccountService.ProfileChange()
        change.firstName = member(input.firstName)
        change.lastName = member(input.lastName)
        change.middleName = member(input.middleName)
        change.tag = input.tag   // as sent: an empty tag is invalid, not a removal
        change.locale = member(input.locale)
        if let birthday = member(input.birthday) {
            change.birthday = .some(try calendarDate(birthday, field: "birthday"))
        }
        let model = try await accounts.updateProfile(accountID: session.accountID, sessionID: session.id, change: change, origin: origin(request, context))
        return try V1JSON.response(account(model))
    }

    @Sendable func changePassword(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let session = try context.requireSession()
        let input = try await body(PasswordChange.self, request)
        try await accounts.changePassword(accountID: session.accountID, sessionID: session.id, current: input.currentPassword, new: input.newPassword, origin: origin(request, context))
        return V1JSON.noContent()
    }

    @Sendable func requestEmailChange(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let session = try context.requireSession()
        let input = try await body(EmailChangeRequest.self, request)
        let issued = try await accounts.requestEmailChange(accountID: session.accountID, email: input.email, currentPassword: input.currentPassword, origin: origin(request, context))
        return try V1JSON.response(codeSent(issued), status: .accepted)
    }

    @Sendable func cancelEmailChange(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let session = try context.requireSession()
        return try V1JSON.response(account(try await accounts.cancelEmailChange(accountID: session.accountID)))
    }

    @Sendable func verifyEmailChange(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let session = try context.requireSession()
        let input = try await body(CodeVerification.self, request)
        return try V1JSON.response(account(try await accounts.verifyEmailChange(accountID: session.accountID, sessionID: session.id, code: input.code)))
    }

    @Sendable func requestPhoneVerification(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let session = try context.requireSession()
        let input = try await body(PhoneVerificationRequest.self, request)
        let issued = try await accounts.requestPhoneVerification(accountID: session.accountID, phone: input.phone, currentPassword: input.currentPassword, origin: origin(request, context))
        return try V1JSON.response(codeSent(issued), status: .accepted)
    }

    @Sendable func verifyPhone(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let session = try context.requireSession()
        let input = try await body(CodeVerification.self, request)
        guard let phone = text(input.phone) else {
            throw GatehouseError.invalid(.missingParameter, "error.missingParameter", "phone").on(field: "phone")
        }
        return try V1JSON.response(account(try await accounts.verifyPhone(accountID: session.accountID, sessionID: session.id, phone: phone, code: input.code)))
    }

    // MARK: Avatar

    @Sendable func uploadAvatar(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let session = try context.requireSession()
        let format = try accounts.avatarFormat(contentType: request.headers[.contentType])
        let buffer = try await request.collectBody(upTo: limits.avatarMaxBytes)
        let model = try await accounts.setAvatar(accountID: session.accountID, format: format, bytes: Data(buffer.readableBytesView))
        return try V1JSON.response(account(model))
    }

    @Sendable func removeAvatar(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let session = try context.requireSession()
        return try V1JSON.response(account(try await accounts.removeAvatar(accountID: session.accountID)))
    }

    @Sendable func avatarImage(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        guard let id = context.parameters.get("id").flatMap(UUID.init(uuidString:)),
              let avatar = try await accounts.avatar(id: id) else {
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
}
