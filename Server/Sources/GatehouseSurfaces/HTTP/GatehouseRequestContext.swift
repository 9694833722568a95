import GatehouseAccounts
import GatehouseFoundation
import Foundation
import Hummingbird
import NIOCore

/// The request context of every route: the peer address and, once authenticated, the session.
public struct GatehouseRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The peer's address as the socket reported it when the request began (a closed connection reports none), put
    /// in words only when a route asks: formatting it cost 1% of every request, and most never need it.
    private let peer: SocketAddress?
    /// The peer's IP address.
    package var peerAddress: String? { peer?.ipAddress }
    package var session: AuthenticatedSession?
    /// The session's account as read with it: up to the session cache's TTL old. For answers
    /// that show the account; code that changes the account loads it afresh.
    package var sessionAccount: AccountSnapshot?
    /// The request's id as `EveryRequestMiddleware` answers it (`X-Request-Id`).
    package var requestID: String?
    /// The operation's UUID path parameters, read by its route before the handler runs
    /// (`EndpointRoutes`): a value that is not a UUID has been answered there with the declared 404.
    package var pathIDs: [String: UUID] = [:]

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.peer = source.channel.remoteAddress
    }

    /// The session, or the domain's `unauthorized` error for the surface to map.
    package func requireSession() throws -> AuthenticatedSession {
        guard let session else { throw GatehouseError.unauthorized }
        return session
    }

    /// The operation's UUID path parameter `name` (as declared: `Endpoint.uuid(_:notFound:)`).
    package func id(_ name: String = "id") throws -> UUID {
        guard let id = pathIDs[name] else { throw GatehouseError.notFound(.notFound) }
        return id
    }

    /// The signed-in account for display (see `sessionAccount`), or `unauthorized`.
    package func requireSessionAccount() throws -> AccountSnapshot {
        guard session != nil, let sessionAccount else { throw GatehouseError.unauthorized }
        return sessionAccount
    }
}

extension Request {
    /// The client's address: the peer, or, when the operator says a trusted load balancer sits
    /// in front, the right-most `X-Forwarded-For` entry: the one that balancer appended. Entries
    /// to its left come from the client and can be forged to dodge per-IP limits.
    package func clientIP(context: GatehouseRequestContext, trustForwardedFor: Bool) -> String? {
        clientIP(peer: context.peerAddress, trustForwardedFor: trustForwardedFor)
    }

    /// The client's address for any surface, given the peer the socket reports.
    package func clientIP(peer: String?, trustForwardedFor: Bool) -> String? {
        ClientAddress.resolve(peer: peer, forwardedFor: headers[.init("X-Forwarded-For")!], trustForwardedFor: trustForwardedFor)
    }

    /// The bearer token of the `Authorization` header, if any.
    package var bearerToken: String? {
        guard let value = headers[.authorization] else { return nil }
        // Read as bytes: splitting, lower-casing and trimming the string as characters cost 2.5%
        // of an authenticated read. `Bearer` in any case, a space, the token; spaces and tabs
        // around either are dropped.
        let bytes = value.utf8
        func blank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, blank(bytes[start]) { start = bytes.index(after: start) }
        while start < end, blank(bytes[bytes.index(before: end)]) { end = bytes.index(before: end) }
        for letter in "bearer".utf8 {
            // `| 0x20` lower-cases an ASCII letter; only `B` and `b` become `b`.
            guard start < end, bytes[start] | 0x20 == letter else { return nil }
            start = bytes.index(after: start)
        }
        guard start < end, bytes[start] == UInt8(ascii: " ") else { return nil }
        while start < end, blank(bytes[start]) { start = bytes.index(after: start) }
        return start < end ? String(Substring(bytes[start..<end])) : nil
    }
}

/// The client's address, one rule for every surface: behind a trusted load balancer the last
/// `X-Forwarded-For` entry (the one the balancer added), otherwise the socket's peer.
package enum ClientAddress {
    package static func resolve(peer: String?, forwardedFor: String?, trustForwardedFor: Bool) -> String? {
        if trustForwardedFor, let forwardedFor,
           let last = forwardedFor.split(separator: ",").last?.trimmingCharacters(in: .whitespaces), !last.isEmpty {
            return String(last.prefix(64))
        }
        return peer
    }
}
