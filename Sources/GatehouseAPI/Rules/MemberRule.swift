import Foundation

/// What a member of the wire takes beyond its Swift type: the checks the server makes on it,
/// written as the JSON Schema keywords the API document gives it (a format, lengths, a pattern,
/// bounds, the values allowed). Each kind of value (an email, a phone, a new password, an amount)
/// has one rule here, named by the wire types that carry one (``DeclaresMemberRules``), the form
/// fields (``FormField``) and the path parameters (``PathParameter``); the document is built from
/// them, so a client's generated validation and the server's agree on one text.
///
/// A pattern is JSON Schema's (ECMA-262) and can only describe characters: where the server's rule
/// counts bytes or knows more (a phone's country, a password policy changed by configuration), the
/// member's description in the prose says so, and the pattern is the default rule's.
public struct MemberRule: Sendable, Equatable {
    /// The `format` keyword (`email`, `uri`, `date`, `int64`…).
    public var format: String?
    /// The fewest characters.
    public var minLength: Int?
    /// The most characters.
    public var maxLength: Int?
    /// A regular expression the whole value matches.
    public var pattern: String?
    /// The least value.
    public var minimum: Double?
    /// The greatest value.
    public var maximum: Double?
    /// The values allowed (`enum`).
    public var allowed: [String]?
    /// The one value allowed (`const`).
    public var constant: String?

    /// Makes one of its members, each as its property describes.
    public init(format: String? = nil, minLength: Int? = nil, maxLength: Int? = nil, pattern: String? = nil,
                minimum: Double? = nil, maximum: Double? = nil, allowed: [String]? = nil, constant: String? = nil) {
        self.format = format
        self.minLength = minLength
        self.maxLength = maxLength
        self.pattern = pattern
        self.minimum = minimum
        self.maximum = maximum
        self.allowed = allowed
        self.constant = constant
    }
}

extension MemberRule {
    // MARK: Accounts

