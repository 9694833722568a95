import FluentKit
import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import SQLKit

/// Messages: sending (idempotent by the client's id), history both ways, edits, deletion for me
/// or for everyone, forwarding. Each write is one transaction with the chat's activity and the
/// events for both members.
package struct MessagesService: MessengerConcept {
    package let core: MessengerCore
    /// Group commit for plain sends (nil: every send on its own, the batcher's own fallback).
    package let batcher: SendBatcher?

    package init(core: MessengerCore, batched: Bool = true) {
        self.core = core
        self.batcher = batched ? SendBatcher(core: core, single: { request in
            try await MessagesService(core: core, batched: false).sendAlone(
                author: request.author, chat: request.chat, text: request.text, clientID: request.clientID, replyTo: nil, attachmentIDs: [])
        }) : nil
    }

    // MARK: - history

    /// A page of the chat as I see it, oldest first: the newest `limit` messages, those before
    /// `before`, or those after `after` (with `before` too: between them).
    package func history(viewer: UUID, chat id: UUID, before: UUID?, after: UUID?, limit: Int?) async throws -> MessagePage {
        let member = try await membership(id, of: viewer)
        let size = pageSize(limit)
        let sql = database.sql
        let cleared: SQLQueryString = member.clearedThrough.map { "\(bind: $0)" } ?? "NULL"
        let base: SQLQueryString = "m.chat_id = \(bind: id) AND \(MessageReader.visible(to: viewer, cleared: cleared))"
        var items: [Message]
        var moreBefore: Bool, moreAfter: Bool
        if let after {
            var condition: SQLQueryString = "\(base) AND m.id > \(bind: after)"
            if let before { condition += " AND m.id < \(bind: before)" }
            items = try await reader.messages(where: condition, order: "m.id", limit: size + 1, viewer: viewer, on: sql)
            moreAfter = items.count > size
            items = Array(items.prefix(size))
            moreBefore = try await exists("\(base) AND m.id <= \(bind: after)", on: sql)
            if !moreAfter, let before { moreAfter = try await exists("\(base) AND m.id >= \(bind: before)", on: sql) }
        } else {
            var condition = base
            if let before { condition += " AND m.id < \(bind: before)" }
            items = try await reader.messages(where: condition, order: "m.id DESC", limit: size + 1, viewer: viewer, on: sql)
            moreBefore = items.count > size
            items = Array(items.prefix(size).reversed())
            moreAfter = false
            if let before { moreAfter = try await exists("\(base) AND m.id >= \(bind: before)", on: sql) }
        }
        return MessagePage(items: items, hasMoreBefore: moreBefore, hasMoreAfter: moreAfter)
    }

    private func exists(_ condition: SQLQueryString, on sql: any SQLDatabase) async throws -> Bool {
        try await sql.raw("SELECT 1 AS found FROM messages m WHERE \(condition) LIMIT 1").first() != nil
    }

    // MARK: - sending

    /// Sends a message. A retry with the same `clientMessageId` answers the message already sent.
    package func send(viewer: AccountSnapshot, chat id: UUID, _ input: SendMessage) async throws -> Message {
        try requirePerson(viewer)
        let text = try cleanText(input.text, field: "text")
        let clientID = try cleanClientID(input.clientMessageId)
        let attachmentIDs = input.attachmentIds ?? []
        guard attachmentIDs.count <= settings.attachmentsPerMessage else {
            throw GatehouseError(.invalidInput, .tooManyAttachments, LocalizedText("error.tooManyAttachments", [String(settings.attachmentsPerMessage)]), field: "attachmentIds")
        }
        guard Set(attachmentIDs).count == attachmentIDs.count else { throw GatehouseError.invalid(.invalidParameter, "error.invalidQueryParameter", "attachmentIds", "attachmentIds").on(field: "attachmentIds") }
        guard !text.isEmpty || !attachmentIDs.isEmpty else { throw GatehouseError(.invalidInput, .emptyMessage, LocalizedText("error.emptyMessage"), field: "text") }
        if let batcher, input.replyTo == nil, attachmentIDs.isEmpty {
            return try await batcher.send(SendBatcher.Request(author: viewer.id, chat: id, text: text, clientID: clientID))
        }
        return try await sendAlone(author: viewer.id, chat: id, text: text, clientID: clientID, replyTo: input.replyTo, attachmentIDs: attachmentIDs)
    }

    /// One send in a transaction of its own (replies, attachments; and the batcher's fallback).
    package func sendAlone(author: UUID, chat id: UUID, text: String, clientID: String, replyTo: UUID?, attachmentIDs: [UUID]) async throws -> Message {
        return try await events.write { tx, recorder in
            guard let sending = try await sendingContexts([SendPair(chat: id, author: author)], on: tx)[SendPair(chat: id, author: author)] else {
                throw GatehouseError.notFound(.chatNotFound, "error.chatNotFound")
            }
            let member = sending.member
            guard sending.mayMessage else {
                // A retry of a message sent before the other side changed their setting still answers it.
                if let sent = try await sentBefore(author, clientID, chat: id, on: tx) { return sent }
                throw Self.messagingNotAllowed
            }
            var reply: ReplyPreview?
            if let replyTo {
                let cleared: SQLQueryString = member.clearedThrough.map { "\(bind: $0)" } ?? "NULL"
                guard let quoted = try await reader.messages(
                    where: "m.id = \(bind: replyTo) AND m.chat_id = \(bind: id) AND \(MessageReader.visible(to: author, cleared: cleared))",
                    viewer: author, on: sql(tx)).first
                else { throw GatehouseError.notFound(.messageNotFound, "error.messageNotFound", field: "replyTo") }
                // A reply to a message deleted a moment ago still goes out, quoting a stub.
                reply = ReplyPreview(messageId: quoted.id, authorId: quoted.authorId, excerpt: quoted.deleted ? nil : Self.excerpt(quoted.text), deleted: quoted.deleted)
            }
            let attachments = try await ownAttachments(attachmentIDs, of: author, on: tx)
            let message = Message(id: OrderedID.make(), chatId: id, authorId: author, text: text, createdAt: clock.now(), editedAt: nil,
                                  deleted: false, replyTo: reply, forwardedFrom: nil, attachments: attachments, clientMessageId: clientID)
            let inserted = try await sql(tx).raw("""
                INSERT INTO messages (id, chat_id, author_id, text, created_at, reply_to_id, reply_author_id, reply_excerpt, reply_deleted, client_message_id)
                VALUES (\(bind: message.id), \(bind: id), \(bind: author), \(bind: text), \(bind: message.createdAt), \(bind: reply?.messageId),
                        \(bind: reply?.authorId), \(bind: reply?.excerpt), \(bind: reply?.deleted ?? false), \(bind: clientID))
                ON CONFLICT (author_id, client_message_id) DO NOTHING RETURNING id
                """).first()
            guard inserted != nil else {
                // A retry (or the same message sent twice at once): the first one stands, and it
                // is not refused by the rate limit it passed the first time.
                guard let sent = try await sentBefore(author, clientID, chat: id, on: tx) else {
                    throw GatehouseError(.internal, .internalError, LocalizedText("error.internal"))
                }
                return sent
            }
            // Counted after the insert, so that a retry is neither counted nor refused; a refusal
            // rolls back the insert and the count together.
            try await core.rateLimiter.hit("messages", key: author.uuidString, limit: settings.messagesPerMinute, window: 60, on: tx)
            try await attach(attachmentIDs, to: message.id, on: tx)
            try await delivered(message, to: member.other, bothVisible: sending.bothVisible, recorder, on: tx)
            return message
        }
    }

    /// My uploads by id, in the order given; 404 naming `attachmentIds` when one is not mine.
    private func ownAttachments(_ ids: [UUID], of owner: UUID, on tx: any Database) async throws -> [GatehouseAPI.Attachment] {
        guard !ids.isEmpty else { return [] }
        let rows = try await sql(tx).raw("""
            SELECT \(MessageReader.attachmentColumns) FROM attachments att WHERE att.owner_id = \(bind: owner) AND att.id IN (\(binds: ids))
            """).all()
        let found = Dictionary(uniqueKeysWithValues: try rows.map { row in let a = try reader.attachment(row); return (a.id, a) })
        return try ids.map { id in
            guard let attachment = found[id] else { throw GatehouseError.notFound(.attachmentNotFound, "error.attachmentNotFound", field: "attachmentIds") }
            return attachment
        }
    }

    /// The message this client id already made in this chat; 409 when it made one elsewhere.
    private func sentBefore(_ author: UUID, _ clientID: String, chat: UUID, on db: (any Database)? = nil) async throws -> Message? {
        let sql = sql(db ?? database.db)
        guard let existing = try await reader.messages(where: "m.author_id = \(bind: author) AND m.client_message_id = \(bind: clientID)",
                                                       viewer: author, on: sql).first else { return nil }
        guard existing.chatId == chat else {
            throw GatehouseError(.conflict, .clientMessageIdReused, LocalizedText("error.clientMessageIdReused"), field: "clientMessageId")
        }
        return existing
    }

    private func attach(_ attachments: [UUID], to message: UUID, on tx: any Database) async throws {
        guard !attachments.isEmpty else { return }
        let rows = attachments.enumerated().map { index, id -> SQLQueryString in "(\(bind: message), \(bind: id), \(bind: index))" }
        try await sql(tx).raw("INSERT INTO message_attachments (message_id, attachment_id, position) VALUES \(rows.joined(separator: ", "))").run()
    }

    /// A new message in a chat (written already): the chat's activity, both members see the
    /// chat (again), and both hear of it (the client id only the author).
    private func delivered(_ message: Message, to other: UUID, bothVisible: Bool, _ recorder: EventRecorder, on tx: any Database) async throws {
        let chat = message.chatId
        try await sql(tx).raw("""
            UPDATE chats SET last_message_id = \(bind: message.id), activity_key = \(bind: message.id.uuidString.lowercased()) WHERE id = \(bind: chat)
            """).run()
        if !bothVisible {
            try await sql(tx).raw("UPDATE chat_members SET visible = \(true) WHERE chat_id = \(bind: chat) AND visible = \(false)").run()
        }
        try recordCreated(message, to: other, recorder)
    }

    // MARK: - changing

    /// Edits my message within the edit window.
    package func edit(viewer: UUID, message id: UUID, text raw: String) async throws -> Message {
        let text = try cleanText(raw, field: "text")
        return try await events.write { tx, recorder in
            let (message, member) = try await visibleMessage(id, viewer: viewer, on: tx)
            guard message.authorId == viewer else { throw GatehouseError(.forbidden, .notMessageAuthor, LocalizedText("error.notMessageAuthor")) }
            guard !message.deleted else { throw GatehouseError(.conflict, .messageDeleted, LocalizedText("error.messageDeleted")) }
            guard message.payment == nil else { throw Self.paymentMessage }
            let now = clock.now()
            guard now.timeIntervalSince(message.createdAt) <= settings.editWindow else {
                throw GatehouseError(.conflict, .editWindowClosed, LocalizedText("error.editWindowClosed", [String(Int(settings.editWindow / 3_600))]))
            }
            guard !text.isEmpty || !message.attachments.isEmpty else { throw GatehouseError(.invalidInput, .emptyMessage, LocalizedText("error.emptyMessage"), field: "text") }
            guard text != message.text else { return message }
            // An edit reaches the other member as a send does: refused when a new message would be
            // (their privacy: friends only, and no longer friends), and budgeted on its own (every
            // edit is an event per member, kept for the retention period).
            try await checkMayMessage(member.other, from: viewer, on: tx)
            try await core.rateLimiter.hit("message-edits", key: viewer.uuidString, limit: settings.editsPerMinute, window: 60, on: tx)
            try await core.rateLimiter.hit("message-edits-day", key: viewer.uuidString, limit: settings.editsPerDay, window: 86_400, on: tx)
            try await sql(tx).raw("UPDATE messages SET text = \(bind: text), edited_at = \(bind: now) WHERE id = \(bind: id)").run()
            let seers = try await seers(of: id, in: member, on: tx)
            try await events.supersedeEdits(of: message, for: seers, on: tx)
            for account in seers {
                try recorder.add(.messageUpdated, to: account, try await reader.message(id, viewer: account, on: sql(tx))!)
            }
            return try await reader.message(id, viewer: viewer, on: sql(tx))!
        }
    }

    /// Deletes a message for me (anyone's) or for everyone (mine: it becomes a tombstone, its
    /// attachments go, and replies quoting it keep only a stub).
    package func delete(viewer: UUID, message id: UUID, scope: MessageDeletion.Scope) async throws {
        try await events.write { tx, recorder in
            let (message, member) = try await visibleMessage(id, viewer: viewer, on: tx)
            switch scope {
            case .me:
                try await sql(tx).raw("""
                    INSERT INTO message_hidden (message_id, account_id) VALUES (\(bind: id), \(bind: viewer)) ON CONFLICT DO NOTHING
                    """).run()
                try recorder.add(.messageDeleted, to: viewer, MessageDeletion(chatId: message.chatId, messageId: id, scope: .me))
            case .everyone:
                guard message.authorId == viewer else { throw GatehouseError(.forbidden, .notMessageAuthor, LocalizedText("error.notMessageAuthor")) }
                guard !message.deleted else { return }
                guard message.payment == nil else { throw Self.paymentMessage }
                let seers = try await seers(of: id, in: member, on: tx)
                try await sql(tx).raw("UPDATE messages SET deleted_at = \(bind: clock.now()), text = '' WHERE id = \(bind: id)").run()
                try await sql(tx).raw("DELETE FROM message_attachments WHERE message_id = \(bind: id)").run()
                try await sql(tx).raw("UPDATE messages SET reply_excerpt = NULL, reply_deleted = \(true) WHERE reply_to_id = \(bind: id)").run()
                for account in seers {
                    try recorder.add(.messageDeleted, to: account, MessageDeletion(chatId: message.chatId, messageId: id, scope: .everyone))
                }
            }
        }
    }

    /// Copies a message into chats of mine, keeping who wrote it first and when.
    package func forward(viewer: AccountSnapshot, message id: UUID, _ input: ForwardRequest) async throws -> [Message] {
        try requirePerson(viewer)
        guard !input.chatIds.isEmpty, input.chatIds.count <= settings.forwardMaxChats, Set(input.chatIds).count == input.chatIds.count else {
            throw GatehouseError.invalid(.invalidParameter, "error.invalidQueryParameter", "chatIds", "1–\(settings.forwardMaxChats) distinct chats").on(field: "chatIds")
        }
        let clientID = try input.clientMessageId.map(cleanClientID)
        return try await events.write { tx, recorder in
            let (source, _) = try await visibleMessage(id, viewer: viewer.id, on: tx)
            guard !source.deleted else { throw GatehouseError(.conflict, .messageDeleted, LocalizedText("error.messageDeleted")) }
            guard source.payment == nil else { throw Self.paymentMessage }
            let origin = source.forwardedFrom ?? ForwardOrigin(authorId: source.authorId, sentAt: source.createdAt)
            var copies: [Message] = []
            for chat in input.chatIds {
                let member = try await membership(chat, of: viewer.id, field: "chatIds", on: tx)
                let copyClientID = clientID.map { "\($0):\(chat.uuidString.lowercased())" }
                if let copyClientID, let sent = try await sentBefore(viewer.id, copyClientID, chat: chat, on: tx) {
                    copies.append(sent)
                    continue
                }
                try await checkMayMessage(member.other, from: viewer.id, on: tx)
                try await core.rateLimiter.hit("messages", key: viewer.id.uuidString, limit: settings.messagesPerMinute, window: 60, on: tx)
                let copy = Message(id: OrderedID.make(), chatId: chat, authorId: viewer.id, text: source.text, createdAt: clock.now(), editedAt: nil,
                                   deleted: false, replyTo: nil, forwardedFrom: origin, attachments: source.attachments, clientMessageId: copyClientID)
                try await sql(tx).raw("""
                    INSERT INTO messages (id, chat_id, author_id, text, created_at, reply_deleted, forward_author_id, forward_sent_at, client_message_id)
                    VALUES (\(bind: copy.id), \(bind: chat), \(bind: viewer.id), \(bind: source.text), \(bind: copy.createdAt), \(false),
                            \(bind: origin.authorId), \(bind: origin.sentAt), \(bind: copyClientID))
                    """).run()
                try await attach(source.attachments.map(\.id), to: copy.id, on: tx)
                try await delivered(copy, to: member.other, bothVisible: false, recorder, on: tx)
                copies.append(copy)
            }
            return copies
        }
    }

    // MARK: - rules

    /// A message in a chat of mine that I can see; 404 otherwise.
    private func visibleMessage(_ id: UUID, viewer: UUID, on tx: any Database) async throws -> (Message, Membership) {
        guard let chat = try await sql(tx).raw("SELECT chat_id FROM messages WHERE id = \(bind: id)").first(decodingColumn: "chat_id", as: UUID.self),
              let member = try await reader.membership(chat, of: viewer, on: sql(tx))
        else { throw GatehouseError.notFound(.messageNotFound, "error.messageNotFound") }
        let cleared: SQLQueryString = member.clearedThrough.map { "\(bind: $0)" } ?? "NULL"
        guard let message = try await reader.messages(where: "m.id = \(bind: id) AND \(MessageReader.visible(to: viewer, cleared: cleared))",
                                                      viewer: viewer, on: sql(tx)).first
        else { throw GatehouseError.notFound(.messageNotFound, "error.messageNotFound") }
        return (message, member)
    }

    /// The members who still see a message (neither cleared it nor deleted it for themselves).
    private func seers(of message: UUID, in member: Membership, on tx: any Database) async throws -> [UUID] {
        let rows = try await sql(tx).raw("""
            SELECT cm.account_id FROM chat_members cm WHERE cm.chat_id = \(bind: member.chatID)
            AND (cm.cleared_through IS NULL OR cm.cleared_through < \(bind: message))
            AND NOT EXISTS (SELECT 1 FROM message_hidden h WHERE h.message_id = \(bind: message) AND h.account_id = cm.account_id)
            """).all()
        return try rows.map { try $0.decode(column: "account_id", as: UUID.self) }
    }

    /// Message text as stored: NFC, line breaks as `\n`, no other control characters, within the limit.
    package func cleanText(_ raw: String, field: String) throws -> String {
        let text = raw.replacingOccurrences(of: "\r\n", with: "\n").precomposedStringWithCanonicalMapping
        for scalar in text.unicodeScalars where scalar != "\n" {
            if scalar.properties.generalCategory == .control || scalar.value == 0x2028 || scalar.value == 0x2029 {
                throw GatehouseError(.invalidInput, .invalidText, LocalizedText("error.invalidText"), field: field)
            }
        }
        guard text.unicodeScalars.count <= settings.maxTextLength else {
            throw GatehouseError.invalid(.fieldTooLong, "error.fieldTooLong", field, String(settings.maxTextLength)).on(field: field)
        }
        return text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ? "" : text
    }

    package func cleanClientID(_ raw: String) throws -> String {
        guard (1...64).contains(raw.count), raw.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
            throw GatehouseError.invalid(.invalidParameter, "error.invalidQueryParameter", String(raw.prefix(64)), "clientMessageId").on(field: "clientMessageId")
        }
        return raw
    }

    /// A wallet message records a payment: it is neither edited, deleted for everyone nor forwarded.
    package static var paymentMessage: GatehouseError {
        GatehouseError(.conflict, .paymentMessage, LocalizedText("error.paymentMessage"))
    }

    /// The first 200 characters a reply quotes.
    package static func excerpt(_ text: String) -> String { String(text.prefix(200)) }
}
