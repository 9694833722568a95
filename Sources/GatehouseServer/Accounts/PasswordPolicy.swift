/// The password rule of the phone-accounts spec (at least 6 characters, a digit and a
/// special character), every part configurable.
struct PasswordRules: Sendable {
    var policy: GatehouseConfiguration.PasswordPolicy

    func validate(_ password: String) throws {
        if password.count < policy.minLength {
            throw GatehouseError.invalid(.weakPassword, "error.passwordTooShort", String(policy.minLength))
        }
        // bcrypt reads at most 72 bytes: a longer password would silently be cut.
        if password.utf8.count > policy.maxLength {
            throw GatehouseError.invalid(.weakPassword, "error.passwordTooLong", String(policy.maxLength))
        }
        if policy.requireDigit && !password.contains(where: { $0.isNumber }) {
            throw GatehouseError.invalid(.weakPassword, "error.passwordNeedsDigit")
        }
        if policy.requireSpecial && !password.contains(where: { !$0.isLetter && !$0.isNumber && !$0.isWhitespace }) {
            throw GatehouseError.invalid(.weakPassword, "error.passwordNeedsSpecial")
        }
    }

    /// A random password that satisfies any policy this configuration allows: 12 characters,
    /// letters and digits plus two special characters, avoiding look-alikes (0/O, 1/l/I) and
    /// characters a client would have to escape in a form body.
    func generate() -> String {
        let letters = Array("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ")
        let digits = Array("23456789")
        // Characters that survive a hand-built form body unescaped (no & = + % # ?).
        let specials = Array("!*-._~")
        var generator = SystemRandomNumberGenerator()
        var chars: [Character] = []
        let length = max(12, policy.minLength)
        for _ in 0..<(length - 4) { chars.append(letters.randomElement(using: &generator)!) }
        for _ in 0..<2 { chars.append(digits.randomElement(using: &generator)!) }
        for _ in 0..<2 { chars.append(specials.randomElement(using: &generator)!) }
        chars.shuffle(using: &generator)
        return String(chars)
    }
}

/// The spec's `login`: at least 6 characters of letters, digits and `._-`, with at least one
/// letter, so a login can never be mistaken for a phone number or an email at sign-in.
enum LoginName {
    static let minLength = 6
    static let maxLength = 64

    static func validate(_ login: String) throws -> String {
        let trimmed = login.trimmingCharacters(in: .whitespaces)
        guard trimmed.count >= minLength else {
            throw GatehouseError.invalid(.invalidLogin, "error.loginTooShort", String(minLength))
        }
        guard trimmed.count <= maxLength,
              trimmed.allSatisfy({ $0.isLetter || $0.isNumber || "._-".contains($0) }) else {
            throw GatehouseError.invalid(.invalidLogin, "error.loginInvalid", String(maxLength))
        }
        guard trimmed.contains(where: \.isLetter) else {
            throw GatehouseError.invalid(.invalidLogin, "error.loginNeedsLetter")
        }
        return trimmed
    }
}
