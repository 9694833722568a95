import FluentKit
import Foundation
import NIOConcurrencyHelpers

/// A message to deliver, before it is written to the outbox.
package struct OutgoingMessage: Sendable {
    package enum Kind: String, Sendable {
        case sms, email, push
        /// The deliverer's lanes, in order: each kind is delivered by its own loop.
        package static let lanes: [Kind] = [.sms, .email, .push]
    }
    package var kind: Kind
    package var destination: String
    package var subject: String?
    package var body: String
    /// The code or password the message carries, kept for the development outbox only.
    package var code: String?
}

/// Writes messages into the transactional outbox and wakes the deliverer.
package struct Outbox: Sendable {
    package let clock: GatehouseClock
    package let signal: OutboxSignal

    /// Call inside the transaction that creates what the message announces.
    @discardableResult
    package func enqueue(_ message: OutgoingMessage, on db: any Database) async throws -> UUID {
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
