import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import SQLKit

/// Direct chats: one per pair of people, opened on the first "Написать сообщение", listed by
/// newest activity with the other person, the last message and the unread count.
package struct ChatsService: MessengerConcept {
    package let core: MessengerCore

    /// My chats, newest activity first; `query` matches the other's name or tag.
    package func list(viewer: UUID, query: String?, cursor: String?, limit: Int?) async throws -> ChatPage {
        let size = pageSize(limit)
        var conditions: [SQLQueryString] = ["mine.account_id = \(bind: viewer)", "mine.visible = \(true)"]
        if let match = PeopleIndex.matching(query) { conditions.append(match) }
        if let after = try PageCursor.read(cursor, parts: 2) {
            guard let id = UUID(uuidString: after[1]) else { throw PageCursor.invalid }
            conditions.append("(c.activity_key < \(bind: after[0]) OR (c.activity_key = \(bind: after[0]) AND c.id < \(bind: id)))")
        }
        let rows = try await chatRows(viewer: viewer, where: conditions.joined(separator: " AND "), limit: size + 1)
        let page = Array(rows.prefix(size))
        let chats = try await assemble(page, viewer: viewer, on: database.sql)
        var next: String?
        if rows.count > size, let last = page.last {
            next = PageCursor.make([try last.decode(column: "activity_key", as: String.self), try last.decode(column: "chat_id", as: UUID.self).uuidString])
        }
        return ChatPage(items: chats, nextCursor: next)
    }

    /// One chat of mine (also one I deleted for me).
    package func chat(_ id: UUID, viewer: UUID, on db: (any Database)? = nil) async throws -> Chat {
        let sql = sql(db ?? database.db)
        let rows = try await chatRows(viewer: viewer, where: "mine.account_id = \(bind: viewer) AND c.id = \(bind: id)", limit: 1, on: sql)
        guard let chat = try await assemble(rows, viewer: viewer, on: sql).first else {
            throw GatehouseError.notFound(.chatNotFound, "error.chatNotFound")
        }
        return chat
    }

    /// My chat with `person`, made the first time (once, however many ask at the same moment).
    package func open(viewer: UUID, person: UUID) async throws -> Chat {
        guard person != viewer else { throw GatehouseError(.invalidInput, .notYourself, LocalizedText("error.notYourself"), field: "personId") }
        _ = try await visiblePerson(person, seenBy: viewer, field: "personId")
        let id = try await database.db.transaction { tx -> UUID in
            let pair = ordered(viewer, person)
            if let existing = try await chatID(pair, on: tx) {
                try await sql(tx).raw("UPDATE chat_members SET visible = \(true) WHERE chat_id = \(bind: existing) AND account_id = \(bind: viewer)").run()
                return existing
            }
            try await checkMayMessage(person, from: viewer, on: tx)
            let id = OrderedID.make()
            let inserted = try await sql(tx).raw("""
                INSERT INTO chats (id, low_id, high_id, created_at, activity_key) VALUES
                (\(bind: id), \(bind: pair.low), \(bind: pair.high), \(bind: clock.now()), \(bind: id.uuidString.lowercased()))
                ON CONFLICT (low_id, high_id) DO NOTHING RETURNING id
                """).first()
            guard inserted != nil else {
                // Opened by the other side (or another device) at the same moment: theirs is ours.
                guard let existing = try await chatID(pair, on: tx) else { throw GatehouseError(.internal, .internalError, LocalizedText("error.internal")) }
                try await sql(tx).raw("UPDATE chat_members SET visible = \(true) WHERE chat_id = \(bind: existing) AND account_id = \(bind: viewer)").run()
                return existing
            }
            // The other member sees the chat with its first message.
            try await sql(tx).raw("""
                INSERT INTO chat_members (chat_id, account_id, other_id, visible) VALUES
                (\(bind: id), \(bind: viewer), \(bind: person), \(true)), (\(bind: id), \(bind: person), \(bind: viewer), \(false))
                """).run()
            return id
        }
        return try await chat(id, viewer: viewer)
    }

    /// Mutes my chat until a time, or unmutes it.
    package func update(viewer: UUID, chat id: UUID, mutedUntil: Date?) async throws -> Chat {
        _ = try await membership(id, of: viewer)
        try await database.sql.raw("UPDATE chat_members SET muted_until = \(bind: mutedUntil) WHERE chat_id = \(bind: id) AND account_id = \(bind: viewer)").run()
        return try await chat(id, viewer: viewer)
    }

    /// Deletes the chat for me: it leaves my list, and what it holds now is cleared for me.
    /// The other member keeps everything; a new message brings it back with only what is new.
    package func delete(viewer: UUID, chat id: UUID) async throws {
        try await events.write { tx, recorder in
            _ = try await membership(id, of: viewer, on: tx)
            let last = try await sql(tx).raw("SELECT last_message_id FROM chats WHERE id = \(bind: id)")
                .first(decodingColumn: "last_message_id", as: UUID?.self) ?? nil
            try await sql(tx).raw("""
                UPDATE chat_members SET visible = \(false), cleared_through = \(bind: last),
                    last_read_id = COALESCE(\(bind: last), last_read_id)
                WHERE chat_id = \(bind: id) AND account_id = \(bind: viewer)
                """).run()
            try recorder.add(.chatDeleted, to: viewer, ChatDeletion(chatId: id))
        }
    }

    /// Marks everything up to `upTo` read. The mark only moves forward; my other devices and the
    /// other member hear of it (`chat.read`).
    package func markRead(viewer: UUID, chat id: UUID, upTo: UUID) async throws -> ReadState {
        try await events.write { tx, recorder in
            let member = try await membership(id, of: viewer, on: tx)
            let exists = try await sql(tx).raw("SELECT 1 AS found FROM messages WHERE id = \(bind: upTo) AND chat_id = \(bind: id)").first()
            guard exists != nil else { throw GatehouseError.notFound(.messageNotFound, "error.messageNotFound", field: "upTo") }
            let moved = try await sql(tx).raw("""
                UPDATE chat_members SET last_read_id = \(bind: upTo)
                WHERE chat_id = \(bind: id) AND account_id = \(bind: viewer) AND (last_read_id IS NULL OR last_read_id < \(bind: upTo))
                RETURNING last_read_id
                """).first()
            let lastRead = moved == nil ? member.lastRead : upTo
            let state = ReadState(chatId: id, accountId: viewer, lastReadMessageId: lastRead, unreadCount: try await unread(id, of: viewer, on: tx))
            if moved != nil {
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
        var conditions: [SQLQueryString] = [
            "m.chat_id = \(bind: id)", "m.deleted_at IS NULL",
            MessageReader.visible(to: viewer, cleared: member.clearedThrough.map { "\(bind: $0)" } ?? "NULL"),
        ]
        if let after = try PageCursor.read(cursor, parts: 2) {
            guard let message = UUID(uuidString: after[0]), let position = Int(after[1]) else { throw PageCursor.invalid }
            conditions.append("(m.id < \(bind: message) OR (m.id = \(bind: message) AND ma.position < \(bind: position)))")
        }
        let rows = try await database.sql.raw("""
            SELECT \(MessageReader.attachmentColumns), m.id AS message_id, m.author_id, m.created_at AS sent_at, ma.position
            FROM message_attachments ma JOIN messages m ON m.id = ma.message_id JOIN attachments att ON att.id = ma.attachment_id
            WHERE \(conditions.joined(separator: " AND ")) ORDER BY m.id DESC, ma.position DESC LIMIT \(literal: size + 1)
            """).all()
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

    private func chatID(_ pair: (low: UUID, high: UUID), on db: any Database) async throws -> UUID? {
        try await sql(db).raw("SELECT id FROM chats WHERE low_id = \(bind: pair.low) AND high_id = \(bind: pair.high)")
            .first(decodingColumn: "id", as: UUID.self)
    }

    /// The unread count: the other's messages after my read mark that I can see and that are not tombstones.
    package func unread(_ chat: UUID, of viewer: UUID, on db: any Database) async throws -> Int {
        try await sql(db).raw("""
            SELECT \(Self.unreadCount(viewer: viewer)) AS unread FROM chat_members mine WHERE mine.chat_id = \(bind: chat) AND mine.account_id = \(bind: viewer)
            """).first(decodingColumn: "unread", as: Int.self) ?? 0
    }

    private static func unreadCount(viewer: UUID) -> SQLQueryString {
        """
        (SELECT COUNT(*) FROM messages m WHERE m.chat_id = mine.chat_id AND m.author_id <> \(bind: viewer) AND m.deleted_at IS NULL \
        AND (mine.last_read_id IS NULL OR m.id > mine.last_read_id) AND \(MessageReader.visible(to: viewer, cleared: "mine.cleared_through")))
        """
    }

    private func chatRows(viewer: UUID, where condition: SQLQueryString, limit: Int, on sql: (any SQLDatabase)? = nil) async throws -> [any SQLRow] {
        try await (sql ?? database.sql).raw("""
            SELECT \(PersonLoader.columns), c.id AS chat_id, c.activity_key, mine.last_read_id, mine.muted_until,
                theirs.last_read_id AS other_last_read, \(Self.unreadCount(viewer: viewer)) AS unread,
                (SELECT m.id FROM messages m WHERE m.chat_id = mine.chat_id AND \(MessageReader.visible(to: viewer, cleared: "mine.cleared_through"))
                 ORDER BY m.id DESC LIMIT 1) AS last_visible_id
            FROM chat_members mine JOIN chats c ON c.id = mine.chat_id
            JOIN chat_members theirs ON theirs.chat_id = mine.chat_id AND theirs.account_id = mine.other_id
            JOIN accounts a ON a.id = mine.other_id JOIN messenger_people p ON p.account_id = a.id
            \(PersonLoader.joins(viewer: viewer))
            WHERE \(condition)
            ORDER BY c.activity_key DESC, c.id DESC LIMIT \(literal: limit)
            """).all()
    }

    private func assemble(_ rows: [any SQLRow], viewer: UUID, on sql: any SQLDatabase) async throws -> [Chat] {
        let lastIDs = try rows.compactMap { try $0.decode(column: "last_visible_id", as: UUID?.self) }
        var last: [UUID: Message] = [:]
        if !lastIDs.isEmpty {
            for message in try await reader.messages(where: "m.id IN (\(binds: lastIDs))", viewer: viewer, on: sql) { last[message.chatId] = message }
        }
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

    package init(core: MessengerCore) {
        self.core = core
    }
}
