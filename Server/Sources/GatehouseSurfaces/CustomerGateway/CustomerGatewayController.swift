import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import Logging
import NIOConcurrencyHelpers

/// `ws(s)://HOST/customer-gateway/customer` on the `WebSocketHost`: every text frame is a request
/// answered by `sequence_id` (several may be in flight); admission, frame limits, pings, the idle
/// timeout and shutdown are the host's.
package struct CustomerGatewayEndpoint: WebSocketEndpoint {
    package let proto: CustomerGatewayProtocol
    package let limits: WebSocketLimits
    package let trustForwardedFor: Bool
    package var path: String { CustomerGatewayAPI.path }

    package init(login: LoginService, settings: GatehouseConfiguration.Gateway, trustForwardedFor: Bool, logger: Logger) {
        self.proto = CustomerGatewayProtocol(login: login, settings: settings, logger: logger)
        self.limits = WebSocketLimits(
            maxMessageBytes: settings.maxFrameBytes, pingInterval: settings.pingInterval, idleTimeout: settings.idleTimeout,
            maxConnections: settings.maxConnections, maxInFlightPerConnection: settings.maxInFlightPerConnection,
            closeTimeout: settings.closeTimeout
        )
        self.trustForwardedFor = trustForwardedFor
    }

    package func open(_ opening: WebSocketOpening) async -> (any WebSocketSession)? {
        let values = opening.headers["X-Forwarded-For"]
        let forwarded = values.isEmpty ? nil : values.joined(separator: ", ")
        let ip = ClientAddress.resolve(peer: opening.peerAddress, forwardedFor: forwarded, trustForwardedFor: trustForwardedFor)
        return CustomerGatewaySession(proto: proto, ip: ip)
    }
}

/// One gateway connection: its client address and the login attempts it may still fail.
package final class CustomerGatewaySession: WebSocketSession {
    package let proto: CustomerGatewayProtocol
    package let ip: String?
    package let attempts = GatewayConnectionState()

    package init(proto: CustomerGatewayProtocol, ip: String?) {
        self.proto = proto
        self.ip = ip
    }

    package func respond(to message: WebSocketMessage, on connection: WebSocketConnection) async -> String? {
        switch message {
        case .text(let text): await proto.respond(to: text, connection: attempts, ip: ip)
        case .binary: CustomerGatewayProtocol.binaryFrameError()
        }
    }
}
