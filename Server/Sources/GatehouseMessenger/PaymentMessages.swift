import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import NIOConcurrencyHelpers
import SQLKit

/// Wallet messages (docs/wallet.md, "Dialogs"): a transfer or a money request between two people
/// appears in their direct chat, made if they had none, in the transaction that moves the money,
/// with the same `message.created` events as any message. The author is the one who paid or
/// asked; the text is their comment. A new transfer or request is a message to its recipient and
/// keeps their privacy (`checkMayPost`): friends only, and nobody they blocked; paying or repaying
/// a request answers what its recipient asked for, and always goes.
package struct PaymentMessages: MessengerConcept {
    package let clock: GatehouseClock
    package let settings: GatehouseConfiguration.Messenger
    package let events: EventLog
    package let people: PersonLoader
    package let store: MessengerStore
    /// The direct chats of the payments this instance wrote as one statement, by pair
    /// (`existingChats`): a pair's direct chat keeps its id for as long as both people do (it is
    /// deleted with either of them), so a batch whose pairs are all here reads none, and the
    /// statement that writes it checks them (`inStatement`). At most `paymentChats`.
    package let remembered: BoundedCache<MessengerStore.ChatPair, UUID>
    /// The batches whose chats were all remembered (`existingChats` read none).
    package let rememberedBatches = NIOLockedValueBox(0)

    /// 403 `messaging_not_allowed` unless `author` may write to `recipient` (the messenger's rule).
    package func checkMayPost(from author: UUID, to recipient: UUID, on db: any GatehouseDatabase) async throws {
        try await checkMayMessage(recipient, from: author, on: db)
    }

    /// Whether the account in `account` (a column of the statement it is part of) does not take
    /// messages from everyone (friends only, or who blocked somebody): a group commit reads it with
    /// the payees' wallets and sends payments to them alone, where `checkMayPost` decides.
    package static func restricts(_ account: SQLQueryString) -> SQLQueryString {
        MessengerStore.restricts(account)
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
    package func post(_ note: PaymentNote, comment: String?, author: UUID, to other: UUID, on tx: any GatehouseDatabase, _ recorder: EventRecorder) async throws -> Message {
        try await post([Post(note: note, comment: comment, author: author, other: other)], on: tx, recorder)[0]
    }

    /// Posts the messages in `tx`: their chats found or made (`chats(between:on:)`), then the
    /// rest in one go.
    package func post(_ posts: [Post], on tx: any GatehouseDatabase, _ recorder: EventRecorder) async throws -> [Message] {
        try await post(posts, in: try await chats(between: posts.map { ($0.author, $0.other) }, on: tx), on: tx, recorder)
    }

    /// Posts the messages in `tx` to chats found before (`chats(between:on:)`).
    @discardableResult
    package func post(_ posts: [Post], in chats: DirectChats, on tx: any GatehouseDatabase, _ recorder: EventRecorder) async throws -> [Message] {
        var writes = CombinedWrites(for: tx)
        let messages = try post(posts, in: chats, into: &writes, recorder)
        try await writes.run(on: tx)
        return messages
    }

    /// The direct chats between the pairs of people, in one read, made for pairs that have
    /// none. A new chat is hidden from both until its first message (`post` shows it): a group
    /// commit makes the chats before it knows which payments go through, and a refused one
    /// leaves no chat in anybody's list.
    package func chats(between people: [(UUID, UUID)], on tx: any GatehouseDatabase) async throws -> DirectChats {
        DirectChats(byPair: try await store.directChats(Set(people.map { MessengerStore.ChatPair(ordered($0.0, $0.1)) }), now: clock.now(), on: tx))
    }

    /// The direct chats between the pairs of people there are, in one read that makes none:
    /// for a batch written as one statement with no transaction around it
    /// (`inStatement(_:in:_:)`), which cannot make them.
    ///
    /// When every pair's chat is `remembered`, none is read: each is taken as possibly hidden from
    /// a member, so the statement shows it to both where it is not (what a read would have said),
    /// and a chat gone since (deleted with one of its people) fails the statement on its
    /// messages' reference to it; the batch's transfers then go on their own, and the caller
    /// forgets its pairs (`forget`). A read's chats are remembered; those the statement makes,
    /// once it has written them (`remember`).
    package func existingChats(between people: [(UUID, UUID)], on db: any GatehouseDatabase) async throws -> DirectChats {
        let pairs = Set(people.map { MessengerStore.ChatPair(ordered($0.0, $0.1)) })
        var known: [MessengerStore.ChatPair: MessengerStore.DirectChat] = [:]
        for pair in pairs {
            guard let id = remembered.value(pair) else { break }
            known[pair] = (id, false)
        }
        if known.count == pairs.count {
            rememberedBatches.withLockedValue { $0 += 1 }
            return DirectChats(byPair: known, remembered: true)
        }
        let read = try await store.directChats(pairs, now: clock.now(), making: false, on: db)
        for (pair, chat) in read { remembered.insert(chat.id, for: pair) }
        return DirectChats(byPair: read)
    }

    /// The chats of `messages`, written by a statement of `inStatement` that went through, remembered by their pairs.
    package func remember(_ messages: [Message], of posts: [Post]) {
        for (post, message) in zip(posts, messages) { remembered.insert(message.chatId, for: MessengerStore.ChatPair(ordered(post.author, post.other))) }
    }

    /// Forgets the chats of these pairs of people (a statement that used them did not go through).
    package func forget(between people: [(UUID, UUID)]) {
        remembered.remove(people.map { MessengerStore.ChatPair(ordered($0.0, $0.1)) })
    }

    /// The messages of `posts` as parts of one statement with no transaction around it
    /// (PostgreSQL; a wallet's group commit, `TransferBatcher`), `chats` those there were
    /// (`existingChats`): the chats there were not, made with their members (`made`, which must
    /// make them all: a chat another transaction made since the read is not made again, and the
    /// statement must then fail, whose messages would go nowhere), the messages, the chats' newest
    /// message, those hidden from a member shown: in the order of `chats(between:on:)` and
    /// `post(_:in:into:_:)`, and before the wallets. Their `message.created` events recorded.
    package func inStatement(_ posts: [Post], in chats: DirectChats, _ recorder: EventRecorder) throws -> (messages: [Message], parts: [StatementPart]) {
        let now = clock.now()
        var byPair = chats.byPair
        var made: [(pair: MessengerStore.ChatPair, id: UUID)] = []
        var messages: [Message] = []
        for post in posts {
            let pair = MessengerStore.ChatPair(ordered(post.author, post.other))
            if byPair[pair] == nil {
                let id = OrderedID.make()
                made.append((pair, id))
                byPair[pair] = (id, true)
            }
            messages.append(Message(id: OrderedID.make(), chatId: byPair[pair]!.id, authorId: post.author, text: post.comment ?? "", createdAt: now,
                                    editedAt: nil, deleted: false, replyTo: nil, forwardedFrom: nil, attachments: [], clientMessageId: nil, payment: post.note))
        }
        var newest: [UUID: UUID] = [:]
        for m in messages { newest[m.chatId] = m.id }
        var parts: [StatementPart] = []
        if !made.isEmpty {
            var rows = RowSet(count: made.count)
            rows.add("id", "uuid", made.map(\.id))
            rows.add("low_id", "uuid", made.map(\.pair.low))
            rows.add("high_id", "uuid", made.map(\.pair.high))
            rows.add("last_message_id", "uuid", made.map { newest[$0.id]! })
            rows.add("activity_key", "text", made.map { newest[$0.id]!.uuidString.lowercased() })
            parts.append(StatementPart(name: "chats_made", statement: """
                \(rows.insert(into: "chats", constants: [("created_at", "\(bind: now)")], postgres: true))
                ON CONFLICT (low_id, high_id) DO NOTHING RETURNING id
                """, rows: made.count))
            var members = RowSet(count: made.count * 2)
            members.add("chat_id", "uuid", made.flatMap { [$0.id, $0.id] })
            members.add("account_id", "uuid", made.flatMap { [$0.pair.low, $0.pair.high] })
            members.add("other_id", "uuid", made.flatMap { [$0.pair.high, $0.pair.low] })
            parts.append(StatementPart(name: "chats_joined", statement: """
                \(members.insert(into: "chat_members", constants: [("visible", "TRUE")], postgres: true)) RETURNING 1
                """, rows: made.count * 2))
        }
        parts.append(StatementPart(name: "messages_written", statement: try MessengerStore.insert(messages, postgres: true), rows: messages.count))
        let madeIDs = Set(made.map(\.id))
        let old = newest.filter { id, _ in !madeIDs.contains(id) }
        if !old.isEmpty {
            parts.append(StatementPart(name: "chats_active", statement: "\(MessengerStore.activity(old, postgres: true)) RETURNING chats.id", rows: nil))
        }
        let hiddenIDs = Set(chats.byPair.values.filter { !$0.allVisible }.map(\.id))
        let hidden = old.keys.filter(hiddenIDs.contains).sorted()
        if !hidden.isEmpty {
            parts.append(StatementPart(name: "chats_shown", statement: """
                UPDATE chat_members SET visible = TRUE WHERE chat_id = ANY(\(bind: hidden)) AND visible = FALSE RETURNING 1
                """, rows: nil))
        }
        for (post, message) in zip(posts, messages) { recordCreated(message, to: post.other, recorder) }
        return (messages, parts)
    }

    /// The messages of `posts` in `chats`: their insert, the chats' activity and whom they show
    /// to are added to `writes` (the caller runs them; none reads another's rows), and their
    /// `message.created` events recorded. Answers the messages in order.
    package func post(_ posts: [Post], in chats: DirectChats, into writes: inout CombinedWrites, _ recorder: EventRecorder) throws -> [Message] {
        guard !posts.isEmpty else { return [] }
        let now = clock.now()
        let messages = try posts.map { post -> Message in
            guard let chat = chats.byPair[MessengerStore.ChatPair(ordered(post.author, post.other))] else { throw GatehouseError(.internal, .internalError, LocalizedText("error.internal")) }
            return Message(id: OrderedID.make(), chatId: chat.id, authorId: post.author, text: post.comment ?? "", createdAt: now, editedAt: nil,
                           deleted: false, replyTo: nil, forwardedFrom: nil, attachments: [], clientMessageId: nil, payment: post.note)
        }
        let shown = Set(messages.map(\.chatId)).filter { id in chats.byPair.values.contains { $0.id == id && !$0.allVisible } }
        try store.addPaymentMessages(messages, at: now, shown: shown.sorted(), into: &writes)
        for (post, message) in zip(posts, messages) { recordCreated(message, to: post.other, recorder) }
        return messages
    }

    /// The chats a batch of posts goes to.
    package struct DirectChats: Sendable {
        fileprivate var byPair: [MessengerStore.ChatPair: MessengerStore.DirectChat]
        /// Taken from what was remembered, with no read (`existingChats`).
        package var remembered = false

        /// Whether a pair of these people has no chat here.
        package func lackAny(between people: [(UUID, UUID)]) -> Bool {
            people.contains { byPair[MessengerStore.ChatPair($0.0 < $0.1 ? ($0.0, $0.1) : ($0.1, $0.0))] == nil }
        }
    }

    /// Two accounts, lower id first.
    package init(clock: GatehouseClock, settings: GatehouseConfiguration.Messenger, events: EventLog, people: PersonLoader, store: MessengerStore) {
        self.clock = clock
        self.settings = settings
        self.events = events
        self.people = people
        self.store = store
        remembered = BoundedCache(capacity: settings.paymentChats)
    }
}
