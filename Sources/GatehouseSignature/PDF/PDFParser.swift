import Foundation

/// Why a PDF cannot be read or signed.
public enum PDFError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not a PDF, or a structure this reader cannot follow (with where).
    case malformed(String)
    /// Encrypted documents are not signed (out of scope).
    case encrypted
    /// The page asked for does not exist.
    case noSuchPage(Int)

    /// What went wrong, in words a person can read.
    public var description: String {
        switch self {
        case .malformed(let detail): "not a readable PDF: \(detail)"
        case .encrypted: "the PDF is encrypted; encrypted documents cannot be signed"
        case .noSuchPage(let page): "the PDF has no page \(page + 1)"
        }
    }
}

/// Reads PDF syntax (ISO 32000-1, 7.2–7.3) from bytes, from a position.
struct PDFParser {
    let bytes: [UInt8]
    var position: Int

    init(_ bytes: [UInt8], at position: Int = 0) {
        self.bytes = bytes
        self.position = position
    }

    static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0 || byte == 9 || byte == 10 || byte == 12 || byte == 13 || byte == 32 }
    static func isDelimiter(_ byte: UInt8) -> Bool { "()<>[]{}/%".utf8.contains(byte) }


    mutating func skipWhitespace() {
        while position < bytes.count {
            let byte = bytes[position]
            if Self.isWhitespace(byte) {
                position += 1
            } else if byte == UInt8(ascii: "%") {
                while position < bytes.count, bytes[position] != 10, bytes[position] != 13 { position += 1 }
            } else {
                return
            }
        }
    }

    /// A bare word (a keyword or a number), without consuming it when `peek`.
    mutating func word(peek: Bool = false) -> String {
        skipWhitespace()
        var end = position
        while end < bytes.count, !Self.isWhitespace(bytes[end]), !Self.isDelimiter(bytes[end]) { end += 1 }
        let text = String(decoding: bytes[position..<end], as: UTF8.self)
        if !peek { position = end }
        return text
    }

    mutating func expect(_ keyword: String) throws {
        let start = position
        guard word() == keyword else { throw PDFError.malformed("expected \(keyword) at \(start)") }
    }

    /// One object; `n g R` becomes a reference, and `<<…>> stream` a stream whose length is
    /// `resolveLength` of its /Length (an indirect length is looked up by the caller).
    mutating func object(depth: Int = 0, resolveLength: (PDFObject) -> Int? = { $0.int }) throws -> PDFObject {
        guard depth < 64 else { throw PDFError.malformed("nesting too deep at \(position)") }
        skipWhitespace()
        guard position < bytes.count else { throw PDFError.malformed("unexpected end") }
        let byte = bytes[position]
        switch byte {
        case UInt8(ascii: "/"):
            position += 1
            var name: [UInt8] = []
            while position < bytes.count, !Self.isWhitespace(bytes[position]), !Self.isDelimiter(bytes[position]) {
                if bytes[position] == UInt8(ascii: "#"), position + 2 < bytes.count,
                   let value = UInt8(String(decoding: bytes[(position + 1)...(position + 2)], as: UTF8.self), radix: 16) {
                    name.append(value)
                    position += 3
                } else {
                    name.append(bytes[position])
                    position += 1
                }
            }
            return .name(String(decoding: name, as: UTF8.self))
        case UInt8(ascii: "("):
            return .string(try literalString())
        case UInt8(ascii: "<"):
            if position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: "<") {
                position += 2
                var dictionary = PDFDictionary()
                while true {
                    skipWhitespace()
                    guard position < bytes.count else { throw PDFError.malformed("unterminated dictionary") }
                    if bytes[position] == UInt8(ascii: ">") {
                        guard position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: ">") else {
                            throw PDFError.malformed("bad dictionary end at \(position)")
                        }
                        position += 2
                        break
                    }
                    guard case .name(let key) = try object(depth: depth + 1) else { throw PDFError.malformed("dictionary key at \(position)") }
                    dictionary[key] = try object(depth: depth + 1)
                }
                // A stream follows its dictionary.
                var probe = self
                if probe.word(peek: false) == "stream" {
                    position = probe.position
                    if position < bytes.count, bytes[position] == 13 { position += 1 }
                    if position < bytes.count, bytes[position] == 10 { position += 1 }
                    guard let length = dictionary["Length"].flatMap(resolveLength), length >= 0, position + length <= bytes.count else {
                        throw PDFError.malformed("stream length at \(position)")
                    }
                    let data = Data(bytes[position..<(position + length)])
                    position += length
                    try expect("endstream")
                    return .stream(dictionary, data)
                }
                return .dictionary(dictionary)
            }
            position += 1
            var digits: [UInt8] = []
            while position < bytes.count, bytes[position] != UInt8(ascii: ">") {
                if !Self.isWhitespace(bytes[position]) { digits.append(bytes[position]) }
                position += 1
            }
            guard position < bytes.count else { throw PDFError.malformed("unterminated hex string") }
            position += 1
            if digits.count % 2 == 1 { digits.append(UInt8(ascii: "0")) }
            var data = Data()
            var index = 0
            while index < digits.count {
                guard let value = UInt8(String(decoding: digits[index...(index + 1)], as: UTF8.self), radix: 16) else {
                    throw PDFError.malformed("bad hex string at \(position)")
                }
                data.append(value)
                index += 2
            }
            return .string(data)
        case UInt8(ascii: "["):
            position += 1
            var items: [PDFObject] = []
            while true {
                skipWhitespace()
                guard position < bytes.count else { throw PDFError.malformed("unterminated array") }
                if bytes[position] == UInt8(ascii: "]") {
                    position += 1
                    return .array(items)
                }
                items.append(try object(depth: depth + 1))
            }
        default:
            let start = position
            let text = word()
            switch text {
            case "true": return .bool(true)
            case "false": return .bool(false)
            case "null": return .null
            case "": throw PDFError.malformed("unexpected byte at \(start)")
            default: break
            }
            if let number = Int(text) {
                // `n g R`?
                var probe = self
                let generation = probe.word()
                if let g = Int(generation), number >= 0, g >= 0, probe.word() == "R" {
                    position = probe.position
                    return .reference(PDFReference(number, g))
                }
                return .int(number)
            }
            if let real = Double(text), text.allSatisfy({ "+-.0123456789".contains($0) }) { return .real(real) }
            throw PDFError.malformed("unexpected \(text.prefix(20)) at \(start)")
        }
    }

    private mutating func literalString() throws -> Data {
        position += 1
        var data = Data()
        var depth = 1
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "("):
                depth += 1
                data.append(byte)
            case UInt8(ascii: ")"):
                depth -= 1
                if depth == 0 { return data }
                data.append(byte)
            case UInt8(ascii: "\\"):
                guard position < bytes.count else { break }
                let next = bytes[position]
                position += 1
                switch next {
                case UInt8(ascii: "n"): data.append(10)
                case UInt8(ascii: "r"): data.append(13)
                case UInt8(ascii: "t"): data.append(9)
                case UInt8(ascii: "b"): data.append(8)
                case UInt8(ascii: "f"): data.append(12)
                case 13:
                    if position < bytes.count, bytes[position] == 10 { position += 1 }
                case 10: break
                case UInt8(ascii: "0")...UInt8(ascii: "7"):
                    var value = Int(next - UInt8(ascii: "0"))
                    for _ in 0..<2 where position < bytes.count && (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(bytes[position]) {
                        value = value * 8 + Int(bytes[position] - UInt8(ascii: "0"))
                        position += 1
                    }
                    data.append(UInt8(value & 0xFF))
                default: data.append(next)
                }
            default:
                data.append(byte)
            }
        }
        throw PDFError.malformed("unterminated string")
    }
}
