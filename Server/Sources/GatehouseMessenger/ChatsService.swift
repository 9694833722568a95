import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import SQLKit

/// Direct chats: one per pair of people, opened on the first "Написать сообщение", listed by
/// newest activity with the other person, the last message and the unread count.
package struct ChatsService: MessengerConcept {
    package let database: DatabaseProvider
    package let clock: GatehouseClock
    package let settings: GatehouseConfiguration.Messenger
    package let events: EventLog
    package let people: PersonLoader
    package let reader: MessageReader
    package let store: MessengerStore

    /// My chats, newest activity first; `query` matches the other's name or tag.
    package func list(viewer: UUID, query: String?, cursor: String?, limit: Int?) async throws -> ChatPage {
        let size = pageSize(limit)
        var after: (activityKey: String, id: UUID)?
        if let parts = try PageCursor.read(cursor, parts: 2) {
            guard let id = UUID(uuidString: parts[1]) else { throw PageCursor.invalid }
            after = (parts[0], id)
        }
        let rows = try await store.chats(viewer: viewer, matching: PeopleIndex.matching(query), after: after, limit: size + 1)
        let page = Array(rows.prefix(size))
        let chats = try await assemble(page, viewer: viewer)
        var next: String?
        if rows.count > size, let last = page.last {
            next = PageCursor.make([try last.decode(column: "activity_key", as: String.self), try last.decode(column: "chat_id", as: UUID.self).uuidString])
        }
        return ChatPage(items: chats, nextCursor: next)
    }

    /// One chat of mine (also one I deleted for me).
    package func chat(_ id: UUID, viewer: UUID, on db: (any GatehouseDatabase)? = nil) async throws -> Chat {
        let rows = try await store.chat(id, viewer: viewer, on: db)
        guard let chat = try await assemble(rows, viewer: viewer, on: db).first else {
            throw GatehouseError.notFound(.chatNotFound, "error.chatNotFound")
        }
        return chat
    }

    /// My chat with `person`, made the first time (once, however many ask at the same moment).
    package func open(viewer: UUID, person: UUID) async throws -> Chat {
        guard person != viewer else { throw GatehouseError(.invalidInput, .notYourself, LocalizedText("error.notYourself"), field: "personId") }
        _ = try await visiblePerson(person, seenBy: viewer, field: "personId")
        let id = try await database.db.withTransaction { tx -> UUID in
            let pair = ordered(viewer, person)
            if let existing = try await store.chatID(pair, on: tx) {
                try await store.show(chat: existing, to: viewer, on: tx)
                return existing
            }
            try await checkMayMessage(person, from: viewer, on: tx)
            let id = OrderedID.make()
            guard try await store.insertChat(id: id, pair: pair, now: clock.now(), on: tx) else {
                // Opened by the other side (or another device) at the same moment: theirs is ours.
                guard let existing = try await store.chatID(pair, on: tx) else { throw GatehouseError(.internal, .internalError, LocalizedText("error.internal")) }
                try await store.show(chat: existing, to: viewer, on: tx)
                return existing
            }
            // The other member sees the chat with its first message.
            try await store.insertMembers(chat: id, opener: viewer, other: person, on: tx)
            return id
        }
        return try await chat(id, viewer: viewer)
    }

    /// Mutes my chat until a time, or unmutes it.
    package func update(viewer: UUID, chat id: UUID, mutedUntil: Date?) async throws -> Chat {
        _ = try await membership(id, of: viewer)
        try await store.mute(chat: id, of: viewer, until: mutedUntil)
        return try await chat(id, viewer: viewer)
    }

    /// Deletes the chat for me: it leaves my list, and what it holds now is cleared for me.
    /// The other member keeps everything; a new message brings it back with only what is new.
    package func delete(viewer: UUID, chat id: UUID) async throws {
        try await events.write { tx, recorder in
            _ = try await membership(id, of: viewer, on: tx)
            try await store.clear(chat: id, for: viewer, on: tx)
            try recorder.add(.chatDeleted, to: viewer, ChatDeletion(chatId: id))
        }
    }

    /// Marks everything up to `upTo` read. The mark only moves forward; my other devices and the
    /// other member hear of it (`chat.read`).
    package func markRead(viewer: UUID, chat id: UUID, upTo: UUID) async throws -> ReadState {
        try await events.write { tx, recorder in
            let member = try await membership(id, of: viewer, on: tx)
            guard try await store.messageExists(upTo, in: id, on: tx) else {
                throw GatehouseError.notFound(.messageNotFound, "error.messageNotFound", field: "upTo")
            }
            let moved = try await store.moveReadMark(chat: id, of: viewer, to: upTo, on: tx)
            let lastRead = moved ? upTo : member.lastRead
            let state = ReadState(chatId: id, accountId: viewer, lastReadMessageId: lastRead, unreadCount: try await store.unread(id, of: viewer, on: tx))
            if moved {
                try recorder.add(.chatRead, to: viewer, state)
                try recorder.add(.chatRead, to: member.other, ReadState(chatId: id, accountId: viewer, lastReadMessageId: lastRead, unreadCount: 0))
            }
            return state
        }
    }

    /// The chat's attachments I can see, newest first.
    package func attachments(viewer: UUID, chat id: UUID, cursor: String?, limit: Int?) async throws -> ChatAttachmentPage {
        let member = try await membership(id, of: viewer)
        let size = pageSize(limit)
        var after: (message: UUID, position: Int)?
        if let parts = try PageCursor.read(cursor, parts: 2) {
            guard let message = UUID(uuidString: parts[0]), let position = Int(parts[1]) else { throw PageCursor.invalid }
            after = (message, position)
        }
        let rows = try await store.chatAttachments(chat: id, viewer: viewer, clearedThrough: member.clearedThrough, after: after, limit: size + 1)
        let page = rows.prefix(size)
        let items = try page.map { row in
            ChatAttachment(attachment: try reader.attachment(row), messageId: try row.decode(column: "message_id", as: UUID.self),
                           authorId: try row.decode(column: "author_id", as: UUID.self), sentAt: try row.decode(column: "sent_at", as: Date.self))
        }
        var next: String?
        if rows.count > size, let last = page.last {
            next = PageCursor.make([try last.decode(column: "message_id", as: UUID.self).uuidString, String(try last.decode(column: "position", as: Int.self))])
        }
        return ChatAttachmentPage(items: items, nextCursor: next)
    }

    // MARK: - reading

    private func assemble(_ rows: [any SQLRow], viewer: UUID, on db: (any GatehouseDatabase)? = nil) async throws -> [Chat] {
        let lastIDs = try rows.compactMap { try $0.decode(column: "last_visible_id", as: UUID?.self) }
        var last: [UUID: Message] = [:]
        for message in try await store.messages(lastIDs, viewer: viewer, on: db) { last[message.chatId] = message }
        return try rows.map { row in
            let id = try row.decode(column: "chat_id", as: UUID.self)
            return Chat(
                id: id, person: try people.decode(row, viewer: viewer), lastMessage: last[id],
                unreadCount: try row.decode(column: "unread", as: Int.self),
                lastReadMessageId: try row.decode(column: "last_read_id", as: UUID?.self),
                otherLastReadMessageId: try row.decode(column: "other_last_read", as: UUID?.self),
                mutedUntil: try row.decode(column: "muted_until", as: Date?.self)
            )
        }
    }

    package init(database: DatabaseProvider, clock: GatehouseClock, settings: GatehouseConfiguration.Messenger, events: EventLog,
                 people: PersonLoader, reader: MessageReader, store: MessengerStore) {
        self.database = database
        self.clock = clock
        self.settings = settings
        self.events = events
        self.people = people
        self.reader = reader
        self.store = store
    }
}
