import Foundation

extension V1 {
    /// Passkeys (WebAuthn): adding one to my account, listing and removing them, and logging in with
    /// one, without a password (a discoverable credential, the user verified) or as the second step
    /// of a password login. Options are the JSON that `PublicKeyCredential.parseCreationOptionsFromJSON`
    /// / `parseRequestOptionsFromJSON` and AuthenticationServices take; answers are the platform's
    /// credential as its `toJSON()` writes it.
    public enum Passkeys {
        /// The options for `navigator.credentials.create()` (a step-up: the current password and,
        /// when I have a second factor, one proof of it).
        public static let creationOptions = Endpoint<PasskeyOptionsRequest, PasskeyCreationOptions>(.post, "/v1/me/passkeys/options")
            .operation("passkeyCreationOptions", "Options to create a passkey", tags: "Passkeys")
            .errors([400: [.invalidCredentials, .currentPasswordRequired, .invalidCode, .passkeyInvalid, .malformedBody], 403: [.secondFactorRequired], 422: [.tooManyPasskeys]])
            .shared(.unauthorized, .payloadTooLarge, .unsupportedMediaType, .tooManyRequests, .unexpectedProblem)
        /// Keeps the credential the platform made with those options.
        public static let register = Endpoint<PasskeyRegistration, Passkey>(.post, "/v1/me/passkeys", success: 201)
            .operation("registerPasskey", "Keep the passkey the platform made", tags: "Passkeys")
            .errors([400: [.passkeyInvalid, .malformedBody], 422: [.tooManyPasskeys]])
            .shared(.unauthorized, .payloadTooLarge, .unsupportedMediaType, .tooManyRequests, .unexpectedProblem)
        /// My passkeys.
        public static let list = Endpoint<NoContent, PasskeyList>(.get, "/v1/me/passkeys")
            .operation("listPasskeys", "My passkeys", tags: "Passkeys")
            .shared(.unauthorized, .unexpectedProblem)
        /// Removes one of my passkeys (a step-up).
        public static let remove = Endpoint<PasskeyRemoval, NoContent>(.delete, "/v1/me/passkeys/{id}", success: 204)
            .operation("removePasskey", "Remove one of my passkeys", tags: "Passkeys")
            .errors([400: [.invalidCredentials, .currentPasswordRequired, .invalidCode, .passkeyInvalid, .malformedBody], 403: [.secondFactorRequired], 404: [.passkeyNotFound]])
            .shared(.unauthorized, .payloadTooLarge, .unsupportedMediaType, .tooManyRequests, .unexpectedProblem)
            .uuid(notFound: .passkeyNotFound)
        /// The options for `navigator.credentials.get()` of a step-up: my passkeys, a challenge that
        /// only a step-up of my account takes.
        public static let stepUpOptions = Endpoint<NoContent, PasskeyRequestOptions>(.post, "/v1/me/passkeys/step-up-options")
            .operation("passkeyStepUpOptions", "Options to prove a step-up with one of my passkeys", tags: "Passkeys")
            .errors([404: [.passkeyNotFound]])
            .shared(.unauthorized, .tooManyRequests, .unexpectedProblem)
        /// The options for `navigator.credentials.get()`: with no `challenge`, for a login without a
        /// password (any of this site's passkeys on the device); with a password login's `challenge`,
        /// for its second step (that account's passkeys).
        public static let requestOptions = Endpoint<PasskeyLoginOptionsRequest, PasskeyRequestOptions>(.post, "/v1/sessions/passkey/options", access: .anyone)
            .operation("passkeyRequestOptions", "Options to log in with a passkey", tags: "Passkeys")
            .errors([400: [.loginChallengeInvalid, .malformedBody], 404: [.passkeyNotFound]])
            .shared(.payloadTooLarge, .unsupportedMediaType, .tooManyRequests, .unexpectedProblem)
        /// Logs in with the platform's assertion; answers the session.
        public static let login = Endpoint<PasskeyLogin, AuthSession>(.post, "/v1/sessions/passkey", success: 201, access: .anyone)
            .operation("passkeyLogIn", "Log in with a passkey", tags: "Passkeys")
            .errors([400: [.passkeyInvalid, .malformedBody, .loginChallengeInvalid], 403: [.accountLocked]])
            .shared(.payloadTooLarge, .unsupportedMediaType, .tooManyRequests, .unexpectedProblem)

        /// Every operation above (the tests check it against the router and the OpenAPI document).
        public static let all: [any EndpointDeclaration] = [creationOptions, register, list, remove, stepUpOptions, requestOptions, login]
    }
}

/// `POST /v1/me/passkeys/options`: a step-up (``SecondFactorProof``) — the current password and, when the account
/// has a second factor, one proof of it: the app's `code`, a `recoveryCode`, or a `passkey` assertion (options from
/// `POST /v1/me/passkeys/step-up-options`).
public typealias PasskeyOptionsRequest = SecondFactorProof

/// The relying party: this server, as `rp` of the creation options.
public struct PasskeyRelyingParty: Codable, Sendable, Equatable {
    /// Its id.
    public var id: String
    /// Its name.
    public var name: String
    /// Makes one of its members, each as its property describes.
    public init(id: String, name: String) { self.id = id; self.name = name }
}

