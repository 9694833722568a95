import Foundation

/// Any JSON value, for input whose shape is not trusted yet: a gateway frame before its type is
/// known, the Sign To Login API's structured fields, a JSON body read as form parameters. The one
/// such type of the server. Integers stay exact (a 17-digit number is not rounded through a
/// `Double`).
package enum JSONValue: Codable, Equatable, Sendable {
    case string(String)
    case integer(Int64)
    case number(Double)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([String: JSONValue])

    package init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let i = try? c.decode(Int64.self) { self = .integer(i) }
        else if let n = try? c.decode(Double.self) { self = .number(n) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([JSONValue].self) { self = .array(a) }
        else { self = .object(try c.decode([String: JSONValue].self)) }
    }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .string(let s): try c.encode(s)
        case .integer(let i): try c.encode(i)
        case .number(let n): try c.encode(n)
        case .bool(let b): try c.encode(b)
        case .null: try c.encodeNil()
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }

    /// A string member's value; nil for anything else.
    package var string: String? { if case .string(let s) = self { return s }; return nil }

    /// The members of an object; nil for anything else.
    package var object: [String: JSONValue]? { if case .object(let o) = self { return o }; return nil }

    /// A finite number, or a string holding one (clients send both).
    package var number: Double? {
        switch self {
        case .integer(let i): Double(i)
        case .number(let n): n.isFinite ? n : nil
        case .string(let s): Double(s.trimmingCharacters(in: .whitespaces)).flatMap { $0.isFinite ? $0 : nil }
        default: nil
        }
    }

    /// A scalar as text, as a form field would carry it: a string as is, a number in its shortest
    /// form (an integral one without a fraction), a Boolean as `true`/`false`; nil for null,
    /// arrays and objects.
    package var text: String? {
        switch self {
        case .string(let s): s
        case .integer(let i): String(i)
        case .number(let n): n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : String(n)
        case .bool(let b): b ? "true" : "false"
        default: nil
        }
    }

    /// A member of an object, by the first of `names` it has (the spec writes `dot count` and `dot_count`).
    package subscript(_ names: String...) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        for name in names { if let value = members[name] { return value } }
        return nil
    }
}
