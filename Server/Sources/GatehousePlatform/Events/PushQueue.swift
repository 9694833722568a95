import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import Logging
import Metrics
import SQLKit

/// A push an event calls for, as it waits in `push_queue` to be composed.
package struct QueuedPush: Sendable {
    /// Its row's id (`OrderedID`: in the order rows were made, to the millisecond, as a device's id is).
    package var id: UUID
    package var event: PendingEvent
    /// When the change that calls for it was written: the push's coalescing window counts from here.
    package var queuedAt: Date

    package init(id: UUID, event: PendingEvent, queuedAt: Date) {
        self.id = id
        self.event = event
        self.queuedAt = queuedAt
    }
}

/// Pushes wait here between the change that calls for them and their composition (docs/push.md,
/// "When a push is written"). What causes a push writes its row — the event's account, kind and
/// payload — in its own transaction, or its own one statement (`part`): a change rolled back
/// queues nothing, a committed one cannot lose its push. The push lane of the outbox's deliverer
/// then composes them (`compose`): the devices, the composers' words, the badge, the previews
/// setting, and a push per device into the outbox, in one transaction that deletes the rows it
/// composed. Composing after the commit is what lets a send or a transfer to a person with a
/// device be written the quickest way (one statement, no transaction), as one to a person without.
/// A push whose composition keeps failing is dropped after `GATEHOUSE_PUSH_QUEUE_MAX_ATTEMPTS`;
/// one older than `GATEHOUSE_PUSH_QUEUE_MAX_AGE_SECONDS` (a day, as APNs keeps one) is dropped
/// unsent: one queued while push was off, or while the deliverer could not run, tells of the past.
package enum PushQueue {
    private static func rows(_ events: [PendingEvent]) -> RowSet {
        var rows = RowSet(count: events.count)
        rows.add("id", "uuid", events.map { _ in OrderedID.make() })
        rows.add("account_id", "uuid", events.map(\.account))
        rows.add("kind", "text", events.map(\.kind.rawValue))
        rows.add("data", "text", events.map(\.data))
        return rows
    }

    /// The statement that queues `events`' pushes, in the caller's transaction.
    package static func insert(_ events: [PendingEvent], at now: Date, postgres: Bool) -> SQLQueryString {
        rows(events).insert(into: "push_queue", constants: [("attempts", "0"), ("created_at", "\(bind: now)")], postgres: postgres)
    }

    /// The part of a statement (`WITH` …) that queues `events`' pushes (PostgreSQL; `EventLog.inStatement`).
    /// A data-modifying part runs to its end whether or not the statement reads it.
    package static func part(_ events: [PendingEvent], at now: Date) -> SQLQueryString {
        "pushes_queued AS (\(insert(events, at: now, postgres: true)) RETURNING 1)"
    }
}

