import Foundation

/// One JSON string escaper for the text the server writes by hand (an SMS gateway's body
/// template, the OpenAPI document as YAML, bus events): quotes, backslashes and every control
/// character escaped, DEL (0x7F) too, which YAML does not allow raw; everything else as is
/// (UTF-8). Answers that must be `JSONEncoder`'s bytes exactly (it leaves DEL raw and writes
/// `\b` and `\f`) use `JSONObjectWriter`, in the HTTP surface.
package enum JSONString {
    /// `text` escaped for the inside of a JSON string, without the quotes.
    package static func escape(_ text: String) -> String {
        let hex = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 16)
        let backslash = UInt8(ascii: "\\")
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), backslash: out.append(backslash); out.append(byte)
            case UInt8(ascii: "\n"): out.append(backslash); out.append(UInt8(ascii: "n"))
            case UInt8(ascii: "\r"): out.append(backslash); out.append(UInt8(ascii: "r"))
            case UInt8(ascii: "\t"): out.append(backslash); out.append(UInt8(ascii: "t"))
            case 0..<0x20, 0x7F:
                out.append(backslash)
                out.append(contentsOf: "u00".utf8)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xF)])
            default: out.append(byte)  // UTF-8 sequences pass through whole
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `text` as a JSON string literal, quotes included.
    package static func quoted(_ text: String) -> String { "\"" + escape(text) + "\"" }
}
