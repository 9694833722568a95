import GatehouseAPI

/// The server's use of the shared ``PasswordRule``: refusal naming the part that failed, and
/// generated passwords that always pass.
struct PasswordRules: Sendable {
    var policy: GatehouseConfiguration.PasswordPolicy

    var rule: PasswordRule {
        PasswordRule(minLength: policy.minLength, maxBytes: policy.maxLength, requireDigit: policy.requireDigit, requireSpecial: policy.requireSpecial)
    }

    func validate(_ password: String) throws {
        do {
            try check(password)
        } catch let error as GatehouseError {
            throw error.on(field: "password")
        }
    }

    private func check(_ password: String) throws {
        switch rule.problem(with: password) {
        case nil: return
        case .tooShort(let minimum): throw GatehouseError.invalid(.weakPassword, "error.passwordTooShort", String(minimum))
        case .tooLong(let maximum): throw GatehouseError.invalid(.weakPassword, "error.passwordTooLong", String(maximum))
        case .needsDigit: throw GatehouseError.invalid(.weakPassword, "error.passwordNeedsDigit")
        case .needsSpecialCharacter: throw GatehouseError.invalid(.weakPassword, "error.passwordNeedsSpecial")
        case .controlCharacter: throw GatehouseError.invalid(.weakPassword, "error.passwordControlCharacters")
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
