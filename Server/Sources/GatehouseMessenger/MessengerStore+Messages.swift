import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import SQLKit

/// The messages' own queries: pages of a chat, the messages a send, an edit or a deletion reads
/// and writes, and the rows a payment adds to a chat. Each write takes the caller's transaction.
extension MessengerStore {
    // MARK: Reading messages

    /// My membership of a chat, nil when I am not a member.
    package func membership(_ chat: UUID, of account: UUID, on db: (any GatehouseDatabase)? = nil) async throws -> Membership? {
        try await reader.membership(chat, of: account, on: sql(db))
    }

    /// A page of a chat as `viewer` sees it (after what they cleared), oldest first: the newest
    /// `limit`, those before `before`, or those after `after` (with `before` too: between them);
    /// and whether the chat has more on either side.
    package func messagePage(chat: UUID, viewer: UUID, clearedThrough: UUID?, before: UUID?, after: UUID?,
                             limit: Int) async throws -> (items: [Message], moreBefore: Bool, moreAfter: Bool) {
        // An older page (scrolling back) tolerates a little lag: a read replica's when there is one. The newest
        // page and pages after a message stay on the primary: a client fills a gap after an event with them.
        guard before != nil, after == nil else {
            return try await messagePage(chat: chat, viewer: viewer, clearedThrough: clearedThrough, before: before, after: after, limit: limit, on: sql(nil))
        }
        return try await database.reading(for: viewer) { db in
            try await messagePage(chat: chat, viewer: viewer, clearedThrough: clearedThrough, before: before, after: after, limit: limit, on: db)
        }
    }

    private func messagePage(chat: UUID, viewer: UUID, clearedThrough: UUID?, before: UUID?, after: UUID?,
                             limit: Int, on sql: any SQLDatabase) async throws -> (items: [Message], moreBefore: Bool, moreAfter: Bool) {
        let base: SQLQueryString = "m.chat_id = \(bind: chat) AND \(Self.visible(to: viewer, clearedThrough: clearedThrough))"
        func exists(_ condition: SQLQueryString) async throws -> Bool {
            try await sql.raw("SELECT 1 AS found FROM messages m WHERE \(condition) LIMIT 1").first() != nil
        }
        if let after {
            var condition: SQLQueryString = "\(base) AND m.id > \(bind: after)"
            if let before { condition += " AND m.id < \(bind: before)" }
            let items = try await reader.messages(where: condition, order: "m.id", limit: limit + 1, viewer: viewer, on: sql)
            var moreAfter = items.count > limit
            let moreBefore = try await exists("\(base) AND m.id <= \(bind: after)")
            if !moreAfter, let before { moreAfter = try await exists("\(base) AND m.id >= \(bind: before)") }
            return (Array(items.prefix(limit)), moreBefore, moreAfter)
        }
        var condition = base
        if let before { condition += " AND m.id < \(bind: before)" }
        let items = try await reader.messages(where: condition, order: "m.id DESC", limit: limit + 1, viewer: viewer, on: sql)
        var moreAfter = false
        if let before { moreAfter = try await exists("\(base) AND m.id >= \(bind: before)") }
        return (Array(items.prefix(limit).reversed()), items.count > limit, moreAfter)
    }

    /// A message as `viewer` sees it, when they see it: after what they cleared in its chat and
    /// not deleted for them (`chat`: only in that chat).
    package func visibleMessage(_ id: UUID, in chat: UUID? = nil, viewer: UUID, clearedThrough: UUID?, on db: any GatehouseDatabase) async throws -> Message? {
        var condition: SQLQueryString = "m.id = \(bind: id) AND \(Self.visible(to: viewer, clearedThrough: clearedThrough))"
        if let chat { condition += " AND m.chat_id = \(bind: chat)" }
        return try await reader.messages(where: condition, viewer: viewer, on: sql(db)).first
    }

    /// A message as `viewer` gets it, whatever they cleared (what an event carries).
    package func message(_ id: UUID, viewer: UUID, on db: any GatehouseDatabase) async throws -> Message? {
        try await reader.message(id, viewer: viewer, on: sql(db))
    }

    /// The messages with these ids, as `viewer` gets them (a page of chats' last messages).
    package func messages(_ ids: [UUID], viewer: UUID, on db: (any GatehouseDatabase)? = nil) async throws -> [Message] {
        guard !ids.isEmpty else { return [] }
        return try await reader.messages(where: "m.id IN (\(binds: ids))", viewer: viewer, on: sql(db))
    }

