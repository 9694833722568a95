import Foundation

/// A data item of CBOR (RFC 8949), as WebAuthn's authenticators write them: attestation objects,
/// authenticator data's credential public keys (COSE_Key, RFC 9052) and extensions. Decoded by
/// ``CBOR/decode(_:limits:)`` from bytes an untrusted client sent, so every length is checked
/// against what is left before anything is allocated, nesting is bounded, and anything malformed
/// is a ``CBORError`` naming where, never a crash.
///
/// What CTAP2's canonical CBOR does not use is refused rather than half-supported: indefinite
/// lengths, the reserved additional-information values 28–30, and a map that names a key twice.
package indirect enum CBOR: Equatable, Sendable {
    /// Major type 0: 0…2⁶⁴−1.
    case unsigned(UInt64)
    /// Major type 1: the value −1 − n.
    case negative(UInt64)
    /// Major type 2.
    case bytes([UInt8])
    /// Major type 3, valid UTF-8.
    case text(String)
    /// Major type 4.
    case array([CBOR])
    /// Major type 5, in the order written (keys unique).
    case map([Pair])
    /// Major type 6: a tag and its item.
    case tagged(UInt64, CBOR)
    /// `false`, `true`.
    case bool(Bool)
    /// `null`.
    case null
    /// `undefined`.
    case undefined
    /// Another simple value (major type 7, 0…19 and 32…255).
    case simple(UInt8)
    /// A half, single or double precision float.
    case float(Double)

    /// One entry of a map.
    package struct Pair: Equatable, Sendable {
        package var key: CBOR
        package var value: CBOR
        package init(_ key: CBOR, _ value: CBOR) { (self.key, self.value) = (key, value) }
    }

    /// How much a decoder accepts.
    package struct Limits: Sendable {
        /// Arrays, maps and tags inside each other.
        package var maxDepth = 16
        /// Data items in all.
        package var maxItems = 4_096
        package init() {}
    }

    // MARK: Reading

    /// The integer, when the item is one that fits an `Int64`.
    package var int: Int64? {
        switch self {
        case .unsigned(let value): value <= UInt64(Int64.max) ? Int64(value) : nil
        case .negative(let value): value <= UInt64(Int64.max) ? -1 - Int64(value) : nil
        default: nil
        }
    }

    package var bytes: [UInt8]? { if case .bytes(let value) = self { value } else { nil } }
    package var text: String? { if case .text(let value) = self { value } else { nil } }
    package var array: [CBOR]? { if case .array(let value) = self { value } else { nil } }
    package var map: [Pair]? { if case .map(let value) = self { value } else { nil } }

    /// A map's value for an integer key (COSE labels), or nil.
    package subscript(key: Int64) -> CBOR? {
        map?.first { $0.key.int == key }?.value
    }

    /// A map's value for a text key (attestation objects), or nil.
    package subscript(key: String) -> CBOR? {
        map?.first { $0.key.text == key }?.value
    }

    // MARK: Decoding

    /// Decodes exactly one data item that takes all of `bytes`.
    package static func decode(_ bytes: [UInt8], limits: Limits = Limits()) throws -> CBOR {
        let (item, used) = try decodePrefix(bytes, limits: limits)
        guard used == bytes.count else { throw CBORError(.trailingBytes, at: used) }
        return item
    }

    /// Decodes the data item at the start of `bytes` and says how many bytes it took (authenticator data holds a
    /// credential key followed by other CBOR).
    package static func decodePrefix(_ bytes: [UInt8], limits: Limits = Limits()) throws -> (CBOR, Int) {
        var reader = Reader(bytes: bytes, limits: limits)
        let item = try reader.item(depth: 0)
        return (item, reader.offset)
    }

    private struct Reader {
        let bytes: [UInt8]
        let limits: Limits
        var offset = 0
        var items = 0

        init(bytes: [UInt8], limits: Limits) {
            self.bytes = bytes
            self.limits = limits
        }

        var remaining: Int { bytes.count - offset }

        mutating func byte() throws -> UInt8 {
            guard offset < bytes.count else { throw CBORError(.truncated, at: offset) }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func take(_ count: UInt64) throws -> ArraySlice<UInt8> {
            guard count <= UInt64(remaining) else { throw CBORError(.truncated, at: offset) }
            let end = offset + Int(count)
            defer { offset = end }
            return bytes[offset..<end]
        }

        /// The argument of a head: the additional information itself, or the 1, 2, 4 or 8 bytes after it.
        mutating func argument(_ info: UInt8, at start: Int) throws -> UInt64 {
            switch info {
            case 0..<24: return UInt64(info)
            case 24: return UInt64(try byte())
            case 25: return try take(2).reduce(0) { $0 << 8 | UInt64($1) }
            case 26: return try take(4).reduce(0) { $0 << 8 | UInt64($1) }
            case 27: return try take(8).reduce(0) { $0 << 8 | UInt64($1) }
            case 31: throw CBORError(.indefiniteLength, at: start)
            default: throw CBORError(.reservedValue, at: start)
            }
        }

        mutating func item(depth: Int) throws -> CBOR {
            let start = offset
            items += 1
            guard items <= limits.maxItems else { throw CBORError(.tooManyItems, at: start) }
            let head = try byte()
            let (major, info) = (head >> 5, head & 0x1f)
            if major == 7 { return try simpleOrFloat(info, at: start) }
            let argument = try argument(info, at: start)
            switch major {
            case 0: return .unsigned(argument)
            case 1: return .negative(argument)
            case 2: return .bytes(Array(try take(argument)))
            case 3:
                guard let text = String(validating: try take(argument), as: UTF8.self) else { throw CBORError(.invalidText, at: start) }
                return .text(text)
            case 4:
                guard depth < limits.maxDepth else { throw CBORError(.tooDeep, at: start) }
                // Every item takes at least a byte: a count beyond what is left cannot be right.
                guard argument <= UInt64(remaining) else { throw CBORError(.truncated, at: start) }
                var elements: [CBOR] = []
                elements.reserveCapacity(Int(argument))
                for _ in 0..<argument { elements.append(try item(depth: depth + 1)) }
                return .array(elements)
            case 5:
                guard depth < limits.maxDepth else { throw CBORError(.tooDeep, at: start) }
                guard argument <= UInt64(remaining / 2) else { throw CBORError(.truncated, at: start) }
                var pairs: [Pair] = []
                pairs.reserveCapacity(Int(argument))
                for _ in 0..<argument {
                    let keyAt = offset
                    let key = try item(depth: depth + 1)
                    guard !pairs.contains(where: { $0.key == key }) else { throw CBORError(.duplicateKey, at: keyAt) }
                    pairs.append(Pair(key, try item(depth: depth + 1)))
                }
                return .map(pairs)
            default:  // 6
                guard depth < limits.maxDepth else { throw CBORError(.tooDeep, at: start) }
                return .tagged(argument, try item(depth: depth + 1))
            }
        }

        mutating func simpleOrFloat(_ info: UInt8, at start: Int) throws -> CBOR {
            switch info {
            case 20: return .bool(false)
            case 21: return .bool(true)
            case 22: return .null
            case 23: return .undefined
            case 0..<20: return .simple(info)
            case 24:
                let value = try byte()
                guard value >= 32 else { throw CBORError(.reservedValue, at: start) }
                return .simple(value)
            case 25: return .float(Self.half(UInt16(try argument(25, at: start))))
            case 26: return .float(Double(Float(bitPattern: UInt32(try argument(26, at: start)))))
            case 27: return .float(Double(bitPattern: try argument(27, at: start)))
            case 31: throw CBORError(.indefiniteLength, at: start)
            default: throw CBORError(.reservedValue, at: start)
            }
        }

        /// IEEE 754 half precision (RFC 8949, Appendix D).
        static func half(_ bits: UInt16) -> Double {
            let exponent = Int(bits >> 10) & 0x1f, mantissa = Double(bits & 0x3ff)
            let magnitude: Double = switch exponent {
            case 0: mantissa * pow(2, -24)
            case 31: mantissa == 0 ? .infinity : .nan
            default: (mantissa + 1024) * pow(2, Double(exponent - 25))
            }
            return bits & 0x8000 != 0 ? -magnitude : magnitude
        }
    }
}

/// Why bytes are not the CBOR asked for, and where.
package struct CBORError: Error, Equatable, CustomStringConvertible {
    package enum Reason: String, Sendable {
        case truncated = "the data ends inside an item"
        case trailingBytes = "bytes follow the item"
        case indefiniteLength = "an indefinite length (not used by WebAuthn)"
        case reservedValue = "a reserved value"
        case invalidText = "a text string that is not UTF-8"
        case duplicateKey = "a map names a key twice"
        case tooDeep = "items nested too deep"
        case tooManyItems = "too many items"
    }

    package var reason: Reason
    package var offset: Int
    package init(_ reason: Reason, at offset: Int) { (self.reason, self.offset) = (reason, offset) }
    package var description: String { "CBOR: \(reason.rawValue) at byte \(offset)" }
}

extension CBOR {
    /// The canonical encoding of the item (shortest heads, definite lengths): for tests and for the
    /// attestation objects a software authenticator writes.
    package func encoded() -> [UInt8] {
        func head(_ major: UInt8, _ value: UInt64) -> [UInt8] {
            switch value {
            case 0..<24: [major << 5 | UInt8(value)]
            case 24..<0x100: [major << 5 | 24, UInt8(value)]
            case 0x100..<0x10000: [major << 5 | 25] + (0..<2).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
            case 0x10000..<0x1_0000_0000: [major << 5 | 26] + (0..<4).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
            default: [major << 5 | 27] + (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
            }
        }
        switch self {
        case .unsigned(let value): return head(0, value)
        case .negative(let value): return head(1, value)
        case .bytes(let value): return head(2, UInt64(value.count)) + value
        case .text(let value): return head(3, UInt64(value.utf8.count)) + Array(value.utf8)
        case .array(let items): return head(4, UInt64(items.count)) + items.flatMap { $0.encoded() }
        case .map(let pairs): return head(5, UInt64(pairs.count)) + pairs.flatMap { $0.key.encoded() + $0.value.encoded() }
        case .tagged(let tag, let item): return head(6, tag) + item.encoded()
        case .bool(let value): return [value ? 0xf5 : 0xf4]
        case .null: return [0xf6]
        case .undefined: return [0xf7]
        case .simple(let value): return value < 24 ? [0xe0 | value] : [0xf8, value]
        case .float(let value): return [0xfb] + (0..<8).reversed().map { UInt8(truncatingIfNeeded: value.bitPattern >> ($0 * 8)) }
        }
    }

    /// An integer item: unsigned when ≥ 0, negative otherwise.
    package static func int(_ value: Int64) -> CBOR {
        value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-1 - value))
    }
}
