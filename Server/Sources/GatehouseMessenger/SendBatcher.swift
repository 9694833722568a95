import FluentKit
import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import Metrics
import NIOConcurrencyHelpers
import SQLKit

/// Group commit for sends (docs/messenger.md, "Sending"): every send goes through it. Sends that
/// arrive while a batch is being written wait for the next one, and a batch is one transaction
/// of `MessageWriter` with a fixed number of statements however many messages it holds. A send
/// that comes alone is a batch of one through the same code; when a batch fails as a whole (the
/// database), each of its sends is tried again as a batch of one.
package final class SendBatcher: Sendable {
    package typealias Request = MessageWriter.Send

    private let commits: GroupCommit<Request, Message>

    package init(writer: MessageWriter, maxBatch: Int = 128) {
        commits = GroupCommit(maxBatch: maxBatch, linger: writer.settings.sendLinger,
                              lingered: Counter(label: "gatehouse_send_batches_lingered_total"), database: writer.database, write: { requests in
            try await writer.write(requests).map { .done($0.mapError { $0 as any Error }) }
        }, single: { request in
            try await writer.write([request])[0].get()
        })
    }

    package func send(_ request: Request) async throws -> Message {
        try await commits.submit(request)
    }

    /// Batches this batcher's writer waited for (`GroupCommit.lingers`; the process's count is
    /// `gatehouse_send_batches_lingered_total` in `/metrics`).
    package var lingers: Int { commits.lingers }
}