    /// The chat a message is in, nil when there is no such message.
    package func chatOfMessage(_ id: UUID, on db: any GatehouseDatabase) async throws -> UUID? {
        try await sql(db).raw("SELECT chat_id FROM messages WHERE id = \(bind: id)").first(decodingColumn: "chat_id", as: UUID.self)
    }

    /// The message an author's client id made, nil when it made none.
    package func sentMessage(author: UUID, clientID: String, on db: (any GatehouseDatabase)? = nil) async throws -> Message? {
        try await reader.messages(where: "m.author_id = \(bind: author) AND m.client_message_id = \(bind: clientID)",
                                  viewer: author, on: sql(db)).first
    }

    /// The owner's uploads among `ids`, by id.
    package func attachments(_ ids: [UUID], ownedBy owner: UUID, on db: any GatehouseDatabase) async throws -> [UUID: GatehouseAPI.Attachment] {
        guard !ids.isEmpty else { return [:] }
        let rows = try await sql(db).raw("""
            SELECT \(MessageReader.attachmentColumns) FROM attachments att WHERE att.owner_id = \(bind: owner) AND att.id IN (\(binds: ids))
            """).all()
        return Dictionary(uniqueKeysWithValues: try rows.map { row in let a = try reader.attachment(row); return (a.id, a) })
    }

    /// The members of a chat who still see a message (neither cleared it nor deleted it for themselves).
    package func seers(of message: UUID, chat: UUID, on db: any GatehouseDatabase) async throws -> [UUID] {
        let rows = try await sql(db).raw("""
            SELECT cm.account_id FROM chat_members cm WHERE cm.chat_id = \(bind: chat)
            AND (cm.cleared_through IS NULL OR cm.cleared_through < \(bind: message))
            AND NOT EXISTS (SELECT 1 FROM message_hidden h WHERE h.message_id = \(bind: message) AND h.account_id = cm.account_id)
            """).all()
        return try rows.map { try $0.decode(column: "account_id", as: UUID.self) }
    }

    private static func visible(to viewer: UUID, clearedThrough: UUID?) -> SQLQueryString {
        MessageReader.visible(to: viewer, cleared: clearedThrough.map { "\(bind: $0)" } ?? "NULL")
    }

    // MARK: Writing messages

    /// Writes new messages (their reply and forward fields too); a client id its author used
    /// before makes no row. Answers the ids written. The same rows as a payment's message
    /// (`addPaymentMessages`): one statement writes a message.
    package func insertMessages(_ messages: [Message], on tx: any GatehouseDatabase) async throws -> Set<UUID> {
        guard !messages.isEmpty else { return [] }
        let rows = try await sql(tx).raw(Self.insert(messages, postgres: tx.isPostgres)).all()
        return Set(try rows.map { try $0.decode(column: "id", as: UUID.self) })
    }

    /// The statement `insertMessages` runs (a send's group commit runs it among its other writes):
    /// the messages that make a row answer their `id`.
    package static func insert(_ messages: [Message], postgres: Bool) throws -> SQLQueryString {
        "\(try messageRows(messages).insert(into: "messages", postgres: postgres)) ON CONFLICT (author_id, client_message_id) DO NOTHING RETURNING id"
    }

    /// The rows of new messages, every column a message is written with.
    private static func messageRows(_ messages: [Message]) throws -> RowSet {
        var rows = RowSet(count: messages.count)
        rows.add("id", "uuid", messages.map(\.id))
        rows.add("chat_id", "uuid", messages.map(\.chatId))
        rows.add("author_id", "uuid", messages.map(\.authorId))
        rows.add("text", "text", messages.map(\.text))
        rows.add("created_at", "timestamptz", messages.map(\.createdAt))
        rows.add("reply_to_id", "uuid", messages.map(\.replyTo?.messageId))
        rows.add("reply_author_id", "uuid", messages.map(\.replyTo?.authorId))
        rows.add("reply_excerpt", "text", messages.map { $0.replyTo?.excerpt })
        rows.add("reply_deleted", "boolean", messages.map { $0.replyTo?.deleted ?? false })
        rows.add("forward_author_id", "uuid", messages.map(\.forwardedFrom?.authorId))
        rows.add("forward_sent_at", "timestamptz", messages.map(\.forwardedFrom?.sentAt))
        rows.add("client_message_id", "text", messages.map(\.clientMessageId))
        rows.add("payment", "text", messages.map { message in message.payment.map { String(decoding: $0.jsonBuffer.readableBytesView, as: UTF8.self) } })
        return rows
    }

