import Foundation

/// The query string of an operation, declared once beside it: its parameters (which the server
/// reads by, the SDK sends and the OpenAPI document lists) and a typed value. An endpoint whose
/// `Input` is an `EndpointQuery` takes its input from the query string, never from a body.
public protocol EndpointQuery: Sendable {
    /// Every parameter the operation reads, in the order the document lists them.
    static var parameters: [QueryParameter] { get }
    /// Reads a request's query; a value against its parameter's rule throws ``QueryError``.
    init(from query: QueryValues) throws
    /// The values to send, by name; absent parameters are left out.
    var values: [String: String] { get }
}

/// One declared query parameter.
public struct QueryParameter: Sendable, Equatable {
    /// What a parameter's value is.
    public enum Kind: Sendable, Equatable {
        /// Free text (a search).
        case text
        /// An opaque page cursor from a previous answer.
        case cursor
        /// How many items a page holds: a whole number from 1 (the server caps it).
        case limit
        /// An id.
        case uuid
        /// One of these values.
        case choice([String])
        /// Text that takes this rule (a link's token), checked by the handler.
        case described(MemberRule)
    }

    /// Its name.
    public let name: String
    /// What its value is.
    public let kind: Kind
    /// Whether the operation refuses a request without it.
    public let required: Bool

    /// A parameter by its name, what its value is, and whether it is required.
    public init(_ name: String, _ kind: Kind, required: Bool = false) {
        self.name = name
        self.kind = kind
        self.required = required
    }

    /// The page cursor every list takes.
    public static let cursor = QueryParameter("cursor", .cursor)
    /// The page size every list takes.
    public static let limit = QueryParameter("limit", .limit)

    /// A parameter whose value is one of an enumeration's raw values.
    public static func choice<T: RawRepresentable & CaseIterable>(_ name: String, _ type: T.Type, required: Bool = false) -> QueryParameter
    where T.RawValue == String {
        QueryParameter(name, .choice(T.allCases.map(\.rawValue)), required: required)
    }
}

/// A query value that breaks its parameter's rule: the parameter, what was sent (at most 40
/// characters), and what it takes.
public struct QueryError: Error, Equatable, Sendable {
    /// Its name.
    public let name: String
    /// The value as given.
    public let value: String
    /// What the parameter takes.
    public let expected: String

    /// Makes one of its members, each as its property describes.
    public init(name: String, value: String, expected: String) {
        self.name = name
        self.value = String(value.prefix(40))
        self.expected = expected
    }
}

/// A request's query values by name (an empty value is an absent one), read by the one rule
/// of each kind of parameter.
public struct QueryValues: Sendable {
    private let raw: [String: String]

    /// A request's query values by name (empty ones count as absent).
    public init(_ raw: [String: String]) { self.raw = raw.filter { !$0.value.isEmpty } }

    /// A parameter's text, as given.
    public func text(_ name: String) -> String? { raw[name] }

    /// A page size (a whole number from 1); nil when absent.
    public func limit(_ name: String = "limit") throws -> Int? {
        guard let value = raw[name] else { return nil }
        guard let number = Int(value), number >= 1 else { throw QueryError(name: name, value: value, expected: "a whole number from 1") }
        return number
    }

    /// A UUID; nil when absent.
    public func uuid(_ name: String) throws -> UUID? {
        guard let value = raw[name] else { return nil }
        guard let id = UUID(uuidString: value) else { throw QueryError(name: name, value: value, expected: "an id") }
        return id
    }

    /// One of an enumeration's values; nil when absent.
    public func choice<T: RawRepresentable & CaseIterable>(_ name: String, as type: T.Type) throws -> T? where T.RawValue == String {
        guard let value = raw[name] else { return nil }
        guard let parsed = T(rawValue: value) else {
            throw QueryError(name: name, value: value, expected: T.allCases.map(\.rawValue).joined(separator: " or "))
        }
        return parsed
    }

    /// One of an enumeration's values, required.
    public func required<T: RawRepresentable & CaseIterable>(_ name: String, as type: T.Type) throws -> T where T.RawValue == String {
        guard let parsed = try choice(name, as: type) else {
            throw QueryError(name: name, value: "", expected: T.allCases.map(\.rawValue).joined(separator: " or "))
        }
        return parsed
    }
}

extension Dictionary where Key == String, Value == String {
    /// Adds `value` under `name` when there is one (ids lower-cased, as the API writes them).
    mutating func put(_ name: String, _ value: String?) { if let value { self[name] = value } }
    mutating func put(_ name: String, _ value: Int?) { if let value { self[name] = String(value) } }
    mutating func put(_ name: String, _ value: UUID?) { if let value { self[name] = value.uuidString.lowercased() } }
    mutating func put<T: RawRepresentable>(_ name: String, _ value: T?) where T.RawValue == String { if let value { self[name] = value.rawValue } }
}

/// A page of a list: where to go on from, and how many.
public struct PageQuery: EndpointQuery, Equatable {
    /// Where the page starts: a `nextCursor` of a previous answer.
    public var cursor: String?
    /// How many items a page holds at most.
    public var limit: Int?
    /// Makes one of its members, each as its property describes.
    public init(cursor: String? = nil, limit: Int? = nil) {
        self.cursor = cursor
        self.limit = limit
    }
    /// Every parameter the operation reads, in the order the document lists them.
    public static let parameters: [QueryParameter] = [.cursor, .limit]
    /// Reads it from a request's query; a value against its parameter's rule throws ``QueryError``.
    public init(from query: QueryValues) throws { self.init(cursor: query.text("cursor"), limit: try query.limit()) }
    /// The query's values to send, by name; absent parameters are left out.
    public var values: [String: String] {
        var values: [String: String] = [:]
        values.put("cursor", cursor)
        values.put("limit", limit)
        return values
    }
}

/// A search with a page: the text, where to go on from, and how many.
public struct SearchQuery: EndpointQuery, Equatable {
    /// The search text.
    public var q: String?
    /// Where the page starts: a `nextCursor` of a previous answer.
    public var cursor: String?
    /// How many items a page holds at most.
    public var limit: Int?
    /// Makes one of its members, each as its property describes.
    public init(q: String? = nil, cursor: String? = nil, limit: Int? = nil) {
        self.q = q
        self.cursor = cursor
        self.limit = limit
    }
    /// Every parameter the operation reads, in the order the document lists them.
    public static let parameters: [QueryParameter] = [QueryParameter("q", .text), .cursor, .limit]
    /// Reads it from a request's query; a value against its parameter's rule throws ``QueryError``.
    public init(from query: QueryValues) throws { self.init(q: query.text("q"), cursor: query.text("cursor"), limit: try query.limit()) }
    /// The query's values to send, by name; absent parameters are left out.
    public var values: [String: String] {
        var values: [String: String] = [:]
        values.put("q", q)
        values.put("cursor", cursor)
        values.put("limit", limit)
        return values
    }
}
