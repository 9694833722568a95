/// Normalises phone numbers to E.164 (`+79123456789`).
///
/// Accepts what people and the spec's clients type: `+7 912 345-67-89`, `8 (912) 345-67-89`,
/// `89123456789`, `79123456789`, `9123456789`, `0049 30 1234567`. A national number (with or without
/// its trunk prefix) gets `defaultCountryCode`.
package enum PhoneNumber {
    /// A destination as a person types it, as the outbox keeps it: an email lower-cased, a phone in
    /// E.164 (any common format), anything else as typed (`/dev/outbox?to=`, `gatehouse outbox --to`).
    package static func destination(_ raw: String, defaultCountryCode: String) -> String {
        raw.contains("@") ? raw.trimmingCharacters(in: .whitespaces).lowercased() : (normalize(raw, defaultCountryCode: defaultCountryCode) ?? raw)
    }

    package static func normalize(_ raw: String, defaultCountryCode: String) -> String? {
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
