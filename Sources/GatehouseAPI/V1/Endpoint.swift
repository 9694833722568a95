import Foundation

/// One operation of an HTTP API, declared once: its method, its path (OpenAPI form, `{name}` for
/// a parameter), the status of its success, who may call it, and the types of its body and its
/// answer. The server's router, the SDK's clients and the tests all take it from here, so a path,
/// a method or a status cannot differ between them (the OpenAPI test checks each against the
/// document too).
public struct Endpoint<Input: Sendable, Output: Sendable>: EndpointDeclaration {
    /// The HTTP method.
    public let method: HTTPVerb
    /// The path, with `{name}` for each path parameter.
    public let path: String
    /// The status of a successful answer (`204` when `Output` is ``NoContent``).
    public let successStatus: Int
    /// Who may call it.
    public let access: Access
    /// The query parameters it reads: its `Input`'s when that is an ``EndpointQuery``, else those
    /// given (a raw upload's file name, say).
    public let queryParameters: [QueryParameter]
    /// Its name, summary, tags, refusals, shared answers and headers, and its path parameters'
    /// types (set by ``operation(_:_:tags:)``, ``errors(_:format:)``, ``shared(_:)``,
    /// ``headers(_:)`` and ``uuid(_:notFound:)``).
    public internal(set) var declaration = OperationDeclaration()

    /// An operation: its method, path, status of a success, who may call it and its query parameters.
    public init(_ method: HTTPVerb, _ path: String, success successStatus: Int = 200, access: Access = .session, query: [QueryParameter] = []) {
        self.method = method
        self.path = path
        self.successStatus = successStatus
        self.access = access
        self.queryParameters = (Input.self as? any EndpointQuery.Type)?.parameters ?? query
    }

    /// The path with its `{name}` placeholders filled in (values percent-escaped).
    public func path(_ values: [String: String]) -> String { V1.filling(path, values) }

    public var description: String { "\(method.rawValue) \(path)" }

    /// The input's type (the OpenAPI document reads it).
    public var inputType: Any.Type { Input.self }
    /// The output's type (the OpenAPI document reads it).
    public var outputType: Any.Type { Output.self }
}

/// What every endpoint says about itself, whatever its types (for lists of endpoints).
public protocol EndpointDeclaration: Sendable, CustomStringConvertible {
    /// The HTTP method.
    var method: HTTPVerb { get }
    /// The path, with `{name}` for each path parameter.
    var path: String { get }
    /// The status of a success.
    var successStatus: Int { get }
    /// Who may call it.
    var access: Access { get }
    /// The query parameters it reads.
    var queryParameters: [QueryParameter] { get }
    /// Its OpenAPI declaration: id, summary, tags, refusals.
    var declaration: OperationDeclaration { get }
    /// The type of its body (``NoContent`` for none; an ``EndpointQuery`` when it reads its query).
    var inputType: Any.Type { get }
    /// The type of its answer (``NoContent`` for `204`).
    var outputType: Any.Type { get }
}

/// An HTTP method.
public enum HTTPVerb: String, Sendable, CaseIterable {
    /// The methods the API uses.
    case get = "GET", post = "POST", put = "PUT", patch = "PATCH", delete = "DELETE"
}

/// Who may call an endpoint.
public enum Access: Sendable, Equatable {
    /// Anybody (sign-up, login, recovery, public images).
    case anyone
    /// A bearer token of a live session.
    case session
    /// An admin key (`/admin/v1`) holding this scope: never a person's session.
    case adminKey(scope: String)
}

/// No body: the input of an endpoint that takes none, the output of one that answers `204`.
public struct NoContent: Codable, Sendable, Equatable {
    /// No body.
    public init() {}
}

/// A body that is not JSON: an image upload or download, with its media type.
public struct RawBody: Sendable, Equatable {
    /// The body.
    public var data: Data
    /// Its media type.
    public var contentType: String
    /// Makes one of its members, each as its property describes.
    public init(data: Data, contentType: String) {
        self.data = data
        self.contentType = contentType
    }
}

/// A form body (urlencoded or multipart; JSON too where the surface takes it), read field by
/// field by its surface: the fields are in the API document, not in a type.
public struct FormBody: Sendable, Equatable {
    /// A form body (its fields are read by name).
    public init() {}
}

/// Paths outside the versioned API: the API's own description.
public enum APIReference {
    /// `GET`: the OpenAPI 3.1 document of every HTTP surface.
    public static let openAPI = "/openapi.json"
    /// The same document as YAML.
    public static let openAPIYAML = "/openapi.yaml"
    /// The API reference page, rendered from the document.
    public static let docs = "/docs"
}
