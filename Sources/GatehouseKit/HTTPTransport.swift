import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How much of a request's body has gone out: bytes sent, bytes in all.
public typealias UploadProgress = @Sendable (_ sent: Int64, _ total: Int64) -> Void

/// Sends one HTTP request. Inject your own to add logging, pinning or a mock in previews.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the body and response, or throws a transport error.
    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse)
    /// Sends `request` (its body in `httpBody`), reporting the body's progress as it goes out.
    func send(_ request: URLRequest, progress: @escaping UploadProgress) async throws -> (Data, HTTPURLResponse)
}

extension HTTPTransport {
    /// A transport that cannot tell reports the whole body once it is sent.
    public func send(_ request: URLRequest, progress: @escaping UploadProgress) async throws -> (Data, HTTPURLResponse) {
        let answer = try await send(request)
        let total = Int64(request.httpBody?.count ?? 0)
        progress(total, total)
        return answer
    }
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

    /// Uploads the body through `URLSession`'s upload task, whose delegate reports the bytes sent
    /// (on Linux too) (see ``HTTPTransport``).
    public func send(_ request: URLRequest, progress: @escaping UploadProgress) async throws -> (Data, HTTPURLResponse) {
        var bare = request
        let body = bare.httpBody ?? Data()
        bare.httpBody = nil
        let (data, response) = try await session.upload(for: bare, from: body, delegate: ProgressDelegate(progress))
        guard let http = response as? HTTPURLResponse else {
            throw GatehouseClientError.transport("not an HTTP response")
        }
        return (data, http)
    }

    private final class ProgressDelegate: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
        let progress: UploadProgress
        init(_ progress: @escaping UploadProgress) { self.progress = progress }

        func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
                        totalBytesExpectedToSend: Int64) {
            progress(totalBytesSent, totalBytesExpectedToSend)
        }
    }
}
