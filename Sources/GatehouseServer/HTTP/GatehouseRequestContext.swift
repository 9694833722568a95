import Hummingbird
import NIOCore

/// The request context of every route: the peer address and, once authenticated, the session.
public struct GatehouseRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    let peerAddress: String?
    var session: AuthenticatedSession?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.peerAddress = source.channel.remoteAddress?.ipAddress
    }

    /// The session, or the domain's `unauthorized` error for the surface to map.
    func requireSession() throws -> AuthenticatedSession {
        guard let session else { throw GatehouseError.unauthorized }
        return session
    }
}

extension Request {
    /// The client's address: the peer, or the left-most `X-Forwarded-For` entry when the
    /// operator says a trusted load balancer sets it.
    func clientIP(context: GatehouseRequestContext, trustForwardedFor: Bool) -> String? {
        if trustForwardedFor, let forwarded = headers[.init("X-Forwarded-For")!],
           let first = forwarded.split(separator: ",").first?.trimmingCharacters(in: .whitespaces), !first.isEmpty {
            return String(first.prefix(64))
        }
        return context.peerAddress
    }

    /// The bearer token of the `Authorization` header, if any.
    var bearerToken: String? {
        guard let value = headers[.authorization] else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }
}
