import Foundation
import GatehouseFoundation
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle

/// The event bus on Redis (`GATEHOUSE_EVENT_BUS=redis://…`): PUBLISH on one connection, and one
/// connection per instance SUBSCRIBEd to the bus's channel, handing each message to the
/// subscribers. It takes the notifications off PostgreSQL (whose NOTIFY serialises the commits of
/// notifying transactions and is read by every instance from the primary); the database stays the
/// only source of truth, and the contract is `PostgresEventBus`'s but one:
///
/// - **Delivery follows the publish, not the commit.** Redis sees no transaction, so an event
///   published with a transaction leaves at once rather than on commit. The event log announces
///   after its commit (as on the in-process bus, `EventLog.write`), so a realtime socket never
///   reads before the rows are there; the session cache's "account changed" may arrive just before
///   the commit, and an instance that reads the account again in that moment keeps the old copy
///   for the cache's lifetime at most (`GATEHOUSE_SESSION_CACHE_SECONDS`, ≤ 1 s), as when the
///   bus is down.
/// - **Reconnection is a gap**, as on PostgreSQL: the listener reconnects with backoff, `isConnected`
///   is false meanwhile, and every (re)subscription calls the gap handlers (sockets resume by
///   sequence from the database, caches drop everything).
/// - **A publish that fails** (Redis unreachable) is tried once more on a new connection, then
///   logged and dropped: the write it tells of is committed, and the listeners, which lost Redis
///   too, reconnect through a gap.
/// - **A listener that hears nothing connects again.** The subscribed connection is asked `PING`
///   every third of `silence`; when an answer has not come for `silence`
///   (`GATEHOUSE_EVENT_BUS_SILENCE_SECONDS`), the connection is closed and made again, through a
///   gap, where a half-open connection (a failover behind a proxy, a dropped NAT entry) kept the
///   instance's sockets and caches deaf until the kernel gave up on it, hours by default.
package final class RedisEventBus: EventBus, Service {
    package let subscribers = BusSubscribers()
    package let channel: String
    private let address: RESPConnection.Address
    private let logger: Logger
    private let connected = NIOLockedValueBox(false)
    private let listener = NIOLockedValueBox<RESPConnection?>(nil)
    private let publisher = PublisherConnection()
    private let silence: Duration

    /// `silence`: how long the subscribed connection may leave a `PING` unanswered before it is made again.
    package init(address: RESPConnection.Address, schema: String?, silence: Duration = .seconds(15), logger: Logger) {
        self.address = address
        self.silence = silence
        self.logger = logger
        let suffix = schema.map { ":" + $0 } ?? ""
        self.channel = "gatehouse:events" + suffix
    }

    package var isConnected: Bool { connected.withLockedValue { $0 } }

    package func publish(_ event: BusEvent, on db: (any GatehouseDatabase)?) async throws {
        try await publish([event], on: db)
    }

    /// Several events go in as few messages as `EventBusLimits.pack` makes (the listeners read
    /// PostgreSQL's payloads and these alike), in one write.
    package func publish(_ events: [BusEvent], on db: (any GatehouseDatabase)?) async throws {
        guard !events.isEmpty else { return }
        let commands = try EventBusLimits.pack(events).map { ["PUBLISH", channel, $0] }
        for attempt in 0..<2 {
            do {
                let connection = try await publisher.connection(to: address)
                _ = try await connection.sendAll(commands)
                return
            } catch {
                await publisher.drop()
                if attempt == 1 {
                    logger.warning("event bus: publish to Redis failed, dropped (listeners reconnect through a gap)",
                                   metadata: ["error": "\(String(reflecting: error))"])
                }
            }
        }
    }

    package func subscribe(topic: String, account: UUID?, _ handler: @escaping @Sendable (BusEvent) -> Void) -> BusSubscription {
        subscribers.subscribe(topic: topic, account: account, handler)
    }

    package func onGap(_ handler: @escaping @Sendable () -> Void) { subscribers.onGap(handler) }

    /// Listens until the server shuts down, reconnecting whenever the connection is lost.
    package func run() async throws {
        await BusListener.run(logger: logger, connected: connected, listenOnce: { stopping, onListening in
            try await self.listenOnce(stopping: stopping, onListening: onListening)
        }, interrupt: {
            if let connection = self.listener.withLockedValue({ $0 }) {
                Task { try? await connection.close() }
            }
        })
        await publisher.drop()
    }

    private func listenOnce(stopping: NIOLockedValueBox<Bool>, onListening: @Sendable () -> Void) async throws {
        let closed = AsyncStream<Void>.makeStream()
        let (subscribers, logger) = (self.subscribers, self.logger)
        let connection = try await RESPConnection.connect(to: address, onPush: { push in
            // ["message", channel, payload]
            guard case .array(let items) = push, items.count == 3, let payload = items[2].text,
                  let events = EventBusLimits.unpack(payload, wanted: subscribers.listens) else {
                logger.warning("event bus: unreadable Redis message dropped")
                return
            }
            for event in events { subscribers.dispatch(event) }
        }, onClose: { closed.continuation.finish() })
        listener.withLockedValue { $0 = connection }
        defer { listener.withLockedValue { $0 = nil } }
        if stopping.withLockedValue({ $0 }) { try? await connection.close(); return }
        do {
            _ = try await connection.send(["SUBSCRIBE", channel])
        } catch {
            try? await connection.close()
            throw error
        }
        connected.withLockedValue { $0 = true }
        onListening()
        subscribers.gap()  // whatever happened before this moment is in the database
        let watching = Task { [silence, logger] in
            guard await Self.unanswered(connection, silence: silence) else { return }
            logger.warning("event bus: Redis has not answered the listener's PING for \(silence); connecting again")
            try? await connection.close()
        }
        defer { watching.cancel() }
        for await _ in closed.stream {}
        throw RESPConnection.Failure.closed
    }

    /// Asks `PING` on the subscribed connection every third of `silence` until cancelled (false), or
    /// until no answer has come for `silence` (true). Each `PING` goes in a task of its own: a
    /// reply's promise does not end on a task's cancellation, only on an answer or the connection's end.
    private static func unanswered(_ connection: RESPConnection, silence: Duration) async -> Bool {
        let answered = NIOLockedValueBox(ContinuousClock.now)
        while !Task.isCancelled {
            try? await Task.sleep(for: silence / 3)
            if Task.isCancelled { return false }
            if ContinuousClock.now - answered.withLockedValue({ $0 }) > silence { return true }
            Task {
                if (try? await connection.send(["PING"])) != nil { answered.withLockedValue { $0 = .now } }
            }
        }
        return false
    }
}

/// The connection publishes go through, made when first needed and again after a failure.
private actor PublisherConnection {
    private var current: RESPConnection?

    func connection(to address: RESPConnection.Address) async throws -> RESPConnection {
        if let current, current.isActive { return current }
        let made = try await RESPConnection.connect(to: address)
        // Another publish may have connected meanwhile (the actor is reentrant across the await).
        if let current, current.isActive {
            try? await made.close()
            return current
        }
        current = made
        return made
    }

    func drop() async {
        let old = current
        current = nil
        try? await old?.close()
    }
}
