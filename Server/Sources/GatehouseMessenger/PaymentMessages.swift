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
    package let clock: GatehouseClock
    package let settings: GatehouseConfiguration.Messenger
    package let events: EventLog
    package let people: PersonLoader
    package let store: MessengerStore

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
    }

    /// Two accounts, lower id first.
    package init(clock: GatehouseClock, settings: GatehouseConfiguration.Messenger, events: EventLog, people: PersonLoader, store: MessengerStore) {
        self.clock = clock
        self.settings = settings
        self.events = events
        self.people = people
        self.store = store
    }
}
