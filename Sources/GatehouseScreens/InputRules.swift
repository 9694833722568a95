import Foundation
import GatehouseAPI

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

    /// An email address, by the same rule the server applies (``EmailAddress``).
    public static func isEmail(_ text: String) -> Bool {
        EmailAddress.normalize(text) != nil
    }

    /// A one-time code as typed or autofilled: its ASCII digits only, at most `length` of them.
    static func codeDigits(_ text: String, length: Int) -> String {
        String(text.filter { $0.isASCII && $0.isNumber }.prefix(length))
    }

    /// The localization key explaining the first part of the server's password rule that
    /// `password` breaks, or nil when it passes.
    public static func passwordProblem(_ password: String, rule: PasswordRule = PasswordRule()) -> String? {
        switch rule.problem(with: password) {
        case nil: nil
        case .tooShort: "field.passwordShort"
        case .tooLong: "field.passwordLong"
        case .needsDigit: "field.passwordDigit"
        case .needsSpecialCharacter: "field.passwordSpecial"
        case .controlCharacter: "field.passwordControl"
        }
    }
}
