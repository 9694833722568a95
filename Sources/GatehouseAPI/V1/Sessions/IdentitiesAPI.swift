import Foundation

extension V1 {
    /// Sign in with Apple and Google (docs/social-login.md): the app runs the provider's own sheet with a nonce and
    /// posts the identity token it got; the server checks it itself and answers a session as every way in does. An
    /// identity is the provider's `sub`, never its email: a verified email that is another account's confirmed
    /// address answers `identity_link_required`, and the identity joins that account only with its password (and
    /// second factor).
    public enum Identities {
        /// Which providers this server takes, and the client ids their sheets are opened with.
        public static let providers = Endpoint<NoContent, SignInProviders>(.get, "/v1/sessions/providers", access: .anyone)
            .operation("signInProviders", "The identity providers this server takes", tags: "Identities")
            .shared(.tooManyRequests, .unexpectedProblem)
        /// Signs in with Apple's identity token.
        public static let apple = Endpoint<IdentitySignIn, AuthSession>(.post, "/v1/sessions/apple", success: 201, access: .anyone)
            .operation("signInWithApple", "Sign in with Apple", tags: "Identities")
            .errors([400: [.identityTokenInvalid, .malformedBody, .invalidParameter], 403: [.secondFactorRequired, .accountLocked],
                     404: [.identityProviderOff], 409: [.identityLinkRequired, .emailTaken]])
            .shared(.payloadTooLarge, .unsupportedMediaType, .tooManyRequests, .unexpectedProblem)
        /// Signs in with Google's identity token.
        public static let google = Endpoint<IdentitySignIn, AuthSession>(.post, "/v1/sessions/google", success: 201, access: .anyone)
            .operation("signInWithGoogle", "Sign in with Google", tags: "Identities")
            .errors([400: [.identityTokenInvalid, .malformedBody, .invalidParameter], 403: [.secondFactorRequired, .accountLocked],
                     404: [.identityProviderOff], 409: [.identityLinkRequired, .emailTaken]])
            .shared(.payloadTooLarge, .unsupportedMediaType, .tooManyRequests, .unexpectedProblem)
        /// Joins the identity of an `identity_link_required` answer to its account, proven by the account's
        /// password (and, when it has one, a second factor); answers a session.
        public static let link = Endpoint<IdentityLinkRequest, AuthSession>(.post, "/v1/sessions/link", success: 201, access: .anyone)
            .operation("linkIdentityAndSignIn", "Link a provider's identity to my account and sign in", tags: "Identities")
            .errors([400: [.identityLinkInvalid, .invalidCredentials, .currentPasswordRequired, .invalidCode, .passkeyInvalid, .malformedBody],
                     403: [.secondFactorRequired, .accountLocked], 409: [.identityTaken]])
            .shared(.payloadTooLarge, .unsupportedMediaType, .tooManyRequests, .unexpectedProblem)
        /// The identities linked to my account.
        public static let list = Endpoint<NoContent, LinkedIdentityList>(.get, "/v1/me/identities")
            .operation("listIdentities", "My linked identities", tags: "Identities")
            .shared(.unauthorized, .unexpectedProblem)
        /// Links a provider's identity to my account (a step-up).
        public static let add = Endpoint<IdentityAddition, LinkedIdentity>(.post, "/v1/me/identities", success: 201)
            .operation("addIdentity", "Link a provider's identity to my account", tags: "Identities")
            .errors([400: [.identityTokenInvalid, .invalidCredentials, .currentPasswordRequired, .invalidCode, .passkeyInvalid, .malformedBody,
                           .invalidParameter],
                     403: [.secondFactorRequired], 404: [.identityProviderOff], 409: [.identityTaken]])
            .shared(.unauthorized, .payloadTooLarge, .unsupportedMediaType, .tooManyRequests, .unexpectedProblem)
        /// Unlinks one of my identities (a step-up); never the account's last way in.
        public static let remove = Endpoint<IdentityRemoval, NoContent>(.delete, "/v1/me/identities/{id}", success: 204)
            .operation("removeIdentity", "Unlink one of my identities", tags: "Identities")
            .errors([400: [.invalidCredentials, .currentPasswordRequired, .identityTokenInvalid, .invalidCode, .passkeyInvalid, .malformedBody],
                     403: [.secondFactorRequired], 404: [.identityNotFound], 422: [.lastWayIn]])
            .shared(.unauthorized, .payloadTooLarge, .unsupportedMediaType, .tooManyRequests, .unexpectedProblem)
            .uuid(notFound: .identityNotFound)

        /// Apple's server-to-server notifications (the endpoint registered for the app at Apple): a consent revoked or
        /// an Apple Account deleted ends the link and the account's sessions; mail to the relay address turned off or
        /// on is noted.
        public static let appleNotifications = Endpoint<AppleServerNotification, AppleNotificationReceipt>(
            .post, "/v1/identities/apple/notifications", access: .anyone)
            .operation("appleServerNotification", "Apple's server-to-server notification", tags: "Identities")
            .errors([400: [.identityTokenInvalid, .malformedBody], 404: [.identityProviderOff]])
            .shared(.payloadTooLarge, .unsupportedMediaType, .tooManyRequests, .unexpectedProblem)

