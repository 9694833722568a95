import Foundation

/// The messenger's tag (its `@handle`): 3–32 of `a-z`, `0-9`, `_` and `.`, with at least one
/// letter (so a tag can never be read as a phone number at login), unique case-insensitively.
/// Typed capitals are accepted and lower-cased. One rule for the server and the SDK's forms.
public enum TagRule {
    /// The fewest characters of a tag.
    public static let minLength = 3
    /// The most characters of a tag.
    public static let maxLength = 32

    /// Which part of the rule a tag breaks.
    public enum Problem: Sendable, Equatable {
        /// Fewer characters than the minimum.
        case tooShort(minimum: Int)
        /// More characters than the maximum.
        case tooLong(maximum: Int)
        /// A character other than `a-z`, `0-9`, `_`, `.`.
        case invalidCharacters
        /// No letter.
        case needsLetter
    }

    /// The tag trimmed and lower-cased (a leading `@` dropped), or nil when it breaks the rule.
    public static func normalize(_ raw: String) -> String? {
        let tag = canonical(raw)
        return problem(with: tag) == nil ? tag : nil
    }

    /// `raw` trimmed, without a leading `@`, lower-cased; not yet checked.
    public static func canonical(_ raw: String) -> String {
        var tag = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        if tag.hasPrefix("@") { tag.removeFirst() }
        return tag.lowercased()
    }

    /// The first part of the rule `tag` (already canonical) breaks, or nil.
    public static func problem(with tag: String) -> Problem? {
        if tag.count < minLength { return .tooShort(minimum: minLength) }
        if tag.count > maxLength { return .tooLong(maximum: maxLength) }
        // Byte by byte: every allowed character is one ASCII byte, and any other character has a byte outside them.
        func isLetter(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") }
        func isAllowed(_ byte: UInt8) -> Bool {
            isLetter(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
        }
        if !tag.utf8.allSatisfy(isAllowed) { return .invalidCharacters }
        if !tag.utf8.contains(where: isLetter) { return .needsLetter }
        return nil
    }
}
