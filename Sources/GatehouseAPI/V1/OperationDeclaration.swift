import Foundation

/// What an operation says about itself beyond its method, path and types: its name and one-line
/// summary in the API document, its tags, the refusals it answers, the answers it shares with its
/// surface, the headers it reads and the type of each path parameter. The server's router reads
/// the path parameters' types from here (an id that is not one answers the declared 404), and the
/// OpenAPI document takes all of it from here; the document's prose file adds descriptions only.
public struct OperationDeclaration: Sendable, Equatable {
    /// The document's `operationId` (unique across the document).
    public var id = ""
    /// A short title of the operation.
    public var summary = ""
    /// The groups the OpenAPI document lists it under.
    public var tags: [String] = []
    /// The refusals this operation answers itself, in the order the document lists them.
    public var errors: [ErrorAnswer] = []
    /// How its surface writes a refusal.
    public var errorFormat = ErrorFormat.problem
    /// The answers its surface gives every operation alike (a dead session, a body too large, …).
    public var shared: [SharedAnswer] = []
    /// The request headers it reads that the document declares once for every operation.
    public var headers: [SharedHeader] = []
    /// Its path parameters by name, where one is more than text.
    public var pathTypes: [String: PathParameter] = [:]
    /// The form it reads, when its body is one (`FormBody`).
    public var form: FormDeclaration?

    /// An empty declaration; the builder methods of ``Endpoint`` fill it.
    public init() {}
}

/// A refusal an operation answers: the status and the `GatehouseErrorCode`s its surface carries
/// with it (none for a page).
public struct ErrorAnswer: Sendable, Equatable {
    /// The HTTP status.
    public let status: Int
    /// The codes it answers with that status.
    public let codes: [GatehouseErrorCode]

    /// The answer of this status with these codes.
    public init(_ status: Int, _ codes: [GatehouseErrorCode] = []) {
        self.status = status
        self.codes = codes
    }
}

/// How a surface writes its refusals.
public enum ErrorFormat: String, Sendable, Equatable {
    /// An RFC 9457 problem document (`/v1`, `/admin/v1`, the provider's webhook).
    case problem
    /// Plain text with the code in `X-Error-Code` (`/api`).
    case plainText
    /// An HTML page (the consoles, the Sign To Login pages).
    case page
    /// Sign To Login's JSON answer, `{"res": …}`.
    case signToLogin
    /// A status with no body.
    case bare
    /// OAuth 2.0's JSON refusal, `{"error": …, "error_description": …}` (RFC 6749 §5.2): the OpenID Connect provider.
    case oauth
}

/// An answer every operation of a surface gives alike, declared once in the document's
/// components (`#/components/responses/<name>`).
public enum SharedAnswer: String, Sendable, Equatable, CaseIterable {
    /// `/v1` and `/admin/v1`: a missing, unknown, revoked or expired bearer token (or admin key).
    case unauthorized = "Unauthorized"
    /// 413: the body is too large.
    case payloadTooLarge = "PayloadTooLarge"
    /// 415: the body's media type is not one the operation takes.
    case unsupportedMediaType = "UnsupportedMediaType"
    /// 429: too many requests; `Retry-After` says when to try again.
    case tooManyRequests = "TooManyRequests"
    /// Any other error, as a problem document.
    case unexpectedProblem = "UnexpectedProblem"
    /// `/api`'s forms of the same.
    case phoneUnauthorized = "PhoneUnauthorized"
    /// `/api`'s 429, as plain text with `X-Error-Code`.
    case phoneTooManyRequests = "PhoneTooManyRequests"
    /// `/api`'s 500, as plain text with `X-Error-Code`.
    case phoneServerError = "PhoneServerError"

    /// The status it answers (`default` for any other).
    public var status: String {
        switch self {
        case .unauthorized, .phoneUnauthorized: "401"
        case .payloadTooLarge: "413"
        case .unsupportedMediaType: "415"
        case .tooManyRequests, .phoneTooManyRequests: "429"
        case .unexpectedProblem: "default"
        case .phoneServerError: "500"
        }
    }

