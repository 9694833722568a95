import Foundation

extension V1 {
    /// Second factors: an authenticator app's codes (TOTP, RFC 6238) and the recovery codes that
    /// stand in for it; and the second step of a login that needs one.
    public enum SecondFactors {
        /// The second step of a login: the challenge a password login answered with (403
        /// `second_factor_required`) and a code from the authenticator app or a recovery code;
        /// answers the session.
        public static let complete = Endpoint<SecondFactorLogin, AuthSession>(.post, "/v1/sessions/second-factor", success: 201, access: .anyone)
            .operation("completeSecondFactor", "Finish a login with the authenticator app's code or a recovery code", tags: "Second factors")
            .errors([400: [.invalidCode, .loginChallengeInvalid, .missingParameter, .malformedBody], 403: [.accountLocked]])
            .shared(.payloadTooLarge, .unsupportedMediaType, .tooManyRequests, .unexpectedProblem)
        /// My second factors: whether the authenticator app is on, how many recovery codes are left.
        public static let status = Endpoint<NoContent, SecondFactorStatus>(.get, "/v1/me/second-factors")
            .operation("getSecondFactors", "My second factors", tags: "Second factors")
            .shared(.unauthorized, .unexpectedProblem)
        /// Starts turning the authenticator app on (a step-up: the current password, and a passkey when
        /// I have any): a new secret, shown
        /// this once, which `confirmTOTP` turns on with a first code. Asking again replaces it.
        public static let enrolTOTP = Endpoint<TOTPEnrolmentRequest, TOTPEnrolment>(.post, "/v1/me/totp", success: 201)
            .operation("enrolTOTP", "Start turning the authenticator app on", tags: "Second factors")
            .errors([400: [.invalidCredentials, .currentPasswordRequired, .passkeyInvalid, .malformedBody], 403: [.secondFactorRequired], 409: [.totpAlreadyEnabled]])
            .shared(.unauthorized, .payloadTooLarge, .unsupportedMediaType, .tooManyRequests, .unexpectedProblem)
        /// Turns the authenticator app on with a first code from it; answers the ten recovery codes, shown this once.
        public static let confirmTOTP = Endpoint<CodeVerification, RecoveryCodes>(.post, "/v1/me/totp/confirm")
            .operation("confirmTOTP", "Turn the authenticator app on with its first code", tags: "Second factors")
            .errors([400: [.invalidCode, .codeExpired, .malformedBody], 409: [.totpAlreadyEnabled, .totpNotEnabled]])
            .shared(.unauthorized, .payloadTooLarge, .unsupportedMediaType, .tooManyRequests, .unexpectedProblem)
        /// Turns the authenticator app off (a step-up: the current password and a code from it, a recovery code or a passkey).
        public static let disableTOTP = Endpoint<SecondFactorProof, NoContent>(.delete, "/v1/me/totp", success: 204)
            .operation("disableTOTP", "Turn the authenticator app off", tags: "Second factors")
            .errors([400: [.invalidCredentials, .invalidCode, .passkeyInvalid, .malformedBody], 403: [.secondFactorRequired], 409: [.totpNotEnabled]])
            .shared(.unauthorized, .payloadTooLarge, .unsupportedMediaType, .tooManyRequests, .unexpectedProblem)
        /// Ten new recovery codes (the old ones stop working); needs a step-up.
        public static let renewRecoveryCodes = Endpoint<SecondFactorProof, RecoveryCodes>(.post, "/v1/me/recovery-codes", success: 201)
            .operation("renewRecoveryCodes", "Make ten new recovery codes", tags: "Second factors")
            .errors([400: [.invalidCredentials, .invalidCode, .passkeyInvalid, .malformedBody], 403: [.secondFactorRequired], 409: [.totpNotEnabled]])
            .shared(.unauthorized, .payloadTooLarge, .unsupportedMediaType, .tooManyRequests, .unexpectedProblem)

        /// Every operation above (the tests check it against the router and the OpenAPI document).
        public static let all: [any EndpointDeclaration] = [complete, status, enrolTOTP, confirmTOTP, disableTOTP, renewRecoveryCodes]
    }
}

/// What a password login answers when the account has a second factor: no session yet, but a
/// challenge that `POST /v1/sessions/second-factor` finishes with a code. In the 403
/// `second_factor_required` problem's `secondFactor` member.
public struct SecondFactorChallenge: Codable, Sendable, Equatable {
    /// Hand it back with the code. Random, single-use, short-lived.
    public var challenge: String
    /// What may finish it: `totp` (the authenticator app's code), `recovery_code`.
    public var methods: [String]
    /// After this the password must be given again.
    public var expiresAt: Date
    /// Makes one of its members, each as its property describes.
    public init(challenge: String, methods: [String], expiresAt: Date) {
        self.challenge = challenge
        self.methods = methods
        self.expiresAt = expiresAt
    }
}

