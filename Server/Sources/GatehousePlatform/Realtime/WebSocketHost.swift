import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOWebSocket
import ServiceLifecycle

/// The limits of one WebSocket surface.
package struct WebSocketLimits: Sendable {
    /// Largest frame and largest message (fragments together); more closes with 1009.
    package var maxMessageBytes: Int
    /// Ping period; a peer that has not answered the last ping by the next one is closed (1001).
    package var pingInterval: Duration
    /// A connection that sends no data frame for this long is closed (1001).
    package var idleTimeout: Duration
    /// Connections one instance serves on this surface; more are closed with 1013 (try again later).
    package var maxConnections: Int
    /// Messages of one connection handled at once; the connection is not read further meanwhile.
    package var maxInFlightPerConnection: Int
    /// After our close frame, how long the peer has to close its side.
    package var closeTimeout: Duration = .seconds(5)

    package init(maxMessageBytes: Int, pingInterval: Duration, idleTimeout: Duration, maxConnections: Int, maxInFlightPerConnection: Int, closeTimeout: Duration = .seconds(5)) {
        self.maxMessageBytes = maxMessageBytes
        self.pingInterval = pingInterval
        self.idleTimeout = idleTimeout
        self.maxConnections = maxConnections
        self.maxInFlightPerConnection = maxInFlightPerConnection
        self.closeTimeout = closeTimeout
    }
}

/// What a surface sees of an upgrade request.
package struct WebSocketOpening: Sendable {
    package var path: String
    package var query: String?
    package var headers: HTTPHeaders
    package var peerAddress: String?
}

package enum WebSocketMessage: Sendable {
    case text(String)
    case binary(ByteBuffer)
}

/// One connection's application state: what a surface does with its messages.
package protocol WebSocketSession: AnyObject, Sendable {
    /// The connection is open; `connection` takes pushes (`send`) from any thread.
    func opened(_ connection: WebSocketConnection)
    /// One whole message (fragments joined, text checked as UTF-8). The answer, if any, goes back as
    /// one text frame. Up to `maxInFlightPerConnection` of these run at once for one connection.
    func respond(to message: WebSocketMessage, on connection: WebSocketConnection) async -> String?
    /// The connection is gone (called once, on its event loop; never inside the session's own
    /// `send` or `close`, so a session may call those holding a lock `closed` takes).
    func closed()
}

extension WebSocketSession {
    package func opened(_ connection: WebSocketConnection) {}
    package func closed() {}
}

/// A WebSocket surface: a path, its limits and a session per connection.
package protocol WebSocketEndpoint: Sendable {
    var path: String { get }
    var limits: WebSocketLimits { get }
    /// The session of a new connection, or nil to refuse the upgrade (400).
    func open(_ opening: WebSocketOpening) async -> (any WebSocketSession)?
}