        /// Every operation above (the tests check it against the router and the OpenAPI document).
        public static let all: [any EndpointDeclaration] = [providers, apple, google, link, list, add, remove, appleNotifications]
    }
}

/// A provider a person can sign in with.
public enum IdentityProviderName: String, Codable, Sendable, CaseIterable {
    /// Sign in with Apple.
    case apple
    /// Sign in with Google.
    case google
}

/// `GET /v1/sessions/providers`: the providers this server takes (none unless its operator configured them).
public struct SignInProviders: Codable, Sendable, Equatable {
    /// The providers this server takes, each with the client id to open its sheet with.
    public var providers: [SignInProvider]
    /// Makes one of its members, each as its property describes.
    public init(providers: [SignInProvider]) { self.providers = providers }
}

/// A provider this server takes.
public struct SignInProvider: Codable, Sendable, Equatable {
    /// Its name.
    public var name: IdentityProviderName
    /// The audiences its tokens may be for: the app's bundle id (and web service ids) for Apple, OAuth client ids
    /// for Google. Public: the app carries them.
    public var clientIds: [String]
    /// Makes one of its members, each as its property describes.
    public init(name: IdentityProviderName, clientIds: [String]) {
        self.name = name
        self.clientIds = clientIds
    }
}

/// `POST /v1/sessions/apple`, `POST /v1/sessions/google`: the provider's identity token and the raw nonce the app
/// made for this attempt (Apple's sheet was given its SHA-256 in hex; Google's the nonce itself).
public struct IdentitySignIn: Codable, Sendable, Equatable {
    /// The identity token the provider's sheet answered (a JWT the server checks itself).
    public var idToken: String
    /// The nonce the app gave the sheet (the token carries its SHA-256 for Apple, itself for Google).
    public var nonce: String
    /// Apple's authorization code, which the server exchanges for the refresh token that revocation needs.
    public var authorizationCode: String?
    /// The person's name as Apple gives it to the app on the first authorization only (Google's token carries it).
    public var givenName: String?
    /// The family name, as Apple gives it the first time only.
    public var familyName: String?
    /// The device, as the app names it (shown in my sessions).
    public var device: String?
    /// Which tokens the answer carries (absent: the session's own token).
    public var tokens: TokenKind?
    /// Makes one of its members, each as its property describes.
    public init(idToken: String, nonce: String, authorizationCode: String? = nil, givenName: String? = nil, familyName: String? = nil,
                device: String? = nil, tokens: TokenKind? = nil) {
        self.idToken = idToken
        self.nonce = nonce
        self.authorizationCode = authorizationCode
        self.givenName = givenName
        self.familyName = familyName
        self.device = device
        self.tokens = tokens
    }
}

/// In an `identity_link_required` problem: the provider's verified email is an account's confirmed address. The
/// identity joins that account only with `POST /v1/sessions/link` and the account's password — never by email alone.
public struct IdentityLinkOffer: Codable, Sendable, Equatable {
    /// Single-use; for `POST /v1/sessions/link` until `expiresAt`.
    public var linkToken: String
    /// The provider of the identity.
    public var provider: IdentityProviderName
    /// The account's address (the provider's verified one), for the screen that asks for its password.
    public var email: String
    /// When it stops working.
    public var expiresAt: Date
    /// Makes one of its members, each as its property describes.
    public init(linkToken: String, provider: IdentityProviderName, email: String, expiresAt: Date) {
        self.linkToken = linkToken
        self.provider = provider
        self.email = email
        self.expiresAt = expiresAt
    }
}

/// `POST /v1/sessions/link`: the offer's link token and the account's proof — its password and, when it has a second
/// factor, one proof of it (as a step-up: the app's `code`, a `recoveryCode`, or a `passkey` assertion).
public struct IdentityLinkRequest: Codable, Sendable, Equatable {
    /// The `linkToken` of the `identity_link_required` answer.
    public var linkToken: String
    /// The account's password.
    public var currentPassword: String
    /// A code of the authenticator app, when the account has one.
    public var code: String?
    /// A recovery code, instead of the authenticator's.
    public var recoveryCode: String?
    /// A passkey's assertion, instead of a code.
    public var passkey: PasskeyAssertion?
    /// The device, as the app names it (shown in my sessions).
    public var device: String?
    /// Which tokens the session answers with.
    public var tokens: TokenKind?
    /// Makes one of its members, each as its property describes.
    public init(linkToken: String, currentPassword: String, code: String? = nil, recoveryCode: String? = nil, passkey: PasskeyAssertion? = nil,
                device: String? = nil, tokens: TokenKind? = nil) {
        self.linkToken = linkToken
        self.currentPassword = currentPassword
        self.code = code
        self.recoveryCode = recoveryCode
        self.passkey = passkey
        self.device = device
        self.tokens = tokens
    }
}

