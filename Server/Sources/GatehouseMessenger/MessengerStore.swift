import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import SQLKit

/// The messenger's queries (docs/architecture.md, "Data access"): privacy, blocks, friendships,
/// attachments, the lookups every send makes, and the messages' own (`MessengerStore+Messages`).
/// `PersonLoader` and `MessageReader` stay the reads that build people and messages; the
/// services decide, and this reads and writes. A write that belongs to a caller's transaction
/// takes it (`on:`).
package struct MessengerStore: Sendable {
    package let database: DatabaseProvider
    /// Builds the messages the queries read.
    package let reader: MessageReader

    package init(database: DatabaseProvider, reader: MessageReader) {
        self.database = database
        self.reader = reader
    }

    func sql(_ db: (any GatehouseDatabase)?) -> any SQLDatabase { db ?? database.db }

    // MARK: People

    /// A page of people with a tag, by sort name, matching `match` (a `PeopleIndex` condition) after `after` (sort name, id).
    package func people(viewer: UUID, matching match: SQLQueryString?, after: (sortName: String, id: UUID)?, limit: Int) async throws -> [any SQLRow] {
        var conditions: [SQLQueryString] = ["p.tag_key IS NOT NULL", "a.id <> \(bind: viewer)", "a.deletion_requested_at IS NULL"]
        if let match { conditions.append(match) }
        if let after {
            conditions.append("(p.sort_name > \(bind: after.sortName) OR (p.sort_name = \(bind: after.sortName) AND a.id > \(bind: after.id)))")
        }
        // A search tolerates a little lag: a read replica's when there is one.
        return try await database.reading(for: viewer) { db in
            try await db.raw("""
                SELECT \(PersonLoader.columns), p.sort_name FROM messenger_people p JOIN accounts a ON a.id = p.account_id
                \(PersonLoader.joins(viewer: viewer))
                WHERE \(conditions.joined(separator: " AND "))
                ORDER BY p.sort_name, a.id LIMIT \(literal: limit)
                """).all()
        }
    }

    /// The people I have a friendship or a request with, matching `match`, by tag or by name.
    package func related(viewer: UUID, matching match: SQLQueryString?, byTag: Bool) async throws -> [any SQLRow] {
        var conditions: [SQLQueryString] = ["f.id IS NOT NULL", "a.id <> \(bind: viewer)"]
        if let match { conditions.append(match) }
        let order: SQLQueryString = byTag ? "p.tag_key, a.id" : "p.sort_name, a.id"
        // The friends list tolerates a little lag (a request of my own pins me to the primary).
        return try await database.reading(for: viewer) { db in
            try await db.raw("""
                SELECT \(PersonLoader.columns) FROM messenger_people p JOIN accounts a ON a.id = p.account_id
                \(PersonLoader.joins(viewer: viewer))
                WHERE \(conditions.joined(separator: " AND ")) ORDER BY \(order)
                """).all()
        }
    }

    // MARK: Privacy and blocks

    package func whoCanMessage(_ account: UUID) async throws -> String? {
        try await sql(nil).raw("SELECT who_can_message FROM messenger_people WHERE account_id = \(bind: account)")
            .first(decodingColumn: "who_can_message", as: String.self)
    }

    package func setWhoCanMessage(_ account: UUID, _ audience: String) async throws {
        try await sql(nil).raw("UPDATE messenger_people SET who_can_message = \(bind: audience) WHERE account_id = \(bind: account)").run()
    }

    /// How many people `viewer` blocked besides `person`.
    package func blockCount(viewer: UUID, except person: UUID) async throws -> Int {
        try await sql(nil).raw("SELECT COUNT(*) AS n FROM messenger_blocks WHERE account_id = \(bind: viewer) AND blocked_id <> \(bind: person)")
            .first(decodingColumn: "n", as: Int.self) ?? 0
    }

    /// Blocks `person` (once, however often).
    package func block(viewer: UUID, person: UUID, now: Date) async throws {
        try await sql(nil).raw("""
            INSERT INTO messenger_blocks (account_id, blocked_id, created_at) VALUES (\(bind: viewer), \(bind: person), \(bind: now))
            ON CONFLICT (account_id, blocked_id) DO NOTHING
            """).run()
    }

    package func unblock(viewer: UUID, person: UUID) async throws {
        try await sql(nil).raw("DELETE FROM messenger_blocks WHERE account_id = \(bind: viewer) AND blocked_id = \(bind: person)").run()
    }

    /// The people `viewer` blocked, newest first.
    package func blocked(viewer: UUID) async throws -> [UUID] {
        try await sql(nil).raw("""
            SELECT blocked_id FROM messenger_blocks WHERE account_id = \(bind: viewer) ORDER BY created_at DESC, blocked_id
            """).all().map { try $0.decode(column: "blocked_id", as: UUID.self) }
    }

    /// Whether `recipient` blocked `sender`.
    package func isBlocked(_ sender: UUID, by recipient: UUID, on db: any GatehouseDatabase) async throws -> Bool {
        try await sql(db).raw("SELECT 1 AS found FROM messenger_blocks WHERE account_id = \(bind: recipient) AND blocked_id = \(bind: sender)").first() != nil
    }

    /// What decides whether `sender` may write to `recipient`: the recipient's audience, the pair's
    /// friendship state, and whether the recipient blocked the sender. Nil: no such person.
    package func messagingRule(_ recipient: UUID, from sender: UUID, pair: (low: UUID, high: UUID),
                               on db: any GatehouseDatabase) async throws -> (audience: String, friendship: String?, blocked: Bool)? {
        guard let row = try await sql(db).raw("""
            SELECT p.who_can_message, f.state,
                   (SELECT COUNT(*) FROM messenger_blocks b WHERE b.account_id = \(bind: recipient) AND b.blocked_id = \(bind: sender)) AS blocked
            FROM messenger_people p
            LEFT JOIN friendships f ON f.low_id = \(bind: pair.low) AND f.high_id = \(bind: pair.high)
            WHERE p.account_id = \(bind: recipient)
            """).first() else { return nil }
        return (try row.decode(column: "who_can_message", as: String.self), try row.decode(column: "state", as: String?.self),
                try row.decode(column: "blocked", as: Int.self) > 0)
    }

    /// For each (chat, author): the author's membership row with the other member's audience,
    /// friendship state, block and visibility (`MessengerConcept.sendingContexts` reads them). The
    /// first read of a send's group commit whose contexts are not remembered (`MessageWriter`): on
    /// PostgreSQL the pairs go as two arrays, so its text is one for any batch and it runs prepared.
    package func sendingRows(_ pairs: [SendPair], hasDevices: (SQLQueryString) -> SQLQueryString, on db: any GatehouseDatabase) async throws -> [any SQLRow] {
        try await sql(db).preparedRows(Self.sending(
            where: .isAnyPair("cm.chat_id", "cm.account_id", pairs.map { ($0.chat, $0.author) }, postgres: db.isPostgres), hasDevices: hasDevices))
    }

    /// The query of `sendingRows`, for the memberships `condition` (on `cm`) picks: what a send
    /// reads, and what the one statement of a send with remembered contexts checks
    /// (`MessageWriter.writeAtOnce`).
    package static func sending(where condition: SQLQueryString, hasDevices: (SQLQueryString) -> SQLQueryString) -> SQLQueryString {
        """
        SELECT cm.chat_id, cm.account_id, cm.other_id, cm.visible, cm.cleared_through, cm.last_read_id, cm.muted_until,
               p.who_can_message, f.state, theirs.visible AS other_visible,
               (SELECT COUNT(*) FROM messenger_blocks b WHERE b.account_id = cm.other_id AND b.blocked_id = cm.account_id) AS blocked,
               \(hasDevices("cm.other_id")) AS other_has_devices
        FROM chat_members cm JOIN messenger_people p ON p.account_id = cm.other_id
        JOIN chat_members theirs ON theirs.chat_id = cm.chat_id AND theirs.account_id = cm.other_id
        LEFT JOIN friendships f ON (f.low_id = cm.account_id AND f.high_id = cm.other_id) OR (f.low_id = cm.other_id AND f.high_id = cm.account_id)
        WHERE \(condition)
        """
    }

    // MARK: Friendships

    /// One friendship row.
    package struct Friendship: Sendable {
        package var id: UUID
        package var requester: UUID
        package var addressee: UUID
        package var state: String
        package func other(than me: UUID) -> UUID { requester == me ? addressee : requester }
    }

    package func friendship(_ pair: (low: UUID, high: UUID), on db: any GatehouseDatabase) async throws -> Friendship? {
        try Self.friendship(try await sql(db).raw("""
            SELECT id, requester_id, addressee_id, state FROM friendships WHERE low_id = \(bind: pair.low) AND high_id = \(bind: pair.high)
            """).first())
    }

    package func friendship(id: UUID, on db: any GatehouseDatabase) async throws -> Friendship? {
        try Self.friendship(try await sql(db).raw("SELECT id, requester_id, addressee_id, state FROM friendships WHERE id = \(bind: id)").first())
    }

    private static func friendship(_ row: (any SQLRow)?) throws -> Friendship? {
        guard let row else { return nil }
        return Friendship(id: try row.decode(column: "id", as: UUID.self), requester: try row.decode(column: "requester_id", as: UUID.self),
                          addressee: try row.decode(column: "addressee_id", as: UUID.self), state: try row.decode(column: "state", as: String.self))
    }

    /// A pending request; false when the pair has a friendship row already (the other side asked at the same moment).
    package func insertRequest(pair: (low: UUID, high: UUID), from requester: UUID, to addressee: UUID, now: Date, on tx: any GatehouseDatabase) async throws -> Bool {
        try await sql(tx).raw("""
            INSERT INTO friendships (id, low_id, high_id, requester_id, addressee_id, state, created_at, updated_at)
            VALUES (\(bind: OrderedID.make()), \(bind: pair.low), \(bind: pair.high), \(bind: requester), \(bind: addressee),
                    \(bind: FriendshipState.pending.rawValue), \(bind: now), \(bind: now))
            ON CONFLICT (low_id, high_id) DO NOTHING RETURNING id
            """).first() != nil
    }

    /// A pending request becomes a friendship; false when it is no longer pending.
    package func accept(_ id: UUID, now: Date, on tx: any GatehouseDatabase) async throws -> Bool {
        try await sql(tx).raw("""
            UPDATE friendships SET state = \(bind: FriendshipState.friends.rawValue), updated_at = \(bind: now)
            WHERE id = \(bind: id) AND state = \(bind: FriendshipState.pending.rawValue) RETURNING id
            """).first() != nil
    }

    /// Deletes a friendship still in `state`; false when it changed meanwhile.
    package func deleteFriendship(_ id: UUID, state: String, on tx: any GatehouseDatabase) async throws -> Bool {
        try await sql(tx).raw("DELETE FROM friendships WHERE id = \(bind: id) AND state = \(bind: state) RETURNING id").first() != nil
    }

    // MARK: Chats

    /// The chat of a pair, if it was opened.
    package func chatID(_ pair: (low: UUID, high: UUID), on db: any GatehouseDatabase) async throws -> UUID? {
        try await sql(db).raw("SELECT id FROM chats WHERE low_id = \(bind: pair.low) AND high_id = \(bind: pair.high)")
            .first(decodingColumn: "id", as: UUID.self)
    }

    /// The chat shows in `account`'s list again.
    package func show(chat: UUID, to account: UUID, on db: any GatehouseDatabase) async throws {
        try await sql(db).raw("UPDATE chat_members SET visible = \(true) WHERE chat_id = \(bind: chat) AND account_id = \(bind: account)").run()
    }

    /// A new chat of a pair; false when the pair has one already (opened by the other side at the same moment).
    package func insertChat(id: UUID, pair: (low: UUID, high: UUID), now: Date, on tx: any GatehouseDatabase) async throws -> Bool {
        try await sql(tx).raw("""
            INSERT INTO chats (id, low_id, high_id, created_at, activity_key) VALUES
            (\(bind: id), \(bind: pair.low), \(bind: pair.high), \(bind: now), \(bind: id.uuidString.lowercased()))
            ON CONFLICT (low_id, high_id) DO NOTHING RETURNING id
            """).first() != nil
    }

    /// The two memberships of a new chat: the opener sees it, the other member with its first message.
    package func insertMembers(chat: UUID, opener: UUID, other: UUID, on tx: any GatehouseDatabase) async throws {
        try await sql(tx).raw("""
            INSERT INTO chat_members (chat_id, account_id, other_id, visible) VALUES
            (\(bind: chat), \(bind: opener), \(bind: other), \(true)), (\(bind: chat), \(bind: other), \(bind: opener), \(false))
            """).run()
    }

    package func mute(chat: UUID, of account: UUID, until: Date?) async throws {
        try await sql(nil).raw("UPDATE chat_members SET muted_until = \(bind: until) WHERE chat_id = \(bind: chat) AND account_id = \(bind: account)").run()
    }

    /// Deletes the chat for `account`: it leaves the list and what it holds now is cleared (and read).
    package func clear(chat: UUID, for account: UUID, on tx: any GatehouseDatabase) async throws {
        let last = try await sql(tx).raw("SELECT last_message_id FROM chats WHERE id = \(bind: chat)")
            .first(decodingColumn: "last_message_id", as: UUID?.self) ?? nil
        try await sql(tx).raw("""
            UPDATE chat_members SET visible = \(false), cleared_through = \(bind: last),
                last_read_id = COALESCE(\(bind: last), last_read_id)
            WHERE chat_id = \(bind: chat) AND account_id = \(bind: account)
            """).run()
    }

    package func messageExists(_ id: UUID, in chat: UUID, on db: any GatehouseDatabase) async throws -> Bool {
        try await sql(db).raw("SELECT 1 AS found FROM messages WHERE id = \(bind: id) AND chat_id = \(bind: chat)").first() != nil
    }

    /// Moves `account`'s read mark forward to `upTo`; false when it was there or further already.
    package func moveReadMark(chat: UUID, of account: UUID, to upTo: UUID, on tx: any GatehouseDatabase) async throws -> Bool {
        try await sql(tx).raw("""
            UPDATE chat_members SET last_read_id = \(bind: upTo)
            WHERE chat_id = \(bind: chat) AND account_id = \(bind: account) AND (last_read_id IS NULL OR last_read_id < \(bind: upTo))
            RETURNING last_read_id
            """).first() != nil
    }

    /// The unread count: the other's messages after my read mark that I can see and that are not tombstones.
    package func unread(_ chat: UUID, of viewer: UUID, on db: any GatehouseDatabase) async throws -> Int {
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

    /// A page of `viewer`'s chats in the list, newest activity first, matching `match` (a `PeopleIndex`
    /// condition on the other person) after `after` (activity key, id).
    package func chats(viewer: UUID, matching match: SQLQueryString?, after: (activityKey: String, id: UUID)?, limit: Int) async throws -> [any SQLRow] {
        var conditions: [SQLQueryString] = ["mine.account_id = \(bind: viewer)", "mine.visible = \(true)"]
        if let match { conditions.append(match) }
        if let after {
            conditions.append("(c.activity_key < \(bind: after.activityKey) OR (c.activity_key = \(bind: after.activityKey) AND c.id < \(bind: after.id)))")
        }
        // The chat list tolerates a little lag (a request of my own pins me to the primary).
        return try await database.reading(for: viewer) { db in
            try await chatRows(viewer: viewer, where: conditions.joined(separator: " AND "), limit: limit, on: db)
        }
    }

    /// One chat of `viewer`'s (also one deleted for them).
    package func chat(_ id: UUID, viewer: UUID, on db: (any GatehouseDatabase)? = nil) async throws -> [any SQLRow] {
        try await chatRows(viewer: viewer, where: "mine.account_id = \(bind: viewer) AND c.id = \(bind: id)", limit: 1, on: sql(db))
    }

    /// Chats of `viewer` with the other person, the unread count and the newest visible message's id,
    /// newest activity first.
    private func chatRows(viewer: UUID, where condition: SQLQueryString, limit: Int, on db: (any SQLDatabase)? = nil) async throws -> [any SQLRow] {
        try await (db ?? database.sql).raw("""
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

    /// A chat's attachments `viewer` sees (on messages after what they cleared), newest first, after `after` (message, position).
    package func chatAttachments(chat: UUID, viewer: UUID, clearedThrough: UUID?, after: (message: UUID, position: Int)?,
                                 limit: Int) async throws -> [any SQLRow] {
        var conditions: [SQLQueryString] = [
            "m.chat_id = \(bind: chat)", "m.deleted_at IS NULL",
            MessageReader.visible(to: viewer, cleared: clearedThrough.map { "\(bind: $0)" } ?? "NULL"),
        ]
        if let after {
            conditions.append("(m.id < \(bind: after.message) OR (m.id = \(bind: after.message) AND ma.position < \(bind: after.position)))")
        }
        return try await sql(nil).raw("""
            SELECT \(MessageReader.attachmentColumns), m.id AS message_id, m.author_id, m.created_at AS sent_at, ma.position
            FROM message_attachments ma JOIN messages m ON m.id = ma.message_id JOIN attachments att ON att.id = ma.attachment_id
            WHERE \(conditions.joined(separator: " AND ")) ORDER BY m.id DESC, ma.position DESC LIMIT \(literal: limit)
            """).all()
    }

    // MARK: Attachments

    package func insertAttachment(id: UUID, owner: UUID, blob: String, kind: String, contentType: String, fileName: String, size: Int,
                                  now: Date) async throws {
        try await sql(nil).raw("""
            INSERT INTO attachments (id, owner_id, blob_key, kind, content_type, file_name, size, created_at)
            VALUES (\(bind: id), \(bind: owner), \(bind: blob), \(bind: kind), \(bind: contentType), \(bind: fileName),
                    \(bind: size), \(bind: now))
            """).run()
    }

    /// An attachment `viewer` uploaded, or one on a message `viewer` sees (with its blob key).
    package func readableAttachment(_ id: UUID, viewer: UUID) async throws -> (any SQLRow)? {
        try await sql(nil).raw("""
            SELECT \(MessageReader.attachmentColumns), att.blob_key FROM attachments att
            WHERE att.id = \(bind: id) AND (att.owner_id = \(bind: viewer) OR EXISTS (
                SELECT 1 FROM message_attachments ma JOIN messages m ON m.id = ma.message_id
                JOIN chat_members mine ON mine.chat_id = m.chat_id AND mine.account_id = \(bind: viewer)
                WHERE ma.attachment_id = att.id AND m.deleted_at IS NULL AND \(MessageReader.visible(to: viewer, cleared: "mine.cleared_through"))))
            """).first()
    }

    /// Deletes uploads created before `cutoff` that no message carries.
    package func purgeUnsentAttachments(before cutoff: Date) async throws {
        try await sql(nil).raw("""
            DELETE FROM attachments WHERE created_at < \(bind: cutoff)
            AND NOT EXISTS (SELECT 1 FROM message_attachments ma WHERE ma.attachment_id = attachments.id)
            """).run()
    }

    // MARK: Deletion

    /// An erased account's messenger data, in the erasure's transaction: out of search (its card
    /// and name keys emptied; the row stays for the chats that show it), its friendships and
    /// blocks both ways, its hidden-message marks, its uploads no message carries (their blobs go
    /// with the collector), its realtime events.
    package func eraseAccount(_ account: UUID, on tx: any GatehouseDatabase) async throws {
        let sql = sql(tx)
        try await sql.raw("""
            UPDATE messenger_people SET tag_key = NULL, first_key = '', last_key = '', full_key = '', reverse_key = '', sort_name = '', card = ''
            WHERE account_id = \(bind: account)
            """).run()
        try await sql.raw("DELETE FROM friendships WHERE low_id = \(bind: account) OR high_id = \(bind: account)").run()
        try await sql.raw("DELETE FROM messenger_blocks WHERE account_id = \(bind: account) OR blocked_id = \(bind: account)").run()
        try await sql.raw("DELETE FROM message_hidden WHERE account_id = \(bind: account)").run()
        try await sql.raw("""
            DELETE FROM attachments WHERE owner_id = \(bind: account)
            AND NOT EXISTS (SELECT 1 FROM message_attachments ma WHERE ma.attachment_id = attachments.id)
            """).run()
        try await sql.raw("DELETE FROM messenger_events WHERE account_id = \(bind: account)").run()
    }
}
