import Foundation

/// Email syntax as sign-up forms check it (not the full RFC 5322 grammar, which accepts
/// addresses no mail provider hands out). One rule for the server and the SDK.
public enum EmailAddress {
    /// The address trimmed and lower-cased, or nil when it is not an email address.
    public static func normalize(_ raw: String) -> String? {
        let email = raw.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        return isValid(email) ? email : nil
    }

    /// The characters of an address's local part (made once: building it was most of a check).
    private static let localAllowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.!#$%&'*+/=?^_`{|}~-")

    /// Whether `email` (already trimmed) is an email address.
    public static func isValid(_ email: String) -> Bool {
        guard email.utf8.count <= 254 else { return false }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return false }
        let local = parts[0], domain = parts[1]
        guard (1...64).contains(local.count), !local.hasPrefix("."), !local.hasSuffix("."), !local.contains("..") else { return false }
        guard local.allSatisfy({ localAllowed.contains($0) }) else { return false }
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2 else { return false }
        for label in labels {
            guard (1...63).contains(label.count), !label.hasPrefix("-"), !label.hasSuffix("-"),
                  label.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) else { return false }
        }
        guard let tld = labels.last, tld.count >= 2, tld.allSatisfy(\.isLetter) || tld.hasPrefix("xn--") else { return false }
        return true
    }
}

/// The password rule of the phone-accounts spec (at least 6 characters, a digit and a special
/// character), each part configurable. The server refuses with it; the SDK's forms explain it.
public struct PasswordRule: Sendable, Equatable {
    /// Which part of the rule a password breaks.
    public enum Problem: Sendable, Equatable {
        /// Fewer characters than the minimum.
        case tooShort(minimum: Int)
        /// bcrypt reads at most 72 bytes: a longer password would silently be cut.
        case tooLong(maximum: Int)
        /// No digit.
        case needsDigit
        /// No special character (not a letter, digit or blank).
        case needsSpecialCharacter
        /// A control character (NUL among them): no keyboard types one, and bcrypt stops at NUL,
        /// so such a password would not be checked as typed.
        case controlCharacter
    }

    /// The fewest characters.
    public var minLength: Int
    /// The most UTF-8 bytes (bcrypt reads 72).
    public var maxBytes: Int
    /// Whether a digit is required.
    public var requireDigit: Bool
    /// Whether a special character is required.
    public var requireSpecial: Bool

    /// Makes one of its members, each as its property describes.
    public init(minLength: Int = 6, maxBytes: Int = 72, requireDigit: Bool = true, requireSpecial: Bool = true) {
        self.minLength = minLength
        self.maxBytes = maxBytes
        self.requireDigit = requireDigit
        self.requireSpecial = requireSpecial
    }

    /// The first part of the rule `password` breaks, or nil when it is acceptable.
    public func problem(with password: String) -> Problem? {
        if password.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) { return .controlCharacter }
        if password.count < minLength { return .tooShort(minimum: minLength) }
        if password.utf8.count > maxBytes { return .tooLong(maximum: maxBytes) }
        if requireDigit && !password.contains(where: \.isNumber) { return .needsDigit }
        if requireSpecial && !password.contains(where: { !$0.isLetter && !$0.isNumber && !$0.isWhitespace }) { return .needsSpecialCharacter }
        return nil
    }
}