/// A fresh sign-in with a provider whose identity is linked to my account: in a step-up, it stands for the password
/// (an account made by Apple or Google has none).
public struct IdentityReauthentication: Codable, Sendable, Equatable {
    /// The provider.
    public var provider: IdentityProviderName
    /// A fresh identity token of an identity linked to the account.
    public var idToken: String
    /// The nonce the app gave the sheet.
    public var nonce: String
    /// Makes one of its members, each as its property describes.
    public init(provider: IdentityProviderName, idToken: String, nonce: String) {
        self.provider = provider
        self.idToken = idToken
        self.nonce = nonce
    }
}

/// `POST /v1/me/identities`: the provider's token (fresh, with its nonce) and a step-up of my account: my
/// `currentPassword` or a `reauthentication` with an identity I have, and, when I have a second factor, one proof
/// of it.
public struct IdentityAddition: Codable, Sendable, Equatable {
    /// The provider.
    public var provider: IdentityProviderName
    /// The identity token the provider's sheet answered.
    public var idToken: String
    /// The nonce the app gave the sheet.
    public var nonce: String
    /// Apple's authorization code (lets the server revoke Apple's grant when the identity is unlinked).
    public var authorizationCode: String?
    /// The password, as a step-up.
    public var currentPassword: String?
    /// Instead of the password: a fresh sign-in with one of the account's identities.
    public var reauthentication: IdentityReauthentication?
    /// A code of the authenticator app, when the account has one.
    public var code: String?
    /// A recovery code, instead of the authenticator's.
    public var recoveryCode: String?
    /// A passkey's assertion, instead of a code.
    public var passkey: PasskeyAssertion?
    /// Makes one of its members, each as its property describes.
    public init(provider: IdentityProviderName, idToken: String, nonce: String, authorizationCode: String? = nil, currentPassword: String? = nil,
                reauthentication: IdentityReauthentication? = nil, code: String? = nil, recoveryCode: String? = nil, passkey: PasskeyAssertion? = nil) {
        self.provider = provider
        self.idToken = idToken
        self.nonce = nonce
        self.authorizationCode = authorizationCode
        self.currentPassword = currentPassword
        self.reauthentication = reauthentication
        self.code = code
        self.recoveryCode = recoveryCode
        self.passkey = passkey
    }
}

/// `DELETE /v1/me/identities/{id}`: a step-up, as for adding one.
public struct IdentityRemoval: Codable, Sendable, Equatable {
    /// The password, as a step-up.
    public var currentPassword: String?
    /// Instead of the password: a fresh sign-in with one of the account's identities.
    public var reauthentication: IdentityReauthentication?
    /// A code of the authenticator app, when the account has one.
    public var code: String?
    /// A recovery code, instead of the authenticator's.
    public var recoveryCode: String?
    /// A passkey's assertion, instead of a code.
    public var passkey: PasskeyAssertion?
    /// Makes one of its members, each as its property describes.
    public init(currentPassword: String? = nil, reauthentication: IdentityReauthentication? = nil, code: String? = nil, recoveryCode: String? = nil,
                passkey: PasskeyAssertion? = nil) {
        self.currentPassword = currentPassword
        self.reauthentication = reauthentication
        self.code = code
        self.recoveryCode = recoveryCode
        self.passkey = passkey
    }
}

/// An identity linked to my account.
public struct LinkedIdentity: Codable, Sendable, Equatable {
    /// Its id.
    public var id: UUID
    /// The provider.
    public var provider: IdentityProviderName
    /// The address the provider gave (Apple's may be a private relay address), if any.
    public var email: String?
    /// When it was made.
    public var createdAt: Date
    /// When it last signed the person in; nil when never.
    public var lastUsedAt: Date?
    /// Makes one of its members, each as its property describes.
    public init(id: UUID, provider: IdentityProviderName, email: String?, createdAt: Date, lastUsedAt: Date?) {
        self.id = id
        self.provider = provider
        self.email = email
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }
}

/// The identities linked to my account.
public struct LinkedIdentityList: Codable, Sendable, Equatable {
    /// The identities, oldest first.
    public var identities: [LinkedIdentity]
    /// Makes one of its members, each as its property describes.
    public init(identities: [LinkedIdentity]) { self.identities = identities }
}

/// What Apple posts to the notification endpoint: `payload`, a JWS it signs as it signs identity tokens, whose
/// `events` claim says what happened to whom.
public struct AppleServerNotification: Codable, Sendable, Equatable {
    /// Apple's signed event (a JWT), as Apple posts it.
    public var payload: String
    /// Makes one of its members, each as its property describes.
    public init(payload: String) { self.payload = payload }
}

/// What a notification did: `unlinked`, `noted`, or `ignored` (no identity has that `sub`, it was acted on before,
/// or its type is one Apple added since).
public struct AppleNotificationReceipt: Codable, Sendable, Equatable {
    /// What the server did with it (`revoked`, `ignored`, …).
    public var outcome: String
    /// Makes one of its members, each as its property describes.
    public init(outcome: String) { self.outcome = outcome }
}
