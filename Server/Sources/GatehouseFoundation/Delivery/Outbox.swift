import FluentKit
import Foundation
import NIOConcurrencyHelpers
import SQLKit

/// A message to deliver, before it is written to the outbox.
package struct OutgoingMessage: Sendable {
    package enum Kind: String, Sendable {
        case sms, email, push
        /// A signed event to one of the business's endpoints (docs/webhooks.md): `destination` is the endpoint's id,
        /// `subject` the event type, `body` the JSON sent as it is.
        case webhook
        /// A token revoked at the identity provider that issued it (Apple's `/auth/revoke`): `destination` is the
        /// provider, `subject` the client id the token was issued to, `body` the token sealed.
        case revocation
        /// The deliverer's lanes, in order: each kind is delivered by its own loop.
        package static let lanes: [Kind] = [.sms, .email, .push, .webhook, .revocation]
    }
    package var kind: Kind
    package var destination: String
    package var subject: String?
    package var body: String
    /// The code or password the message carries, kept for the development outbox only.
    package var code: String?
    /// The outbox row's id, as the deliverer hands it to a channel (a webhook's `webhook-id`).
    package var id: UUID? = nil

    package init(kind: Kind, destination: String, subject: String?, body: String, code: String?, id: UUID? = nil) {
        self.kind = kind
        self.destination = destination
        self.subject = subject
        self.body = body
        self.code = code
        self.id = id
    }
}

/// Writes messages into the transactional outbox and wakes the deliverer.
package struct Outbox: Sendable {
    package let clock: GatehouseClock
    package let signal: OutboxSignal

    /// Call inside the transaction that creates what the message announces.
    @discardableResult
    package func enqueue(_ message: OutgoingMessage, on db: any GatehouseDatabase) async throws -> UUID {
        let now = clock.now()
        let row = OutboxMessageModel()
        row.id = OrderedID.make()
        row.kind = message.kind.rawValue
        row.destination = message.destination
        row.subject = message.subject
        row.body = message.body
        row.code = message.code
        row.status = OutboxMessageModel.Status.pending.rawValue
        row.attempts = 0
        row.nextAttemptAt = now
        row.createdAt = now
        try await row.create(on: db)
        return row.id!
    }

    /// Pushes, each sent `window` after `start` (its events' time; now when not given); until then a newer push with
    /// the same `key` (a device and a thread) replaces it in place, so a burst is one push, the last. A window of 0
    /// turns coalescing off: one push each. Two statements however many: the pending pushes replaced (the last of
    /// these for each key), and the rest inserted.
    package func enqueuePushes(_ pushes: [(envelope: PushEnvelope, key: String)], window: TimeInterval, from start: Date? = nil,
                               on db: any GatehouseDatabase) async throws {
        guard !pushes.isEmpty else { return }
        let now = clock.now()
        let due = max(now, (start ?? now).addingTimeInterval(max(0, window)))
        let coalescing = window > 0
        var items: [(device: String, title: String, body: String, key: String)] = []
        var slot: [String: Int] = [:]
        for push in pushes {
            let item = (push.envelope.device.uuidString.lowercased(), push.envelope.title,
                        String(decoding: try PushEnvelope.encoder.encode(push.envelope), as: UTF8.self), push.key)
            // Of a key's pushes, the last: it would replace the others in place.
            if coalescing, let index = slot[push.key] { items[index] = item } else {
                slot[push.key] = items.count
                items.append(item)
            }
        }
        var replaced: Set<String> = []
        if coalescing {
            var rows = RowSet(count: items.count)
            rows.add("coalesce_key", "text", items.map(\.key))
            rows.add("body", "text", items.map(\.body))
            rows.add("subject", "text", items.map(\.title))
            let update = rows.update("outbox_messages", matching: ["coalesce_key"],
                                     unless: "outbox_messages.status <> 'pending' OR outbox_messages.attempts <> 0 OR outbox_messages.claimed_until IS NOT NULL",
                                     postgres: db.isPostgres)
            replaced = Set(try await db.preparedRows("\(update) RETURNING outbox_messages.coalesce_key AS k")
                .map { try $0.decode(column: "k", as: String.self) })
        }
        let fresh = items.filter { !replaced.contains($0.key) }
        guard !fresh.isEmpty else { return }
        var rows = RowSet(count: fresh.count)
        rows.add("id", "uuid", fresh.map { _ in OrderedID.make() })
        rows.add("destination", "text", fresh.map(\.device))
        rows.add("subject", "text", fresh.map(\.title))
        rows.add("body", "text", fresh.map(\.body))
        rows.add("coalesce_key", "text", fresh.map { coalescing ? $0.key : nil } as [String?])
        _ = try await db.preparedRows(rows.insert(into: "outbox_messages", constants: [
            ("kind", "'push'"), ("status", "'pending'"), ("attempts", "0"), ("next_attempt_at", "\(bind: due)"), ("created_at", "\(bind: now)"),
        ], postgres: db.isPostgres))
    }

    /// Queues a message that failed for good again, as new: its destination, nil when it is not a failed message.
    package func retryFailed(_ id: UUID, on tx: any GatehouseDatabase) async throws -> String? {
        try await tx.raw("""
            UPDATE outbox_messages SET status = 'pending', attempts = 0, next_attempt_at = \(bind: clock.now()), claimed_until = NULL, last_error = NULL
            WHERE id = \(bind: id) AND status = 'failed' RETURNING destination
            """).first()?.decode(column: "destination", as: String.self)
    }

    package init(clock: GatehouseClock, signal: OutboxSignal) {
        self.clock = clock
        self.signal = signal
    }
}

/// Wakes the deliverer after a commit so a code goes out at once rather than at the next poll.
/// A wake with nobody waiting is remembered, so none is lost between two waits. The deliverer
/// runs one lane per channel; each lane waits on its own slot and a wake reaches every slot.
package final class OutboxSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
        var generation = 0
    }
    /// One slot per lane: a slot has at most one waiter at a time.
    private let lanes: [NIOLockedValueBox<State>]

    package init(lanes: Int = OutgoingMessage.Kind.lanes.count) {
        self.lanes = (0..<max(1, lanes)).map { _ in NIOLockedValueBox(State()) }
    }

    package func wake() {
        for state in lanes {
            let waiter = state.withLockedValue { s -> CheckedContinuation<Void, Never>? in
                if let w = s.waiter {
                    s.waiter = nil
                    return w
                }
                s.pending = true
                return nil
            }
            waiter?.resume()
        }
    }

    /// Returns at the next wake, or after `timeout`. Only one task may wait on a lane at a time.
    package func wait(lane: Int = 0, timeout: Duration) async {
        let state = lanes[lane]
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let generation = state.withLockedValue { s -> Int? in
                if s.pending {
                    s.pending = false
                    return nil
                }
                s.generation += 1
                s.waiter = continuation
                return s.generation
            }
            guard let generation else {
                continuation.resume()
                return
            }
            Task {
                try? await Task.sleep(for: timeout)
                let waiter = state.withLockedValue { s -> CheckedContinuation<Void, Never>? in
                    guard s.generation == generation, let w = s.waiter else { return nil }
                    s.waiter = nil
                    return w
                }
                waiter?.resume()
            }
        }
    }
}
