import Foundation
import GatehouseAPI
import GatehouseFoundation

/// `Account` and `PhoneUser`, the answers read most, written without `JSONEncoder` (`JSONWritable`).
extension Account: JSONWritable {
    package func write(to object: inout JSONObjectWriter) {
        object.string("avatarUrl", avatarUrl)
        object.string("birthday", birthday)
        object.date("createdAt", createdAt)
        object.string("email", email)
        object.bool("emailConfirmed", emailConfirmed)
        object.string("firstName", firstName)
        object.uuid("id", id)
        object.string("lastName", lastName)
        object.string("locale", locale)
        object.string("middleName", middleName)
        object.string("pendingEmail", pendingEmail)
        object.string("phone", phone)
        object.bool("phoneVerified", phoneVerified)
        object.string("tag", tag)
        object.date("updatedAt", updatedAt)
    }
}

/// `GET /api/users/user`: every key, `null` when absent; the partner zones (rare, and a number the encoder formats its
/// own way) through `V1.encoder`. `JSONEncoder` was a third of the request's processor time.
extension PhoneUser: JSONWritable {
    package func write(to object: inout JSONObjectWriter) {
        object.stringOrNull("base", base)
        object.stringOrNull("birthday", birthday)
        object.stringOrNull("email", email)
        object.stringOrNull("fcm", fcm)
        object.stringOrNull("firstName", firstName)
        object.uuid("id", id)
        object.bool("isConfirmed", isConfirmed)
        object.stringOrNull("lastName", lastName)
        object.stringOrNull("login", login)
        object.stringOrNull("name", name)
        if parts.isEmpty {
            object.json("parts", "[]".utf8)
        } else {
            object.json("parts", (try? V1.encoder.encode(parts)) ?? Data("[]".utf8))
        }
        object.stringOrNull("phone", phone)
        object.stringOrNull("room", room)
        object.stringOrNull("surName", surName)
    }
}