    /// Takes back messages written in this transaction (a batch's sends over the rate limit).
    package func deleteMessages(_ ids: [UUID], on tx: any GatehouseDatabase) async throws {
        guard !ids.isEmpty else { return }
        try await sql(tx).raw("DELETE FROM messages WHERE id IN (\(binds: ids))").run()
    }

    /// A message's attachments, in order.
    package func attach(_ attachments: [UUID], to message: UUID, on tx: any GatehouseDatabase) async throws {
        guard !attachments.isEmpty else { return }
        let rows = attachments.enumerated().map { index, id -> SQLQueryString in "(\(bind: message), \(bind: id), \(bind: index))" }
        try await sql(tx).raw("INSERT INTO message_attachments (message_id, attachment_id, position) VALUES \(rows.joined(separator: ", "))").run()
    }

    /// Each chat's newest message (chat id → message id) as its activity; `lock` first locks the
    /// chats in id order, as every writer of several chats does.
    package func setNewest(_ newest: [UUID: UUID], lock: Bool = false, on tx: any GatehouseDatabase) async throws {
        let chats = newest.keys.sorted()
        guard !chats.isEmpty else { return }
        let sql = sql(tx)
        // One chat: the update takes its lock.
        if lock, chats.count > 1, database.isPostgres {
            try await sql.raw("SELECT id FROM chats WHERE id IN (\(binds: chats)) ORDER BY id FOR UPDATE").run()
        }
        try await sql.raw(Self.activity(newest, postgres: sql.isPostgres)).run()
    }

    /// Both members see these chats (again).
    package func showToBoth(_ chats: [UUID], on tx: any GatehouseDatabase) async throws {
        guard !chats.isEmpty else { return }
        try await sql(tx).raw("UPDATE chat_members SET visible = \(true) WHERE chat_id IN (\(binds: chats)) AND visible = \(false)").run()
    }

    package func editText(of message: UUID, to text: String, at now: Date, on tx: any GatehouseDatabase) async throws {
        try await sql(tx).raw("UPDATE messages SET text = \(bind: text), edited_at = \(bind: now) WHERE id = \(bind: message)").run()
    }

    /// Hides a message from one member (once, however often).
    package func hide(_ message: UUID, from account: UUID, on tx: any GatehouseDatabase) async throws {
        try await sql(tx).raw("""
            INSERT INTO message_hidden (message_id, account_id) VALUES (\(bind: message), \(bind: account)) ON CONFLICT DO NOTHING
            """).run()
    }

    /// A message deleted for everyone: a tombstone without text or attachments, and replies
    /// quoting it keep only a stub.
    package func tombstone(_ message: UUID, at now: Date, on tx: any GatehouseDatabase) async throws {
        let sql = sql(tx)
        try await sql.raw("UPDATE messages SET deleted_at = \(bind: now), text = '' WHERE id = \(bind: message)").run()
        try await sql.raw("DELETE FROM message_attachments WHERE message_id = \(bind: message)").run()
        try await sql.raw("UPDATE messages SET reply_excerpt = NULL, reply_deleted = \(true) WHERE reply_to_id = \(bind: message)").run()
    }

    // MARK: Payments in chats

    /// Two people of a chat, the lower id first.
    package struct ChatPair: Hashable, Sendable {
        package var low: UUID
        package var high: UUID
        package init(_ pair: (low: UUID, high: UUID)) { (low, high) = pair }
    }

    /// A direct chat: its id, and whether both members see it.
    package typealias DirectChat = (id: UUID, allVisible: Bool)

    /// Whether the account in `account` (a column or value of the statement it is part of)
    /// restricts who may message it: friends only, or a block list.
    package static func restricts(_ account: SQLQueryString) -> SQLQueryString {
        """
        (EXISTS (SELECT 1 FROM messenger_people mp WHERE mp.account_id = \(account) AND mp.who_can_message = \(bind: MessagingAudience.friends.rawValue)) \
        OR EXISTS (SELECT 1 FROM messenger_blocks mb WHERE mb.account_id = \(account)))
        """
    }

