import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehouseMessenger

/// A transfer and the request that asks for one, written without `JSONEncoder`
/// (`JSONWritable`): each transfer of a batch is written once for its answer and events, and
/// each request once for its Idempotency-Key's fingerprint, and the encoder's generic walk
/// through them was a twentieth of a saturated run's server time. A test compares the bytes with
/// `V1.encoder`'s (a fingerprint stored by one version must match the same request on the next).
extension Transfer: JSONWritable {
    package func write(to object: inout JSONObjectWriter) {
        object.int("amount", amount)
        object.string("comment", comment)
        object.date("createdAt", createdAt)
        if let from { object.object("from", from) }
        object.uuid("id", id)
        object.string("kind", kind.rawValue)
        if let requestId { object.uuid("requestId", requestId) }
        object.object("to", to)
    }
}

extension WalletParty: JSONWritable {
    package func write(to object: inout JSONObjectWriter) {
        object.string("avatarUrl", avatarUrl)
        object.string("firstName", firstName)
        object.uuid("id", id)
        object.string("lastName", lastName)
        object.string("tag", tag)
    }
}

extension NewTransfer: JSONWritable {
    package func write(to object: inout JSONObjectWriter) {
        object.int("amount", amount)
        object.string("comment", comment)
        object.object("to", to)
    }
}

extension PartyReference: JSONWritable {
    package func write(to object: inout JSONObjectWriter) {
        object.string("email", email)
        object.string("phone", phone)
        object.string("tag", tag)
    }
}
