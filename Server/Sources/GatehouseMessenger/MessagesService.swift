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
    package let clock: GatehouseClock
    package let settings: GatehouseConfiguration.Messenger
    package let rateLimiter: RateLimiter
    package let events: EventLog
    package let people: PersonLoader
    package let store: MessengerStore
    /// The one writer of a message (a forward's copies).
    package let writer: MessageWriter
    /// Every send goes through it (`MessageWriter`, batched).
    package let batcher: SendBatcher

    package init(clock: GatehouseClock, settings: GatehouseConfiguration.Messenger, rateLimiter: RateLimiter, events: EventLog,
                 people: PersonLoader, store: MessengerStore, writer: MessageWriter) {
        self.clock = clock
        self.settings = settings
        self.rateLimiter = rateLimiter
        self.events = events
        self.people = people
        self.store = store
        self.writer = writer
        self.batcher = SendBatcher(writer: writer)
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
        return try await batcher.send(MessageWriter.Send(author: viewer.id, chat: id, text: text, clientID: clientID, replyTo: input.replyTo,
                                                         attachmentIDs: attachmentIDs))
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
            try await rateLimiter.hit("message-edits", key: viewer.uuidString, limit: settings.editsPerMinute, window: 60, on: tx)
            try await rateLimiter.hit("message-edits-day", key: viewer.uuidString, limit: settings.editsPerDay, window: 86_400, on: tx)
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
            let forward = MessageWriter.Send.Forward(origin: source.forwardedFrom ?? ForwardOrigin(authorId: source.authorId, sentAt: source.createdAt),
                                                     attachments: source.attachments)
            // A copy a chat, through the one writer; one refused copy refuses the forward (the
            // transaction rolls the others back). A retry answers the copies made the first time.
            let copies = input.chatIds.map { chat in
                MessageWriter.Send(author: viewer.id, chat: chat, text: source.text, clientID: clientID.map { "\($0):\(chat.uuidString.lowercased())" },
                                   forward: forward)
            }
            return try await writer.write(copies, on: tx, recorder).map { outcome in
                switch outcome {
                case .success(let copy): return copy
                case .failure(let error) where error.code == .chatNotFound: throw GatehouseError.notFound(.chatNotFound, "error.chatNotFound", field: "chatIds")
                case .failure(let error): throw error
                }
            }
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
        // Printable ASCII and line feeds (most messages): already NFC, no control character, a
        // scalar a byte, blank when only spaces and line feeds — the answer of the general way
        // below without its normalization (2% of a send's server time in a profile).
        if raw.utf8.allSatisfy({ ($0 >= 0x20 && $0 < 0x7F) || $0 == 0x0A }) {
            guard raw.utf8.count <= settings.maxTextLength else {
                throw GatehouseError.invalid(.fieldTooLong, "error.fieldTooLong", field, String(settings.maxTextLength)).on(field: field)
            }
            return raw.utf8.allSatisfy { $0 == 0x20 || $0 == 0x0A } ? "" : raw
        }
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
