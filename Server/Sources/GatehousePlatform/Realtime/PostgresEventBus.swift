import FluentKit
import Foundation
import GatehouseFoundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import PostgresNIO
import ServiceLifecycle
import SQLKit

/// The event bus on PostgreSQL: `pg_notify` to publish (on the caller's transaction when given, so
/// an event leaves only with the writes it tells of), and one connection per instance that
/// LISTENs and hands each notification to the subscribers. The listener reconnects with backoff;
/// while it is down `isConnected` is false (the session cache falls back to its TTL), and every
/// reconnection is a gap (subscribers drop what they keep, since events may have been missed).
///
/// Events are delivered to the publishing instance too, through its own listener. While it
/// listens it sends itself a heartbeat every `heartbeat` (a notification through the pool, like
/// any publish): PostgreSQL hands a listener the notifications in the order their transactions
/// committed, so when one comes back, every event committed before it was sent has been
/// dispatched here (`deliveredThrough`). A listener that stops hearing (a connection silently
/// gone, a stopped database backend) stops proving anything, and the session cache falls back to
/// its TTL; when a heartbeat the database took has not come back for `silence`, the listener is
/// closed and connects again, through a gap (its sockets read what they missed from the database),
/// where before it waited for the kernel to give up on the connection, hours by default.
package final class PostgresEventBus: EventBus, Service {
    private struct Proof {
        /// This connection's heartbeats carry it: another instance's, or an earlier connection's, prove nothing here.
        var nonce = ""
        var next: UInt64 = 0
        /// When each heartbeat still out was sent, and whether the database took it.
        var sent: [UInt64: (at: ContinuousClock.Instant, taken: Bool)] = [:]
        var through: ContinuousClock.Instant?
    }

    package let subscribers = BusSubscribers()
    package let channel: String
    private let database: DatabaseProvider
    private let configuration: PostgresConnection.Configuration
    private let logger: Logger
    private let connected = NIOLockedValueBox(false)
    private let current = NIOLockedValueBox<PostgresConnection?>(nil)
    private let heartbeat: Duration
    private let silence: Duration
    private let proof = NIOLockedValueBox(Proof())

    /// `heartbeat`: how often the listener proves it hears (`deliveredThrough`; zero sends none);
    /// `silence`: how long a heartbeat the database took may stay away before the listener reconnects.
    package init(database: DatabaseProvider, configuration: PostgresConnection.Configuration, schema: String?, heartbeat: Duration = .zero,
                 silence: Duration = .seconds(15), logger: Logger) {
        self.heartbeat = heartbeat
        self.silence = silence
        self.database = database
        self.configuration = configuration
        self.logger = logger
        // NOTIFY channels are per database, not per schema: instances sharing a schema share a channel.
        let suffix = schema.map { "_" + $0.filter { $0.isLetter || $0.isNumber || $0 == "_" } } ?? ""
        self.channel = String(("gatehouse_events" + suffix).prefix(63))
    }

    package var isConnected: Bool { connected.withLockedValue({ $0 }) }

    package var deliveredThrough: ContinuousClock.Instant? { proof.withLockedValue { $0.through } }

    package func publish(_ event: BusEvent, on db: (any GatehouseDatabase)?) async throws {
        let payload = try EventBusLimits.encode(event)
        let sql = db ?? database.db
        try await sql.raw("SELECT pg_notify(\(bind: channel), \(bind: payload))").run()
    }

    /// Several events go in as few notifications as fit (a JSON array each, within the payload
    /// limit): a notification costs PostgreSQL and every listening instance the same however
    /// much it carries, and a batch of payments tells of hundreds.
    package func publish(_ events: [BusEvent], on db: (any GatehouseDatabase)?) async throws {
        guard !events.isEmpty else { return }
        let sql = db ?? database.db
        _ = try await sql.preparedRows("SELECT \(try notifications(events))")
    }

    /// The expression that publishes `events` (for a select list; a caller's transaction runs it):
    /// a `pg_notify` per notification, in order, over one array, so that its text is the same
    /// however many there are (`PreparedStatements`).
    package func notifications(_ events: [BusEvent]) throws -> SQLQueryString {
        "(SELECT count(pg_notify(\(bind: channel), p)) FROM unnest(\(bind: try EventBusLimits.pack(events))::text[]) AS p)"
    }

    package func subscribe(topic: String, account: UUID?, _ handler: @escaping @Sendable (BusEvent) -> Void) -> BusSubscription {
        subscribers.subscribe(topic: topic, account: account, handler)
    }

    package func onGap(_ handler: @escaping @Sendable () -> Void) { subscribers.onGap(handler) }

    /// Listens until the server shuts down, reconnecting whenever the connection is lost.
    package func run() async throws {
        await BusListener.run(logger: logger, connected: connected, beforeFirst: { [database] stopping in
            await database.waitUntilReady(unless: stopping)
        }, listenOnce: { stopping, onListening in
            try await self.listenOnce(stopping: stopping, onListening: onListening)
        }, interrupt: {
            if let connection = self.current.withLockedValue({ $0 }) {
                Task { try? await connection.close() }
            }
        })
    }

    private func listenOnce(stopping: NIOLockedValueBox<Bool>, onListening: @Sendable () -> Void) async throws {
        let connection = try await PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration, id: 0, logger: logger
        ).get()
        // Shutdown closes the connection, which ends the notification sequence.
        current.withLockedValue { $0 = connection }
        defer { current.withLockedValue { $0 = nil } }
        if stopping.withLockedValue({ $0 }) { try? await connection.close(); return }
        let nonce = UUID().uuidString
        proof.withLockedValue { $0 = Proof(nonce: nonce) }
        defer { proof.withLockedValue { $0 = Proof() } }
        do {
            try await connection.listen(on: channel) { notifications in
                connected.withLockedValue { $0 = true }
                onListening()
                subscribers.gap()  // whatever happened before this moment is in the database
                let beating = heartbeat > .zero ? Task {
                    guard await self.beat(nonce: nonce) else { return }
                    // Silent: the notification sequence ends with the connection, and the listener connects again.
                    try? await connection.close()
                } : nil
                defer { beating?.cancel() }
                let wanted: (String, UUID?) -> Bool = { [subscribers] topic, account in
                    topic == BusTopic.heartbeat || subscribers.listens(topic: topic, account: account)
                }
                for try await notification in notifications {
                    guard let events = EventBusLimits.unpack(notification.payload, wanted: wanted) else {
                        logger.warning("event bus: unreadable notification dropped")
                        continue
                    }
                    for event in events {
                        if event.topic == BusTopic.heartbeat { heard(event.body, nonce: nonce) } else { subscribers.dispatch(event) }
                    }
                }
            }
        } catch {
            try? await connection.close()
            throw error
        }
        try? await connection.close()
    }

    /// Sends this connection's heartbeats until cancelled (false), each one's moment kept until it
    /// comes back, or until one the database took has stayed away for `silence` (true). A heartbeat
    /// the database did not take (the pool busy, the database away) says nothing of the listener.
    private func beat(nonce: String) async -> Bool {
        // Enough kept to see the oldest one the database took outstay `silence`.
        let kept = min(10_000, Int(silence / heartbeat) + 16)
        while !Task.isCancelled {
            let seq = proof.withLockedValue { proof -> UInt64 in
                defer { proof.next += 1 }
                proof.sent[proof.next] = (.now, false)
                if proof.sent.count > kept, let oldest = proof.sent.keys.min() { proof.sent[oldest] = nil }
                return proof.next
            }
            do {
                try await publish(BusEvent(topic: BusTopic.heartbeat, body: "\(nonce) \(seq)"), on: nil)
                proof.withLockedValue { $0.sent[seq]?.taken = true }
            } catch {
                logger.debug("event bus: heartbeat not sent", metadata: ["error": "\(String(reflecting: error))"])
            }
            let now = ContinuousClock.now
            let waited = proof.withLockedValue { $0.sent.values.filter(\.taken).map { now - $0.at }.max() }
            if let waited, waited > silence {
                logger.warning("event bus: the listener hears nothing (its heartbeat has not come back for \(waited)); connecting again")
                return true
            }
            try? await Task.sleep(for: heartbeat)
        }
        return false
    }

    /// A heartbeat heard: if it is this connection's, everything committed before it was sent is here.
    private func heard(_ body: String, nonce: String) {
        let parts = body.split(separator: " ")
        guard parts.count == 2, parts[0] == nonce, let seq = UInt64(parts[1]) else { return }
        proof.withLockedValue { proof in
            guard proof.nonce == nonce, let sent = proof.sent[seq]?.at else { return }
            proof.sent = proof.sent.filter { $0.key > seq }
            if proof.through.map({ sent > $0 }) ?? true { proof.through = sent }
        }
    }
}
