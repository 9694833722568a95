import Foundation

/// An object of a PDF file (ISO 32000-1, 7.3), as read and as written.
public indirect enum PDFObject: Equatable, Sendable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// An integer.
    case int(Int)
    /// A real number.
    case real(Double)
    /// A string's bytes (literal or hexadecimal in the file).
    case string(Data)
    /// A name (`/Type`), without its slash.
    case name(String)
    /// An array.
    case array([PDFObject])
    /// A dictionary.
    case dictionary(PDFDictionary)
    /// An indirect reference (`12 0 R`).
    case reference(PDFReference)
    /// A stream: its dictionary and its bytes as stored (still encoded).
    case stream(PDFDictionary, Data)

    /// A dictionary's (or a stream's dictionary's) value for `key`; nil for anything else.
    public subscript(key: String) -> PDFObject? {
        switch self {
        case .dictionary(let dictionary), .stream(let dictionary, _): dictionary[key]
        default: nil
        }
    }

    /// The dictionary of a dictionary or a stream.
    public var dictionary: PDFDictionary? {
        switch self {
        case .dictionary(let dictionary), .stream(let dictionary, _): dictionary
        default: nil
        }
    }

    /// The items of an array.
    public var array: [PDFObject]? { if case .array(let items) = self { items } else { nil } }
    /// A name's text (without the slash).
    public var name: String? { if case .name(let name) = self { name } else { nil } }
    /// The object an indirect reference names.
    public var reference: PDFReference? { if case .reference(let reference) = self { reference } else { nil } }

    /// A whole number (an integer, or a real without a fraction).
    public var int: Int? {
        switch self {
        case .int(let value): value
        case .real(let value) where value == value.rounded(): Int(value)
        default: nil
        }
    }

    /// Any number, as a `Double`.
    public var number: Double? {
        switch self {
        case .int(let value): Double(value)
        case .real(let value): value
        default: nil
        }
    }
}

/// An indirect object's number and generation.
public struct PDFReference: Hashable, Sendable, Comparable {
    /// The object's number.
    public var number: Int
    /// The object's generation (0 for objects never reused).
    public var generation: Int

    /// A reference to object `number`, generation `generation`.
    public init(_ number: Int, _ generation: Int = 0) {
        self.number = number
        self.generation = generation
    }

    /// Ordered by number, then generation (the order a cross-reference lists them).
    public static func < (a: PDFReference, b: PDFReference) -> Bool { (a.number, a.generation) < (b.number, b.generation) }
}

/// A dictionary that keeps its keys' order, so that what is written back reads like what was read.
public struct PDFDictionary: Equatable, Sendable {
    /// The keys in the order they were read or set.
    public private(set) var keys: [String] = []
    private var values: [String: PDFObject] = [:]

    /// A dictionary of `pairs`, in their order.
    public init(_ pairs: [(String, PDFObject)] = []) {
        for (key, value) in pairs { self[key] = value }
    }

    /// The value for `key`; setting nil removes the key, setting a new key appends it.
    public subscript(key: String) -> PDFObject? {
        get { values[key] }
        set {
            if let newValue {
                if values[key] == nil { keys.append(key) }
                values[key] = newValue
            } else if values.removeValue(forKey: key) != nil {
                keys.removeAll { $0 == key }
            }
        }
    }

    /// The entries in order.
    public var pairs: [(String, PDFObject)] { keys.map { ($0, values[$0]!) } }
}

// MARK: Writing

extension PDFObject {
    /// The object in PDF syntax.
    public func serialized() -> Data {
        var out = Data()
        write(to: &out)
        return out
    }

    func write(to out: inout Data) {
        switch self {
        case .null: out.append(contentsOf: Array("null".utf8))
        case .bool(let value): out.append(contentsOf: Array((value ? "true" : "false").utf8))
        case .int(let value): out.append(contentsOf: Array(String(value).utf8))
        case .real(let value): out.append(contentsOf: Array(PDFObject.format(value).utf8))
        case .string(let bytes):
            out.append(UInt8(ascii: "<"))
            for byte in bytes { out.append(contentsOf: Array(String(format: "%02X", byte).utf8)) }
            out.append(UInt8(ascii: ">"))
        case .name(let name): out.append(contentsOf: Array(PDFObject.nameSyntax(name).utf8))
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: " ")) }
                item.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .dictionary(let dictionary): PDFObject.write(dictionary, to: &out)
        case .reference(let reference): out.append(contentsOf: Array("\(reference.number) \(reference.generation) R".utf8))
        case .stream(var dictionary, let data):
            dictionary["Length"] = .int(data.count)
            PDFObject.write(dictionary, to: &out)
            out.append(contentsOf: Array("\nstream\n".utf8))
            out.append(data)
            out.append(contentsOf: Array("\nendstream".utf8))
        }
    }

    static func write(_ dictionary: PDFDictionary, to out: inout Data) {
        out.append(contentsOf: Array("<<".utf8))
        for (key, value) in dictionary.pairs {
            out.append(contentsOf: Array(nameSyntax(key).utf8))
            out.append(UInt8(ascii: " "))
            value.write(to: &out)
        }
        out.append(contentsOf: Array(">>".utf8))
    }

    /// A number as PDF writes it: no exponent, at most four decimals.
    static func format(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        var text = String(format: "%.4f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text == "-0" ? "0" : text
    }

    /// `/Name`, with delimiters, whitespace and bytes outside `!`…`~` as `#xx`.
    static func nameSyntax(_ name: String) -> String {
        var text = "/"
        for byte in name.utf8 {
            let plain = byte > 0x20 && byte < 0x7F && !"()<>[]{}/%#".utf8.contains(byte)
            text += plain ? String(UnicodeScalar(byte)) : String(format: "#%02X", byte)
        }
        return text
    }
}
