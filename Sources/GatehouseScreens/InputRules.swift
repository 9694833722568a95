import Foundation

/// Client-side checks that decide whether an action is enabled and what a field says. The
/// server checks again; these only spare the user a round trip.
public enum InputRules {
    /// A phone in any common format: 10 to 15 digits once spaces, dashes, brackets and a
    /// leading `+` are removed.
    public static func isPhone(_ text: String) -> Bool {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        var digits = 0
        for (index, ch) in trimmed.enumerated() {
            if ch.isASCII && ch.isNumber { digits += 1 }
            else if ch == "+" && index == 0 { continue }
            else if " -()".contains(ch) { continue }
            else { return false }
        }
        return (10...15).contains(digits)
    }

    /// An email address as sign-up forms check it.
    public static func isEmail(_ text: String) -> Bool {
        let email = text.trimmingCharacters(in: .whitespaces)
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !email.contains(" "), email.count <= 254 else { return false }
        let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, labels.allSatisfy({ !$0.isEmpty }), let tld = labels.last, tld.count >= 2, tld.allSatisfy(\.isLetter) else { return false }
        return true
    }

    /// The password rule of the spec: at least 6 characters, a digit and a special character.
    /// Returns the localization key of the first rule that fails.
    public static func passwordProblem(_ password: String, minLength: Int = 6) -> String? {
        if password.count < minLength { return "field.passwordShort" }
        if !password.contains(where: \.isNumber) { return "field.passwordDigit" }
        if !password.contains(where: { !$0.isLetter && !$0.isNumber && !$0.isWhitespace }) { return "field.passwordSpecial" }
        return nil
    }
}
