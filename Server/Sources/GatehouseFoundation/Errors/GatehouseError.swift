import GatehouseAPI

/// The small set of errors the domain throws. Each surface maps them to its own wire form
/// in one place (for `/api`: `PhoneAccountsErrorMiddleware`).
package struct GatehouseError: Error, Sendable, CustomStringConvertible {
    package enum Kind: Sendable, Equatable {
        case invalidInput
        case conflict
        case unauthorized
        /// Visible, but not for this account to do (403): only where the thing itself is no secret.
        case forbidden
        case notFound
        /// Well-formed, but refused by a rule of the domain (422 where the surface speaks HTTP
        /// fully): not enough money, a limit, a reused idempotency key.
        case unprocessable
        /// A body over its limit: 413 where the surface speaks HTTP fully.
        case payloadTooLarge
        /// A body of a type the route does not take: 415 where the surface speaks HTTP fully.
        case unsupportedMediaType
        case rateLimited(retryAfterSeconds: Int)
        case unavailable
        case `internal`
    }

    package var kind: Kind
    package var code: GatehouseErrorCode
    package var message: LocalizedText
    /// The request member at fault, when the surface can name one.
    package var field: String?
    /// Wrong tries left on a code (`invalid_code`).
    package var attemptsLeft: Int?
    /// For `second_factor_required` where the surface has a second step: the challenge to finish.
    package var secondFactor: SecondFactorChallenge?
    /// For `identity_link_required`: the offer to link the identity to the account that owns its email.
    package var identityLink: IdentityLinkOffer?

    package init(_ kind: Kind, _ code: GatehouseErrorCode, _ message: LocalizedText, field: String? = nil, attemptsLeft: Int? = nil) {
        self.kind = kind
        self.code = code
        self.message = message
        self.field = field
        self.attemptsLeft = attemptsLeft
    }

    /// The same error, naming the request member at fault.
    package func on(field: String) -> GatehouseError {
        var copy = self
        copy.field = field
        return copy
    }

    package var description: String { "GatehouseError(\(code.rawValue))" }

    package static func invalid(_ code: GatehouseErrorCode, _ key: String, _ args: String...) -> GatehouseError {
        GatehouseError(.invalidInput, code, LocalizedText(key, args))
    }
    package static func conflict(_ code: GatehouseErrorCode, _ key: String, _ args: String...) -> GatehouseError {
        GatehouseError(.conflict, code, LocalizedText(key, args))
    }
    package static func rateLimited(_ code: GatehouseErrorCode, retryAfter: Double, _ key: String) -> GatehouseError {
        // Stored timestamps lose a few microseconds (SQLite keeps doubles): 60.000001 s is 60.
        let seconds = max(1, Int((retryAfter - 0.001).rounded(.up)))
        return GatehouseError(.rateLimited(retryAfterSeconds: seconds), code, LocalizedText(key, [String(seconds)]))
    }
    package static func bodyTooLarge(_ limit: Int) -> GatehouseError {
        GatehouseError(.payloadTooLarge, .bodyTooLarge, LocalizedText("error.bodyTooLarge", [String(limit)]))
    }
    /// 404 with `code` and its message (`error.<code in camel case>`: `transfer_not_found` says
    /// `error.transferNotFound`).
    package static func notFound(_ code: GatehouseErrorCode) -> GatehouseError {
        // `thing_not_found` → `error.thingNotFound`, word by word (one expression took the type checker a second).
        var key = "error."
        for (index, word) in code.rawValue.split(separator: "_").enumerated() {
            key += index == 0 ? String(word) : word.prefix(1).uppercased() + String(word.dropFirst())
        }
        return notFound(code, key)
    }
    package static func notFound(_ code: GatehouseErrorCode, _ key: String, field: String? = nil) -> GatehouseError {
        GatehouseError(.notFound, code, LocalizedText(key), field: field)
    }
    package static let unauthorized = GatehouseError(.unauthorized, .unauthorized, LocalizedText("error.unauthorized"))
    package static let invalidCredentials = GatehouseError(.invalidInput, .invalidCredentials, LocalizedText("error.invalidCredentials"))
    package static let refreshTokenInvalid = GatehouseError(.invalidInput, .refreshTokenInvalid, LocalizedText("error.refreshTokenInvalid"))
    /// What a request that met a `DatabaseOutage` answers: 503 `service_unavailable`, try again in a second.
    package static let serviceUnavailable = GatehouseError(.unavailable, .serviceUnavailable, LocalizedText("error.unavailable"))
    /// Said only to someone who proved they hold the account (the right password, code or
    /// signature): to anyone else a locked account looks like any other.
    package static let accountLocked = GatehouseError(.forbidden, .accountLocked, LocalizedText("error.accountLocked"))
    /// The password (or code, or signature) was right, and the account asks for a second factor.
    /// Without a challenge: the surface has no second step (`/api`, the gateway, Sign To Login).
    package static func secondFactorRequired(_ challenge: SecondFactorChallenge? = nil) -> GatehouseError {
        var error = GatehouseError(.forbidden, .secondFactorRequired,
                                   LocalizedText(challenge == nil ? "error.secondFactorElsewhere" : "error.secondFactorRequired"))
        error.secondFactor = challenge
        return error
    }
}

extension GatehouseError {
    /// The same error with a plain English text (`error.plain`).
    package func withText(_ text: String) -> GatehouseError {
        var copy = self
        copy.message = LocalizedText("error.plain", [text])
        return copy
    }
}
