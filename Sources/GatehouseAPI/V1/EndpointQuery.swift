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

    public let name: String
    public let kind: Kind
    public let required: Bool

    public init(_ name: String, _ kind: Kind, required: Bool = false) {
        self.name = name
        self.kind = kind
        self.required = required
    }

    public static let cursor = QueryParameter("cursor", .cursor)
    public static let limit = QueryParameter("limit", .limit)

    public static func choice<T: RawRepresentable & CaseIterable>(_ name: String, _ type: T.Type, required: Bool = false) -> QueryParameter
    where T.RawValue == String {
        QueryParameter(name, .choice(T.allCases.map(\.rawValue)), required: required)
    }
}

/// A query value that breaks its parameter's rule: the parameter, what was sent (at most 40
/// characters), and what it takes.
public struct QueryError: Error, Equatable, Sendable {
    public let name: String
    public let value: String
    public let expected: String

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

    public init(_ raw: [String: String]) { self.raw = raw.filter { !$0.value.isEmpty } }

    public func text(_ name: String) -> String? { raw[name] }

    public func limit(_ name: String = "limit") throws -> Int? {
        guard let value = raw[name] else { return nil }
        guard let number = Int(value), number >= 1 else { throw QueryError(name: name, value: value, expected: "a whole number from 1") }
        return number
    }

    public func uuid(_ name: String) throws -> UUID? {
        guard let value = raw[name] else { return nil }
        guard let id = UUID(uuidString: value) else { throw QueryError(name: name, value: value, expected: "an id") }
        return id
    }

    public func choice<T: RawRepresentable & CaseIterable>(_ name: String, as type: T.Type) throws -> T? where T.RawValue == String {
        guard let value = raw[name] else { return nil }
        guard let parsed = T(rawValue: value) else {
            throw QueryError(name: name, value: value, expected: T.allCases.map(\.rawValue).joined(separator: " or "))
        }
        return parsed
    }

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
    public var cursor: String?
    public var limit: Int?
    public init(cursor: String? = nil, limit: Int? = nil) {
        self.cursor = cursor
        self.limit = limit
    }
    public static let parameters: [QueryParameter] = [.cursor, .limit]
    public init(from query: QueryValues) throws { self.init(cursor: query.text("cursor"), limit: try query.limit()) }
    public var values: [String: String] {
        var values: [String: String] = [:]
        values.put("cursor", cursor)
        values.put("limit", limit)
        return values
    }
}

/// A search with a page: the text, where to go on from, and how many.
public struct SearchQuery: EndpointQuery, Equatable {
    public var q: String?
    public var cursor: String?
    public var limit: Int?
    public init(q: String? = nil, cursor: String? = nil, limit: Int? = nil) {
        self.q = q
        self.cursor = cursor
        self.limit = limit
    }
    public static let parameters: [QueryParameter] = [QueryParameter("q", .text), .cursor, .limit]
    public init(from query: QueryValues) throws { self.init(q: query.text("q"), cursor: query.text("cursor"), limit: try query.limit()) }
    public var values: [String: String] {
        var values: [String: String] = [:]
        values.put("q", q)
        values.put("cursor", cursor)
        values.put("limit", limit)
        return values
    }
}
