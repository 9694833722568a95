import Foundation
import GatehouseAPI
import GatehouseFoundation
import NIOCore

/// `Message`, written three times a send (the author's event, the other member's, the answer),
/// without `JSONEncoder` (`JSONWritable`): it was a tenth of a send's processor time. What a
/// plain message does not have (attachments, a quote, a forward's origin) goes through
/// `V1.encoder` when it is there; a payment's note, in every payment's message, is written by
/// hand too. A test compares the bytes with `V1.encoder`'s.
extension Message: JSONWritable {
    package func write(to object: inout JSONObjectWriter) {
        object.json("attachments", attachments.isEmpty ? Data("[]".utf8) : Self.encoded(attachments))
        object.uuid("authorId", authorId)
        object.uuid("chatId", chatId)
        object.string("clientMessageId", clientMessageId)
        object.date("createdAt", createdAt)
        object.bool("deleted", deleted)
        if let editedAt { object.date("editedAt", editedAt) }
        if let forwardedFrom { object.json("forwardedFrom", Self.encoded(forwardedFrom)) }
        object.uuid("id", id)
        if let payment { object.object("payment", payment) }
        if let replyTo { object.json("replyTo", Self.encoded(replyTo)) }
        object.string("text", text)
    }

    /// A part as `V1.encoder` writes it (these plain values always encode).
    private static func encoded(_ part: some Encodable) -> Data {
        (try? V1.encoder.encode(part)) ?? Data("null".utf8)
    }

    /// The message as `V1.encoder` writes it.
    package var json: Data { Data(jsonBuffer.readableBytesView) }
}

extension PaymentNote: JSONWritable {
    package func write(to object: inout JSONObjectWriter) {
        object.int("amount", amount)
        object.string("kind", kind.rawValue)
        if let requestId { object.uuid("requestId", requestId) }
        object.string("requestKind", requestKind?.rawValue)
        if let transferId { object.uuid("transferId", transferId) }
    }
}