/// Composes the queued pushes (`PushQueue`), run by the outbox's push lane before it sends: rows
/// in id order, a batch at a time, each batch in one transaction with the outbox rows it writes
/// and the deletion of what it composed; on PostgreSQL the rows are taken `FOR UPDATE`, so that
/// of several instances one composes a row and the others wait for it and find it gone — rather
/// than skip it and send the push it would have replaced (a push lane composes before it sends,
/// and a burst's last message must reach the push that is sent). A batch that fails is composed
/// again a row at a time, and a row that keeps failing is counted and, after
/// `queueMaxAttempts`, dropped, so that one bad row never holds back the others.
package struct PushComposition: Sendable {
    package let database: DatabaseProvider
    package let clock: GatehouseClock
    package let pusher: any EventPusher
    package let logger: Logger
    /// Rows composed in one transaction (`GATEHOUSE_PUSH_QUEUE_BATCH`).
    package let batch: Int
    package let maxAttempts: Int
    package let maxAge: TimeInterval

    private static let composed = Counter(label: "gatehouse_push_queue_composed_total")
    private static let dropped = Counter(label: "gatehouse_push_queue_dropped_total")

    package init(database: DatabaseProvider, clock: GatehouseClock, pusher: any EventPusher,
                 settings: GatehouseConfiguration.Push, logger: Logger) {
        self.batch = settings.queueBatch
        self.maxAttempts = settings.queueMaxAttempts
        self.maxAge = settings.queueMaxAge
        self.database = database
        self.clock = clock
        self.pusher = pusher
        self.logger = logger
    }

    /// Composes every queued push; how many rows were taken off the queue.
    @discardableResult
    package func composeAll() async -> Int {
        // First a read: an empty queue (the usual case) costs no transaction, which on SQLite would take the writer's lock.
        do {
            guard try await !database.sql.raw("SELECT id FROM push_queue LIMIT 1").all().isEmpty else { return 0 }
        } catch {
            logger.error("push queue: cannot read the queue: \(String(describing: error))")
            return 0
        }
        var total = 0
        while true {
            do {
                let taken = try await composeBatch(only: nil)
                total += taken
                if taken < batch { return total }
            } catch {
                logger.warning("push queue: a batch failed, composing it a push at a time: \(String(describing: error))")
                return total + (await composeOneByOne())
            }
        }
    }

    /// One batch (or the one row `only`) in a transaction; how many rows it took off the queue.
    private func composeBatch(only: UUID?) async throws -> Int {
        let now = clock.now()
        let limit = only == nil ? batch : 1
        return try await database.db.withTransaction { tx in
            let which: SQLQueryString = only.map { "WHERE id = \(bind: $0)" } ?? ""
            let rows = try await tx.raw("""
                SELECT id, account_id, kind, data, created_at FROM push_queue \(which) ORDER BY id LIMIT \(literal: limit)\
                \(unsafeRaw: tx.isPostgres ? " FOR UPDATE" : "")
                """).all()
            guard !rows.isEmpty else { return 0 }
            var ids: [UUID] = []
            var pushes: [QueuedPush] = []
            for row in rows {
                let id = try row.decode(column: "id", as: UUID.self)
                ids.append(id)
                let at = try row.decode(column: "created_at", as: Date.self)
                // A kind this version does not know (written by a newer one), or a push too old to tell: dropped.
                guard let kind = RealtimeEventKind(rawValue: try row.decode(column: "kind", as: String.self)), now.timeIntervalSince(at) <= maxAge else {
                    Self.dropped.increment()
                    continue
                }
                pushes.append(QueuedPush(id: id, event: PendingEvent(account: try row.decode(column: "account_id", as: UUID.self), kind: kind,
                                                             data: try row.decode(column: "data", as: String.self)), queuedAt: at))
            }
            if !pushes.isEmpty { try await pusher.push(pushes, on: tx) }
            try await tx.raw("DELETE FROM push_queue WHERE \(SQLQueryString.isAny("id", ids, postgres: tx.isPostgres))").run()
            Self.composed.increment(by: pushes.count)
            return rows.count
        }
    }

    /// After a failed batch: each row in a transaction of its own; a row that fails has its
    /// attempt counted, and is dropped after `maxAttempts`.
    private func composeOneByOne() async -> Int {
        var taken = 0
        do {
            let ids = try await database.sql.raw("SELECT id FROM push_queue ORDER BY id LIMIT \(literal: batch)").all()
                .map { try $0.decode(column: "id", as: UUID.self) }
            for id in ids {
                do {
                    taken += try await composeBatch(only: id)
                } catch {
                    let attempts = try await database.sql.raw("""
                        UPDATE push_queue SET attempts = attempts + 1 WHERE id = \(bind: id) RETURNING attempts
                        """).first(decodingColumn: "attempts", as: Int.self) ?? 0
                    if attempts >= maxAttempts {
                        try await database.sql.raw("DELETE FROM push_queue WHERE id = \(bind: id)").run()
                        Self.dropped.increment()
                        taken += 1
                        logger.error("push queue: dropped a push after \(attempts) failed compositions: \(String(describing: error))")
                    } else {
                        logger.warning("push queue: a push's composition failed (attempt \(attempts)): \(String(describing: error))")
                    }
                }
            }
        } catch {
            logger.error("push queue: cannot read the queue: \(String(describing: error))")
        }
        return taken
    }
}

/// The queue (migration 035): a row per push an event calls for, until it is composed.
package struct M035CreatePushQueue: SQLMigration {
    package var name: String { "035_CreatePushQueue" }

    package func prepare(on database: any GatehouseDatabase) async throws {
        try await database.schema("push_queue")
            .field("id", .uuid, .identifier(auto: false))
            .field("account_id", .uuid, .required)
            .field("kind", .string, .required)
            .field("data", .string, .required)
            .field("attempts", .int, .required)
            .field("created_at", .datetime, .required)
            .create()
    }

    package func revert(on database: any GatehouseDatabase) async throws {
        try await database.schema("push_queue").delete()
    }

    package init() {}
}
