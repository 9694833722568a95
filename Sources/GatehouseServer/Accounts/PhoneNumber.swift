/// Normalises phone numbers to E.164 (`+79123456789`).
///
/// Accepts what people and the spec's clients type: `+7 912 345-67-89`, `8 (912) 345-67-89`,
/// `89123456789`, `79123456789`, `9123456789`, `0049 30 1234567`. A national number (with or without
/// its trunk prefix) gets `defaultCountryCode`.
enum PhoneNumber {
    static func normalize(_ raw: String, defaultCountryCode: String) -> String? {
        let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.count <= 32 else { return nil }
        var digits = ""
        var hasPlus = false
        for (index, ch) in trimmed.enumerated() {
            if ch.isASCIIDigit {
                digits.append(ch)
            } else if ch == "+" && index == 0 {
                hasPlus = true
            } else if " -().\u{00A0}".contains(ch) {
                continue
            } else {
                return nil
            }
        }
        var international: String
        if hasPlus {
            international = digits
        } else if digits.hasPrefix("00") {
            international = String(digits.dropFirst(2))
        } else if defaultCountryCode == "7" {
            // Russia and Kazakhstan: 10-digit national numbers, trunk prefix 8.
            if digits.count == 11 && (digits.hasPrefix("8") || digits.hasPrefix("7")) {
                international = "7" + digits.dropFirst()
            } else if digits.count == 10 {
                international = "7" + digits
            } else {
                return nil
            }
        } else if digits.hasPrefix("0") {
            international = defaultCountryCode + digits.dropFirst()
        } else if digits.hasPrefix(defaultCountryCode) && digits.count >= 10 {
            international = digits
        } else {
            international = defaultCountryCode + digits
        }
        guard (8...15).contains(international.count), international.first != "0" else { return nil }
        if international.hasPrefix("7") && international.count != 11 { return nil }
        return "+" + international
    }
}

/// Email syntax as sign-up forms check it (not the full RFC 5322 grammar, which accepts
/// addresses no mail provider hands out). Normalised to lower case.
enum EmailAddress {
    static func normalize(_ raw: String) -> String? {
        let email = raw.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        return isValid(email) ? email : nil
    }

    static func isValid(_ email: String) -> Bool {
        guard email.utf8.count <= 254 else { return false }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return false }
        let local = parts[0], domain = parts[1]
        guard (1...64).contains(local.count), !local.hasPrefix("."), !local.hasSuffix("."), !local.contains("..") else { return false }
        let localAllowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.!#$%&'*+/=?^_`{|}~-")
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