    /// How it is written: a problem document, or `/api`'s plain text.
    public var format: ErrorFormat {
        switch self {
        case .phoneUnauthorized, .phoneTooManyRequests, .phoneServerError: .plainText
        case .unauthorized, .payloadTooLarge, .unsupportedMediaType, .tooManyRequests, .unexpectedProblem: .problem
        }
    }

    /// The headers it carries, in order.
    public var headers: [ResponseHeader] {
        switch self {
        case .unauthorized: [.wwwAuthenticate]
        case .tooManyRequests: [.retryAfter]
        case .phoneUnauthorized: [.errorCode, .wwwAuthenticate]
        case .phoneTooManyRequests: [.errorCode, .retryAfter]
        case .phoneServerError: [.errorCode]
        case .payloadTooLarge, .unsupportedMediaType, .unexpectedProblem: []
        }
    }
}

/// A response header the document declares once (`#/components/headers/<name>`).
public enum ResponseHeader: String, Sendable, Equatable, CaseIterable {
    /// `Retry-After`: seconds to wait.
    case retryAfter = "RetryAfter"
    /// `WWW-Authenticate`: how to authenticate.
    case wwwAuthenticate = "WWWAuthenticate"
    /// `/api`'s `X-Error-Code`: a ``GatehouseErrorCode``.
    case errorCode = "XErrorCode"

    /// The header's name on the wire.
    public var name: String {
        switch self {
        case .retryAfter: "Retry-After"
        case .wwwAuthenticate: "WWW-Authenticate"
        case .errorCode: "X-Error-Code"
        }
    }
}

/// A request header the document declares once (`#/components/parameters/<name>`).
public enum SharedHeader: String, Sendable, Equatable, CaseIterable {
    /// The wallet's `Idempotency-Key`.
    case idempotencyKey = "IdempotencyKey"
    /// The language of the messages a call sends (`Accept-Language`).
    case acceptLanguage = "AcceptLanguage"

    /// The header's name on the wire.
    public var name: String {
        switch self {
        case .idempotencyKey: "Idempotency-Key"
        case .acceptLanguage: "Accept-Language"
        }
    }

    /// Whether an operation that reads it needs it.
    public var required: Bool { self == .idempotencyKey }

    /// What its value takes.
    public var rule: MemberRule? {
        switch self {
        case .idempotencyKey: .idempotencyKey
        case .acceptLanguage: nil
        }
    }
}

/// A form body as its operation reads it: the media types it takes and its fields, in order.
/// The document writes its schema from these; the prose describes the fields and their limits.
public struct FormDeclaration: Sendable, Equatable {
    /// A form's media type.
    public enum MediaType: String, Sendable, Equatable {
        /// `application/x-www-form-urlencoded`.
        case urlencoded = "application/x-www-form-urlencoded"
        /// `multipart/form-data`.
        case multipart = "multipart/form-data"
        /// The same fields as one flat JSON object.
        case json = "application/json"
    }

    /// The media types it is taken in.
    public var mediaTypes: [MediaType]
    /// Its fields.
    public var fields: [FormField]
    /// The name the document gives its schema (`#/components/schemas/<name>`); nil: written in place.
    public var component: String?
    /// Whether a body must be sent (the fields may also come in the query string where it is not).
    public var required: Bool
}

/// A field of a form.
public struct FormField: Sendable, Equatable {
    /// What a field's value is.
    public enum Kind: Sendable, Equatable {
        /// Text (a file's bytes included).
        case text
        /// Text or a JSON value (the spec's JSON bodies carry some fields as objects, arrays or numbers).
        case any
        /// A JSON value of this shape in a JSON body, its JSON text in a form.
        case jsonOrText(JSONShape)
    }

    /// The shape of a field's JSON value.
    public enum JSONShape: String, Sendable, Equatable {
        /// A JSON object.
        case object
        /// A JSON number.
        case number
        /// An array of objects.
        case arrayOfObjects
        /// An array of strings.
        case arrayOfStrings
    }

