import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends one HTTP request. Inject your own to add logging, pinning or a mock in previews.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the body and response, or throws a transport error.
    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse)
}

/// The default transport: `URLSession` (FoundationNetworking on Linux).
public struct URLSessionTransport: HTTPTransport {
    private let session: URLSession

    /// - Parameter timeout: seconds a request may take before it fails.
    public init(timeout: TimeInterval = 30) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout
        configuration.httpCookieAcceptPolicy = .never
        self.session = URLSession(configuration: configuration)
    }

    /// Uses an existing session.
    public init(session: URLSession) {
        self.session = session
    }

    /// Sends the request through `URLSession` (see ``HTTPTransport``).
    public func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else {
            throw GatehouseClientError.transport("not an HTTP response")
        }
        return (data, http)
    }
}
