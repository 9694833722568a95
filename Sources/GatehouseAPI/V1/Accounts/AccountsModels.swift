import Foundation

// The bodies of `/v1`'s accounts (sign-up, recovery, profile). camelCase keys, ISO 8601 instants
// (`V1.encoder`), calendar dates as `yyyy-MM-dd`.

/// Where a one-time code goes.
public enum CodeChannel: String, Codable, Sendable, Equatable, CaseIterable {
    /// By email.
    case email
    /// By SMS.
    case sms
}

/// `POST /v1/signup/code`, `POST /v1/recovery/code`: exactly one of `email` or `phone`.
public struct CodeRequest: Codable, Sendable, Equatable {
    /// An email address, trimmed and lower-cased by the server: a dot-atom local part (no quoted strings) and a domain
    /// name (no address literals) of two labels or more.
    public var email: String?
    /// A phone number, normalised to E.164: `+7 912 345-67-89`, `8 (912) 345-67-89`, `9123456789`, `0049 30 1234567`.
    /// Digits with spaces, `-`, `(`, `)`, `.` between them (the server takes any number in a row; the pattern, two);
    /// international with `+` or `00` (8-15 digits, not starting with 0; 11 after a 7), or national (10 digits, or 11
    /// starting with 8 or 7) in the default country (`GATEHOUSE_DEFAULT_COUNTRY_CODE`, 7; the pattern is for 7). At
    /// most 32 characters.
    public var phone: String?
    /// Makes one of its members, each as its property describes.
    public init(email: String? = nil, phone: String? = nil) {
        self.email = email
        self.phone = phone
    }
}

/// The answer to every code request: when the code dies, when another may be asked for,
/// and how many wrong tries it takes.
public struct CodeSent: Codable, Sendable, Equatable {
    /// Where the code went.
    public var channel: CodeChannel
    /// The address or phone as the server normalised it (E.164 for phones).
    public var destination: String
    /// When it stops working.
    public var expiresAt: Date
    /// When another code may be asked for.
    public var resendAvailableAt: Date
    /// Wrong tries the code takes before it dies.
    public var attemptsAllowed: Int
    /// How many digits the code has.
    public var codeLength: Int
    /// Makes one of its members, each as its property describes.
    public init(channel: CodeChannel, destination: String, expiresAt: Date, resendAvailableAt: Date, attemptsAllowed: Int, codeLength: Int) {
        self.channel = channel
        self.destination = destination
        self.expiresAt = expiresAt
        self.resendAvailableAt = resendAvailableAt
        self.attemptsAllowed = attemptsAllowed
        self.codeLength = codeLength
    }
}

/// `POST /v1/signup`: the code from `/v1/signup/code` and the new account's fields.
/// Exactly one of `email` or `phone` (the one the code was sent to).
public struct SignupRequest: Codable, Sendable, Equatable {
    /// An email address, trimmed and lower-cased by the server: a dot-atom local part (no quoted strings) and a domain
    /// name (no address literals) of two labels or more.
    public var email: String?
    /// A phone number, normalised to E.164: `+7 912 345-67-89`, `8 (912) 345-67-89`, `9123456789`, `0049 30 1234567`.
    /// Digits with spaces, `-`, `(`, `)`, `.` between them (the server takes any number in a row; the pattern, two);
    /// international with `+` or `00` (8-15 digits, not starting with 0; 11 after a 7), or national (10 digits, or 11
    /// starting with 8 or 7) in the default country (`GATEHOUSE_DEFAULT_COUNTRY_CODE`, 7; the pattern is for 7). At
    /// most 32 characters.
    public var phone: String?
    /// The code from `POST /v1/signup/code`.
    public var code: String
    /// The new account's password. A new password, by the default policy: at least 6 characters, at most 72 UTF-8
    /// bytes, with a digit and a special character (not a letter, digit or blank). The schema can only count
    /// characters: it takes 72 printable ASCII characters, or 18 of any kind (72 bytes at most either way), and names
    /// ASCII digits and punctuation.
    public var password: String
    /// The first name.
    public var firstName: String?
    /// The last name.
    public var lastName: String?
    /// The public `@handle`: 3-32 of `a-z`, `0-9`, `_`, `.`, at least one letter; a leading `@` is dropped and capitals
    /// are lower-cased. Unique.
    public var tag: String?
    /// `yyyy-MM-dd`.
    public var birthday: String?
    /// `en` or `ru`: the language of the account's mail and SMS.
    public var locale: String?
    /// A label for the session this sign-up opens (e.g. "iPhone 15, iOS 18").
    public var device: String?
    /// Which tokens the answer carries (absent: the session's own token).
    public var tokens: TokenKind?
    /// Makes one of its members, each as its property describes.
    public init(email: String? = nil, phone: String? = nil, code: String, password: String, firstName: String? = nil, lastName: String? = nil, tag: String? = nil, birthday: String? = nil, locale: String? = nil, device: String? = nil, tokens: TokenKind? = nil) {
        self.email = email
        self.phone = phone
        self.code = code
        self.password = password
        self.firstName = firstName
        self.lastName = lastName
        self.tag = tag
        self.birthday = birthday
        self.locale = locale
        self.device = device
        self.tokens = tokens
    }
}