    /// An email address as ``EmailAddress`` takes it: a dot-atom local part of 1–64 characters and
    /// a domain name of two labels or more, 254 characters in all.
    public static let email = MemberRule(
        format: "email", maxLength: 254,
        pattern: #"^(?=[^@]{1,64}@)[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+(?:[A-Za-z]{2,63}|[Xx][Nn]--[A-Za-z0-9-]{0,58}[A-Za-z0-9])$"#)
    /// An address shown, not checked beyond its form (an app's contact).
    public static let emailShown = MemberRule(format: "email")
    /// A phone number as the server normalises it to E.164: digits with spaces, `-`, `(`, `)`, `.`
    /// between them (the pattern allows two in a row), international with `+` or `00`, or national
    /// in the default country (the pattern is for 7); 32 characters at most.
    public static let phone = MemberRule(
        maxLength: 32,
        pattern: #"^(?:\+[-(). ]{0,2}(?:7[-(). ]{0,2}(?:[0-9][-(). ]{0,2}){10}|[1-689][-(). ]{0,2}(?:[0-9][-(). ]{0,2}){7,14})|[-(). ]{0,2}(?:0[-(). ]{0,2}0[-(). ]{0,2}(?:7[-(). ]{0,2}(?:[0-9][-(). ]{0,2}){10}|[1-689][-(). ]{0,2}(?:[0-9][-(). ]{0,2}){7,14})|[78][-(). ]{0,2}(?:[0-9][-(). ]{0,2}){10}|(?:[1-9][-(). ]{0,2}[0-9]|0[-(). ]{0,2}[1-9])[-(). ]{0,2}(?:[0-9][-(). ]{0,2}){8}))$"#)
    /// A one-time code: 4–10 digits, blanks around them ignored.
    public static let code = MemberRule(pattern: #"^[ \t]*[0-9]{4,10}[ \t]*$"#)
    /// A new password by the default ``PasswordRule``: 6 characters or more, at most 72 UTF-8 bytes
    /// (72 printable ASCII characters, or 18 of any kind), a digit and a special character.
    public static let newPassword = MemberRule(
        minLength: 6, maxLength: 72, pattern: #"^(?=[\s\S]*[0-9])(?=[\s\S]*[!-/:-@\[-`{-~])(?:[ -~]*|[\s\S]{0,18})$"#)
    /// A password or an identifier typed to sign in: not empty, within the field length limit.
    public static let typed = MemberRule(minLength: 1, maxLength: 256)
    /// The same, on `/api`, where a blank one is absent.
    public static let typedNotBlank = MemberRule(minLength: 1, maxLength: 256, pattern: #"\S"#)
    /// The public `@handle`: 3–32 of `a-z`, `0-9`, `_`, `.`, a letter among them; `@` in front allowed.
    public static let tag = MemberRule(pattern: #"^@?(?=[0-9_.]*[A-Za-z])[A-Za-z0-9_.]{3,32}$"#)
    /// A tag in a path (no `@`).
    public static let tagInPath = MemberRule(pattern: #"^(?=[0-9_.]*[A-Za-z])[A-Za-z0-9_.]{3,32}$"#)
    /// `/api`'s login: 6–64 letters, digits, `._-`, a letter among them (the server takes any
    /// Unicode letter; the pattern names ASCII).
    public static let login = MemberRule(pattern: #"^(?=[0-9._-]*[A-Za-z])[A-Za-z0-9._-]{6,64}$"#)
    /// `en` or `ru`, with a region or not.
    public static let locale = MemberRule(pattern: #"^([Ee][Nn]|[Rr][Uu])([-_][A-Za-z0-9]{1,8}){0,2}$"#)
    /// A name, a label, a device: text within the default field length limit.
    public static let text = MemberRule.text(max: 256)
    /// `/api`'s birthday, in any of the formats it reads.
    public static let birthdayText = MemberRule.text(max: 40)
    /// A confirmation link's token.
    public static let linkToken = MemberRule(minLength: 1, maxLength: 128, pattern: #"^[A-Za-z0-9_-]+$"#)
    /// `/api`'s yes or no.
    public static let yesOrNo = MemberRule.choice(["true", "false", "1", "0", "yes", "no", "on", "off"])

    // MARK: Values of any kind

    /// A calendar date, `yyyy-MM-dd`.
    public static let date = MemberRule(format: "date")
    /// An instant, RFC 3339.
    public static let dateTime = MemberRule(format: "date-time")
    /// An absolute URL.
    public static let uri = MemberRule(format: "uri")
    /// A file part's bytes.
    public static let file = MemberRule(format: "binary")
    /// A count: zero or more.
    public static let count = MemberRule(minimum: 0)
    /// A share between 0 and 1.
    public static let fraction = MemberRule(minimum: 0, maximum: 1)
    /// An HTTP status code.
    public static let httpStatus = MemberRule(minimum: 100, maximum: 599)

    // MARK: Money (kopecks)

    /// An `Idempotency-Key`: 1–255 visible ASCII characters.
    public static let idempotencyKey = MemberRule(minLength: 1, maxLength: 255, pattern: #"^[\x21-\x7e]+$"#)

    /// An amount that moves: one kopeck or more.
    public static let amount = MemberRule(format: "int64", minimum: 1)
    /// A balance: never below zero.
    public static let balance = MemberRule(format: "int64", minimum: 0)
    /// Kopecks, signed (a movement, a balance after it).
    public static let kopecks = MemberRule(format: "int64")

    /// Text of at most `max` characters (and at least `min`).
    public static func text(max: Int, min: Int? = nil) -> MemberRule { MemberRule(minLength: min, maxLength: max) }
    /// One of `values`.
    public static func choice(_ values: [String]) -> MemberRule { MemberRule(allowed: values) }
    /// Exactly `value`.
    public static func constant(_ value: String) -> MemberRule { MemberRule(constant: value) }
    /// At least `value`.
    public static func minimum(_ value: Double) -> MemberRule { MemberRule(minimum: value) }
}

/// A wire type whose members take more than their Swift types say: each named member's rule (by
/// its name on the wire), shown by the API document.
public protocol DeclaresMemberRules {
    /// The rules of the type's members, by wire name.
    static var memberRules: [String: MemberRule] { get }
}
