import FluentKit
import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform

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
        let page = try await store.messagePage(chat: id, viewer: viewer, clearedThrough: member.clearedThrough, before: before, after: after, limit: pageSize(limit))
        return MessagePage(items: page.items, hasMoreBefore: page.moreBefore, hasMoreAfter: page.moreAfter)
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
                guard let quoted = try await store.visibleMessage(replyTo, in: id, viewer: author, clearedThrough: member.clearedThrough, on: tx)
                else { throw GatehouseError.notFound(.messageNotFound, "error.messageNotFound", field: "replyTo") }
                // A reply to a message deleted a moment ago still goes out, quoting a stub.
                reply = ReplyPreview(messageId: quoted.id, authorId: quoted.authorId, excerpt: quoted.deleted ? nil : Self.excerpt(quoted.text), deleted: quoted.deleted)
            }
            let attachments = try await ownAttachments(attachmentIDs, of: author, on: tx)
            let message = Message(id: OrderedID.make(), chatId: id, authorId: author, text: text, createdAt: clock.now(), editedAt: nil,
                                  deleted: false, replyTo: reply, forwardedFrom: nil, attachments: attachments, clientMessageId: clientID)
            guard try await store.insertMessages([message], on: tx).contains(message.id) else {
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
            try await store.attach(attachmentIDs, to: message.id, on: tx)
            try await delivered(message, to: member.other, bothVisible: sending.bothVisible, recorder, on: tx)
            return message
        }
    }

    /// My uploads by id, in the order given; 404 naming `attachmentIds` when one is not mine.
    private func ownAttachments(_ ids: [UUID], of owner: UUID, on tx: any GatehouseDatabase) async throws -> [GatehouseAPI.Attachment] {
        let found = try await store.attachments(ids, ownedBy: owner, on: tx)
        return try ids.map { id in
            guard let attachment = found[id] else { throw GatehouseError.notFound(.attachmentNotFound, "error.attachmentNotFound", field: "attachmentIds") }
            return attachment
        }
    }

    /// The message this client id already made in this chat; 409 when it made one elsewhere.
    private func sentBefore(_ author: UUID, _ clientID: String, chat: UUID, on db: (any GatehouseDatabase)? = nil) async throws -> Message? {
        guard let existing = try await store.sentMessage(author: author, clientID: clientID, on: db) else { return nil }
        guard existing.chatId == chat else {
            throw GatehouseError(.conflict, .clientMessageIdReused, LocalizedText("error.clientMessageIdReused"), field: "clientMessageId")
        }
        return existing
    }

    /// A new message in a chat (written already): the chat's activity, both members see the
    /// chat (again), and both hear of it (the client id only the author).
    private func delivered(_ message: Message, to other: UUID, bothVisible: Bool, _ recorder: EventRecorder, on tx: any GatehouseDatabase) async throws {
        try await store.setNewest([message.chatId: message.id], on: tx)
        if !bothVisible { try await store.showToBoth([message.chatId], on: tx) }
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
            try await store.editText(of: id, to: text, at: now, on: tx)
            let seers = try await store.seers(of: id, chat: member.chatID, on: tx)
            try await events.supersedeEdits(of: message, for: seers, on: tx)
            for account in seers {
                try recorder.add(.messageUpdated, to: account, try await store.message(id, viewer: account, on: tx)!)
            }
            return try await store.message(id, viewer: viewer, on: tx)!
        }
    }

    /// Deletes a message for me (anyone's) or for everyone (mine: it becomes a tombstone, its
    /// attachments go, and replies quoting it keep only a stub).
    package func delete(viewer: UUID, message id: UUID, scope: MessageDeletion.Scope) async throws {
        try await events.write { tx, recorder in
            let (message, member) = try await visibleMessage(id, viewer: viewer, on: tx)
            switch scope {
            case .me:
                try await store.hide(id, from: viewer, on: tx)
                try recorder.add(.messageDeleted, to: viewer, MessageDeletion(chatId: message.chatId, messageId: id, scope: .me))
            case .everyone:
                guard message.authorId == viewer else { throw GatehouseError(.forbidden, .notMessageAuthor, LocalizedText("error.notMessageAuthor")) }
                guard !message.deleted else { return }
                guard message.payment == nil else { throw Self.paymentMessage }
                let seers = try await store.seers(of: id, chat: member.chatID, on: tx)
                try await store.tombstone(id, at: clock.now(), on: tx)
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
                guard try await store.insertMessages([copy], on: tx).contains(copy.id) else {
                    // The same forward sent twice at once: the first copy stands.
                    guard let copyClientID, let sent = try await sentBefore(viewer.id, copyClientID, chat: chat, on: tx) else {
                        throw GatehouseError(.internal, .internalError, LocalizedText("error.internal"))
                    }
                    copies.append(sent)
                    continue
                }
                try await store.attach(source.attachments.map(\.id), to: copy.id, on: tx)
                try await delivered(copy, to: member.other, bothVisible: false, recorder, on: tx)
                copies.append(copy)
            }
            return copies
        }
    }

    // MARK: - rules

    /// A message in a chat of mine that I can see; 404 otherwise.
    private func visibleMessage(_ id: UUID, viewer: UUID, on tx: any GatehouseDatabase) async throws -> (Message, Membership) {
        guard let chat = try await store.chatOfMessage(id, on: tx),
              let member = try await store.membership(chat, of: viewer, on: tx),
              let message = try await store.visibleMessage(id, viewer: viewer, clearedThrough: member.clearedThrough, on: tx)
        else { throw GatehouseError.notFound(.messageNotFound, "error.messageNotFound") }
        return (message, member)
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
