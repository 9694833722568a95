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

    /// A Boolean; nil for anything else.
    package var bool: Bool? { if case .bool(let b) = self { return b }; return nil }

    /// The elements of an array; nil for anything else.
    package var array: [JSONValue]? { if case .array(let a) = self { return a }; return nil }

    /// The value as JSON text, object members sorted by their keys: what the server writes for
    /// others to read (a push payload, a provider's notification, a log line).
    package func sortedJSON(escapingSlashes: Bool = true) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = escapingSlashes ? [.sortedKeys] : [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    /// A member of an object, by the first of `names` it has (the spec writes `dot count` and `dot_count`).
    package subscript(_ names: String...) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        for name in names { if let value = members[name] { return value } }
        return nil
    }
}

extension JSONValue {
    package enum ParseError: Error, Equatable {
        case malformed(at: Int)
        case tooDeep
    }

    /// Parses a JSON text (RFC 8259) straight into a value: what `JSONDecoder` gives for
    /// `JSONValue`, without a thrown error per value on the way (it tries each type in turn),
    /// which made a signature of 2,000 points cost milliseconds to read. Integers that fit 64
    /// bits are `.integer`; other numbers `.number`. Nesting deeper than `maxDepth` is refused.
    package static func parse(_ bytes: some Collection<UInt8>, maxDepth: Int = 512) throws -> JSONValue {
        var parser = Parser(bytes: Array(bytes), maxDepth: maxDepth)
        parser.skipSpace()
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.at == parser.bytes.count else { throw ParseError.malformed(at: parser.at) }
        return value
    }

    private struct Parser {
        let bytes: [UInt8]
        let maxDepth: Int
        var at = 0

        init(bytes: [UInt8], maxDepth: Int) {
            self.bytes = bytes
            self.maxDepth = maxDepth
        }

        mutating func skipSpace() {
            while at < bytes.count, bytes[at] == 0x20 || bytes[at] == 0x09 || bytes[at] == 0x0A || bytes[at] == 0x0D { at += 1 }
        }

        func fail() -> ParseError { .malformed(at: at) }

        mutating func expect(_ word: StaticString) throws {
            let count = word.utf8CodeUnitCount
            guard at + count <= bytes.count else { throw fail() }
            for i in 0..<count where bytes[at + i] != word.utf8Start[i] { throw fail() }
            at += count
        }

        mutating func value(depth: Int) throws -> JSONValue {
            guard at < bytes.count else { throw fail() }
            switch bytes[at] {
            case UInt8(ascii: "{"):
                guard depth < maxDepth else { throw ParseError.tooDeep }
                at += 1
                var members: [String: JSONValue] = [:]
                skipSpace()
                if at < bytes.count, bytes[at] == UInt8(ascii: "}") { at += 1; return .object(members) }
                // Room for a few members at once: most objects are small (a signature's points have
                // two or three), and growing from one member costs a second allocation and a rehash.
                members.reserveCapacity(4)
                while true {
                    skipSpace()
                    guard at < bytes.count, bytes[at] == UInt8(ascii: "\"") else { throw fail() }
                    let name = try string()
                    skipSpace()
                    guard at < bytes.count, bytes[at] == UInt8(ascii: ":") else { throw fail() }
                    at += 1
                    skipSpace()
                    members[name] = try value(depth: depth + 1)
                    skipSpace()
                    guard at < bytes.count else { throw fail() }
                    if bytes[at] == UInt8(ascii: ",") { at += 1; continue }
                    guard bytes[at] == UInt8(ascii: "}") else { throw fail() }
                    at += 1
                    return .object(members)
                }
            case UInt8(ascii: "["):
                guard depth < maxDepth else { throw ParseError.tooDeep }
                at += 1
                var items: [JSONValue] = []
                skipSpace()
                if at < bytes.count, bytes[at] == UInt8(ascii: "]") { at += 1; return .array(items) }
                while true {
                    skipSpace()
                    items.append(try value(depth: depth + 1))
                    skipSpace()
                    guard at < bytes.count else { throw fail() }
                    if bytes[at] == UInt8(ascii: ",") { at += 1; continue }
                    guard bytes[at] == UInt8(ascii: "]") else { throw fail() }
                    at += 1
                    return .array(items)
                }
            case UInt8(ascii: "\""):
                return .string(try string())
            case UInt8(ascii: "t"):
                try expect("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try expect("false")
                return .bool(false)
            case UInt8(ascii: "n"):
                try expect("null")
                return .null
            default:
                return try number()
            }
        }

        mutating func number() throws -> JSONValue {
            let start = at
            func digits() -> Int {
                let from = at
                while at < bytes.count, bytes[at] >= UInt8(ascii: "0"), bytes[at] <= UInt8(ascii: "9") { at += 1 }
                return at - from
            }
            if at < bytes.count, bytes[at] == UInt8(ascii: "-") { at += 1 }
            guard at < bytes.count else { throw fail() }
            if bytes[at] == UInt8(ascii: "0") {
                at += 1
            } else {
                guard digits() > 0 else { throw fail() }
            }
            var integral = true
            if at < bytes.count, bytes[at] == UInt8(ascii: ".") {
                integral = false
                at += 1
                guard digits() > 0 else { throw fail() }
            }
            if at < bytes.count, bytes[at] == UInt8(ascii: "e") || bytes[at] == UInt8(ascii: "E") {
                integral = false
                at += 1
                if at < bytes.count, bytes[at] == UInt8(ascii: "+") || bytes[at] == UInt8(ascii: "-") { at += 1 }
                guard digits() > 0 else { throw fail() }
            }
            // An integer of up to 18 digits (a signature's points, most often) is read in place.
            let negative = bytes[start] == UInt8(ascii: "-")
            if integral, at - start - (negative ? 1 : 0) <= 18 {
                var integer: Int64 = 0
                for i in (start + (negative ? 1 : 0))..<at { integer = integer * 10 + Int64(bytes[i] - UInt8(ascii: "0")) }
                return .integer(negative ? -integer : integer)
            }
            if !integral, let number = fastDecimal(start) { return .number(number) }
            let text = String(decoding: bytes[start..<at], as: UTF8.self)
            if integral, let integer = Int64(text) { return .integer(integer) }
            guard let number = Double(text) else { throw ParseError.malformed(at: start) }
            return .number(number)
        }

        /// The number from `start` to `at` (valid JSON, not an integer) when its digits make an integer
        /// of at most 2^53 and its power of ten is within 10^±22: both are exact doubles, so one
        /// multiplication or division rounds as `Double(text)` does (Clinger's fast path), without a
        /// string and `strtod` per number (a signature's points are thousands of them, often with 16
        /// digits: the shortest text of a double). Nil otherwise.
        func fastDecimal(_ start: Int) -> Double? {
            var i = start
            let negative = bytes[i] == UInt8(ascii: "-")
            if negative { i += 1 }
            var mantissa: Int64 = 0
            var digits = 0
            var fraction = 0
            var inFraction = false
            while i < at {
                let c = bytes[i]
                if c == UInt8(ascii: ".") {
                    inFraction = true
                } else if c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") {
                    if mantissa > 0 || c != UInt8(ascii: "0") { digits += 1 }
                    guard digits <= 18 else { return nil }
                    mantissa = mantissa * 10 + Int64(c - UInt8(ascii: "0"))
                    if inFraction { fraction += 1 }
                } else {
                    break  // the exponent
                }
                i += 1
            }
            var exponent = 0
            if i < at {
                i += 1  // e or E
                var exponentNegative = false
                if bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") {
                    exponentNegative = bytes[i] == UInt8(ascii: "-")
                    i += 1
                }
                guard at - i <= 3 else { return nil }
                while i < at {
                    exponent = exponent * 10 + Int(bytes[i] - UInt8(ascii: "0"))
                    i += 1
                }
                if exponentNegative { exponent = -exponent }
            }
            let power = exponent - fraction
            guard (-22...22).contains(power), mantissa <= 1 << 53 else { return nil }
            let value = power < 0 ? Double(mantissa) / Self.powersOfTen[-power] : Double(mantissa) * Self.powersOfTen[power]
            return negative ? -value : value
        }

