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
/// Events are delivered to the publishing instance too, through its own listener.
package final class PostgresEventBus: EventBus, Service {
    package let subscribers = BusSubscribers()
    package let channel: String
    private let database: DatabaseProvider
    private let configuration: PostgresConnection.Configuration
    private let logger: Logger
    private let connected = NIOLockedValueBox(false)
    private let current = NIOLockedValueBox<PostgresConnection?>(nil)

    package init(database: DatabaseProvider, configuration: PostgresConnection.Configuration, schema: String?, logger: Logger) {
        self.database = database
        self.configuration = configuration
        self.logger = logger
        // NOTIFY channels are per database, not per schema: instances sharing a schema share a channel.
        let suffix = schema.map { "_" + $0.filter { $0.isLetter || $0.isNumber || $0 == "_" } } ?? ""
        self.channel = String(("gatehouse_events" + suffix).prefix(63))
    }

    package var isConnected: Bool { connected.withLockedValue({ $0 }) }

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
        do {
            try await connection.listen(on: channel) { notifications in
                connected.withLockedValue { $0 = true }
                onListening()
                subscribers.gap()  // whatever happened before this moment is in the database
                for try await notification in notifications {
                    guard let events = EventBusLimits.unpack(notification.payload, wanted: subscribers.listens) else {
                        logger.warning("event bus: unreadable notification dropped")
                        continue
                    }
                    for event in events { subscribers.dispatch(event) }
                }
            }
        } catch {
            try? await connection.close()
            throw error
        }
        try? await connection.close()
    }
}