/// The one code that writes the messages people send: a send (a batch of them, `SendBatcher`), a
/// reply, a message with attachments, a forward's copies. Its statements do not grow with the
/// number of messages: the memberships in one read, the messages in one insert
/// (`MessengerStore.insertMessages`, which the wallet's payment messages share), the rate limit
/// in one statement, the chats' activity in one update, every event in one insert. What only
/// some sends need (the quoted message of a reply, the author's uploads) is read for them alone.
///
/// Each send keeps its own outcome: a chat that is not mine, a person who takes messages from
/// friends only, a quoted message or an upload I cannot see, a rate limit, a reused client id
/// fail that send alone. A retried client id answers the message already sent, in this batch or
/// an earlier one. The locks are taken in one order: the messages' rows, the rate limit's, the
/// chats' (in id order).
package struct MessageWriter: MessengerConcept {
    package let database: DatabaseProvider
    package let clock: GatehouseClock
    package let settings: GatehouseConfiguration.Messenger
    package let rateLimiter: RateLimiter
    package let events: EventLog
    package let people: PersonLoader
    package let store: MessengerStore
    /// The contexts of plain sends, remembered by pair (`Remembered`).
    package let remembered: BoundedCache<SendPair, Remembered>
    /// The batches this writer wrote from remembered contexts: what
    /// `gatehouse_send_contexts_remembered_total` counts for the whole process, for one writer.
    package let rememberedBatches = NIOLockedValueBox(0)

    /// What a plain send's context (`sendingContexts`) was read as, remembered by pair once its
    /// batch went through at once, so that the next batch of the same pairs need not read it first:
    /// that batch's one statement checks that it still holds (`writeAtOnce`), and a batch whose check
    /// fails goes the general way, which reads, and its pairs are forgotten. Nothing remembered is
    /// trusted: the statement that writes the messages is the one that checks, so a block or a
    /// privacy change committed before it began is honoured as with a read before it, and a
    /// device registered meanwhile makes the push be written. At most
    /// `GatehouseConfiguration.Messenger.sendContexts` of them (0: none, every batch reads).
    package struct Remembered: Sendable, Equatable {
        package var other: UUID
        package var audience: String
        package var friendship: String?
        package var otherHasDevices: Bool

        init(_ sending: Sending) {
            (other, audience, friendship, otherHasDevices) = (sending.member.other, sending.audience, sending.friendship, sending.otherHasDevices)
        }
    }

    /// One message to write.
    package struct Send: Sendable {
        package var author: UUID
        package var chat: UUID
        /// Cleaned (`MessagesService.cleanText`).
        package var text: String
        /// The client's id for the message (a retry answers the first); a forward may have none.
        package var clientID: String?
        /// The message it replies to, in the same chat.
        package var replyTo: UUID?
        /// The author's own uploads, in order.
        package var attachmentIDs: [UUID]
        /// A forward's copy: who wrote the original, when, and its attachments (whoever uploaded them).
        package var forward: Forward?

        package struct Forward: Sendable {
            package var origin: ForwardOrigin
            package var attachments: [GatehouseAPI.Attachment]
        }

        package init(author: UUID, chat: UUID, text: String, clientID: String?, replyTo: UUID? = nil, attachmentIDs: [UUID] = [], forward: Forward? = nil) {
            self.author = author
            self.chat = chat
            self.text = text
            self.clientID = clientID
            self.replyTo = replyTo
            self.attachmentIDs = attachmentIDs
            self.forward = forward
        }
    }

    package init(database: DatabaseProvider, clock: GatehouseClock, settings: GatehouseConfiguration.Messenger, rateLimiter: RateLimiter,
                 events: EventLog, people: PersonLoader, store: MessengerStore) {
        self.database = database
        self.clock = clock
        self.settings = settings
        self.rateLimiter = rateLimiter
        self.events = events
        self.people = people
        self.store = store
        remembered = BoundedCache(capacity: settings.sendContexts)
    }

    /// The sends; an outcome per send, in order. On PostgreSQL a batch of plain sends (`plain`) is
    /// written in one statement with no transaction around it (`writeAtOnce`, `inStatement`; the
    /// pushes it calls for are queued by the same statement and composed after it, `PushQueue`),
    /// its memberships either remembered (`Remembered`, checked by that statement) or read first
    /// (the read takes no locks, so before the writes is as good as with them: each statement sees
    /// what was committed when it began); the rest the general way in a transaction. A batch
    /// `writeAtOnce` cannot finish (a client id used before, a rate limit met, a remembered context
    /// no longer so) goes again the general way in a transaction of its own, which answers those
    /// sends, and its pairs are forgotten.
    package func write(_ sends: [Send]) async throws -> [Result<Message, GatehouseError>] {
        if database.isPostgres {
            do {
                if let known = remembered(sends) {
                    let outcomes = try await writeAtOnce(sends, contexts: known, checked: true)
                    Ways.oneStatement.increment()
                    Ways.remembered.increment()
                    rememberedBatches.withLockedValue { $0 += 1 }
                    return outcomes
                }
                let members = try await sendingContexts(Self.pairs(sends), on: database.db)
                if Self.plain(sends, members) {
                    let contexts = members.mapValues(Remembered.init)
                    let outcomes = try await writeAtOnce(sends, contexts: contexts, checked: false)
                    Ways.oneStatement.increment()
                    for (pair, context) in contexts { remembered.insert(context, for: pair) }
                    return outcomes
                }
                return try await events.write { tx, recorder in
                    Ways.general.increment()
                    return try await write(sends, members: members, on: tx, recorder)
                }
            } catch is AtOnceMissed {
                remembered.remove(Self.pairs(sends))
                Ways.again.increment()
            }
        } else {
            Ways.general.increment()
        }
        return try await events.write { tx, recorder in try await write(sends, on: tx, recorder) }
    }

    /// The remembered contexts of `sends` when they are text alone and every pair's is remembered;
    /// nil otherwise (the batch reads).
    private func remembered(_ sends: [Send]) -> [SendPair: Remembered]? {
        guard remembered.capacity > 0 else { return nil }
        var known: [SendPair: Remembered] = [:]
        for send in sends {
            guard send.replyTo == nil, send.attachmentIDs.isEmpty, send.forward == nil else { return nil }
            let pair = SendPair(chat: send.chat, author: send.author)
            if known[pair] != nil { continue }
            guard let context = remembered.value(pair) else { return nil }
            known[pair] = context
        }
        return known
    }

    /// `gatehouse_send_batches_total` by `way`: `one_statement` (`writeAtOnce`), `general`, and
    /// `again` (a batch `writeAtOnce` could not finish, written once more the general way: a retry, a rate limit met or a
    /// remembered context that changed;
    /// each costs a statement or a transaction rolled back). `one_statement` is counted once written; the others when
    /// the way is chosen (a transaction that fails later is counted as well).
    private enum Ways {
        static let oneStatement = Counter(label: "gatehouse_send_batches_total", dimensions: [("way", "one_statement")])
        static let general = Counter(label: "gatehouse_send_batches_total", dimensions: [("way", "general")])
        static let again = Counter(label: "gatehouse_send_batches_total", dimensions: [("way", "again")])
        /// `gatehouse_send_contexts_remembered_total`: `one_statement` batches whose memberships were
        /// remembered (`Remembered`), not read.
        static let remembered = Counter(label: "gatehouse_send_contexts_remembered_total")
    }

    /// The sends in the caller's transaction `tx`; an outcome per send, in order.
    package func write(_ requests: [Send], on tx: any GatehouseDatabase, _ recorder: EventRecorder) async throws -> [Result<Message, GatehouseError>] {
        // 1. My memberships, the other members' settings and whether they see the chat, in one read.
        try await write(requests, members: try await sendingContexts(Self.pairs(requests), on: tx), on: tx, recorder)
    }

    private static func pairs(_ requests: [Send]) -> [SendPair] {
        Array(Set(requests.map { SendPair(chat: $0.chat, author: $0.author) }))
    }

    /// Sends that are text alone, each from a member the other takes messages from, into a chat
    /// both see: nothing to read for them but their memberships, nothing to write but the
    /// messages, the rate limit, the chats' activity and the events.
    private static func plain(_ requests: [Send], _ members: [SendPair: Sending]) -> Bool {
        requests.allSatisfy { request in
            guard let member = members[SendPair(chat: request.chat, author: request.author)] else { return false }
            return member.mayMessage && member.bothVisible && request.replyTo == nil && request.attachmentIDs.isEmpty && request.forward == nil
        }
    }

    /// A batch of plain sends (`plain`) on PostgreSQL, after its read, in one statement with no
    /// transaction around it: the messages, the rate limit, the chats' activity, the events'
    /// counters, the events with their announcement and the pushes they call for
    /// (`EventLog.inStatement`), their locks taken in the order the general way takes them
    /// (messages, rate limit, chats in id order, counters: a union reads its parts one after
    /// another). The events are recorded before, since every message is expected to be written; a
    /// message that made no row (its client id was used, here or before), a rate limit met or, when
    /// the contexts were remembered (`checked`), one that no longer holds (`stillSo`) fails the
    /// statement (`StatementCheck`), so that nothing it wrote stays: `AtOnceMissed`.
    private func writeAtOnce(_ requests: [Send], contexts: [SendPair: Remembered], checked: Bool) async throws -> [Result<Message, GatehouseError>] {
        let recorder = EventRecorder()
        let now = clock.now()
        let messages = requests.map {
            Message(id: OrderedID.make(), chatId: $0.chat, authorId: $0.author, text: $0.text, createdAt: now, editedAt: nil, deleted: false,
                    replyTo: nil, forwardedFrom: nil, attachments: [], clientMessageId: $0.clientID)
        }
        for message in messages.sorted(by: { $0.id < $1.id }) {
            let context = contexts[SendPair(chat: message.chatId, author: message.authorId)]!
            recordCreated(message, to: context.other, otherHasDevices: context.otherHasDevices, recorder)
        }
        let counters = recorder.counts()
        let perAuthor = Dictionary(grouping: messages, by: { $0.authorId.uuidString }).mapValues(\.count)
        let counting = rateLimiter.counting("messages", counts: perAuthor, limit: settings.messagesPerMinute, window: 60, postgres: true)
        var newest: [UUID: UUID] = [:]
        for message in messages where newest[message.chatId].map({ $0 < message.id }) ?? true {
            newest[message.chatId] = message.id
        }
        let events = try self.events.inStatement(recorder, counters: "c")
        let told: SQLQueryString = events.selected.map { "\nUNION ALL SELECT 'n', NULL, \($0)" } ?? ""
        let known = checked ? Self.stillSo(contexts) : nil
        let check: SQLQueryString = """

            UNION ALL SELECT 'x', NULL, \(StatementCheck.require("""
                (SELECT count(*) FROM m) = \(bind: messages.count) AND \(counting.allFit(part: "r")) AND \(events.written)\(known.map { " AND " + $0.holds } ?? "")
                """, Self.missed))
            """
        var raised: [UUID: Int64] = [:]
        let rows: [any SQLRow]
        do {
            rows = try await database.db.preparedRows("""
                WITH \(known.map { $0.part + ",\n     " } ?? "")m AS (\(try MessengerStore.insert(messages, postgres: true))),
                     r AS (\(counting.statement)),
                     l AS (SELECT id FROM chats WHERE id = ANY(\(bind: newest.keys.sorted())) ORDER BY id FOR UPDATE),
                     a AS (\(MessengerStore.activity(newest, postgres: true)) RETURNING chats.id),
                     c AS (\(EventLog.raise(counters, postgres: true)))\(events.parts.map { ",\n" + $0 as SQLQueryString }.joined())
                SELECT 'l' AS part, NULL::uuid AS id, count(*) AS value FROM l
                UNION ALL SELECT 'a', NULL, count(*) FROM a
                UNION ALL SELECT 'c', account_id, last_seq FROM c\(told)\(check)
                """)
        } catch where StatementCheck.failed(error, Self.missed) {
            throw AtOnceMissed()
        }
        for row in rows where try row.decode(column: "part", as: String.self) == "c" {
            raised[try row.decode(column: "id", as: UUID.self)] = try row.decode(column: "value", as: Int64.self)
        }
        await self.events.announce(events, raisedTo: raised)
        return messages.map { .success($0) }
    }

    /// What the one statement of `writeAtOnce` fails with when it cannot finish the batch.
    private static let missed = "a send's client id was used, its rate limit met, or its remembered context changed"

    /// For a batch whose contexts were remembered: `part`, the contexts as remembered (`k`), and the
    /// condition `holds` that each is still so, read by the statement that writes (the same query as a
    /// batch's read, `MessengerStore.sending`): the membership there with the same other member, both
    /// seeing the chat, no block, the other's audience, the friendship's state and whether the other
    /// has a device as they were.
    private static func stillSo(_ contexts: [SendPair: Remembered]) -> (part: SQLQueryString, holds: SQLQueryString) {
        let entries = Array(contexts)
        var rows = RowSet(count: entries.count)
        rows.add("chat", "uuid", entries.map(\.key.chat))
        rows.add("author", "uuid", entries.map(\.key.author))
        rows.add("other", "uuid", entries.map(\.value.other))
        rows.add("audience", "text", entries.map(\.value.audience))
        rows.add("friendship", "text", entries.map(\.value.friendship))
        rows.add("devices", "boolean", entries.map(\.value.otherHasDevices))
        let read = MessengerStore.sending(where: "(cm.chat_id, cm.account_id) IN (SELECT chat, author FROM k)", hasDevices: PushDevices.exist)
        return ("k AS (SELECT * FROM \(rows.table("q")))", """
            (SELECT count(*) FROM (\(read)) s JOIN k ON k.chat = s.chat_id AND k.author = s.account_id
             WHERE s.other_id = k.other AND s.visible AND s.other_visible AND s.blocked = 0 AND s.who_can_message = k.audience
               AND s.state IS NOT DISTINCT FROM k.friendship AND s.other_has_devices = k.devices) = \(bind: entries.count)
            """)
    }

    /// The sends in `tx`, their memberships read (`sendingContexts`); an outcome per send, in order.
    private func write(_ requests: [Send], members: [SendPair: Sending], on tx: any GatehouseDatabase, _ recorder: EventRecorder) async throws -> [Result<Message, GatehouseError>] {
        var outcomes = [Result<Message, GatehouseError>?](repeating: nil, count: requests.count)

        // 2. The messages, in one insert; a client id already used makes no row.
        var candidates: [(index: Int, message: Message)] = []
        let now = clock.now()
        for (index, request) in requests.enumerated() {
            guard let member = members[SendPair(chat: request.chat, author: request.author)] else {
                outcomes[index] = .failure(.notFound(.chatNotFound, "error.chatNotFound"))
                continue
            }
            guard member.mayMessage else { continue }  // answered below: a retry of an earlier send, or 403
            var reply: ReplyPreview?
            if let replyTo = request.replyTo {
                guard let quoted = try await store.visibleMessage(replyTo, in: request.chat, viewer: request.author,
                                                                  clearedThrough: member.member.clearedThrough, on: tx) else {
                    outcomes[index] = .failure(.notFound(.messageNotFound, "error.messageNotFound", field: "replyTo"))
                    continue
                }
                // A reply to a message deleted a moment ago still goes out, quoting a stub.
                reply = ReplyPreview(messageId: quoted.id, authorId: quoted.authorId, excerpt: quoted.deleted ? nil : MessagesService.excerpt(quoted.text),
                                     deleted: quoted.deleted)
            }
            let attachments: [GatehouseAPI.Attachment]
            if let forward = request.forward {
                attachments = forward.attachments
            } else {
                let found = try await store.attachments(request.attachmentIDs, ownedBy: request.author, on: tx)
                guard request.attachmentIDs.allSatisfy({ found[$0] != nil }) else {
                    outcomes[index] = .failure(.notFound(.attachmentNotFound, "error.attachmentNotFound", field: "attachmentIds"))
                    continue
                }
                attachments = request.attachmentIDs.map { found[$0]! }
            }
            candidates.append((index, Message(id: OrderedID.make(), chatId: request.chat, authorId: request.author, text: request.text,
                                              createdAt: now, editedAt: nil, deleted: false, replyTo: reply, forwardedFrom: request.forward?.origin,
                                              attachments: attachments, clientMessageId: request.clientID)))
        }
        let inserted = try await store.insertMessages(candidates.map(\.message), on: tx)

        // 3. The rate limit counts what was written (a retry is neither counted nor refused); over
        //    it, the newest go again.
        var refusedAuthors: [String: Double] = [:]
        var written = candidates.filter { inserted.contains($0.message.id) }
        let perAuthor = Dictionary(grouping: written, by: { $0.message.authorId.uuidString }).mapValues(\.count)
        if !perAuthor.isEmpty {
            let allowed = try await rateLimiter.hit("messages", counts: perAuthor, limit: settings.messagesPerMinute, window: 60, on: tx)
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
                try await store.deleteMessages(refused, on: tx)
                written.removeAll { refused.contains($0.message.id) }
            }
        }

        // 4. Their attachments, the chats' activity (locked in id order on PostgreSQL, like every
        //    writer), who sees them, the events.
        if !written.isEmpty {
            for w in written where !w.message.attachments.isEmpty {
                try await store.attach(w.message.attachments.map(\.id), to: w.message.id, on: tx)
            }
            var newest: [UUID: UUID] = [:]
            for w in written where newest[w.message.chatId].map({ $0 < w.message.id }) ?? true {
                newest[w.message.chatId] = w.message.id
            }
            try await store.setNewest(newest, lock: true, on: tx)
            let hidden = Set(written.filter { !(members[SendPair(chat: $0.message.chatId, author: $0.message.authorId)]?.bothVisible ?? true) }.map(\.message.chatId))
            try await store.showToBoth(hidden.sorted(), on: tx)
            for w in written.sorted(by: { $0.message.id < $1.message.id }) {
                let sending = members[SendPair(chat: w.message.chatId, author: w.message.authorId)]!
                recordCreated(w.message, to: sending.member.other, otherHasDevices: sending.otherHasDevices, recorder)
                outcomes[w.index] = .success(w.message)
            }
        }

        // 5. The rest (retries and refusals: rare): a client id used before, here or earlier,
        //    answers its message (a retry of a message sent before the other side changed their
        //    setting too); otherwise the reason.
        for index in outcomes.indices where outcomes[index] == nil {
            let request = requests[index]
            if let clientID = request.clientID, let match = try await store.sentMessage(author: request.author, clientID: clientID, on: tx) {
                outcomes[index] = match.chatId == request.chat ? .success(match)
                    : .failure(GatehouseError(.conflict, .clientMessageIdReused, LocalizedText("error.clientMessageIdReused"), field: "clientMessageId"))
            } else if let retryAfter = refusedAuthors[request.author.uuidString] {
                outcomes[index] = .failure(.rateLimited(.rateLimited, retryAfter: retryAfter, "error.rateLimited"))
            } else if members[SendPair(chat: request.chat, author: request.author)]?.mayMessage == false {
                outcomes[index] = .failure(Self.messagingNotAllowed)
            } else {
                outcomes[index] = .failure(GatehouseError(.internal, .internalError, LocalizedText("error.internal")))
            }
        }
        return outcomes.map { $0 ?? .failure(GatehouseError(.internal, .internalError, LocalizedText("error.internal"))) }
    }
}

/// A batch `MessageWriter.writeAtOnce` cannot finish (a client id used before, a rate limit met):
/// its transaction rolls back and the batch goes again the general way, which answers those sends.
private struct AtOnceMissed: Error {}