/// Every long-lived socket of the server (DESIGN §7 "Realtime"): it upgrades HTTP connections on
/// the paths of its endpoints, then runs the WebSocket protocol itself in one NIO handler per
/// connection — frames, fragments, UTF-8, pings, the close handshake, backpressure, admission,
/// shutdown — and gives each surface whole messages. An idle connection owns no task: its pings
/// and idle timeout run from one timer wheel per event loop (`TimerWheel`).
///
/// Sessions answer messages in tasks of their own, outside the server's structured tasks, so the
/// host is a service: on shutdown it waits (up to `shutdownGrace`) for those tasks before the
/// services after it — the database first — are stopped under them.
package final class WebSocketHost: Service, Sendable {
    package final class Endpoint: Sendable {
        package let endpoint: any WebSocketEndpoint
        package let limits: WebSocketLimits
        package let open = NIOLockedValueBox(0)
        package let work: InFlightWork

        package init(_ endpoint: any WebSocketEndpoint, work: InFlightWork) {
            self.endpoint = endpoint
            self.limits = endpoint.limits
            self.work = work
        }

        /// Counts a new connection; false when the surface is full.
        package func admit() -> Bool {
            open.withLockedValue { count in
                guard count < limits.maxConnections else { return false }
                count += 1
                return true
            }
        }

        package func release() { open.withLockedValue { $0 -= 1 } }
    }

    /// An accepted upgrade, waiting for its pipeline.
    package struct Admission: Sendable {
        package let endpoint: Endpoint
        /// Nil: over the connection cap (the connection is closed with 1013 once upgraded).
        package let session: (any WebSocketSession)?

        package init(endpoint: Endpoint, session: (any WebSocketSession)?) {
            self.endpoint = endpoint
            self.session = session
        }
    }

    package let endpoints: [String: Endpoint]
    /// The largest frame any endpoint takes (the decoder's limit; each endpoint checks its own).
    package let maxFrameBytes: Int
    package let tick: TimeAmount
    package let work = InFlightWork()
    package let shutdownGrace: Duration
    private let wheels = NIOLockedValueBox<[ObjectIdentifier: TimerWheel]>([:])

    package init(endpoints: [any WebSocketEndpoint], shutdownGrace: Duration = .seconds(10)) {
        var byPath: [String: Endpoint] = [:]
        for endpoint in endpoints { byPath[endpoint.path] = Endpoint(endpoint, work: work) }
        self.endpoints = byPath
        self.maxFrameBytes = endpoints.map(\.limits.maxMessageBytes).max() ?? 16_384
        // A deadline fires within one tick of its time: a sixteenth of the shortest interval,
        // between 5 ms and 500 ms.
        let shortest = endpoints.flatMap { [$0.limits.pingInterval, $0.limits.idleTimeout] }.min() ?? .seconds(8)
        let sixteenth = shortest / 16
        let nanos = sixteenth.components.seconds * 1_000_000_000 + sixteenth.components.attoseconds / 1_000_000_000
        self.tick = .nanoseconds(min(max(nanos, 5_000_000), 500_000_000))
        self.shutdownGrace = shutdownGrace
    }

    /// Runs until shutdown, then waits for the sessions' tasks (the HTTP server, stopped before
    /// this service, has already sent every connection its 1001).
    package func run() async throws {
        try? await gracefulShutdown()
        await work.waitUntilIdle(within: shutdownGrace)
    }

    /// Decides an upgrade request: the endpoint for its path opens a session, or nil (400).
    package func admit(_ head: HTTPRequestHead, channel: any Channel) -> EventLoopFuture<Admission?> {
        let (path, query) = Self.split(head.uri)
        guard head.method == .GET, Self.isValidHandshake(head), let endpoint = endpoints[path] else {
            return channel.eventLoop.makeSucceededFuture(nil)
        }
        guard endpoint.admit() else {
            return channel.eventLoop.makeSucceededFuture(Admission(endpoint: endpoint, session: nil))
        }
        let opening = WebSocketOpening(path: path, query: query, headers: head.headers, peerAddress: channel.remoteAddress?.ipAddress)
        let promise = channel.eventLoop.makePromise(of: Admission?.self)
        promise.completeWithTask { [work] in
            work.begin()
            defer { work.end() }
            guard let session = await endpoint.endpoint.open(opening) else {
                endpoint.release()
                return nil
            }
            return Admission(endpoint: endpoint, session: session)
        }
        return promise.futureResult
    }

    /// The timer wheel of an event loop (one per loop, made on first use).
    package func wheel(for loop: any EventLoop) -> TimerWheel {
        wheels.withLockedValue { wheels in
            if let wheel = wheels[ObjectIdentifier(loop)] { return wheel }
            let wheel = TimerWheel(loop: loop, tick: tick)
            wheels[ObjectIdentifier(loop)] = wheel
            return wheel
        }
    }

    /// What RFC 6455 4.2.1 asks of an opening handshake beyond what NIO checks: HTTP/1.1,
    /// `Connection: Upgrade`, and a key that is 16 bytes in base64.
    package static func isValidHandshake(_ head: HTTPRequestHead) -> Bool {
        guard head.version == .http1_1 else { return false }
        let connection = head.headers[canonicalForm: "connection"].map { $0.lowercased() }
        guard connection.contains("upgrade") else { return false }
        let keys = head.headers["sec-websocket-key"]
        guard keys.count == 1, let key = keys.first?.trimmingCharacters(in: .whitespaces),
              let decoded = Data(base64Encoded: key), decoded.count == 16
        else { return false }
        return true
    }

    package static func split(_ uri: String) -> (path: String, query: String?) {
        guard let mark = uri.firstIndex(of: "?") else { return (uri, nil) }
        return (String(uri[..<mark]), String(uri[uri.index(after: mark)...]))
    }
}