    /// Its name.
    public let name: String
    /// What its value is.
    public let kind: Kind
    /// Whether a request without it is refused.
    public let required: Bool
    /// What its text takes beyond being text.
    public let rule: MemberRule?

    /// A text field, with its rule.
    public static func text(_ name: String, _ rule: MemberRule? = nil, required: Bool = false) -> FormField {
        FormField(name: name, kind: .text, required: required, rule: rule)
    }
    /// A field of any kind (a file, say).
    public static func any(_ name: String, required: Bool = false) -> FormField { FormField(name: name, kind: .any, required: required, rule: nil) }
    /// A field whose value is JSON of this shape.
    public static func json(_ name: String, _ shape: JSONShape, required: Bool = false) -> FormField {
        FormField(name: name, kind: .jsonOrText(shape), required: required, rule: nil)
    }
}

/// The type of a path parameter that is more than text.
public struct PathParameter: Sendable, Equatable {
    /// What a path parameter is.
    public enum Kind: Sendable, Equatable {
        /// A UUID: any other value names nothing.
        case uuid
        /// Text that takes this rule (one of a few actions, a tag).
        case text(MemberRule)
    }

    /// What it is.
    public let kind: Kind
    /// What a value that names nothing answers: 404 with this code (nil: the surface's own page).
    public let notFound: GatehouseErrorCode?
}

extension Endpoint {
    /// The same endpoint, named and summed up in the document, under these tags.
    public func operation(_ id: String, _ summary: String, tags: String...) -> Self {
        var copy = self
        copy.declaration.id = id
        copy.declaration.summary = summary
        copy.declaration.tags = tags
        return copy
    }

    /// The same endpoint, answering these refusals (status and codes, in order) in `format`.
    public func errors(_ answers: KeyValuePairs<Int, [GatehouseErrorCode]>, format: ErrorFormat = .problem) -> Self {
        var copy = self
        copy.declaration.errors = answers.map { ErrorAnswer($0.key, $0.value) }
        copy.declaration.errorFormat = format
        return copy
    }

    /// The same endpoint, giving its surface's shared answers.
    public func shared(_ answers: SharedAnswer...) -> Self {
        var copy = self
        copy.declaration.shared = answers
        return copy
    }

    /// The same endpoint, reading these shared headers.
    public func headers(_ headers: SharedHeader...) -> Self {
        var copy = self
        copy.declaration.headers = headers
        return copy
    }

    /// The same endpoint, reading a form with these fields in these media types.
    public func form(_ mediaTypes: [FormDeclaration.MediaType], _ fields: [FormField], component: String? = nil, required: Bool = true) -> Self {
        var copy = self
        copy.declaration.form = FormDeclaration(mediaTypes: mediaTypes, fields: fields, component: component, required: required)
        return copy
    }

    /// The same endpoint, whose path parameter `name` is a UUID: any other value answers 404
    /// `notFound` (nil: the surface says so its own way).
    public func uuid(_ name: String = "id", notFound: GatehouseErrorCode?) -> Self {
        precondition(path.contains("{\(name)}"), "\(path) has no {\(name)}")
        var copy = self
        copy.declaration.pathTypes[name] = PathParameter(kind: .uuid, notFound: notFound)
        return copy
    }

    /// The same endpoint, whose path parameter `name` takes `rule` (the handler checks it).
    public func path(_ name: String, _ rule: MemberRule) -> Self {
        precondition(path.contains("{\(name)}"), "\(path) has no {\(name)}")
        var copy = self
        copy.declaration.pathTypes[name] = PathParameter(kind: .text(rule), notFound: nil)
        return copy
    }

    /// The path with its UUID parameter filled in.
    public func path(id: UUID) -> String {
        let name = declaration.pathTypes.first { $0.value.kind == .uuid }?.key ?? "id"
        return path([name: id.uuidString.lowercased()])
    }
}
