import GatehouseFoundation

/// The one rule every surface applies to the text a client sends: no U+0000. PostgreSQL's `text`
/// cannot hold it (a bound value with it fails the statement), SQLite would store it and C-string
/// code downstream (logs, mail, SMS gateways) would cut it short; no name, address, password or
/// message needs it. The body readers of the APIs refuse it before anything reaches a service, in
/// the surface's own format (a problem document on `/v1`, plain text with `X-Error-Code` on `/api`,
/// `{"res": …}` on Sign To Login, an error frame on the gateway); the address (`EveryRequestMiddleware`)
/// and the consoles' forms leave it out. Both engines answer alike.
package enum InputText {
    /// Whether `text` holds U+0000.
    package static func hasNUL(_ text: some StringProtocol) -> Bool {
        text.utf8.contains(0)
    }

    /// Whether a request target (path and query, still percent-encoded) decodes to U+0000: it
    /// holds `%00` (anywhere: `%%00` is refused too, which no client sends).
    package static func hasEncodedNUL(_ target: some StringProtocol) -> Bool {
        let bytes = Array(target.utf8)
        guard bytes.count >= 3 else { return false }
        for index in 0...(bytes.count - 3) where bytes[index] == UInt8(ascii: "%") && bytes[index + 1] == UInt8(ascii: "0") && bytes[index + 2] == UInt8(ascii: "0") {
            return true
        }
        return false
    }

    /// `text` without U+0000.
    package static func removingNUL(_ text: String) -> String {
        hasNUL(text) ? String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.value != 0 })) : text
    }

    /// `target` without the `%00` that decode to U+0000.
    package static func removingEncodedNUL(_ target: String) -> String {
        var result = target
        while let range = result.range(of: "%00") { result.removeSubrange(range) }
        return result
    }

    /// Whether valid JSON text has a string holding U+0000 (JSON can carry it only as the escape
    /// `\u0000`; a raw control character is not JSON). `\\u0000` is a backslash and text, not
    /// the escape. Exact for text a JSON decoder took.
    package static func hasEscapedNUL(inJSON bytes: some Collection<UInt8>) -> Bool {
        // Over the bytes in place: a generic walk from another module goes through the collection's
        // witnesses byte by byte, which made this check a fifth of reading a signature.
        if let found = bytes.withContiguousStorageIfAvailable(hasEscapedNUL(inJSON:)) { return found }
        return Array(bytes).withUnsafeBufferPointer(hasEscapedNUL(inJSON:))
    }

    private static func hasEscapedNUL(inJSON bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var at = 0
        while at < bytes.count {
            guard bytes[at] == UInt8(ascii: "\\") else {
                at += 1
                continue
            }
            // An escape: `\u` and four hex digits, or a backslash and one character.
            guard at + 1 < bytes.count, bytes[at + 1] == UInt8(ascii: "u") else {
                at += 2
                continue
            }
            guard at + 5 < bytes.count else { return false }
            if bytes[at + 2] == UInt8(ascii: "0"), bytes[at + 3] == UInt8(ascii: "0"), bytes[at + 4] == UInt8(ascii: "0"),
               bytes[at + 5] == UInt8(ascii: "0") { return true }
            at += 6
        }
        return false
    }

    /// The first member (by its dotted path) of a JSON value whose key or string holds U+0000;
    /// "" for the root; nil when none does.
    package static func memberWithNUL(_ value: JSONValue, path: String = "") -> String? {
        switch value {
        case .string(let text):
            return hasNUL(text) ? path : nil
        case .array(let items):
            for (index, item) in items.enumerated() {
                if let found = memberWithNUL(item, path: path.isEmpty ? String(index) : "\(path).\(index)") { return found }
            }
            return nil
        case .object(let members):
            for (key, member) in members.sorted(by: { $0.key < $1.key }) {
                let memberPath = path.isEmpty ? key : "\(path).\(key)"
                if hasNUL(key) { return path.isEmpty ? "body" : path }
                if let found = memberWithNUL(member, path: memberPath) { return found }
            }
            return nil
        case .integer, .number, .bool, .null:
            return nil
        }
    }
}
