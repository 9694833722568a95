import GatehouseAPI
import GatehouseFoundation

/// `Account`, the answer read most, written without `JSONEncoder` (`JSONWritable`).
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
