import Foundation

/// `POST /api/users/register` answer. `password` is present only when the server generated it.
public struct PhoneRegisterResponse: Codable, Sendable, Equatable {
    /// The login, or the phone if none was given.
    public var login: String
    /// Present only when the server generated the password.
    public var password: String?
    /// Makes one of its members, each as its property describes.
    public init(login: String, password: String? = nil) {
        self.login = login
        self.password = password
    }
}

/// `POST /api/auth/login` answer: an opaque session token and when it expires.
public struct PhoneLoginResponse: Codable, Sendable, Equatable {
    /// An opaque session token, valid 24 h.
    public var token: String
    /// ISO 8601, UTC (`2026-11-22T10:00:00Z`).
    public var expires: String?
    /// Makes one of its members, each as its property describes.
    public init(token: String, expires: String? = nil) {
        self.token = token
        self.expires = expires
    }
}

/// A partner zone entry of `parts` in `GET /api/users/user`.
public struct PhonePartnerZone: Codable, Sendable, Equatable {
    /// The partner's domain id.
    public var domainId: String
    /// Its name.
    public var name: String
    /// The forfeit the zone charges.
    public var forfeit: Double
    /// Whether the user is banned in the zone.
    public var isBanned: Bool
    /// The discount, in percent.
    public var discount: Int
    /// Makes one of its members, each as its property describes.
    public init(domainId: String, name: String, forfeit: Double, isBanned: Bool, discount: Int) {
        self.domainId = domainId
        self.name = name
        self.forfeit = forfeit
        self.isBanned = isBanned
        self.discount = discount
    }
}

/// `GET /api/users/user` answer, field for field as the spec lists it.
/// Absent values are encoded as JSON `null` (the spec's clients expect every key).
public struct PhoneUser: Codable, Sendable, Equatable {
    /// Its id.
    public var id: UUID
    /// The login (the phone when none).
    public var login: String
    /// The login, as the spec documents it.
    public var name: String
    /// The first name.
    public var firstName: String?
    /// The last name.
    public var lastName: String?
    /// Patronymic.
    public var surName: String?
    /// E.164.
    public var phone: String?
    /// The address in use, or a pending new one while a change awaits confirmation.
    public var email: String?
    /// `dd.MM.yyyy HH:mm:ss`.
    public var birthday: String?
    /// Always `null` in Gatehouse.
    public var room: String?
    /// Always `null` in Gatehouse.
    public var base: String?
    /// True only when the address `email` shows is confirmed.
    public var isConfirmed: Bool
    /// Firebase Cloud Messaging token.
    public var fcm: String?
    /// Always empty in Gatehouse.
    public var parts: [PhonePartnerZone]

    /// Makes one of its members, each as its property describes.
    public init(
        id: UUID, login: String, name: String, firstName: String?, lastName: String?, surName: String?,
        phone: String?, email: String?, birthday: String?, room: String?, base: String?,
        isConfirmed: Bool, fcm: String?, parts: [PhonePartnerZone]
    ) {
        self.id = id
        self.login = login
        self.name = name
        self.firstName = firstName
        self.lastName = lastName
        self.surName = surName
        self.phone = phone
        self.email = email
        self.birthday = birthday
        self.room = room
        self.base = base
        self.isConfirmed = isConfirmed
        self.fcm = fcm
        self.parts = parts
    }

    private enum CodingKeys: String, CodingKey {
        case id, login, name, firstName, lastName, surName, phone, email, birthday, room, base, isConfirmed, fcm, parts
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(login, forKey: .login)
        try c.encode(name, forKey: .name)
        try c.encode(firstName, forKey: .firstName)
        try c.encode(lastName, forKey: .lastName)
        try c.encode(surName, forKey: .surName)
        try c.encode(phone, forKey: .phone)
        try c.encode(email, forKey: .email)
        try c.encode(birthday, forKey: .birthday)
        try c.encode(room, forKey: .room)
        try c.encode(base, forKey: .base)
        try c.encode(isConfirmed, forKey: .isConfirmed)
        try c.encode(fcm, forKey: .fcm)
        try c.encode(parts, forKey: .parts)
    }
}

/// One message of the development outbox (`GET /dev/outbox`).
public struct DevOutboxMessage: Codable, Sendable, Equatable {
    /// `email` or `sms`.
    public var channel: String
    /// The address or phone it went to.
    public var to: String
    /// The subject, for an email.
    public var subject: String?
    /// The text as sent.
    public var body: String
    /// The code it carries, when it carries one.
    public var code: String?
    /// ISO 8601, UTC.
    public var createdAt: String
    /// Makes one of its members, each as its property describes.
    public init(channel: String, to: String, subject: String?, body: String, code: String?, createdAt: String) {
        self.channel = channel
        self.to = to
        self.subject = subject
        self.body = body
        self.code = code
        self.createdAt = createdAt
    }

    private enum CodingKeys: String, CodingKey { case channel, to, subject, body, code, createdAt }

    /// Every key is always present (`null` when absent), as the dev outbox documents.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(channel, forKey: .channel)
        try c.encode(to, forKey: .to)
        try c.encode(subject, forKey: .subject)
        try c.encode(body, forKey: .body)
        try c.encode(code, forKey: .code)
        try c.encode(createdAt, forKey: .createdAt)
    }
}

/// The development server's outbox (`gatehouse serve` in development only): what it would have
/// sent by SMS, mail and push, newest first, to one destination (`to`) or all; `last` of them
/// (1–500, 50 when absent). Not in the API's document, as no deployed server has it.
public enum DevAPI {
    /// Its path.
    public enum Path {
        /// The development outbox.
        public static let outbox = "/dev/outbox"
    }

    /// `GET /dev/outbox`: what the server sent (development only: codes for tests and demos, never in production).
    public static let outbox = Endpoint<NoContent, [DevOutboxMessage]>(.get, Path.outbox, access: .anyone,
                                                                      query: [QueryParameter("to", .text), QueryParameter("last", .limit)])
}

extension PhoneLoginResponse: DeclaresMemberRules {
    /// The members' rules (the OpenAPI document lists them).
    public static let memberRules: [String: MemberRule] = ["expires": .dateTime]
}
