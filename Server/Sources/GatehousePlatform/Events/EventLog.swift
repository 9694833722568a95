import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import NIOConcurrencyHelpers
import SQLKit

/// An event to write: to whom, what, and its `data` already in wire JSON.
package struct PendingEvent: Sendable {
    package var account: UUID
    package var kind: RealtimeEventKind
    package var data: String

    package init(account: UUID, kind: RealtimeEventKind, data: String) {
        self.account = account
        self.kind = kind
        self.data = data
    }
}

/// An event with its place in the account's sequence.
package struct StoredEvent: Sendable, Equatable {
    package var account: UUID
    package var seq: Int64
    package var kind: String
    package var data: String

    package init(account: UUID, seq: Int64, kind: String, data: String) {
        self.account = account
        self.seq = seq
        self.kind = kind
        self.data = data
    }

    /// The text frame a realtime client receives (`RealtimeFrame.event`, keys sorted like the API's JSON).
    package var frame: String { #"{"data":\#(data),"seq":\#(seq),"type":"\#(kind)"}"# }

    /// `frame` of an event whose number the statement writing it gives (`EventLog.inStatement`): its
    /// place is number `hole`.
    package static func frame(kind: String, data: String, hole: Int) -> NumberedText {
        var frame = NumberedText(#"{"data":"# + data + #","seq":"#)
        frame.append(number: hole)
        frame.append(#","type":""# + kind + #""}"#)
        return frame
    }

    /// An announcement's body (`EventLog.busEvents`) with its number at place `hole`.
    package static func busBody(kind: String, data: String, hole: Int) -> NumberedText {
        var body = NumberedText()
        body.append(number: hole)
        let frame = frame(kind: kind, data: data, hole: hole)
        if frame.widestCount < EventLimits.frameInNotification {
            body.append("\n")
            body.append(frame)
        }
        return body
    }
}

/// Composes the pushes events call for (docs/push.md): the event's source says who gets one
/// (`push: true`) and the event log queues it with the event (`PushQueue`); the pusher says how
/// (devices, language, mutes, coalescing), writing them into the outbox in `tx`, after the commit
/// of what caused them (`PushComposition`).
package protocol EventPusher: Sendable {
    func push(_ pushes: [QueuedPush], on tx: any GatehouseDatabase) async throws
}

/// Collects the events of one transaction.
package final class EventRecorder: Sendable {
    package init() {}

    private let pending = NIOLockedValueBox<[PendingEvent]>([])
    /// The events that also call for a push to their account's devices.
    private let pushes = NIOLockedValueBox<[PendingEvent]>([])
    /// Events the transaction's body wrote itself (`EventLog.flush`), to announce after the commit on the in-process bus.
    fileprivate let flushed = NIOLockedValueBox<[StoredEvent]>([])

    /// `push`: the account's devices are also told (a message, a friend request, money for them),
    /// if a pusher is set.
    package func add(_ kind: RealtimeEventKind, to account: UUID, _ payload: some Encodable, push: Bool = false) throws {
        add(kind, to: account, encoded: try V1.encoder.encode(payload), push: push)
    }

    /// An event whose payload is encoded already (`V1.encoder`).
    package func add(_ kind: RealtimeEventKind, to account: UUID, encoded payload: Data, push: Bool = false) {
        let event = PendingEvent(account: account, kind: kind, data: String(decoding: payload, as: UTF8.self))
        pending.withLockedValue { $0.append(event) }
        if push { pushes.withLockedValue { $0.append(event) } }
    }

    /// A push with no event of its own, for `EventLog.pushNow`: the event that tells the same
    /// thing is recorded later without `push`, once its payload is known.
    package func push(_ kind: RealtimeEventKind, to account: UUID, encoded payload: Data) {
        pushes.withLockedValue { $0.append(PendingEvent(account: account, kind: kind, data: String(decoding: payload, as: UTF8.self))) }
    }

    fileprivate func take() -> [PendingEvent] { pending.withLockedValue { events in defer { events = [] }; return events } }
    fileprivate func takePushes() -> [PendingEvent] { pushes.withLockedValue { events in defer { events = [] }; return events } }

    /// How many events are recorded so far for each account.
    package func counts() -> [UUID: Int64] {
        pending.withLockedValue { events in events.reduce(into: [:]) { $0[$1.account, default: 0] += 1 } }
    }
}

/// Every account's events (DESIGN §7 "Messenger"): written in the transaction of the change
/// they tell of (or in its one statement: `inStatement`), numbered per account without gaps,
/// kept for the retention period, announced on the `EventBus` so that every instance's realtime
/// sockets send them.
///
/// Numbering: one counter row per account, raised by the number of the transaction's events
/// for it, in account order (two transactions never wait on each other's counters in a cycle).
/// The row stays locked until commit, so an account's events commit in the order of their
/// numbers and a reader never sees N+1 before N.
package struct EventLog: Sendable {
    package let database: DatabaseProvider
    package let bus: any EventBus
    package let clock: GatehouseClock
    package let retention: TimeInterval
    /// Writes the pushes events call for (none when push is off).
    package let pusher: (any EventPusher)?

    package static let topic = "messenger.event"

    /// An edit supersedes the earlier `message.updated` events of the same message: each keeps its
    /// number (the sequence stays gap-free, so a resuming client sees no hole) and becomes a
    /// `message.superseded` of a few bytes, so a run of edits keeps one copy of the message per
    /// member instead of one per edit. Clients that received one live already applied it; a
    /// replay skips it and applies the newest. Inside the edit's transaction.
    package func supersedeEdits(of message: Message, for accounts: [UUID], on db: any GatehouseDatabase) async throws {
        guard !accounts.isEmpty else { return }
        let marker = String(decoding: try V1.encoder.encode(["id": message.id]), as: UTF8.self).dropFirst().dropLast()
        let small = String(decoding: try V1.encoder.encode(SupersededEdit(chatId: message.chatId, messageId: message.id)), as: UTF8.self)
        try await db.raw("""
            UPDATE messenger_events SET kind = \(bind: RealtimeEventKind.messageSuperseded.rawValue), data = \(bind: small)
            WHERE account_id IN (\(accounts.map { "\(bind: $0)" as SQLQueryString }.joined(separator: ", ")))
              AND kind = \(bind: RealtimeEventKind.messageUpdated.rawValue) AND created_at >= \(bind: message.createdAt)
              AND data LIKE \(bind: "%" + marker + "%")
            """).run()
    }

    /// Runs `body` in a transaction and writes the events it records in the same transaction.
    /// On PostgreSQL the announcement is part of the transaction (NOTIFY leaves on commit); on the
    /// in-process bus it follows the commit.
    package func write<T: Sendable>(_ body: @escaping @Sendable (any GatehouseDatabase, EventRecorder) async throws -> T) async throws -> T {
        let recorder = EventRecorder()
        let announcesInTransaction = bus is PostgresEventBus
        let (value, stored) = try await database.db.withTransaction(onLoop: true) { tx in
            let value = try await body(tx, recorder)
            let stored = try await self.store(recorder.take(), on: tx)
            // Pushes are queued in this transaction: none for a change rolled back, none lost.
            try await self.pushNow(recorder, on: tx)
            if announcesInTransaction { try await self.announce(stored, withFrames: true, on: tx) }
            return (value, recorder.flushed.withLockedValue { $0 } + stored)
        }
        if !announcesInTransaction { try? await announce(stored, withFrames: true, on: nil) }
        return value
    }

    /// Queues the pushes recorded so far (`PushQueue`), in `tx`, now rather than after the body: a
    /// batch of payments queues them before it locks the wallets.
    package func pushNow(_ recorder: EventRecorder, on tx: any GatehouseDatabase) async throws {
        let pushes = recorder.takePushes()
        guard pusher != nil, !pushes.isEmpty else { return }
        try await tx.raw(PushQueue.insert(pushes, at: clock.now(), postgres: tx.isPostgres)).run()
    }

    /// Writes events in a transaction someone else commits (an account change seen by the
    /// people index). The in-process bus cannot see that commit, so it announces only the
    /// numbers: sockets read the events once they are committed (`RealtimeSession.pump`).
    package func append(_ events: [PendingEvent], on db: any GatehouseDatabase) async throws {
        let stored = try await store(events, on: db)
        try await announce(stored, withFrames: bus is PostgresEventBus, on: bus is PostgresEventBus ? db : nil)
    }

    /// For a group commit inside `write`: numbers the events recorded so far with counters the
    /// batch raised already (`raise`, in the statement that locks its wallets), and adds their
    /// rows, and on PostgreSQL their announcement, to `writes`, so that they go with the batch's
    /// other writes in one round trip. The events must be those the counters were raised for,
    /// account by account; anything else is refused (the batch then rolls back). Events
    /// recorded later are written by `write` as usual.
    package func flush(_ recorder: EventRecorder, raised counts: [UUID: Int64], to last: [UUID: Int64], into writes: inout CombinedWrites) throws {
        let byAccount = Dictionary(grouping: recorder.take(), by: \.account)
        guard byAccount.mapValues({ Int64($0.count) }) == counts else { throw EventLogError.countersDiffer }
        let stored = try assign(byAccount, last: last)
        guard !stored.isEmpty else { return }
        writes.add(insert(stored, postgres: writes.postgres))
        if let postgres = bus as? PostgresEventBus {
            writes.select(try postgres.notifications(busEvents(stored, withFrames: true)))
        }
        recorder.flushed.withLockedValue { $0 += stored }
    }

    /// Events written by the one statement that writes what they tell of, with no transaction
    /// around it (PostgreSQL: a plain send, `MessageWriter`). The statement raises the counters in
    /// its part `counters` (`raise`, with `recorder.counts()`), and `parts` number the events from
    /// them, insert them and, on PostgreSQL's bus, announce them: the numbers are known only inside
    /// the statement, so the notifications are written here with places for them (`NumberedText`,
    /// the text `pack` and `encode` write) that the statement fills in. The statement must select
    /// `selected` (a part that only reads runs when read) and fail unless `written` holds (every
    /// event inserted: none lost to a counter the statement did not raise). The pushes the events
    /// call for are queued by a part of their own (`PushQueue.part`). After the statement,
    /// `announce`.
    package struct InStatement {
        package let parts: [SQLQueryString]
        package let selected: SQLQueryString?
        package let written: SQLQueryString
        fileprivate let byAccount: [UUID: [PendingEvent]]
    }

    package func inStatement(_ recorder: EventRecorder, counters: String) throws -> InStatement {
        let pushes = pusher == nil ? [] : recorder.takePushes()
        let byAccount = Dictionary(grouping: recorder.take(), by: \.account)
        var numbered: [(account: UUID, back: Int64, event: PendingEvent)] = []
        for account in byAccount.keys.sorted() {
            let mine = byAccount[account]!
            for (offset, event) in mine.enumerated() { numbered.append((account, Int64(mine.count - 1 - offset), event)) }
        }
        var rows = RowSet(count: numbered.count)
        rows.add("account_id", "uuid", numbered.map(\.account))
        rows.add("back", "bigint", numbered.map(\.back))
        rows.add("kind", "text", numbered.map(\.event.kind.rawValue))
        rows.add("data", "text", numbered.map(\.event.data))
        let c: SQLQueryString = "\(unsafeRaw: counters)"
        var parts: [SQLQueryString] = ["""
            events_written AS (INSERT INTO messenger_events (account_id, seq, kind, data, created_at)
                SELECT x.account_id, \(c).last_seq - x.back, x.kind, x.data, \(bind: clock.now()) FROM \(rows.table("x"))
                JOIN \(c) ON \(c).account_id = x.account_id RETURNING 1)
            """]
        var selected: SQLQueryString?
        if let postgres = bus as? PostgresEventBus {
            let payloads = try EventBusLimits.pack(numbered.enumerated().map { index, one in
                EventBusLimits.encode(topic: Self.topic, account: one.account,
                                      body: StoredEvent.busBody(kind: one.event.kind.rawValue, data: one.event.data, hole: index))
            })
            // A row per piece: its notification, its place in it, and the number that follows it (none after the last).
            var pieces: [(note: Int64, piece: String, account: UUID?, back: Int64?)] = []
            for (note, payload) in payloads.enumerated() {
                for (index, piece) in payload.pieces.enumerated() {
                    let hole = index < payload.holes.count ? numbered[payload.holes[index]] : nil
                    pieces.append((Int64(note), piece, hole?.account, hole?.back))
                }
            }
            var table = RowSet(count: pieces.count)
            table.add("note", "bigint", pieces.map(\.note))
            table.add("ord", "bigint", pieces.indices.map(Int64.init))
            table.add("piece", "text", pieces.map(\.piece))
            table.add("account_id", "uuid", pieces.map(\.account))
            table.add("back", "bigint", pieces.map(\.back))
            parts.append("""
                events_told AS (SELECT count(pg_notify(\(bind: postgres.channel), p.payload)) AS sent FROM (
                    SELECT x.note, string_agg(x.piece || coalesce((\(c).last_seq - x.back)::text, ''), '' ORDER BY x.ord) AS payload
                    FROM \(table.table("x")) LEFT JOIN \(c) ON \(c).account_id = x.account_id
                    GROUP BY x.note ORDER BY x.note) p)
                """)
            selected = "(SELECT sent FROM events_told)"
        }
        if !pushes.isEmpty { parts.append(PushQueue.part(pushes, at: clock.now())) }
        return InStatement(parts: parts, selected: selected, written: "(SELECT count(*) FROM events_written) = \(bind: numbered.count)",
                           byAccount: byAccount)
    }

    /// After the statement of `events` (`inStatement`) committed with counters raised to `last`:
    /// a bus other than PostgreSQL's is told now (PostgreSQL's was, by the statement).
    package func announce(_ events: InStatement, raisedTo last: [UUID: Int64]) async {
        guard !(bus is PostgresEventBus), let stored = try? assign(events.byAccount, last: last) else { return }
        try? await announce(stored, withFrames: true, on: nil)
    }

    /// The statement that raises each account's counter by its count (in account order, the
    /// order the rows are locked in) and answers `account_id, last_seq`.
    package static func raise(_ counts: [UUID: Int64], postgres: Bool) -> SQLQueryString {
        let accounts = counts.keys.sorted()
        var rows = RowSet(count: accounts.count)
        rows.add("account_id", "uuid", accounts)
        rows.add("last_seq", "bigint", accounts.map { counts[$0]! })
        return """
            \(rows.insert(into: "messenger_event_counters", postgres: postgres))
            ON CONFLICT (account_id) DO UPDATE SET last_seq = messenger_event_counters.last_seq + excluded.last_seq
            RETURNING account_id, last_seq
            """
    }

    /// Numbers the events and inserts them.
    package func store(_ events: [PendingEvent], on db: any GatehouseDatabase) async throws -> [StoredEvent] {
        let stored = try await number(events, on: db)
        guard !stored.isEmpty else { return [] }
        _ = try await db.preparedRows(insert(stored, postgres: db.isPostgres))
        return stored
    }

    /// Raises the accounts' counters for the events (one statement, `raise`) and answers the
    /// events with their numbers.
    private func number(_ events: [PendingEvent], on db: any GatehouseDatabase) async throws -> [StoredEvent] {
        guard !events.isEmpty else { return [] }
        let byAccount = Dictionary(grouping: events, by: \.account)
        var last: [UUID: Int64] = [:]
        for row in try await db.preparedRows(Self.raise(byAccount.mapValues { Int64($0.count) }, postgres: db.isPostgres)) {
            last[try row.decode(column: "account_id", as: UUID.self)] = try row.decode(column: "last_seq", as: Int64.self)
        }
        return try assign(byAccount, last: last)
    }

    /// Numbers each account's events up to its counter's new value `last`, in account order.
    private func assign(_ byAccount: [UUID: [PendingEvent]], last: [UUID: Int64]) throws -> [StoredEvent] {
        var stored: [StoredEvent] = []
        for account in byAccount.keys.sorted() {
            let mine = byAccount[account]!
            guard let newest = last[account] else { throw EventLogError.counterNotRaised(account) }
            let first = newest - Int64(mine.count) + 1
            for (offset, event) in mine.enumerated() {
                stored.append(StoredEvent(account: account, seq: first + Int64(offset), kind: event.kind.rawValue, data: event.data))
            }
        }
        return stored
    }

    private func insert(_ stored: [StoredEvent], postgres: Bool) -> SQLQueryString {
        var rows = RowSet(count: stored.count)
        rows.add("account_id", "uuid", stored.map(\.account))
        rows.add("seq", "bigint", stored.map(\.seq))
        rows.add("kind", "text", stored.map(\.kind))
        rows.add("data", "text", stored.map(\.data))
        return rows.insert(into: "messenger_events", constants: [("created_at", "\(bind: clock.now())")], postgres: postgres)
    }

    /// Tells every instance: the account's event `seq`, with its frame when it fits a notification.
    private func announce(_ stored: [StoredEvent], withFrames: Bool, on db: (any GatehouseDatabase)?) async throws {
        guard !stored.isEmpty else { return }
        try await bus.publish(busEvents(stored, withFrames: withFrames), on: db)
    }

    private func busEvents(_ stored: [StoredEvent], withFrames: Bool) -> [BusEvent] {
        stored.map { event -> BusEvent in
            var body = String(event.seq)
            if withFrames {
                let frame = event.frame
                if frame.utf8.count < EventLimits.frameInNotification { body += "\n" + frame }
            }
            return BusEvent(topic: Self.topic, account: event.account, body: body)
        }
    }

    /// The account's events after `seq`, oldest first.
    package func events(of account: UUID, after seq: Int64, limit: Int) async throws -> [StoredEvent] {
        try await database.sql.raw("""
            SELECT seq, kind, data FROM messenger_events WHERE account_id = \(bind: account) AND seq > \(bind: seq)
            ORDER BY seq LIMIT \(literal: limit)
            """).all().map { row in
            StoredEvent(account: account, seq: try row.decode(column: "seq", as: Int64.self),
                        kind: try row.decode(column: "kind", as: String.self), data: try row.decode(column: "data", as: String.self))
        }
    }

    /// The account's newest number (0 before its first event) and its oldest kept one.
    package func bounds(of account: UUID) async throws -> (last: Int64, oldest: Int64?) {
        let last = try await database.sql.raw("SELECT last_seq FROM messenger_event_counters WHERE account_id = \(bind: account)")
            .first(decodingColumn: "last_seq", as: Int64.self) ?? 0
        let oldest = try await database.sql.raw("SELECT MIN(seq) AS oldest FROM messenger_events WHERE account_id = \(bind: account)")
            .first(decodingColumn: "oldest", as: Int64?.self) ?? nil
        return (last, oldest)
    }

    /// Deletes events older than the retention period (a client that was away longer resyncs).
    package func purgeExpired() async throws {
        try await database.sql.raw("DELETE FROM messenger_events WHERE created_at < \(bind: clock.now().addingTimeInterval(-retention))").run()
    }

    package init(database: DatabaseProvider, bus: any EventBus, clock: GatehouseClock, retention: TimeInterval, pusher: (any EventPusher)? = nil) {
        self.database = database
        self.bus = bus
        self.clock = clock
        self.retention = retention
        self.pusher = pusher
    }
}

package enum EventLogError: Error {
    case counterNotRaised(UUID)
    /// A group commit's events are not those it raised the counters for.
    case countersDiffer
}

package enum EventLimits {
    /// A frame up to this size rides in the notification itself; a larger one is read from the table.
    package static let frameInNotification = 7_000
}
