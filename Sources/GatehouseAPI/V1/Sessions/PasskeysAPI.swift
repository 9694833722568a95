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
    public var id: String
    public var name: String
    public init(id: String, name: String) { self.id = id; self.name = name }
}

/// The account as the authenticator keeps it: `id` is an opaque handle (base64url), never the email.
public struct PasskeyUser: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    public var displayName: String
    public init(id: String, name: String, displayName: String) { self.id = id; self.name = name; self.displayName = displayName }
}

/// A credential algorithm the server takes: ES256 (-7), RS256 (-257).
public struct PasskeyAlgorithm: Codable, Sendable, Equatable {
    public var type: String
    public var alg: Int
    public init(alg: Int) { self.type = "public-key"; self.alg = alg }
}

/// A credential named in options (`excludeCredentials`, `allowCredentials`).
public struct PasskeyDescriptor: Codable, Sendable, Equatable {
    public var type: String
    /// The credential id, base64url.
    public var id: String
    public var transports: [String]?
    public init(id: String, transports: [String]? = nil) { self.type = "public-key"; self.id = id; self.transports = transports }
}

/// What the authenticator must be: a discoverable credential, the user verified.
public struct PasskeyAuthenticatorSelection: Codable, Sendable, Equatable {
    public var residentKey: String
    public var requireResidentKey: Bool
    public var userVerification: String
    public init(residentKey: String = "required", requireResidentKey: Bool = true, userVerification: String = "required") {
        self.residentKey = residentKey
        self.requireResidentKey = requireResidentKey
        self.userVerification = userVerification
    }
}

/// `PublicKeyCredentialCreationOptionsJSON` (WebAuthn Level 3): hand it to the platform as it is.
public struct PasskeyCreationOptions: Codable, Sendable, Equatable {
    public var rp: PasskeyRelyingParty
    public var user: PasskeyUser
    /// Random, single-use, base64url.
    public var challenge: String
    public var pubKeyCredParams: [PasskeyAlgorithm]
    /// Milliseconds.
    public var timeout: Int
    /// My passkeys already: an authenticator that holds one makes no second.
    public var excludeCredentials: [PasskeyDescriptor]
    public var authenticatorSelection: PasskeyAuthenticatorSelection
    /// Always `none`: the server does not ask who made the authenticator.
    public var attestation: String
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
    public var rpId: String
    /// Empty for a login without a password (the platform offers this site's passkeys); the
    /// account's for a second step.
    public var allowCredentials: [PasskeyDescriptor]
    /// Always `required`.
    public var userVerification: String
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
        public var clientDataJSON: String
        public var attestationObject: String
        public var transports: [String]?
        public init(clientDataJSON: String, attestationObject: String, transports: [String]? = nil) {
            self.clientDataJSON = clientDataJSON
            self.attestationObject = attestationObject
            self.transports = transports
        }
    }
    public var id: String
    public var rawId: String
    public var type: String
    public var response: Response
    public var authenticatorAttachment: String?
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
        public var clientDataJSON: String
        public var authenticatorData: String
        public var signature: String
        public var userHandle: String?
        public init(clientDataJSON: String, authenticatorData: String, signature: String, userHandle: String? = nil) {
            self.clientDataJSON = clientDataJSON
            self.authenticatorData = authenticatorData
            self.signature = signature
            self.userHandle = userHandle
        }
    }
    public var id: String
    public var rawId: String
    public var type: String
    public var response: Response
    public var authenticatorAttachment: String?
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
    public var credential: PasskeyRegistrationCredential
    public var name: String?
    public init(credential: PasskeyRegistrationCredential, name: String? = nil) { self.credential = credential; self.name = name }
}

/// One of my passkeys.
public struct Passkey: Codable, Sendable, Equatable {
    public var id: UUID
    public var name: String
    public var createdAt: Date
    public var lastUsedAt: Date?
    /// The authenticator may sync it to the person's other devices (a cloud keychain).
    public var synced: Bool
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
    public var passkeys: [Passkey]
    public init(passkeys: [Passkey]) { self.passkeys = passkeys }
}

/// `DELETE /v1/me/passkeys/{id}`: a step-up (``SecondFactorProof``), as for adding one.
public typealias PasskeyRemoval = SecondFactorProof

/// `POST /v1/sessions/passkey/options`: a password login's `challenge` for its second step, or nothing.
public struct PasskeyLoginOptionsRequest: Codable, Sendable, Equatable {
    public var challenge: String?
    public init(challenge: String? = nil) { self.challenge = challenge }
}

/// `POST /v1/sessions/passkey`: the platform's assertion, and the password login's `challenge` when
/// it is that login's second step.
public struct PasskeyLogin: Codable, Sendable, Equatable {
    public var credential: PasskeyAssertion
    public var challenge: String?
    public var device: String?
    /// Which tokens the answer carries (absent: the session's own token).
    public var tokens: TokenKind?
    public init(credential: PasskeyAssertion, challenge: String? = nil, device: String? = nil, tokens: TokenKind? = nil) {
        self.credential = credential
        self.challenge = challenge
        self.device = device
        self.tokens = tokens
    }
}