        private static let powersOfTen: [Double] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                                    1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22]

        mutating func hex4() throws -> UInt32 {
            guard at + 4 <= bytes.count else { throw fail() }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let c = bytes[at]
                let digit: UInt32
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(c - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(c - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(c - UInt8(ascii: "A") + 10)
                default: throw fail()
                }
                value = value << 4 | digit
                at += 1
            }
            return value
        }

        /// A string, from its opening quote: UTF-8 as is, escapes decoded, control characters refused.
        mutating func string() throws -> String {
            at += 1
            var result: [UInt8] = []
            var runStart = at
            while true {
                guard at < bytes.count else { throw fail() }
                let c = bytes[at]
                if c == UInt8(ascii: "\""), result.isEmpty {
                    // No escape in it (a member's name, most often): validated in place.
                    guard let text = String(validating: bytes[runStart..<at], as: UTF8.self) else { throw fail() }
                    at += 1
                    return text
                }
                if c == UInt8(ascii: "\"") {
                    result += bytes[runStart..<at]
                    at += 1
                    break
                }
                if c < 0x20 { throw fail() }
                guard c == UInt8(ascii: "\\") else { at += 1; continue }
                result += bytes[runStart..<at]
                at += 1
                guard at < bytes.count else { throw fail() }
                let escape = bytes[at]
                at += 1
                switch escape {
                case UInt8(ascii: "\""): result.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): result.append(UInt8(ascii: "\\"))
                case UInt8(ascii: "/"): result.append(UInt8(ascii: "/"))
                case UInt8(ascii: "b"): result.append(0x08)
                case UInt8(ascii: "f"): result.append(0x0C)
                case UInt8(ascii: "n"): result.append(0x0A)
                case UInt8(ascii: "r"): result.append(0x0D)
                case UInt8(ascii: "t"): result.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        // A high surrogate must be followed by an escaped low one.
                        guard at + 2 <= bytes.count, bytes[at] == UInt8(ascii: "\\"), bytes[at + 1] == UInt8(ascii: "u") else { throw fail() }
                        at += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw fail() }
                        scalar = 0x10000 + (scalar - 0xD800) << 10 + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw fail()
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw fail() }
                    result += Array(String(Character(unicode)).utf8)
                default:
                    throw fail()
                }
                runStart = at
            }
            guard let text = String(validating: result, as: UTF8.self) else { throw fail() }
            return text
        }
    }
}