/// The account as the authenticator keeps it: `id` is an opaque handle (base64url), never the email.
public struct PasskeyUser: Codable, Sendable, Equatable {
    /// Its id.
    public var id: String
    /// Its name.
    public var name: String
    /// The person's name, as the authenticator shows it.
    public var displayName: String
    /// Makes one of its members, each as its property describes.
    public init(id: String, name: String, displayName: String) { self.id = id; self.name = name; self.displayName = displayName }
}

/// A credential algorithm the server takes: ES256 (-7), RS256 (-257).
public struct PasskeyAlgorithm: Codable, Sendable, Equatable {
    /// Its kind.
    public var type: String
    /// A COSE algorithm number (-7: ES256, -257: RS256).
    public var alg: Int
    /// Makes one of its members, each as its property describes.
    public init(alg: Int) { self.type = "public-key"; self.alg = alg }
}

/// A credential named in options (`excludeCredentials`, `allowCredentials`).
public struct PasskeyDescriptor: Codable, Sendable, Equatable {
    /// Its kind.
    public var type: String
    /// The credential id, base64url.
    public var id: String
    /// How the authenticator is reached (`internal`, `hybrid`, …), as it said.
    public var transports: [String]?
    /// Makes one of its members, each as its property describes.
    public init(id: String, transports: [String]? = nil) { self.type = "public-key"; self.id = id; self.transports = transports }
}

/// What the authenticator must be: a discoverable credential, the user verified.
public struct PasskeyAuthenticatorSelection: Codable, Sendable, Equatable {
    /// `required`: a discoverable credential (a passkey).
    public var residentKey: String
    /// Whether a discoverable credential is required (WebAuthn level 1's name for it).
    public var requireResidentKey: Bool
    /// `required` or `preferred`: whether the authenticator verifies the person (biometrics, PIN).
    public var userVerification: String
    /// Makes one of its members, each as its property describes.
    public init(residentKey: String = "required", requireResidentKey: Bool = true, userVerification: String = "required") {
        self.residentKey = residentKey
        self.requireResidentKey = requireResidentKey
        self.userVerification = userVerification
    }
}

/// `PublicKeyCredentialCreationOptionsJSON` (WebAuthn Level 3): hand it to the platform as it is.
public struct PasskeyCreationOptions: Codable, Sendable, Equatable {
    /// The relying party: this server's domain.
    public var rp: PasskeyRelyingParty
    /// The account the passkey is for.
    public var user: PasskeyUser
    /// Random, single-use, base64url.
    public var challenge: String
    /// The signature algorithms the server takes, in order of preference.
    public var pubKeyCredParams: [PasskeyAlgorithm]
    /// Milliseconds.
    public var timeout: Int
    /// My passkeys already: an authenticator that holds one makes no second.
    public var excludeCredentials: [PasskeyDescriptor]
    /// What kind of authenticator to use.
    public var authenticatorSelection: PasskeyAuthenticatorSelection
    /// Always `none`: the server does not ask who made the authenticator.
    public var attestation: String
    /// Makes one of its members, each as its property describes.
    public init(rp: PasskeyRelyingParty, user: PasskeyUser, challenge: String, pubKeyCredParams: [PasskeyAlgorithm], timeout: Int,
                excludeCredentials: [PasskeyDescriptor], authenticatorSelection: PasskeyAuthenticatorSelection, attestation: String = "none") {
        self.rp = rp
        self.user = user
        self.challenge = challenge
        self.pubKeyCredParams = pubKeyCredParams
        self.timeout = timeout
        self.excludeCredentials = excludeCredentials
        self.authenticatorSelection = authenticatorSelection
        self.attestation = attestation
    }
}

/// `PublicKeyCredentialRequestOptionsJSON` (WebAuthn Level 3): hand it to the platform as it is.
public struct PasskeyRequestOptions: Codable, Sendable, Equatable {
    /// Random, single-use, base64url.
    public var challenge: String
    /// Milliseconds.
    public var timeout: Int
    /// The relying party's id: this server's domain.
    public var rpId: String
    /// Empty for a login without a password (the platform offers this site's passkeys); the
    /// account's for a second step.
    public var allowCredentials: [PasskeyDescriptor]
    /// Always `required`.
    public var userVerification: String
    /// Makes one of its members, each as its property describes.
    public init(challenge: String, timeout: Int, rpId: String, allowCredentials: [PasskeyDescriptor], userVerification: String = "required") {
        self.challenge = challenge
        self.timeout = timeout
        self.rpId = rpId
        self.allowCredentials = allowCredentials
        self.userVerification = userVerification
    }
}