/// Deadlines of the connections of one event loop, checked by one repeated task per loop that
/// runs only while some connection waits (a hashed timing wheel: a deadline goes into the slot
/// of its tick; a slot holds deadlines of later rounds too, which stay until their tick).
/// A connection is in the wheel at most once that counts: rescheduling it earlier leaves a stale
/// entry, dropped when its slot comes round. Touched only on its event loop.
package final class TimerWheel: @unchecked Sendable {
    private struct Entry {
        let connection: WebSocketConnection
        let tick: Int64
    }

    private static let slotCount = 512
    package let loop: any EventLoop
    package let tick: TimeAmount
    private var slots: [[Entry]] = Array(repeating: [], count: TimerWheel.slotCount)
    private var processed: Int64
    private var entries = 0
    private var task: RepeatedTask?

    package init(loop: any EventLoop, tick: TimeAmount) {
        self.loop = loop
        self.tick = tick
        self.processed = Self.tickNumber(.now(), tick: tick)
    }

    private static func tickNumber(_ deadline: NIODeadline, tick: TimeAmount) -> Int64 {
        Int64(deadline.uptimeNanoseconds / UInt64(tick.nanoseconds))
    }

    /// Calls `connection.timerFired()` once `deadline` has passed (within one tick).
    package func schedule(_ connection: WebSocketConnection, at deadline: NIODeadline) {
        loop.preconditionInEventLoop()
        let number = max(Self.tickNumber(deadline, tick: tick) + 1, processed + 1)
        if connection.wheelTick != 0, connection.wheelTick <= number { return }  // an earlier call stands
        connection.wheelTick = number
        slots[Int(number % Int64(Self.slotCount))].append(Entry(connection: connection, tick: number))
        entries += 1
        if task == nil {
            task = loop.scheduleRepeatedTask(initialDelay: tick, delay: tick) { [self] _ in advance() }
        }
    }

    private func advance() {
        let now = NIODeadline.now()
        let current = Self.tickNumber(now, tick: tick)
        var steps = 0
        while processed < current, steps < Self.slotCount {
            processed += 1
            steps += 1
            let index = Int(processed % Int64(Self.slotCount))
            if slots[index].isEmpty { continue }
            let due = slots[index]
            slots[index] = []
            for entry in due {
                if entry.tick > current {
                    slots[index].append(entry)  // a later round
                    continue
                }
                entries -= 1
                guard entry.connection.wheelTick == entry.tick else { continue }  // stale
                entry.connection.wheelTick = 0
                entry.connection.timerFired(now: now)
            }
        }
        processed = current
        if entries == 0 {
            task?.cancel()
            task = nil
        }
    }
}

/// Work started outside structured concurrency, counted so that shutdown can wait for it.
package final class InFlightWork: Sendable {
    package init() {}

    private let count = NIOLockedValueBox(0)

    package func begin() { count.withLockedValue { $0 += 1 } }
    package func end() { count.withLockedValue { $0 -= 1 } }
    package var current: Int { count.withLockedValue { $0 } }

    /// Returns when nothing is in flight or `limit` has passed. Polls: it runs once, at shutdown.
    package func waitUntilIdle(within limit: Duration) async {
        let deadline = ContinuousClock.now + limit
        while current > 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }
}
