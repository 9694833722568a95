import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import Hummingbird

/// `/v1` sign-in with Apple and Google, and my linked identities (docs/social-login.md), as `V1.Identities` declares.
package struct IdentitiesController: Sendable {
    package let social: SocialSignIn
    package let login: LoginService
    package let answers: SessionAnswers
    package let limits: GatehouseConfiguration.Limits
    package let edge: SurfaceEdge

    private var read: V1Request { V1Request(edge: edge) }

    package init(social: SocialSignIn, login: LoginService, answers: SessionAnswers, limits: GatehouseConfiguration.Limits, edge: SurfaceEdge) {
        self.social = social
        self.login = login
        self.answers = answers
        self.limits = limits
        self.edge = edge
    }

    package func addRoutes(to v1: some RouterMethods<GatehouseRequestContext>) {
        typealias E = V1.Identities
        v1.on(E.providers, limits: limits, use: providers)
        v1.on(E.apple, limits: limits, use: { try await signIn(.apple, $0, $1, $2) })
        v1.on(E.google, limits: limits, use: { try await signIn(.google, $0, $1, $2) })
        v1.on(E.link, limits: limits, use: link)
        v1.on(E.list, limits: limits, use: list)
        v1.on(E.add, limits: limits, use: add)
        v1.on(E.remove, limits: limits, use: remove)
        v1.on(E.appleNotifications, limits: limits, use: appleNotification)
    }

    @Sendable package func appleNotification(_ input: AppleServerNotification, _ request: Request, context: GatehouseRequestContext) async throws -> AppleNotificationReceipt {
        AppleNotificationReceipt(outcome: try await social.appleNotification(input.payload, origin: read.origin(request, context)).rawValue)
    }

    @Sendable package func providers(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> SignInProviders {
        social.providers
    }

    package func signIn(_ provider: IdentityProvider, _ input: IdentitySignIn, _ request: Request, _ context: GatehouseRequestContext) async throws -> AuthSession {
        let session = try await social.signIn(provider, token: input.idToken, nonce: input.nonce, authorizationCode: input.authorizationCode,
                                              names: SocialSignIn.Names(given: input.givenName, family: input.familyName),
                                              origin: read.origin(request, context, device: read.text(input.device)))
        return try await answers.answer(session, account: try await login.account(id: session.accountID), kind: input.tokens)
    }

    @Sendable package func link(_ input: IdentityLinkRequest, _ request: Request, context: GatehouseRequestContext) async throws -> AuthSession {
        let session = try await social.link(offerToken: input.linkToken,
                                            stepUp: SecondFactors.StepUp(currentPassword: input.currentPassword, code: input.code,
                                                                         recoveryCode: input.recoveryCode, passkey: input.passkey),
                                            origin: read.origin(request, context, device: read.text(input.device)))
        return try await answers.answer(session, account: try await login.account(id: session.accountID), kind: input.tokens)
    }

    @Sendable package func list(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> LinkedIdentityList {
        LinkedIdentityList(identities: try await social.list(accountID: try context.requireSession().accountID))
    }

    @Sendable package func add(_ input: IdentityAddition, _ request: Request, context: GatehouseRequestContext) async throws -> LinkedIdentity {
        try await social.add(accountID: try context.requireSession().accountID, provider: input.provider, token: input.idToken,
                             nonce: input.nonce, authorizationCode: input.authorizationCode,
                             stepUp: Self.stepUp(currentPassword: input.currentPassword, reauthentication: input.reauthentication, code: input.code,
                                                 recoveryCode: input.recoveryCode, passkey: input.passkey),
                             origin: read.origin(request, context))
    }

    @Sendable package func remove(_ input: IdentityRemoval, _ request: Request, context: GatehouseRequestContext) async throws -> NoContent {
        let session = try context.requireSession()
        try await social.remove(accountID: session.accountID, id: try context.id(),
                                stepUp: Self.stepUp(currentPassword: input.currentPassword, reauthentication: input.reauthentication, code: input.code,
                                                    recoveryCode: input.recoveryCode, passkey: input.passkey),
                                origin: read.origin(request, context))
        return NoContent()
    }

    private static func stepUp(currentPassword: String?, reauthentication: IdentityReauthentication?, code: String?, recoveryCode: String?,
                               passkey: PasskeyAssertion?) -> SocialSignIn.StepUp {
        SocialSignIn.StepUp(factors: SecondFactors.StepUp(currentPassword: currentPassword, code: code, recoveryCode: recoveryCode, passkey: passkey),
                            reauth: reauthentication.map { ($0.provider, $0.idToken, $0.nonce) })
    }
}

// Identity tokens are longer than the usual field limit: the service checks their lengths.
extension IdentitySignIn: ChecksOwnLengths {}
extension IdentityAddition: ChecksOwnLengths {}
extension IdentityRemoval: ChecksOwnLengths {}
extension AppleServerNotification: ChecksOwnLengths {}
