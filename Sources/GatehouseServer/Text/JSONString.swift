import Foundation

/// One JSON string escaper for everything the server writes by hand (an SMS gateway's body
/// template, the OpenAPI document as YAML): quotes, backslashes and every control character
/// escaped, DEL (0x7F) too, which YAML does not allow raw; everything else as is (UTF-8).
enum JSONString {
    /// `text` escaped for the inside of a JSON string, without the quotes.
    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `text` as a JSON string literal, quotes included.
    static func quoted(_ text: String) -> String { "\"" + escape(text) + "\"" }
}
