import Foundation
import GatehouseAPI
import SQLKit

/// A partner zone of a client record: the phone-first spec's `parts[]` entry, as
/// `GET /api/users/user` answers it (`domainId`, `name`, `forfeit` — the sum of fines —,
/// `isBanned`, `discount` in percent).
package typealias ClientPart = PhonePartnerZone

/// The business's own entry for a customer (the phone-first spec's "client"), keyed by phone
/// (E.164): what its systems know of them, shown by `GET /api/users/user` once an account is bound
/// to it. Registration never changes it (docs/operators.md, "Client records").
package struct ClientRecord: Codable, Sendable, Equatable {
    package var phone: String
    package var firstName: String?
    package var lastName: String?
    package var middleName: String?
    package var email: String?
    /// A calendar date (`yyyy-MM-dd` in a file; the spec's `dd.MM.yyyy` is read too).
    package var birthday: String?
    /// The last booked room and base.
    package var room: String?
    package var base: String?
    package var parts: [ClientPart]

    package init(phone: String, firstName: String? = nil, lastName: String? = nil, middleName: String? = nil, email: String? = nil,
                 birthday: String? = nil, room: String? = nil, base: String? = nil, parts: [ClientPart] = []) {
        self.phone = phone
        self.firstName = firstName
        self.lastName = lastName
        self.middleName = middleName
        self.email = email
        self.birthday = birthday
        self.room = room
        self.base = base
        self.parts = parts
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        phone = try c.decode(String.self, forKey: .phone)
        firstName = try c.decodeIfPresent(String.self, forKey: .firstName)
        lastName = try c.decodeIfPresent(String.self, forKey: .lastName)
        middleName = try c.decodeIfPresent(String.self, forKey: .middleName)
        email = try c.decodeIfPresent(String.self, forKey: .email)
        birthday = try c.decodeIfPresent(String.self, forKey: .birthday)
        room = try c.decodeIfPresent(String.self, forKey: .room)
        base = try c.decodeIfPresent(String.self, forKey: .base)
        parts = try c.decodeIfPresent([ClientPart].self, forKey: .parts) ?? []
    }
}

extension ClientRecord {
    /// A record as stored (`client_records`), its columns named with `prefix` when a join renamed them.
    package init(row: any SQLRow, prefix: String = "") throws {
        func text(_ name: String) throws -> String? { try row.decode(column: prefix + name, as: String?.self) }
        let parts = try row.decode(column: prefix + "parts", as: String.self)
        self.init(
            phone: try row.decode(column: prefix + "phone", as: String.self), firstName: try text("first_name"),
            lastName: try text("last_name"), middleName: try text("middle_name"), email: try text("email"), birthday: try text("birthday"),
            room: try text("room"), base: try text("base"),
            parts: (try? JSONDecoder().decode([ClientPart].self, from: Data(parts.utf8))) ?? [])
    }
}
