import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import NIOConcurrencyHelpers

/// Group commit for plain text sends (no reply, no attachments: most messages). Sends that
/// arrive while a batch is being written wait for the next one, and a batch is one transaction
/// with a fixed number of statements however many messages it holds: the memberships in one
/// read, the messages in one insert, the chats' activity in one update, every event in one
/// insert. The cost of a send was its round trips to the database (docs/performance.md); a
/// batch shares them.
///
/// Each send keeps its own outcome: a chat that is not mine, a person who takes messages from
/// friends only, a rate limit, a reused client id fail that send alone. A retried
/// `clientMessageId` answers the message already sent, in this batch or an earlier one. When a
/// batch fails as a whole (the database), each of its sends is tried again on its own.
package final class SendBatcher: Sendable {
    package struct Request: Sendable {
        package var author: UUID
        package var chat: UUID
        package var text: String
        package var clientID: String
    }

    private let commits: GroupCommit<Request, Message>

    package init(core: MessengerCore, maxBatch: Int = 128, single: @escaping @Sendable (Request) async throws -> Message) {
        let writer = SendBatchWriter(core: core)
        commits = GroupCommit(maxBatch: maxBatch, database: core.database, write: { requests in
            try await writer.write(requests).map { .done($0.mapError { $0 as any Error }) }
        }, single: single)
    }

    package func send(_ request: Request) async throws -> Message {
        try await commits.submit(request)
    }
}

/// The transaction of one batch of sends.
package struct SendBatchWriter: MessengerConcept {
    package typealias Request = SendBatcher.Request
    package let core: MessengerCore

    /// One transaction for the batch; an outcome per request, in order.
    package func write(_ requests: [Request]) async throws -> [Result<Message, GatehouseError>] {
        let core = self.core
        let settings = self.settings
        return try await core.events.write { tx, recorder in
            var outcomes = [Result<Message, GatehouseError>?](repeating: nil, count: requests.count)

            // 1. My memberships, the other members' settings and whether they see the chat, in one read.
            let members = try await self.sendingContexts(Array(Set(requests.map { SendPair(chat: $0.chat, author: $0.author) })), on: tx)

            // 2. The messages, in one insert; a client id already used makes no row.
            var candidates: [(index: Int, message: Message)] = []
            let now = core.clock.now()
            for (index, request) in requests.enumerated() {
                guard let member = members[SendPair(chat: request.chat, author: request.author)] else {
                    outcomes[index] = .failure(.notFound(.chatNotFound, "error.chatNotFound"))
                    continue
                }
                guard member.mayMessage else { continue }  // answered below: a retry of an earlier send, or 403
                candidates.append((index, Message(id: OrderedID.make(), chatId: request.chat, authorId: request.author, text: request.text,
                                                  createdAt: now, editedAt: nil, deleted: false, replyTo: nil, forwardedFrom: nil,
                                                  attachments: [], clientMessageId: request.clientID)))
            }
            let inserted = try await core.store.insertMessages(candidates.map(\.message), on: tx)

            // 3. The rate limit counts what was written; over it, the newest go again.
            var refusedAuthors: [String: Double] = [:]
            var written = candidates.filter { inserted.contains($0.message.id) }
            let perAuthor = Dictionary(grouping: written, by: { $0.message.authorId.uuidString }).mapValues(\.count)
            if !perAuthor.isEmpty {
                let allowed = try await core.rateLimiter.hit("messages", counts: perAuthor, limit: settings.messagesPerMinute, window: 60, on: tx)
                var refused: [UUID] = []
                for (author, fits) in allowed where fits.allowed < perAuthor[author]! {
                    refusedAuthors[author] = fits.retryAfter
                    let theirs = written.filter { $0.message.authorId.uuidString == author }
                    for over in theirs.dropFirst(fits.allowed) {
                        refused.append(over.message.id)
                        outcomes[over.index] = .failure(.rateLimited(.rateLimited, retryAfter: fits.retryAfter, "error.rateLimited"))
                    }
                }
                if !refused.isEmpty {
                    try await core.store.deleteMessages(refused, on: tx)
                    written.removeAll { refused.contains($0.message.id) }
                }
            }

            // 4. The chats' activity (locked in id order on PostgreSQL, like every writer), who sees them, the events.
            if !written.isEmpty {
                var newest: [UUID: UUID] = [:]
                for w in written where newest[w.message.chatId].map({ $0 < w.message.id }) ?? true {
                    newest[w.message.chatId] = w.message.id
                }
                try await core.store.setNewest(newest, lock: true, on: tx)
                let hidden = Set(written.filter { !(members[SendPair(chat: $0.message.chatId, author: $0.message.authorId)]?.bothVisible ?? true) }.map(\.message.chatId))
                try await core.store.showToBoth(hidden.sorted(), on: tx)
                for w in written.sorted(by: { $0.message.id < $1.message.id }) {
                    try self.recordCreated(w.message, to: members[SendPair(chat: w.message.chatId, author: w.message.authorId)]!.member.other, recorder)
                    outcomes[w.index] = .success(w.message)
                }
            }

            // 5. The rest (retries and refusals: rare): a client id used before, here or earlier,
            //    answers its message; otherwise the reason.
            for index in outcomes.indices where outcomes[index].map({ _ in false }) ?? true {
                let request = requests[index]
                let match = try await core.store.sentMessage(author: request.author, clientID: request.clientID, on: tx)
                if let match {
                    outcomes[index] = match.chatId == request.chat ? .success(match)
                        : .failure(GatehouseError(.conflict, .clientMessageIdReused, LocalizedText("error.clientMessageIdReused"), field: "clientMessageId"))
                } else if let retryAfter = refusedAuthors[request.author.uuidString] {
                    outcomes[index] = .failure(.rateLimited(.rateLimited, retryAfter: retryAfter, "error.rateLimited"))
                } else if members[SendPair(chat: request.chat, author: request.author)]?.mayMessage == false {
                    outcomes[index] = .failure(GatehouseError(.forbidden, .messagingNotAllowed, LocalizedText("error.messagingNotAllowed")))
                } else {
                    outcomes[index] = .failure(GatehouseError(.internal, .internalError, LocalizedText("error.internal")))
                }
            }
            return outcomes.map { $0 ?? .failure(GatehouseError(.internal, .internalError, LocalizedText("error.internal"))) }
        }
    }

}
