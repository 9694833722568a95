import Crypto
import Foundation
import GatehouseAPI

/// The nonce of one sign-in with Apple or Google (docs/social-login.md): random, made by the app for this attempt
/// only. The provider's sheet is given ``forApple`` (Apple signs its SHA-256, hex) or ``raw`` (Google signs it as
/// given); the server is sent ``raw`` with the token, and checks that the token carries it.
public struct SignInNonce: Sendable, Equatable {
    /// What the server is sent (and Google Sign-In is given).
    public let raw: String

    /// A new nonce: 32 random bytes, base64url.
    public init() {
        var generator = SystemRandomNumberGenerator()
        raw = Data((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }).base64URLEncoded
    }

    /// A nonce made elsewhere (kept across the app's relaunch while the sheet was open, say).
    public init(raw: String) { self.raw = raw }

    /// What `ASAuthorizationAppleIDRequest.nonce` is set to: the SHA-256 of ``raw``, in lower-case hex.
    public var forApple: String { SHA256.hash(data: Data(raw.utf8)).map { String(format: "%02x", $0) }.joined() }
}

extension AccountsClient {
    // MARK: Sign in with Apple and Google

    /// `GET /v1/sessions/providers`: the providers this server takes (none unless its operator configured them), with
    /// the client ids to open their sheets with. A login screen shows a button for each.
    public func signInProviders() async throws -> [SignInProvider] {
        try await core.call(V1.Identities.providers).providers
    }

    /// What ``signIn(with:idToken:nonce:authorizationCode:givenName:familyName:device:)`` leads to.
    public enum IdentitySignInStep: Equatable, Sendable {
        /// The session, stored.
        case signedIn(AuthSession)
        /// The account asks for its second factor: finish with ``completeLogin(challenge:code:recoveryCode:device:)``.
        case secondFactorRequired(SecondFactorChallenge)
        /// The provider's verified address is an account's confirmed one: that account's password (and second factor)
        /// links the identity to it, with ``linkIdentity(_:password:code:recoveryCode:device:)``. Never joined by
        /// the address alone.
        case linkRequired(IdentityLinkOffer)
    }

    /// `POST /v1/sessions/apple` or `/google`: signs in with the provider's identity token (AuthenticationServices'
    /// `identityToken`, Google Sign-In's `idToken`) and the ``SignInNonce/raw`` nonce of this attempt. For Apple, pass
    /// the `authorizationCode` (the server exchanges it for the token that revokes the authorization when the account
    /// is deleted) and, on the first authorization only, the name Apple gave (`fullName`).
    public func signIn(with provider: IdentityProviderName, idToken: String, nonce: SignInNonce, authorizationCode: String? = nil,
                       givenName: String? = nil, familyName: String? = nil, device: String? = nil) async throws -> IdentitySignInStep {
        let endpoint = provider == .apple ? V1.Identities.apple : V1.Identities.google
        let captured = ProblemBox()
        do {
            let answer = try await GatehouseClient.$problemCapture.withValue(captured) {
                try await core.call(endpoint, IdentitySignIn(idToken: idToken, nonce: nonce.raw, authorizationCode: authorizationCode, givenName: givenName,
                                                             familyName: familyName, device: device, tokens: core.requestedTokens))
            }
            try core.store(answer)
            return .signedIn(answer)
        } catch let error as GatehouseClientError where error.code == .secondFactorRequired {
            guard let challenge = captured.value?.secondFactor else { throw error }
            return .secondFactorRequired(challenge)
        } catch let error as GatehouseClientError where error.code == .identityLinkRequired {
            guard let offer = captured.value?.identityLink else { throw error }
            return .linkRequired(offer)
        }
    }

    /// `POST /v1/sessions/link`: takes up a ``IdentitySignInStep/linkRequired(_:)`` offer with the account's password
    /// and, when it has a second factor, its app's `code` or a `recoveryCode` (without one, `second_factor_required`
    /// is thrown: ask for it and call again). Stores the session; the account's other sessions end.
    @discardableResult
    public func linkIdentity(_ offer: IdentityLinkOffer, password: String, code: String? = nil, recoveryCode: String? = nil,
                             device: String? = nil) async throws -> AuthSession {
        let answer = try await core.call(V1.Identities.link, IdentityLinkRequest(linkToken: offer.linkToken, currentPassword: password, code: code,
                                                                                 recoveryCode: recoveryCode, device: device, tokens: core.requestedTokens))
        try core.store(answer)
        return answer
    }

    /// `GET /v1/me/identities`: the identities linked to my account.
    public func identities() async throws -> [LinkedIdentity] {
        try await core.call(V1.Identities.list).identities
    }

    /// How a change to my identities is proven: my password, or (an account made by a provider has none) a fresh
    /// sign-in with one of my own identities; and, when I have a second factor, its code.
    public enum IdentityStepUp: Equatable, Sendable {
        /// My password, and my second factor's code when I have one.
        case password(String, code: String? = nil, recoveryCode: String? = nil)
        /// A fresh sign-in with one of my own identities (its token and raw nonce), and my second factor's code when I have one.
        case reauthentication(IdentityReauthentication, code: String? = nil, recoveryCode: String? = nil)

        var currentPassword: String? { if case .password(let password, _, _) = self { password } else { nil } }
        var reauthentication: IdentityReauthentication? { if case .reauthentication(let reauth, _, _) = self { reauth } else { nil } }
        var code: String? {
            switch self {
            case .password(_, let code, _), .reauthentication(_, let code, _): code
            }
        }
        var recoveryCode: String? {
            switch self {
            case .password(_, _, let recovery), .reauthentication(_, _, let recovery): recovery
            }
        }
    }

    /// `POST /v1/me/identities`: links a provider's identity (a fresh token and its nonce) to my account.
    public func addIdentity(_ provider: IdentityProviderName, idToken: String, nonce: SignInNonce, authorizationCode: String? = nil,
                            stepUp: IdentityStepUp) async throws -> LinkedIdentity {
        try await core.call(V1.Identities.add, IdentityAddition(provider: provider, idToken: idToken, nonce: nonce.raw, authorizationCode: authorizationCode,
                                                                currentPassword: stepUp.currentPassword, reauthentication: stepUp.reauthentication,
                                                                code: stepUp.code, recoveryCode: stepUp.recoveryCode))
    }

    /// `DELETE /v1/me/identities/{id}`: unlinks one of my identities; never my last way in (`last_way_in`).
    public func removeIdentity(id: UUID, stepUp: IdentityStepUp) async throws {
        _ = try await core.call(V1.Identities.remove, IdentityRemoval(currentPassword: stepUp.currentPassword, reauthentication: stepUp.reauthentication,
                                                                      code: stepUp.code, recoveryCode: stepUp.recoveryCode),
                                parameters: ["id": id.uuidString.lowercased()])
    }

    /// `DELETE /v1/me` for an account made by Apple or Google, which has no password: a fresh sign-in with one of its
    /// identities proves the person. As ``deleteAccount(currentPassword:)`` otherwise.
    @discardableResult
    public func deleteAccount(reauthentication: IdentityReauthentication) async throws -> AccountDeletion {
        let deletion = try await core.call(V1.Accounts.deleteMe, AccountDeletionRequest(reauthentication: reauthentication))
        try? sessionStore.clear()
        return deletion
    }
}