/// The account as `/v1` shows it to its owner.
public struct Account: Codable, Sendable, Equatable {
    /// Its id.
    public var id: UUID
    /// The address in use (for display, login and recovery).
    public var email: String?
    /// Whether the email address is confirmed.
    public var emailConfirmed: Bool
    /// A new address waiting for its code; `email` stays in use (and for login) until then.
    public var pendingEmail: String?
    /// E.164.
    public var phone: String?
    /// Whether the phone number is verified.
    public var phoneVerified: Bool
    /// The public `@handle`, without the `@`.
    public var tag: String?
    /// The first name.
    public var firstName: String?
    /// The last name.
    public var lastName: String?
    /// The middle name (patronymic).
    public var middleName: String?
    /// `yyyy-MM-dd`.
    public var birthday: String?
    /// `en` or `ru`.
    public var locale: String?
    /// Absolute URL of the avatar image, if any.
    public var avatarUrl: String?
    /// When it was made.
    public var createdAt: Date
    /// When it last changed.
    public var updatedAt: Date
    /// Makes one of its members, each as its property describes.
    public init(id: UUID, email: String?, emailConfirmed: Bool, pendingEmail: String?, phone: String?, phoneVerified: Bool, tag: String?, firstName: String?, lastName: String?, middleName: String?, birthday: String?, locale: String?, avatarUrl: String?, createdAt: Date, updatedAt: Date) {
        self.id = id
        self.email = email
        self.emailConfirmed = emailConfirmed
        self.pendingEmail = pendingEmail
        self.phone = phone
        self.phoneVerified = phoneVerified
        self.tag = tag
        self.firstName = firstName
        self.lastName = lastName
        self.middleName = middleName
        self.birthday = birthday
        self.locale = locale
        self.avatarUrl = avatarUrl
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// `GET /v1/tags/{tag}`.
public struct TagAvailability: Codable, Sendable, Equatable {
    /// The tag as it would be stored (lower-case).
    public var tag: String
    /// Whether nobody has it yet.
    public var available: Bool
    /// Makes one of its members, each as its property describes.
    public init(tag: String, available: Bool) {
        self.tag = tag
        self.available = available
    }
}

/// `POST /v1/recovery`: the code from `/v1/recovery/code` and the new password.
public struct RecoveryRequest: Codable, Sendable, Equatable {
    /// An email address, trimmed and lower-cased by the server: a dot-atom local part (no quoted strings) and a domain
    /// name (no address literals) of two labels or more.
    public var email: String?
    /// A phone number, normalised to E.164: `+7 912 345-67-89`, `8 (912) 345-67-89`, `9123456789`, `0049 30 1234567`.
    /// Digits with spaces, `-`, `(`, `)`, `.` between them (the server takes any number in a row; the pattern, two);
    /// international with `+` or `00` (8-15 digits, not starting with 0; 11 after a 7), or national (10 digits, or 11
    /// starting with 8 or 7) in the default country (`GATEHOUSE_DEFAULT_COUNTRY_CODE`, 7; the pattern is for 7). At
    /// most 32 characters.
    public var phone: String?
    /// The code from `POST /v1/recovery/code`.
    public var code: String
    /// A new password, by the default policy: at least 6 characters, at most 72 UTF-8 bytes, with a digit and a special
    /// character (not a letter, digit or blank). The schema can only count characters: it takes 72 printable ASCII
    /// characters, or 18 of any kind (72 bytes at most either way), and names ASCII digits and punctuation.
    public var password: String
    /// Makes one of its members, each as its property describes.
    public init(email: String? = nil, phone: String? = nil, code: String, password: String) {
        self.email = email
        self.phone = phone
        self.code = code
        self.password = password
    }
}

/// `PATCH /v1/me` (JSON merge patch): a member left out stays as it is, `null` clears it.
/// `tag` cannot be cleared once set.
public struct ProfileUpdate: Codable, Sendable, Equatable {
    /// The first name.
    public var firstName: String??
    /// The last name.
    public var lastName: String??
    /// The middle name; `.some(nil)` clears it.
    public var middleName: String??
    /// The public `@handle`: 3-32 of `a-z`, `0-9`, `_`, `.`, at least one letter; a leading `@` is dropped and capitals
    /// are lower-cased. Unique. Replaces the tag; it cannot be removed (`null` is 400 `invalid_parameter`).
    public var tag: String??
    /// `yyyy-MM-dd`.
    public var birthday: String??
    /// `en` or `ru`, optionally with a region (`ru-RU`, `en_GB`): the language of the account's mail and SMS.
    public var locale: String??

    /// Makes one of its members, each as its property describes.
    public init(firstName: String?? = nil, lastName: String?? = nil, middleName: String?? = nil, tag: String?? = nil, birthday: String?? = nil, locale: String?? = nil) {
        self.firstName = firstName
        self.lastName = lastName
        self.middleName = middleName
        self.tag = tag
        self.birthday = birthday
        self.locale = locale
    }

    private enum CodingKeys: String, CodingKey {
        case firstName, lastName, middleName, tag, birthday, locale
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func member(_ key: CodingKeys) throws -> String?? {
            guard c.contains(key) else { return nil }
            if try c.decodeNil(forKey: key) { return .some(nil) }
            return .some(try c.decode(String.self, forKey: key))
        }
        firstName = try member(.firstName)
        lastName = try member(.lastName)
        middleName = try member(.middleName)
        tag = try member(.tag)
        birthday = try member(.birthday)
        locale = try member(.locale)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        func member(_ value: String??, _ key: CodingKeys) throws {
            guard let value else { return }
            if let value { try c.encode(value, forKey: key) } else { try c.encodeNil(forKey: key) }
        }
        try member(firstName, .firstName)
        try member(lastName, .lastName)
        try member(middleName, .middleName)
        try member(tag, .tag)
        try member(birthday, .birthday)
        try member(locale, .locale)
    }
}

/// `POST /v1/me/password`.
public struct PasswordChange: Codable, Sendable, Equatable {
    /// The password in use.
    public var currentPassword: String
    /// A new password, by the default policy: at least 6 characters, at most 72 UTF-8 bytes, with a digit and a special
    /// character (not a letter, digit or blank). The schema can only count characters: it takes 72 printable ASCII
    /// characters, or 18 of any kind (72 bytes at most either way), and names ASCII digits and punctuation.
    public var newPassword: String
    /// Makes one of its members, each as its property describes.
    public init(currentPassword: String, newPassword: String) {
        self.currentPassword = currentPassword
        self.newPassword = newPassword
    }
}

/// `DELETE /v1/me`: the current password proves the session's holder is the person — or, for an account made by
/// Apple or Google that has none, a fresh sign-in with one of its identities (`reauthentication`).
public struct AccountDeletionRequest: Codable, Sendable, Equatable {
    /// The password, as a step-up.
    public var currentPassword: String?
    /// Instead of the password: a fresh sign-in with one of the account's identities.
    public var reauthentication: IdentityReauthentication?
    /// Makes one of its members, each as its property describes.
    public init(currentPassword: String? = nil, reauthentication: IdentityReauthentication? = nil) {
        self.currentPassword = currentPassword
        self.reauthentication = reauthentication
    }
}

/// The answer to `DELETE /v1/me`: every session has ended, and the account's personal data is
/// erased at `erasureAt` unless the person logs in with their password before then.
public struct AccountDeletion: Codable, Sendable, Equatable {
    /// When the account is erased unless the person signs in with the password before.
    public var erasureAt: Date
    /// Makes one of its members, each as its property describes.
    public init(erasureAt: Date) {
        self.erasureAt = erasureAt
    }
}

/// `POST /v1/me/email`. `currentPassword` proves the session's holder knows the password: a
/// new address is a new way into the account (`current_password_required` without it).
public struct EmailChangeRequest: Codable, Sendable, Equatable {
    /// The new address (trimmed and lower-cased).
    public var email: String
    /// The password in use: a new address or phone is a new way into the account, so a session alone cannot add one
    /// (400 `current_password_required` without it, 400 `invalid_credentials` when wrong; wrong ones count against the
    /// login failure budget).
    public var currentPassword: String?
    /// Makes one of its members, each as its property describes.
    public init(email: String, currentPassword: String?) {
        self.email = email
        self.currentPassword = currentPassword
    }
}

/// `POST /v1/me/phone`. `currentPassword` as for ``EmailChangeRequest``.
public struct PhoneVerificationRequest: Codable, Sendable, Equatable {
    /// A phone number, normalised to E.164: `+7 912 345-67-89`, `8 (912) 345-67-89`, `9123456789`, `0049 30 1234567`.
    /// Digits with spaces, `-`, `(`, `)`, `.` between them (the server takes any number in a row; the pattern, two);
    /// international with `+` or `00` (8-15 digits, not starting with 0; 11 after a 7), or national (10 digits, or 11
    /// starting with 8 or 7) in the default country (`GATEHOUSE_DEFAULT_COUNTRY_CODE`, 7; the pattern is for 7). At
    /// most 32 characters.
    public var phone: String
    /// The password in use: a new address or phone is a new way into the account, so a session alone cannot add one
    /// (400 `current_password_required` without it, 400 `invalid_credentials` when wrong; wrong ones count against the
    /// login failure budget).
    public var currentPassword: String?
    /// Makes one of its members, each as its property describes.
    public init(phone: String, currentPassword: String?) {
        self.phone = phone
        self.currentPassword = currentPassword
    }
}

/// `POST /v1/me/email/verify` (`phone` unused) and `POST /v1/me/phone/verify` (`phone` required).
public struct CodeVerification: Codable, Sendable, Equatable {
    /// The code from the SMS, or the code mailed to the pending address.
    public var code: String
    /// With an SMS code: the phone the code was sent to. A phone number, normalised to E.164: `+7 912 345-67-89`, `8
    /// (912) 345-67-89`, `9123456789`, `0049 30 1234567`. Digits with spaces, `-`, `(`, `)`, `.` between them (the
    /// server takes any number in a row; the pattern, two); international with `+` or `00` (8-15 digits, not starting
    /// with 0; 11 after a 7), or national (10 digits, or 11 starting with 8 or 7) in the default country
    /// (`GATEHOUSE_DEFAULT_COUNTRY_CODE`, 7; the pattern is for 7). At most 32 characters.
    public var phone: String?
    /// Makes one of its members, each as its property describes.
    public init(code: String, phone: String? = nil) {
        self.code = code
        self.phone = phone
    }
}

/// One of my account's security events (`GET /v1/me/events`).
public struct SecurityEvent: Codable, Sendable, Equatable {
    /// Its id.
    public var id: UUID
    /// When it happened.
    public var at: Date
    /// `account.created`, `login.succeeded`, `login.failed`, `recovery.requested`, `password.changed`,
    /// `email.changed`, `phone.changed`, `session.revoked`, `sessions.revoked`, `account.deletion_requested`,
    /// `account.deletion_cancelled`, `account.locked`, `account.unlocked`, `signature.enrolled`, `signature.erased`,
    /// `second_factor.added`, `second_factor.removed`, `second_factor.failed`, `second_factor.recovery_code_used`,
    /// `second_factor.recovery_codes_renewed`, `passkey.clone_suspected`; a client shows one it does not know by its
    /// kind, as more may come.
    public var kind: String
    /// Who did it: `account` (me, or whoever held my session or password), `operator`, `system`, `anonymous`.
    public var actor: String
    /// The client address it came from.
    public var ip: String?
    /// The device, as its client named it.
    public var device: String?
    /// What an event says besides (how a password was changed, a masked address, how many sessions).
    public var detail: [String: String]
    /// 1, or how many failed sign-ins from this address in the hour this row counts.
    public var count: Int
    /// Makes one of its members, each as its property describes.
    public init(id: UUID, at: Date, kind: String, actor: String, ip: String?, device: String?, detail: [String: String], count: Int) {
        self.id = id
        self.at = at
        self.kind = kind
        self.actor = actor
        self.ip = ip
        self.device = device
        self.detail = detail
        self.count = count
    }
}

/// `GET /v1/me/events`, newest first.
public struct SecurityEventPage: Codable, Sendable, Equatable {
    /// This page's items, in the list's order.
    public var items: [SecurityEvent]
    /// The cursor of the next page; nil on the last one.
    public var nextCursor: String?
    /// Makes one of its members, each as its property describes.
    public init(items: [SecurityEvent], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }
}
