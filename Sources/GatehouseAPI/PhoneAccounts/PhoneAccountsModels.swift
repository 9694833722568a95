import Foundation

/// `POST /api/users/register` answer. `password` is present only when the server generated it.
public struct PhoneRegisterResponse: Codable, Sendable, Equatable {
    public var login: String
    public var password: String?
    public init(login: String, password: String? = nil) {
        self.login = login
        self.password = password
    }
}

/// `POST /api/auth/login` answer: an opaque session token and when it expires.
public struct PhoneLoginResponse: Codable, Sendable, Equatable {
    public var token: String
    /// ISO 8601, UTC (`2026-11-22T10:00:00Z`).
    public var expires: String?
    public init(token: String, expires: String? = nil) {
        self.token = token
        self.expires = expires
    }
}

/// A partner zone entry of `parts` in `GET /api/users/user`.
public struct PhonePartnerZone: Codable, Sendable, Equatable {
    public var domainId: String
    public var name: String
    public var forfeit: Double
    public var isBanned: Bool
    public var discount: Int
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
    public var id: UUID
    public var login: String
    public var name: String
    public var firstName: String?
    public var lastName: String?
    public var surName: String?
    public var phone: String?
    public var email: String?
    /// `dd.MM.yyyy HH:mm:ss`.
    public var birthday: String?
    public var room: String?
    public var base: String?
    public var isConfirmed: Bool
    public var fcm: String?
    public var parts: [PhonePartnerZone]

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
    public var channel: String
    public var to: String
    public var subject: String?
    public var body: String
    public var code: String?
    /// ISO 8601, UTC.
    public var createdAt: String
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
    public enum Path {
        public static let outbox = "/dev/outbox"
    }

    public static let outbox = Endpoint<NoContent, [DevOutboxMessage]>(.get, Path.outbox, access: .anyone,
                                                                      query: [QueryParameter("to", .text), QueryParameter("last", .limit)])
}

extension PhoneLoginResponse: DeclaresMemberRules {
    public static let memberRules: [String: MemberRule] = ["expires": .dateTime]
}