/// `RegistrationResponseJSON`: what `navigator.credentials.create()` answered, as its `toJSON()` writes it.
public struct PasskeyRegistrationCredential: Codable, Sendable, Equatable {
    /// `response` of the credential: base64url members.
    public struct Response: Codable, Sendable, Equatable {
        /// The client's data (base64url JSON).
        public var clientDataJSON: String
        /// The attestation object (base64url CBOR).
        public var attestationObject: String
        /// How the authenticator is reached, as it said.
        public var transports: [String]?
        /// Makes one of its members, each as its property describes.
        public init(clientDataJSON: String, attestationObject: String, transports: [String]? = nil) {
            self.clientDataJSON = clientDataJSON
            self.attestationObject = attestationObject
            self.transports = transports
        }
    }
    /// Its id.
    public var id: String
    /// The credential id (base64url).
    public var rawId: String
    /// Its kind.
    public var type: String
    /// The authenticator's answer.
    public var response: Response
    /// `platform` or `cross-platform`, as the browser or system said.
    public var authenticatorAttachment: String?
    /// Makes one of its members, each as its property describes.
    public init(id: String, rawId: String, type: String = "public-key", response: Response, authenticatorAttachment: String? = nil) {
        self.id = id
        self.rawId = rawId
        self.type = type
        self.response = response
        self.authenticatorAttachment = authenticatorAttachment
    }
}

/// `AuthenticationResponseJSON`: what `navigator.credentials.get()` answered, as its `toJSON()` writes it.
public struct PasskeyAssertion: Codable, Sendable, Equatable {
    /// `response` of the credential: base64url members.
    public struct Response: Codable, Sendable, Equatable {
        /// The client's data (base64url JSON).
        public var clientDataJSON: String
        /// The authenticator's data (base64url).
        public var authenticatorData: String
        /// The signature (base64url).
        public var signature: String
        /// The user handle (base64url): the account the passkey names.
        public var userHandle: String?
        /// Makes one of its members, each as its property describes.
        public init(clientDataJSON: String, authenticatorData: String, signature: String, userHandle: String? = nil) {
            self.clientDataJSON = clientDataJSON
            self.authenticatorData = authenticatorData
            self.signature = signature
            self.userHandle = userHandle
        }
    }
    /// Its id.
    public var id: String
    /// The credential id (base64url).
    public var rawId: String
    /// Its kind.
    public var type: String
    /// The authenticator's answer.
    public var response: Response
    /// `platform` or `cross-platform`, as the browser or system said.
    public var authenticatorAttachment: String?
    /// Makes one of its members, each as its property describes.
    public init(id: String, rawId: String, type: String = "public-key", response: Response, authenticatorAttachment: String? = nil) {
        self.id = id
        self.rawId = rawId
        self.type = type
        self.response = response
        self.authenticatorAttachment = authenticatorAttachment
    }
}

/// `POST /v1/me/passkeys`: the platform's credential and a name to tell it by ("iPhone").
public struct PasskeyRegistration: Codable, Sendable, Equatable {
    /// The new credential, as the authenticator made it.
    public var credential: PasskeyRegistrationCredential
    /// Its name.
    public var name: String?
    /// Makes one of its members, each as its property describes.
    public init(credential: PasskeyRegistrationCredential, name: String? = nil) { self.credential = credential; self.name = name }
}

/// One of my passkeys.
public struct Passkey: Codable, Sendable, Equatable {
    /// Its id.
    public var id: UUID
    /// Its name.
    public var name: String
    /// When it was made.
    public var createdAt: Date
    /// When it last signed the person in; nil when never.
    public var lastUsedAt: Date?
    /// The authenticator may sync it to the person's other devices (a cloud keychain).
    public var synced: Bool
    /// Makes one of its members, each as its property describes.
    public init(id: UUID, name: String, createdAt: Date, lastUsedAt: Date?, synced: Bool) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.synced = synced
    }
}

/// `GET /v1/me/passkeys`, newest first.
public struct PasskeyList: Codable, Sendable, Equatable {
    /// My passkeys.
    public var passkeys: [Passkey]
    /// Makes one of its members, each as its property describes.
    public init(passkeys: [Passkey]) { self.passkeys = passkeys }
}

/// `DELETE /v1/me/passkeys/{id}`: a step-up (``SecondFactorProof``), as for adding one.
public typealias PasskeyRemoval = SecondFactorProof

/// `POST /v1/sessions/passkey/options`: a password login's `challenge` for its second step, or nothing.
public struct PasskeyLoginOptionsRequest: Codable, Sendable, Equatable {
    /// A challenge of an earlier options answer to reuse; nil for a new one.
    public var challenge: String?
    /// Makes one of its members, each as its property describes.
    public init(challenge: String? = nil) { self.challenge = challenge }
}

/// `POST /v1/sessions/passkey`: the platform's assertion, and the password login's `challenge` when
/// it is that login's second step.
public struct PasskeyLogin: Codable, Sendable, Equatable {
    /// The authenticator's assertion.
    public var credential: PasskeyAssertion
    /// The challenge the options answered.
    public var challenge: String?
    /// The device, as the app names it (shown in my sessions).
    public var device: String?
    /// Which tokens the answer carries (absent: the session's own token).
    public var tokens: TokenKind?
    /// Makes one of its members, each as its property describes.
    public init(credential: PasskeyAssertion, challenge: String? = nil, device: String? = nil, tokens: TokenKind? = nil) {
        self.credential = credential
        self.challenge = challenge
        self.device = device
        self.tokens = tokens
    }
}
