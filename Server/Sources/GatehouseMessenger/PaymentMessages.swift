import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import SQLKit

/// Wallet messages (docs/wallet.md, "Dialogs"): a transfer or a money request between two people
/// appears in their direct chat, made if they had none, in the transaction that moves the money,
/// with the same `message.created` events as any message. The author is the one who paid or
/// asked; the text is their comment. A new transfer or request is a message to its recipient and
/// keeps their privacy (`checkMayPost`): friends only, and nobody they blocked; paying or repaying
/// a request answers what its recipient asked for, and always goes.
package struct PaymentMessages: MessengerConcept {
    package let core: MessengerCore

    /// 403 `messaging_not_allowed` unless `author` may write to `recipient` (the messenger's rule).
    package func checkMayPost(from author: UUID, to recipient: UUID, on db: any Database) async throws {
        try await checkMayMessage(recipient, from: author, on: db)
    }

    /// Of `accounts`, those who do not take messages from everyone (friends only, or who blocked
    /// somebody): a group commit sends payments to them alone, where `checkMayPost` decides.
    package func restricted(_ accounts: Set<UUID>, on db: any Database) async throws -> Set<UUID> {
        guard !accounts.isEmpty else { return [] }
        let ids = Array(accounts)
        let rows = try await sql(db).raw("""
            SELECT account_id FROM messenger_people WHERE account_id IN (\(binds: ids)) AND who_can_message = \(bind: MessagingAudience.friends.rawValue)
            UNION SELECT account_id FROM messenger_blocks WHERE account_id IN (\(binds: ids))
            """).all()
        return Set(try rows.map { try $0.decode(column: "account_id", as: UUID.self) })
    }

    /// One wallet message to post.
    package struct Post: Sendable {
        package var note: PaymentNote
        package var comment: String?
        package var author: UUID
        package var other: UUID
    
        package init(note: PaymentNote, comment: String? = nil, author: UUID, other: UUID) {
            self.note = note
            self.comment = comment
            self.author = author
            self.other = other
        }
}

    @discardableResult
    package func post(_ note: PaymentNote, comment: String?, author: UUID, to other: UUID, on tx: any Database, _ recorder: EventRecorder) async throws -> Message {
        try await post([Post(note: note, comment: comment, author: author, other: other)], on: tx, recorder)[0]
    }

    /// Posts the messages in `tx`: their chats found or made (`chats(between:on:)`), then the
    /// rest in one go.
    package func post(_ posts: [Post], on tx: any Database, _ recorder: EventRecorder) async throws -> [Message] {
        try await post(posts, in: try await chats(between: posts.map { ($0.author, $0.other) }, on: tx), on: tx, recorder)
    }

    /// Posts the messages in `tx` to chats found before (`chats(between:on:)`).
    @discardableResult
    package func post(_ posts: [Post], in chats: DirectChats, on tx: any Database, _ recorder: EventRecorder) async throws -> [Message] {
        var writes = CombinedWrites(for: sql(tx))
        let messages = try post(posts, in: chats, into: &writes, recorder)
        try await writes.run(on: sql(tx))
        return messages
    }

    /// The direct chats between the pairs of people, in one read, made for pairs that have
    /// none. A new chat is hidden from both until its first message (`post` shows it): a group
    /// commit makes the chats before it knows which payments go through, and a refused one
    /// leaves no chat in anybody's list.
    package func chats(between people: [(UUID, UUID)], on tx: any Database) async throws -> DirectChats {
        DirectChats(byPair: try await directChats(Set(people.map { Pair(ordered($0.0, $0.1)) }), on: tx))
    }

    /// The messages of `posts` in `chats`: their insert, the chats' activity and whom they show
    /// to are added to `writes` (the caller runs them; none reads another's rows), and their
    /// `message.created` events recorded. Answers the messages in order.
    package func post(_ posts: [Post], in chats: DirectChats, into writes: inout CombinedWrites, _ recorder: EventRecorder) throws -> [Message] {
        guard !posts.isEmpty else { return [] }
        let now = clock.now()
        let messages = try posts.map { post -> Message in
            guard let chat = chats.byPair[Pair(ordered(post.author, post.other))] else { throw GatehouseError(.internal, .internalError, LocalizedText("error.internal")) }
            return Message(id: OrderedID.make(), chatId: chat.id, authorId: post.author, text: post.comment ?? "", createdAt: now, editedAt: nil,
                           deleted: false, replyTo: nil, forwardedFrom: nil, attachments: [], clientMessageId: nil, payment: post.note)
        }
        var rows = RowSet(count: messages.count)
        rows.add("id", "uuid", messages.map(\.id))
        rows.add("chat_id", "uuid", messages.map(\.chatId))
        rows.add("author_id", "uuid", messages.map(\.authorId))
        rows.add("text", "text", messages.map(\.text))
        rows.add("payment", "text", try messages.map { String(decoding: try V1.encoder.encode($0.payment), as: UTF8.self) })
        writes.add(rows.insert(into: "messages", constants: [("created_at", "\(bind: now)"), ("reply_deleted", "\(false)")], postgres: writes.postgres))
        // Each chat's newest message. The chats are not locked in id order first, as a batch of
        // sends does: two batches of payments that share a chat share its people's wallets,
        // which they lock in order before this.
        var newest: [UUID: UUID] = [:]
        for m in messages { newest[m.chatId] = m.id }
        let ids = newest.keys.sorted()
        var activity = RowSet(count: ids.count)
        activity.add("id", "uuid", ids)
        activity.add("last_message_id", "uuid", ids.map { newest[$0]! })
        activity.add("activity_key", "text", ids.map { newest[$0]!.uuidString.lowercased() })
        writes.add(activity.update("chats", matching: ["id"], postgres: writes.postgres))
        let hidden = Set(messages.map(\.chatId)).filter { id in chats.byPair.values.contains { $0.id == id && !$0.allVisible } }
        if !hidden.isEmpty {
            writes.add("UPDATE chat_members SET visible = \(true) WHERE \(SQLQueryString.isAny("chat_id", Array(hidden), postgres: writes.postgres)) AND visible = \(false)")
        }
        for (post, message) in zip(posts, messages) { try recordCreated(message, to: post.other, recorder) }
        return messages
    }

    /// The chats a batch of posts goes to.
    package struct DirectChats: Sendable {
        fileprivate var byPair: [Pair: (id: UUID, allVisible: Bool)]
    }

    /// Two accounts, lower id first.
    fileprivate struct Pair: Hashable {
        var low: UUID
        var high: UUID
        init(_ pair: (low: UUID, high: UUID)) { (low, high) = pair }
    }

    /// The direct chats of the pairs, made now (hidden) for pairs that have none, and whether
    /// both members of each see it. The chats usually exist: one read then, inserts only the first time.
    private func directChats(_ pairs: Set<Pair>, on tx: any Database) async throws -> [Pair: (id: UUID, allVisible: Bool)] {
        let sql = sql(tx)
        func read(_ pairs: [Pair]) async throws -> [Pair: (id: UUID, allVisible: Bool)] {
            let chats: SQLQueryString
            if sql.isPostgres {
                var rows = RowSet(count: pairs.count)
                rows.add("low_id", "uuid", pairs.map(\.low))
                rows.add("high_id", "uuid", pairs.map(\.high))
                chats = "chats c JOIN \(rows.table("p")) ON c.low_id = p.low_id AND c.high_id = p.high_id"
            } else {
                let conditions = pairs.map { "(c.low_id = \(bind: $0.low) AND c.high_id = \(bind: $0.high))" as SQLQueryString }
                chats = "chats c WHERE \(conditions.joined(separator: " OR "))"
            }
            var found: [Pair: (id: UUID, allVisible: Bool)] = [:]
            for row in try await sql.preparedRows("""
                SELECT c.id, c.low_id, c.high_id, (SELECT COUNT(*) FROM chat_members m WHERE m.chat_id = c.id AND m.visible = \(false)) AS hidden
                FROM \(chats)
                """) {
                let pair = Pair((try row.decode(column: "low_id", as: UUID.self), try row.decode(column: "high_id", as: UUID.self)))
                found[pair] = (try row.decode(column: "id", as: UUID.self), try row.decode(column: "hidden", as: Int.self) == 0)
            }
            return found
        }
        var chats = try await read(Array(pairs))
        // The missing ones, in pair order (two transactions making the same chats wait in one order).
        let missing = pairs.filter { chats[$0] == nil }.sorted { ($0.low, $0.high) < ($1.low, $1.high) }
        guard !missing.isEmpty else { return chats }
        let now = clock.now()
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

    package init(core: MessengerCore) {
        self.core = core
    }
}
