import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import Logging

/// The server's use of the shared ``PasswordRule``: refusal naming the part that failed, and
/// generated passwords that always pass. Beyond the specs' composition rule, a new password must not
/// be a common one (``CommonPasswords``) nor, when a range API is configured, one seen in breaches
/// (``PwnedPasswordsRange``): docs/security.md, "Common and breached passwords". Every surface that
/// takes a new password (`/api` registration, `/v1` sign-up, recovery, password change) calls
/// ``validate(_:)``.
package struct PasswordRules: Sendable {
    package var policy: GatehouseConfiguration.PasswordPolicy
    package var common: CommonPasswords?
    package var breaches: PwnedPasswordsRange?
    package var logger: Logger?

    package var rule: PasswordRule {
        PasswordRule(minLength: policy.minLength, maxBytes: policy.maxLength, requireDigit: policy.requireDigit, requireSpecial: policy.requireSpecial)
    }

    /// Refuses a password the rules do not take, as `weak_password` on the `password` field, with a message that
    /// names the reason (too short, no digit, a common password, a breached one, …).
    package func validate(_ password: String) async throws {
        do {
            try check(password)
            if policy.refuseCommon, let common, common.contains(password) {
                throw GatehouseError.invalid(.weakPassword, "error.passwordCommon")
            }
            if let breaches, try await seenInBreaches(password, breaches) {
                throw GatehouseError.invalid(.weakPassword, "error.passwordBreached")
            }
        } catch let error as GatehouseError {
            throw error.on(field: "password")
        }
    }

    /// Whether the range API counts the password at least `breachMinimumCount` times. A failure to ask is logged
    /// (never the password) and lets the password through: the shipped list has already been checked, and a
    /// sign-up must not stop because a third party is away.
    private func seenInBreaches(_ password: String, _ breaches: PwnedPasswordsRange) async throws -> Bool {
        do {
            return try await breaches.timesSeen(password) >= policy.breachMinimumCount
        } catch {
            logger?.warning("the breached-passwords range API could not be asked; the password is judged without it",
                            metadata: ["reason": "\(error)"])
            return false
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
    /// characters a client would have to escape in a form body. It starts and ends with a letter or
    /// digit, so no punctuation of the message around it can be read as part of it.
    package func generate() -> String {
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
        // Punctuation inside only: move a special character off either end.
        for end in [0, chars.count - 1] where specials.contains(chars[end]) {
            let inner = (1..<(chars.count - 1)).first { !specials.contains(chars[$0]) }!
            chars.swapAt(end, inner)
        }
        return String(chars)
    }

    package init(policy: GatehouseConfiguration.PasswordPolicy, common: CommonPasswords? = nil,
                 breaches: PwnedPasswordsRange? = nil, logger: Logger? = nil) {
        self.policy = policy
        self.common = common
        self.breaches = breaches
        self.logger = logger
    }
}

/// The spec's `login`: at least 6 characters of letters, digits and `._-`, with at least one
/// letter, so a login can never be mistaken for a phone number or an email at sign-in.
///
/// Look-alikes are one login: the name is NFKC-normalised (NFD and NFC, full-width and
/// compatibility forms agree), invisible and control characters are refused, the letters must
/// come from one script (no Latin `ivan` with a Cyrillic `а`), and uniqueness is on the
/// case-folded form (`key`).
package enum LoginName {
    package static let minLength = 6
    package static let maxLength = 64

    /// The login as it will be stored and shown (NFKC, trimmed), or a refusal.
    package static func validate(_ login: String) throws -> String {
        let trimmed = normalized(login)
        if trimmed.unicodeScalars.contains(where: isInvisibleOrControl) {
            throw GatehouseError.invalid(.invalidLogin, "error.loginInvisible")
        }
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
        guard Set(trimmed.unicodeScalars.compactMap(Script.of)).count <= 1 else {
            throw GatehouseError.invalid(.invalidLogin, "error.loginMixedScripts")
        }
        return trimmed
    }

    /// The unique key of a login or tag: NFKC, then Unicode case folding (`ß` = `ss`).
    package static func key(_ name: String) -> String {
        normalized(name).folding(options: [.caseInsensitive], locale: nil)
    }

    package static func normalized(_ name: String) -> String {
        name.precomposedStringWithCompatibilityMapping.trimmingCharacters(in: .whitespaces)
    }

    /// Zero-width joiners, variation selectors, bidi controls, tags, control characters: nothing a
    /// person can see or tell apart.
    package static func isInvisibleOrControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .privateUse, .surrogate, .unassigned, .lineSeparator, .paragraphSeparator: return true
        default: break
        }
        if scalar.properties.isVariationSelector || scalar.properties.isDefaultIgnorableCodePoint { return true }
        return false
    }

    /// The script of a letter, coarsely (by Unicode block), so that mixing scripts can be refused.
    /// Digits, marks and punctuation have no script here.
    package enum Script: Hashable {
        /// Han, kana and hangul are one "script" here: Japanese and Korean names mix them.
        case latin, greek, cyrillic, armenian, hebrew, arabic, georgian, cjk
        case other(UInt32)

        package static func of(_ scalar: Unicode.Scalar) -> Script? {
            guard scalar.properties.isAlphabetic, scalar.properties.numericType == nil else { return nil }
            if scalar.properties.generalCategory == .nonspacingMark || scalar.properties.generalCategory == .spacingMark { return nil }
            switch scalar.value {
            case 0x41...0x5A, 0x61...0x7A, 0xAA, 0xBA, 0xC0...0x24F, 0x1E00...0x1EFF, 0x2C60...0x2C7F, 0xA720...0xA7FF, 0xAB30...0xAB6F: return .latin
            case 0x370...0x3FF, 0x1F00...0x1FFF: return .greek
            case 0x400...0x52F, 0x1C80...0x1C8F, 0x2DE0...0x2DFF, 0xA640...0xA69F: return .cyrillic
            case 0x530...0x58F: return .armenian
            case 0x590...0x5FF: return .hebrew
            case 0x600...0x6FF, 0x750...0x77F, 0x8A0...0x8FF: return .arabic
            case 0x10A0...0x10FF, 0x2D00...0x2D2F: return .georgian
            case 0x1100...0x11FF, 0x3040...0x30FF, 0x3130...0x318F, 0x31F0...0x31FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
                 0xAC00...0xD7AF, 0x20000...0x2FFFF: return .cjk
            default: return .other(scalar.value >> 7)
            }
        }
    }
}
