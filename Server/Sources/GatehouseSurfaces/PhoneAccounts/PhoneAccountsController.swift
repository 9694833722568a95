import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import Hummingbird

/// The phone-first REST API of `docs/phone-accounts.md`. Translates form parameters to
/// account-service calls and domain values to the spec's answers; nothing else.
package struct PhoneAccountsController: Sendable {
    package let signup: SignupService
    package let login: LoginService
    package let recovery: RecoveryService
    package let profile: ProfileService
    package let email: EmailService
    package let sessions: SessionService
    package let bearer: BearerTokens
    /// The business's client records an account's answers show.
    package let clients: ClientRecords
    package let deliverer: OutboxDeliverer
    package let limits: GatehouseConfiguration.Limits
    package let edge: SurfaceEdge

    package func addRoutes(to router: Router<GatehouseRequestContext>) {
        let api = router.group()
            .add(middleware: PhoneAccountsErrorMiddleware())
            .add(middleware: BearerSessionMiddleware(bearer: bearer))
        typealias E = PhoneAccountsAPI.Endpoints
        api.route(E.sendSMS, use: sendSMS)
        api.route(E.register, use: register)
        api.route(E.login, use: login)
        api.route(E.logout, use: logout)
        api.route(E.user, use: user)
        api.route(E.change, use: change)
        api.route(E.sendConfirm, use: sendConfirm)
        api.route(E.confirmPage, use: confirmPage)
        api.route(E.confirm, use: confirm)
        api.route(E.restore, use: restore)
    }

    // MARK: Helpers

    private func form(_ request: Request) async throws -> FormParameters {
        try await FormParameters.read(request, maxBodyBytes: limits.maxBodyBytes, maxFieldLength: limits.maxFieldLength)
    }

    private func origin(_ request: Request, _ context: GatehouseRequestContext) -> RequestOrigin {
        RequestOrigin(
            ip: request.clientIP(context: context, trustForwardedFor: edge.trustForwardedFor),
            language: AppLanguage.negotiate(request.headers[.acceptLanguage], fallback: .ru),
            device: request.headers[.userAgent],
            requestID: context.requestID
        )
    }

    // MARK: Routes

    @Sendable package func sendSMS(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let form = try await form(request)
        let issued = try await signup.requestPhoneSignupCode(phone: try form.required(PhoneAccountsAPI.Parameter.phone), origin: origin(request, context))
        // The spec answers 400 with the gateway's text when the SMS is refused: give the first
        // delivery attempt a moment, and report a hard refusal.
        if let messageID = issued.messageID { try await deliverer.awaitFirstAttempt(messageID: messageID) }
        return Response(status: .ok)
    }

    @Sendable package func register(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let form = try await form(request)
        typealias K = PhoneAccountsAPI.Parameter
        let input = SignupService.PhoneRegistration(
            phone: try form.required(K.phone),
            code: try form.requiredSecret(K.code),
            login: try form.nonEmpty(K.login),
            password: try form.secret(K.password),
            firstName: try form.nonEmpty(K.name, K.firstName),
            lastName: try form.nonEmpty(K.lastName),
            middleName: try form.nonEmpty(K.surname),
            email: try form.nonEmpty(K.email),
            birthday: try form.date(K.birthday) ?? nil
        )
        let registered = try await signup.registerWithPhone(input, origin: origin(request, context))
        let account = registered.account
        return try JSONResponse.make(PhoneRegisterResponse(login: account.username ?? account.phone!, password: registered.generatedPassword))
    }

    @Sendable package func login(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let form = try await form(request)
        let session = try await login.login(
            identifier: try form.required(PhoneAccountsAPI.Parameter.login),
            password: try form.requiredSecret(PhoneAccountsAPI.Parameter.password),
            origin: origin(request, context)
        )
        return try JSONResponse.make(PhoneLoginResponse(token: session.token, expires: WireDates.iso8601String(from: session.expiresAt)))
    }

    @Sendable package func logout(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let session = try context.requireSession()
        try await sessions.revoke(sessionID: session.id)
        return Response(status: .ok)
    }

    @Sendable package func user(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        // The client record came with the account in the session lookup (and is forgotten with it).
        let account = try context.requireSessionAccount()
        return JSONResponse.make(account.phoneUser(client: account.clientRecord))
    }

    @Sendable package func change(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let session = try context.requireSession()
        let form = try await form(request)
        typealias K = PhoneAccountsAPI.Parameter
        func optional(_ names: String...) throws -> String?? {
            for name in names {
                if let value = try form.string(name) {
                    let trimmed = value.trimmingCharacters(in: .whitespaces)
                    return .some(trimmed.isEmpty ? nil : trimmed)
                }
            }
            return nil
        }
        var change = ProfileService.ProfileChange()
        change.firstName = try optional(K.name, K.firstName)
        change.lastName = try optional(K.lastName)
        change.middleName = try optional(K.surname, "surName")
        change.fcmToken = try optional(K.fcm)
        change.birthday = try form.date(K.birthday)
        change.email = try form.string(K.email)
        change.phone = try form.nonEmpty(K.phone)
        change.currentPassword = try form.secret(K.currentPassword, "currentPassword")
        let origin = origin(request, context)
        // A new password (after a restore, say) needs the current one, as on `/v1/me/password`.
        if let newPassword = try form.secret(K.password) {
            try await login.changePassword(accountID: session.accountID, sessionID: session.id,
                                              current: change.currentPassword, new: newPassword, origin: origin)
        }
        let account = try await profile.updateProfile(accountID: session.accountID, sessionID: session.id, change: change, origin: origin)
        return JSONResponse.make(account.phoneUser(client: try await clients.record(of: account.id)))
    }

    @Sendable package func sendConfirm(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let session = try context.requireSession()
        try await email.sendEmailConfirmation(accountID: session.accountID, origin: origin(request, context))
        return try JSONResponse.make("ok")
    }

    /// The mail's link: a page that shows the address and a button, and changes nothing.
    @Sendable package func confirmPage(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let token = request.uri.queryParameters.get(PhoneAccountsAPI.Parameter.id) ?? ""
        let outcome = try await email.inspectConfirmation(token: token)
        return ConfirmationPage.response(outcome: outcome, language: pageLanguage(request), action: PhoneAccountsAPI.Path.confirm)
    }

    /// The page's button: confirms. A form that cannot be read (an overlong or malformed `id`) is
    /// a link that does not work: the page says so, as HTML like every answer of this page.
    @Sendable package func confirm(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let token = (try? await form(request).nonEmpty(PhoneAccountsAPI.Parameter.id)) ?? ""
        let outcome = try await email.confirmEmail(token: token)
        return ConfirmationPage.response(outcome: outcome, language: pageLanguage(request), action: PhoneAccountsAPI.Path.confirm)
    }

    private func pageLanguage(_ request: Request) -> AppLanguage {
        AppLanguage.negotiate(request.headers[.acceptLanguage], fallback: .ru)
    }

    @Sendable package func restore(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let form = try await form(request)
        typealias K = PhoneAccountsAPI.Parameter
        guard let identifier = try form.nonEmpty(K.login) ?? form.nonEmpty(K.mail, K.email) ?? form.nonEmpty(K.phone) else {
            throw GatehouseError.invalid(.missingParameter, "error.restoreNeedsIdentifier")
        }
        let viaSMS = try form.bool(K.sms) ?? false
        try await recovery.restorePassword(identifier: identifier, channel: viaSMS ? .sms : .email, origin: origin(request, context))
        return Response(status: .ok)
    }

    package init(signup: SignupService, login: LoginService, recovery: RecoveryService, profile: ProfileService, email: EmailService, sessions: SessionService,
                 bearer: BearerTokens, clients: ClientRecords, deliverer: OutboxDeliverer, limits: GatehouseConfiguration.Limits, edge: SurfaceEdge) {
        self.signup = signup
        self.login = login
        self.recovery = recovery
        self.profile = profile
        self.email = email
        self.sessions = sessions
        self.bearer = bearer
        self.clients = clients
        self.deliverer = deliverer
        self.limits = limits
        self.edge = edge
    }
}