/// `POST /v1/sessions/second-factor`: the challenge and one of `code` (the authenticator app's
/// six digits) or `recoveryCode`.
public struct SecondFactorLogin: Codable, Sendable, Equatable {
    /// The challenge the login answered with `second_factor_required`.
    public var challenge: String
    /// A code of the authenticator app.
    public var code: String?
    /// A recovery code, instead.
    public var recoveryCode: String?
    /// The device, as the app names it (shown in my sessions).
    public var device: String?
    /// Which tokens the answer carries (absent: the session's own token).
    public var tokens: TokenKind?
    /// Makes one of its members, each as its property describes.
    public init(challenge: String, code: String? = nil, recoveryCode: String? = nil, device: String? = nil, tokens: TokenKind? = nil) {
        self.challenge = challenge
        self.code = code
        self.recoveryCode = recoveryCode
        self.device = device
        self.tokens = tokens
    }
}

/// `GET /v1/me/second-factors`.
public struct SecondFactorStatus: Codable, Sendable, Equatable {
    /// Whether logins ask for the authenticator app's code.
    public var totp: Bool
    /// When it was turned on.
    public var totpSince: Date?
    /// Recovery codes not used yet (0 when the authenticator app is off).
    public var recoveryCodesLeft: Int
    /// My passkeys: with any (or the app on), adding or removing a factor needs a step-up proof.
    public var passkeys: Int
    /// Makes one of its members, each as its property describes.
    public init(totp: Bool, totpSince: Date?, recoveryCodesLeft: Int, passkeys: Int = 0) {
        self.totp = totp
        self.totpSince = totpSince
        self.recoveryCodesLeft = recoveryCodesLeft
        self.passkeys = passkeys
    }
}

/// `POST /v1/me/totp`: a step-up — the current password proves the session's holder is the person,
/// and, when the account has passkeys, an assertion of one of them (`passkey`).
public struct TOTPEnrolmentRequest: Codable, Sendable, Equatable {
    /// The account's password.
    public var currentPassword: String
    /// An assertion of one of my passkeys (options from `POST /v1/me/passkeys/step-up-options`).
    public var passkey: PasskeyAssertion?
    /// Makes one of its members, each as its property describes.
    public init(currentPassword: String, passkey: PasskeyAssertion? = nil) {
        self.currentPassword = currentPassword
        self.passkey = passkey
    }
}

/// A new authenticator secret, shown this once: `uri` for a QR code (or a tap on the phone that
/// has the app), `secret` to type in by hand.
public struct TOTPEnrolment: Codable, Sendable, Equatable {
    /// `otpauth://totp/…`: what authenticator apps scan.
    public var uri: String
    /// The secret in base32, as apps take it typed.
    public var secret: String
    /// How many digits a code has.
    public var digits: Int
    /// How many seconds a code lasts.
    public var period: Int
    /// Confirm with a first code before this, or ask again.
    public var expiresAt: Date
    /// Makes one of its members, each as its property describes.
    public init(uri: String, secret: String, digits: Int = 6, period: Int = 30, expiresAt: Date) {
        self.uri = uri
        self.secret = secret
        self.digits = digits
        self.period = period
        self.expiresAt = expiresAt
    }
}

/// Ten single-use recovery codes, shown this once: each stands in for the authenticator app once.
public struct RecoveryCodes: Codable, Sendable, Equatable {
    /// The codes, each used once; shown only now.
    public var codes: [String]
    /// Makes one of its members, each as its property describes.
    public init(codes: [String]) {
        self.codes = codes
    }
}

/// A step-up: the current password and, when the account has a second factor, one proof of it —
/// a code from the authenticator app (`code`), a recovery code (`recoveryCode`) or an assertion of
/// one of my passkeys (`passkey`, options from `POST /v1/me/passkeys/step-up-options`).
public struct SecondFactorProof: Codable, Sendable, Equatable {
    /// The account's password.
    public var currentPassword: String
    /// A code of the authenticator app.
    public var code: String?
    /// A recovery code, instead.
    public var recoveryCode: String?
    /// A passkey's assertion, instead of a code.
    public var passkey: PasskeyAssertion?
    /// Makes one of its members, each as its property describes.
    public init(currentPassword: String, code: String? = nil, recoveryCode: String? = nil, passkey: PasskeyAssertion? = nil) {
        self.currentPassword = currentPassword
        self.code = code
        self.recoveryCode = recoveryCode
        self.passkey = passkey
    }
}
