import FluentKit
import Foundation
import GatehouseAPI
import SQLKit

/// Wallet messages (docs/wallet.md, "Dialogs"): a transfer or a money request between two people
/// appears in their direct chat, made if they had none, in the transaction that moves the money,
/// with the same `message.created` events as any message. The author is the one who paid or
/// asked; the text is their comment. The recipient's messaging privacy does not stop it: it
/// records money, and money may be sent to anyone with a wallet.
struct PaymentMessages: MessengerConcept {
    let core: MessengerCore

    @discardableResult
    func post(_ note: PaymentNote, comment: String?, author: UUID, to other: UUID, on tx: any Database, _ recorder: EventRecorder) async throws -> Message {
        let (chat, allVisible) = try await directChat(author, other, on: tx)
        let message = Message(id: OrderedID.make(), chatId: chat, authorId: author, text: comment ?? "", createdAt: clock.now(), editedAt: nil,
                              deleted: false, replyTo: nil, forwardedFrom: nil, attachments: [], clientMessageId: nil, payment: note)
        let payment = String(decoding: try V1JSON.encoder.encode(note), as: UTF8.self)
        let sql = sql(tx)
        try await sql.raw("""
            INSERT INTO messages (id, chat_id, author_id, text, created_at, reply_deleted, payment)
            VALUES (\(bind: message.id), \(bind: chat), \(bind: author), \(bind: message.text), \(bind: message.createdAt), \(false), \(bind: payment))
            """).run()
        try await sql.raw("""
            UPDATE chats SET last_message_id = \(bind: message.id), activity_key = \(bind: message.id.uuidString.lowercased()) WHERE id = \(bind: chat)
            """).run()
        if !allVisible {
            try await sql.raw("UPDATE chat_members SET visible = \(true) WHERE chat_id = \(bind: chat) AND visible = \(false)").run()
        }
        try recordCreated(message, to: other, recorder)
        return message
    }

    /// The direct chat of two accounts, made now when they have none, and whether both members
    /// see it. The chat usually exists: one read then, an insert only the first time.
    private func directChat(_ a: UUID, _ b: UUID, on tx: any Database) async throws -> (id: UUID, allVisible: Bool) {
        let pair = ordered(a, b)
        let sql = sql(tx)
        let existing: SQLQueryString = """
            SELECT c.id, (SELECT COUNT(*) FROM chat_members m WHERE m.chat_id = c.id AND m.visible = \(false)) AS hidden
            FROM chats c WHERE c.low_id = \(bind: pair.low) AND c.high_id = \(bind: pair.high)
            """
        if let row = try await sql.raw(existing).first() {
            return (try row.decode(column: "id", as: UUID.self), try row.decode(column: "hidden", as: Int.self) == 0)
        }
        let id = OrderedID.make()
        if try await sql.raw("""
            INSERT INTO chats (id, low_id, high_id, created_at, activity_key) VALUES
            (\(bind: id), \(bind: pair.low), \(bind: pair.high), \(bind: clock.now()), \(bind: id.uuidString.lowercased()))
            ON CONFLICT (low_id, high_id) DO NOTHING RETURNING id
            """).first() != nil {
            try await sql.raw("""
                INSERT INTO chat_members (chat_id, account_id, other_id, visible) VALUES
                (\(bind: id), \(bind: a), \(bind: b), \(true)), (\(bind: id), \(bind: b), \(bind: a), \(true))
                """).run()
            return (id, true)
        }
        // Made by another transaction a moment ago.
        guard let row = try await sql.raw(existing).first() else { throw GatehouseError(.internal, .internalError, LocalizedText("error.internal")) }
        return (try row.decode(column: "id", as: UUID.self), try row.decode(column: "hidden", as: Int.self) == 0)
    }
}
