import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import Hummingbird

/// `/v1` sessions (docs/api-v1.md): logging in (with its second step), listing my sessions,
/// ending them; my second factors — each operation as `V1.Sessions` and `V1.SecondFactors` declare it.
package struct SessionsController: Sendable {
    package let login: LoginService
    package let secondFactors: SecondFactors
    package let passkeys: Passkeys
    package let sessions: SessionService
    package let answers: SessionAnswers
    package let limits: GatehouseConfiguration.Limits
    package let edge: SurfaceEdge

    private var read: V1Request { V1Request(edge: edge) }

    package func addRoutes(to v1: some RouterMethods<GatehouseRequestContext>) {
        typealias E = V1.Sessions
        v1.on(E.login, limits: limits, use: login)
        v1.on(E.refresh, limits: limits, use: refresh)
        v1.on(E.list, limits: limits, use: list)
        v1.on(E.endOthers, limits: limits, use: endOthers)
        v1.on(E.logout, limits: limits, use: logout)
        v1.on(E.end, limits: limits, use: end)
        typealias F = V1.SecondFactors
        v1.on(F.complete, limits: limits, use: completeSecondStep)
        v1.on(F.status, limits: limits, use: secondFactorStatus)
        v1.on(F.enrolTOTP, limits: limits, use: enrolTOTP)
        v1.on(F.confirmTOTP, limits: limits, use: confirmTOTP)
        v1.on(F.disableTOTP, limits: limits, use: disableTOTP)
        v1.on(F.renewRecoveryCodes, limits: limits, use: renewRecoveryCodes)
        typealias P = V1.Passkeys
        v1.on(P.creationOptions, limits: limits, use: passkeyCreationOptions)
        v1.on(P.register, limits: limits, use: registerPasskey)
        v1.on(P.list, limits: limits, use: passkeys)
        v1.on(P.remove, limits: limits, use: removePasskey)
        v1.on(P.stepUpOptions, limits: limits, use: passkeyStepUpOptions)
        v1.on(P.requestOptions, limits: limits, use: passkeyRequestOptions)
        v1.on(P.login, limits: limits, use: passkeyLogin)
    }

    @Sendable package func login(_ input: LoginRequest, _ request: Request, context: GatehouseRequestContext) async throws -> AuthSession {
        let session = try await self.login.login(identifier: input.identifier, password: input.password,
                                               origin: read.origin(request, context, device: read.text(input.device)), secondStep: true)
        return try await answer(session, input.tokens)
    }

    private func answer(_ session: IssuedSession, _ kind: TokenKind?) async throws -> AuthSession {
        try await answers.answer(session, account: try await self.login.account(id: session.accountID), kind: kind)
    }

    /// A refresh token for the next signed tokens of its session.
    @Sendable package func refresh(_ input: RefreshRequest, _ request: Request, context: GatehouseRequestContext) async throws -> AuthSession {
        let renewed = try await answers.tokens.refresh.exchange(input.refreshToken, origin: read.origin(request, context).audit)
        return try await answers.signed(renewed.session, account: try await login.account(id: renewed.session.accountID), refreshToken: renewed.refreshToken)
    }

    // MARK: Second factors

    @Sendable package func completeSecondStep(_ input: SecondFactorLogin, _ request: Request, context: GatehouseRequestContext) async throws -> AuthSession {
        let session = try await login.completeSecondStep(challenge: input.challenge, code: input.code, recoveryCode: input.recoveryCode,
                                                         origin: read.origin(request, context, device: read.text(input.device)))
        return try await answer(session, input.tokens)
    }

    @Sendable package func secondFactorStatus(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> SecondFactorStatus {
        try await secondFactors.status(accountID: try context.requireSession().accountID)
    }

    @Sendable package func enrolTOTP(_ input: TOTPEnrolmentRequest, _ request: Request, context: GatehouseRequestContext) async throws -> TOTPEnrolment {
        try await secondFactors.enrolTOTP(accountID: try context.requireSession().accountID,
                                                stepUp: SecondFactors.StepUp(currentPassword: input.currentPassword, passkey: input.passkey),
                                                origin: read.origin(request, context))
    }

    @Sendable package func confirmTOTP(_ input: CodeVerification, _ request: Request, context: GatehouseRequestContext) async throws -> RecoveryCodes {
        try await secondFactors.confirmTOTP(accountID: try context.requireSession().accountID, code: input.code, origin: read.origin(request, context))
    }

    @Sendable package func disableTOTP(_ input: SecondFactorProof, _ request: Request, context: GatehouseRequestContext) async throws -> NoContent {
        try await secondFactors.disableTOTP(accountID: try context.requireSession().accountID, stepUp: Self.stepUp(input),
                                                  origin: read.origin(request, context))
        return NoContent()
    }

    // MARK: Passkeys


    @Sendable package func passkeyCreationOptions(_ input: PasskeyOptionsRequest, _ request: Request, context: GatehouseRequestContext) async throws -> PasskeyCreationOptions {
        try await passkeys.creationOptions(accountID: try context.requireSession().accountID, stepUp: Self.stepUp(input),
                                                 origin: read.origin(request, context))
    }

    @Sendable package func registerPasskey(_ input: PasskeyRegistration, _ request: Request, context: GatehouseRequestContext) async throws -> Passkey {
        try await passkeys.register(accountID: try context.requireSession().accountID, input, origin: read.origin(request, context))
    }

    @Sendable package func passkeys(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> PasskeyList {
        PasskeyList(passkeys: try await passkeys.list(accountID: try context.requireSession().accountID))
    }

    @Sendable package func removePasskey(_ input: PasskeyRemoval, _ request: Request, context: GatehouseRequestContext) async throws -> NoContent {
        let session = try context.requireSession()
        let id = try context.id()
        try await passkeys.remove(accountID: session.accountID, id: id, stepUp: Self.stepUp(input), origin: read.origin(request, context))
        return NoContent()
    }

    @Sendable package func passkeyStepUpOptions(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> PasskeyRequestOptions {
        try await passkeys.stepUpOptions(accountID: try context.requireSession().accountID, origin: read.origin(request, context))
    }

    /// Every step-up's body (`SecondFactorProof`, which the passkeys' requests are) as the service takes it.
    private static func stepUp(_ input: SecondFactorProof) -> SecondFactors.StepUp {
        SecondFactors.StepUp(currentPassword: input.currentPassword, code: input.code, recoveryCode: input.recoveryCode, passkey: input.passkey)
    }

    @Sendable package func passkeyRequestOptions(_ input: PasskeyLoginOptionsRequest, _ request: Request, context: GatehouseRequestContext) async throws -> PasskeyRequestOptions {
        var pending: SecondFactors.PendingLogin?
        if let challenge = input.challenge { pending = try await secondFactors.pending(challenge: challenge) }
        return try await passkeys.requestOptions(for: pending, origin: read.origin(request, context))
    }

    @Sendable package func passkeyLogin(_ input: PasskeyLogin, _ request: Request, context: GatehouseRequestContext) async throws -> AuthSession {
        let origin = read.origin(request, context, device: read.text(input.device))
        if let challenge = input.challenge {
            return try await answer(try await login.completeSecondStep(challenge: challenge, code: nil, recoveryCode: nil, passkey: input.credential, origin: origin),
                                    input.tokens)
        }
        return try await answer(try await passkeys.login(input.credential, origin: origin), input.tokens)
    }

    @Sendable package func renewRecoveryCodes(_ input: SecondFactorProof, _ request: Request, context: GatehouseRequestContext) async throws -> RecoveryCodes {
        try await secondFactors.renewRecoveryCodes(accountID: try context.requireSession().accountID, stepUp: Self.stepUp(input),
                                                         origin: read.origin(request, context))
    }

    @Sendable package func list(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> SessionList {
        let current = try context.requireSession()
        let list = try await sessions.list(accountID: current.accountID).map { row in
            SessionInfo(id: row.id, device: row.device, ip: row.ip, createdAt: row.createdAt, lastUsedAt: row.lastUsedAt, expiresAt: row.expiresAt, current: row.id == current.id)
        }
        return SessionList(sessions: list)
    }

    @Sendable package func endOthers(_ input: EndSessionsQuery, _ request: Request, context: GatehouseRequestContext) async throws -> SessionsRevoked {
        let current = try context.requireSession()
        return SessionsRevoked(revoked: try await sessions.revokeAll(accountID: current.accountID, keeping: current.id, by: .account(current.accountID),
                                                                     origin: read.origin(request, context).audit))
    }

    @Sendable package func logout(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> NoContent {
        let current = try context.requireSession()
        try await sessions.revoke(sessionID: current.id)
        return NoContent()
    }

    @Sendable package func end(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> NoContent {
        let current = try context.requireSession()
        let id = try context.id()
        guard try await sessions.revoke(sessionID: id, ofAccount: current.accountID, by: .account(current.accountID),
                                        origin: read.origin(request, context).audit) else {
            throw GatehouseError(.notFound, .sessionNotFound, LocalizedText("error.sessionNotFound"))
        }
        return NoContent()
    }

    package init(login: LoginService, secondFactors: SecondFactors, passkeys: Passkeys, sessions: SessionService, answers: SessionAnswers,
                 limits: GatehouseConfiguration.Limits, edge: SurfaceEdge) {
        self.login = login
        self.secondFactors = secondFactors
        self.passkeys = passkeys
        self.sessions = sessions
        self.answers = answers
        self.limits = limits
        self.edge = edge
    }
}