    /// The direct chats of these pairs, made (hidden from both) where missing, once however many
    /// transactions make them at the same moment.
    /// `making: false` reads them and makes none (a pair with no chat is left out).
    package func directChats(_ pairs: Set<ChatPair>, now: Date, making: Bool = true, on tx: any GatehouseDatabase) async throws -> [ChatPair: DirectChat] {
        let sql = sql(tx)
        func read(_ pairs: [ChatPair]) async throws -> [ChatPair: DirectChat] {
            let chats: SQLQueryString = "chats c WHERE \(SQLQueryString.isAnyPair("c.low_id", "c.high_id", pairs.map { ($0.low, $0.high) }, postgres: sql.isPostgres))"
            var found: [ChatPair: DirectChat] = [:]
            for row in try await sql.preparedRows("""
                SELECT c.id, c.low_id, c.high_id, (SELECT COUNT(*) FROM chat_members m WHERE m.chat_id = c.id AND m.visible = \(false)) AS hidden
                FROM \(chats)
                """) {
                let pair = ChatPair((try row.decode(column: "low_id", as: UUID.self), try row.decode(column: "high_id", as: UUID.self)))
                found[pair] = (try row.decode(column: "id", as: UUID.self), try row.decode(column: "hidden", as: Int.self) == 0)
            }
            return found
        }
        var chats = try await read(Array(pairs))
        // The missing ones, in pair order (two transactions making the same chats wait in one order).
        let missing = pairs.filter { chats[$0] == nil }.sorted { ($0.low, $0.high) < ($1.low, $1.high) }
        guard making, !missing.isEmpty else { return chats }
        let made = missing.map { (pair: $0, id: OrderedID.make()) }
        var rows = RowSet(count: made.count)
        rows.add("id", "uuid", made.map(\.id))
        rows.add("low_id", "uuid", made.map(\.pair.low))
        rows.add("high_id", "uuid", made.map(\.pair.high))
        rows.add("activity_key", "text", made.map { $0.id.uuidString.lowercased() })
        var inserted: Set<UUID> = []
        for row in try await sql.preparedRows("""
            \(rows.insert(into: "chats", constants: [("created_at", "\(bind: now)")], postgres: sql.isPostgres))
            ON CONFLICT (low_id, high_id) DO NOTHING RETURNING id
            """) {
            inserted.insert(try row.decode(column: "id", as: UUID.self))
        }
        let new = made.filter { inserted.contains($0.id) }
        if !new.isEmpty {
            // Both members of each, hidden.
            var members = RowSet(count: new.count * 2)
            members.add("chat_id", "uuid", new.flatMap { [$0.id, $0.id] })
            members.add("account_id", "uuid", new.flatMap { [$0.pair.low, $0.pair.high] })
            members.add("other_id", "uuid", new.flatMap { [$0.pair.high, $0.pair.low] })
            _ = try await sql.preparedRows(members.insert(into: "chat_members", constants: [("visible", "\(false)")], postgres: sql.isPostgres))
            for made in new { chats[made.pair] = (made.id, false) }
        }
        // Made by another transaction a moment ago.
        let raced = missing.filter { chats[$0] == nil }
        if !raced.isEmpty { chats.merge(try await read(raced)) { a, _ in a } }
        return chats
    }

    /// Adds to `writes` the rows of payment messages written at `now`: the messages, each chat's
    /// newest as its activity, and `shown` made visible to both members.
    package func addPaymentMessages(_ messages: [Message], at now: Date, shown: [UUID], into writes: inout CombinedWrites) throws {
        guard !messages.isEmpty else { return }
        writes.add(try Self.messageRows(messages).insert(into: "messages", postgres: writes.postgres))
        // Each chat's newest message. The chats are not locked in id order first, as a batch of
        // sends does: two batches of payments that share a chat share its people's wallets,
        // which they lock in order before this.
        var newest: [UUID: UUID] = [:]
        for m in messages { newest[m.chatId] = m.id }
        writes.add(Self.activity(newest, postgres: writes.postgres))
        if !shown.isEmpty {
            writes.add("UPDATE chat_members SET visible = \(true) WHERE \(SQLQueryString.isAny("chat_id", shown, postgres: writes.postgres)) AND visible = \(false)")
        }
    }

    /// Each chat's newest message as its activity (chat id → message id): one statement.
    /// The statement `setNewest` runs after its lock: each chat's newest message as its activity.
    /// Never backwards: a message is numbered (its time-ordered id) before it is written, and two
    /// sends into one chat can commit in the other order (two members at once, or a send held up
    /// by a pooler in a failover while the next one went through), so a chat keeps the newer one.
    package static func activity(_ newest: [UUID: UUID], postgres: Bool) -> SQLQueryString {
        let ids = newest.keys.sorted()
        var activity = RowSet(count: ids.count)
        activity.add("id", "uuid", ids)
        activity.add("last_message_id", "uuid", ids.map { newest[$0]! })
        activity.add("activity_key", "text", ids.map { newest[$0]!.uuidString.lowercased() })
        return activity.update("chats", matching: ["id"], unless: "chats.last_message_id IS NOT NULL AND chats.last_message_id >= r.last_message_id", postgres: postgres)
    }
}
