import Foundation
import GatehouseAPI
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOConcurrencyHelpers
import NIOWebSocket
import ServiceLifecycle

/// The request context of the WebSocket upgrade route.
public struct GatewayRequestContext: RequestContext, WebSocketRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let webSocket: WebSocketHandlerReference<Self>
    let peerAddress: String?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.webSocket = .init()
        self.peerAddress = source.channel.remoteAddress?.ipAddress
    }
}

/// `ws(s)://HOST/customer-gateway/customer`: reads frames, answers each by `sequence_id`
/// (several may be in flight), keeps the connection alive with pings, closes idle ones and
/// closes every connection cleanly when the server stops.
struct CustomerGatewayController: Sendable {
    let services: GatehouseServices
    let connections = NIOLockedValueBox(0)

    func addRoutes(to router: Router<GatewayRequestContext>) {
        let settings = services.configuration.gateway
        let trustForwardedFor = services.configuration.trustForwardedFor
        let proto = CustomerGatewayProtocol(accounts: services.accounts, settings: settings, logger: services.logger)
        let connections = self.connections
        router.ws(RouterPath(CustomerGatewayAPI.path)) { inbound, outbound, context in
            let admitted = connections.withLockedValue { count -> Bool in
                guard count < settings.maxConnections else { return false }
                count += 1
                return true
            }
            guard admitted else {
                try await outbound.close(.unknown(1013), reason: "too many connections, try again later")
                return
            }
            defer { connections.withLockedValue { $0 -= 1 } }
            let ip = context.request.clientIP(peer: context.requestContext.peerAddress, trustForwardedFor: trustForwardedFor)
            let state = GatewayConnectionState()
            let lastActivity = NIOLockedValueBox(ContinuousClock.now)

            try await withGracefulShutdownHandler {
                try await withThrowingTaskGroup(of: Void.self) { connection in
                    // Idle watchdog: a quiet connection is closed with 1001.
                    connection.addTask {
                        while !Task.isCancelled {
                            let idleFor = ContinuousClock.now - lastActivity.withLockedValue { $0 }
                            if idleFor >= settings.idleTimeout {
                                try? await outbound.close(.goingAway, reason: "idle timeout")
                                return
                            }
                            try await Task.sleep(for: settings.idleTimeout - idleFor)
                        }
                    }
                    connection.addTask {
                        // A discarding group: a finished request leaves nothing behind. (A plain
                        // task group keeps every finished child until it is awaited, and with it
                        // the child's task memory: 40 KiB per idle connection after its login.)
                        let slots = RequestSlots(limit: settings.maxInFlightPerConnection)
                        try await withThrowingDiscardingTaskGroup { requests in
                            for try await message in inbound.messages(maxSize: settings.maxFrameBytes) {
                                lastActivity.withLockedValue { $0 = .now }
                                // Backpressure: read no further until an answer went out.
                                await slots.acquire()
                                switch message {
                                case .text(let text):
                                    requests.addTask {
                                        defer { slots.release() }
                                        let answer = await proto.respond(to: text, connection: state, ip: ip)
                                        try await outbound.write(.text(answer))
                                    }
                                case .binary:
                                    requests.addTask {
                                        defer { slots.release() }
                                        try await outbound.write(.text(CustomerGatewayProtocol.binaryFrameError()))
                                    }
                                }
                            }
                        }
                    }
                    // The connection ends when the peer goes (reader done) or it idled out.
                    try await connection.next()
                    connection.cancelAll()
                }
            } onGracefulShutdown: {
                Task { try? await outbound.close(.goingAway, reason: "server shutting down") }
            }
        }
    }
}

/// At most `limit` requests of one connection at once: `acquire` waits for a free slot.
final class RequestSlots: Sendable {
    private struct State {
        var free: Int
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state: NIOLockedValueBox<State>

    init(limit: Int) { state = NIOLockedValueBox(State(free: max(1, limit))) }

    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLockedValue { s -> Bool in
                if s.free > 0 {
                    s.free -= 1
                    return true
                }
                s.waiters.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    func release() {
        let next = state.withLockedValue { s -> CheckedContinuation<Void, Never>? in
            if s.waiters.isEmpty {
                s.free += 1
                return nil
            }
            return s.waiters.removeFirst()  // the slot passes straight to the waiter
        }
        next?.resume()
    }
}
