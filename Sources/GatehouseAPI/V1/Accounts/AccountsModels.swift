import Foundation

// The bodies of `/v1`'s accounts (sign-up, recovery, profile). camelCase keys, ISO 8601 instants
// (`V1.encoder`), calendar dates as `yyyy-MM-dd`.

/// Where a one-time code goes.
public enum CodeChannel: String, Codable, Sendable, Equatable, CaseIterable {
    case email
    case sms
}

/// `POST /v1/signup/code`, `POST /v1/recovery/code`: exactly one of `email` or `phone`.
public struct CodeRequest: Codable, Sendable, Equatable {
    public var email: String?
    public var phone: String?
    public init(email: String? = nil, phone: String? = nil) {
        self.email = email
        self.phone = phone
    }
}

/// The answer to every code request: when the code dies, when another may be asked for,
/// and how many wrong tries it takes.
public struct CodeSent: Codable, Sendable, Equatable {
    public var channel: CodeChannel
    /// The address or phone as the server normalised it (E.164 for phones).
    public var destination: String
    public var expiresAt: Date
    public var resendAvailableAt: Date
    public var attemptsAllowed: Int
    public var codeLength: Int
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
    public var email: String?
    public var phone: String?
    public var code: String
    public var password: String
    public var firstName: String?
    public var lastName: String?
    public var tag: String?
    /// `yyyy-MM-dd`.
    public var birthday: String?
    /// `en` or `ru`: the language of the account's mail and SMS.
    public var locale: String?
    /// A label for the session this sign-up opens (e.g. "iPhone 15, iOS 18").
    public var device: String?
    /// Which tokens the answer carries (absent: the session's own token).
    public var tokens: TokenKind?
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
    public var id: UUID
    public var email: String?
    public var emailConfirmed: Bool
    /// A new address waiting for its code; `email` stays in use (and for login) until then.
    public var pendingEmail: String?
    /// E.164.
    public var phone: String?
    public var phoneVerified: Bool
    public var tag: String?
    public var firstName: String?
    public var lastName: String?
    public var middleName: String?
    /// `yyyy-MM-dd`.
    public var birthday: String?
    public var locale: String?
    /// Absolute URL of the avatar image, if any.
    public var avatarUrl: String?
    public var createdAt: Date
    public var updatedAt: Date
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
    public var available: Bool
    public init(tag: String, available: Bool) {
        self.tag = tag
        self.available = available
    }
}

/// `POST /v1/recovery`: the code from `/v1/recovery/code` and the new password.
public struct RecoveryRequest: Codable, Sendable, Equatable {
    public var email: String?
    public var phone: String?
    public var code: String
    public var password: String
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
    public var firstName: String??
    public var lastName: String??
    public var middleName: String??
    public var tag: String??
    /// `yyyy-MM-dd`.
    public var birthday: String??
    public var locale: String??

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
    public var currentPassword: String
    public var newPassword: String
    public init(currentPassword: String, newPassword: String) {
        self.currentPassword = currentPassword
        self.newPassword = newPassword
    }
}

/// `DELETE /v1/me`: the current password proves the session's holder is the person — or, for an account made by
/// Apple or Google that has none, a fresh sign-in with one of its identities (`reauthentication`).
public struct AccountDeletionRequest: Codable, Sendable, Equatable {
    public var currentPassword: String?
    public var reauthentication: IdentityReauthentication?
    public init(currentPassword: String? = nil, reauthentication: IdentityReauthentication? = nil) {
        self.currentPassword = currentPassword
        self.reauthentication = reauthentication
    }
}

/// The answer to `DELETE /v1/me`: every session has ended, and the account's personal data is
/// erased at `erasureAt` unless the person logs in with their password before then.
public struct AccountDeletion: Codable, Sendable, Equatable {
    public var erasureAt: Date
    public init(erasureAt: Date) {
        self.erasureAt = erasureAt
    }
}

/// `POST /v1/me/email`. `currentPassword` proves the session's holder knows the password: a
/// new address is a new way into the account (`current_password_required` without it).
public struct EmailChangeRequest: Codable, Sendable, Equatable {
    public var email: String
    public var currentPassword: String?
    public init(email: String, currentPassword: String?) {
        self.email = email
        self.currentPassword = currentPassword
    }
}

/// `POST /v1/me/phone`. `currentPassword` as for ``EmailChangeRequest``.
public struct PhoneVerificationRequest: Codable, Sendable, Equatable {
    public var phone: String
    public var currentPassword: String?
    public init(phone: String, currentPassword: String?) {
        self.phone = phone
        self.currentPassword = currentPassword
    }
}

/// `POST /v1/me/email/verify` (`phone` unused) and `POST /v1/me/phone/verify` (`phone` required).
public struct CodeVerification: Codable, Sendable, Equatable {
    public var code: String
    public var phone: String?
    public init(code: String, phone: String? = nil) {
        self.code = code
        self.phone = phone
    }
}

/// One of my account's security events (`GET /v1/me/events`).
public struct SecurityEvent: Codable, Sendable, Equatable {
    public var id: UUID
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
    public var ip: String?
    public var device: String?
    /// What an event says besides (how a password was changed, a masked address, how many sessions).
    public var detail: [String: String]
    /// 1, or how many failed sign-ins from this address in the hour this row counts.
    public var count: Int
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
    public var items: [SecurityEvent]
    public var nextCursor: String?
    public init(items: [SecurityEvent], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }
}
