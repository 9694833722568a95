import Foundation

/// The JSON account API `/v1`: paths, written once for the server, the SDK, the OpenAPI
/// document and the tests. Path parameters use the OpenAPI form `{name}`, which the server's
/// router also reads.
public enum AccountsV1API {
    public enum Path {
        /// `POST`: send a sign-up code to an email address or a phone.
        public static let signupCode = "/v1/signup/code"
        /// `POST`: create the account with the code; answers a session.
        public static let signup = "/v1/signup"
        /// `GET`: whether a tag is free.
        public static let tag = "/v1/tags/{tag}"
        /// `POST` logs in; `GET` lists my sessions; `DELETE ?scope=others` ends all but this one.
        public static let sessions = "/v1/sessions"
        /// `DELETE`: log out (end the session making the request).
        public static let currentSession = "/v1/sessions/current"
        /// `DELETE`: end one of my sessions.
        public static let session = "/v1/sessions/{id}"
        /// `POST`: send a password-recovery code.
        public static let recoveryCode = "/v1/recovery/code"
        /// `POST`: set a new password with the recovery code.
        public static let recovery = "/v1/recovery"
        /// `GET` my account; `PATCH` my profile.
        public static let me = "/v1/me"
        /// `POST`: change the password (needs the current one).
        public static let password = "/v1/me/password"
        /// `POST` starts an email change (a code goes to the new address); `DELETE` cancels it.
        public static let email = "/v1/me/email"
        /// `POST`: confirm the new address with its code.
        public static let emailVerify = "/v1/me/email/verify"
        /// `POST`: send a code to a phone to attach it to the account.
        public static let phone = "/v1/me/phone"
        /// `POST`: attach the phone with its code.
        public static let phoneVerify = "/v1/me/phone/verify"
        /// `PUT` an image (raw body, `Content-Type: image/…`); `DELETE` removes it.
        public static let avatar = "/v1/me/avatar"
        /// `GET`: an avatar image, public, immutable.
        public static let avatarImage = "/v1/avatars/{id}"
        /// `GET`: the OpenAPI 3.1 document of every HTTP surface.
        public static let openAPI = "/openapi.json"
        /// The same document as YAML.
        public static let openAPIYAML = "/openapi.yaml"
        /// The API reference page, rendered from the document.
        public static let docs = "/docs"

        /// `path` with its `{name}` placeholders filled in (values percent-escaped).
        public static func filling(_ path: String, _ values: [String: String]) -> String {
            var result = path
            for (name, value) in values {
                let escaped = value.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? value
                result = result.replacingOccurrences(of: "{\(name)}", with: escaped)
            }
            return result
        }
    }

    /// Media type of an error answer (RFC 9457).
    public static let problemContentType = "application/problem+json"

    /// The encoder the server writes with and the SDK reads with: ISO 8601 instants in UTC
    /// with whole seconds, keys sorted (stable bytes).
    public static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(WireDates.iso8601String(from: date))
        }
        return encoder
    }

    /// The matching decoder: reads ISO 8601 instants (with or without fractional seconds).
    public static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard text.contains("T"), let date = WireDates.parseFlexible(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an ISO 8601 instant: \(text)")
            }
            return date
        }
        return decoder
    }
}

/// The messenger's tag (its `@handle`): 3–32 of `a-z`, `0-9`, `_` and `.`, with at least one
/// letter (so a tag can never be read as a phone number at login), unique case-insensitively.
/// Typed capitals are accepted and lower-cased. One rule for the server and the SDK's forms.
public enum TagRule {
    public static let minLength = 3
    public static let maxLength = 32

    /// Which part of the rule a tag breaks.
    public enum Problem: Sendable, Equatable {
        case tooShort(minimum: Int)
        case tooLong(maximum: Int)
        case invalidCharacters
        case needsLetter
    }

    /// The tag trimmed and lower-cased (a leading `@` dropped), or nil when it breaks the rule.
    public static func normalize(_ raw: String) -> String? {
        let tag = canonical(raw)
        return problem(with: tag) == nil ? tag : nil
    }

    /// `raw` trimmed, without a leading `@`, lower-cased; not yet checked.
    public static func canonical(_ raw: String) -> String {
        var tag = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        if tag.hasPrefix("@") { tag.removeFirst() }
        return tag.lowercased()
    }

    /// The first part of the rule `tag` (already canonical) breaks, or nil.
    public static func problem(with tag: String) -> Problem? {
        if tag.count < minLength { return .tooShort(minimum: minLength) }
        if tag.count > maxLength { return .tooLong(maximum: maxLength) }
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789_.")
        if !tag.allSatisfy({ allowed.contains($0) }) { return .invalidCharacters }
        if !tag.contains(where: { $0.isLetter }) { return .needsLetter }
        return nil
    }
}
