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
                        try await withThrowingTaskGroup(of: Void.self) { requests in
                            var inFlight = 0
                            for try await message in inbound.messages(maxSize: settings.maxFrameBytes) {
                                lastActivity.withLockedValue { $0 = .now }
                                if inFlight >= settings.maxInFlightPerConnection {
                                    // Backpressure: read no further until an answer went out.
                                    try await requests.next()
                                    inFlight -= 1
                                }
                                inFlight += 1
                                switch message {
                                case .text(let text):
                                    requests.addTask {
                                        let answer = await proto.respond(to: text, connection: state, ip: ip)
                                        try await outbound.write(.text(answer))
                                    }
                                case .binary:
                                    requests.addTask { try await outbound.write(.text(CustomerGatewayProtocol.binaryFrameError())) }
                                }
                            }
                            try await requests.waitForAll()
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
