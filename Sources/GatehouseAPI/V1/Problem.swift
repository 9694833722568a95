import Foundation

/// An RFC 9457 problem document: every `/v1` error.
public struct Problem: Codable, Sendable, Equatable, Error {
    /// `urn:gatehouse:problem:<code>`.
    public var type: String
    /// The HTTP reason phrase.
    public var title: String
    /// The HTTP status code.
    public var status: Int
    /// What went wrong, in the request's language (`Accept-Language`: en or ru).
    public var detail: String
    /// The stable machine-readable code.
    public var code: GatehouseErrorCode
    /// The request member at fault, when one is.
    public var field: String?
    /// Wrong tries left on the code, for `invalid_code`.
    public var attemptsLeft: Int?
    /// Seconds to wait, for `rate_limited` and `resend_too_soon` (also in `Retry-After`).
    public var retryAfter: Int?
    /// For `second_factor_required` on `POST /v1/sessions`: the challenge the second step finishes.
    public var secondFactor: SecondFactorChallenge?
    /// For `identity_link_required`: the offer `POST /v1/sessions/link` takes up.
    public var identityLink: IdentityLinkOffer?
    /// Makes one of its members, each as its property describes.
    public init(type: String, title: String, status: Int, detail: String, code: GatehouseErrorCode, field: String? = nil, attemptsLeft: Int? = nil, retryAfter: Int? = nil,
                secondFactor: SecondFactorChallenge? = nil, identityLink: IdentityLinkOffer? = nil) {
        self.type = type
        self.title = title
        self.status = status
        self.detail = detail
        self.code = code
        self.field = field
        self.attemptsLeft = attemptsLeft
        self.retryAfter = retryAfter
        self.secondFactor = secondFactor
        self.identityLink = identityLink
    }

    /// The `type` URI for a code.
    public static func typeURI(for code: GatehouseErrorCode) -> String { "urn:gatehouse:problem:\(code.rawValue)" }
}
