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

    /// A transport on an ephemeral `URLSession` (no cookies, no cache).
    ///
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
        let session = self.session
        let (data, response) = try await Self.uncancelled { try await session.data(for: request) }
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
        let (session, request, delegate) = (self.session, bare, ProgressDelegate(progress))
        let (data, response) = try await Self.uncancelled { try await session.upload(for: request, from: body, delegate: delegate) }
        guard let http = response as? HTTPURLResponse else {
            throw GatehouseClientError.transport("not an HTTP response")
        }
        return (data, http)
    }

    /// Runs a URLSession call so that cancelling the caller does not cancel the URLSession task
    /// on Linux: FoundationNetworking can deadlock when `URLSessionTask.cancel` (which waits for
    /// the session's queue) meets that task's completion being delivered on the queue (which waits
    /// for the task's lock) — seen as a hung test run when a realtime client was stopped while it
    /// asked whether its session still held. A cancelled caller still ends at once with
    /// `CancellationError`; the request runs out by itself (its answer unread), as a request
    /// already sent does anyway. Apple's URLSession has no such race and cancels as usual.
    private static func uncancelled<T: Sendable>(_ call: @escaping @Sendable () async throws -> T) async throws -> T {
        #if canImport(FoundationNetworking)
        let outcome = Locked(Outcome<T>())
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                if let early = outcome.withLock({ $0.wait(continuation) }) { continuation.resume(with: early); return }
                Task {
                    let result: Result<T, any Error>
                    do { result = .success(try await call()) } catch { result = .failure(error) }
                    outcome.withLock { $0.finish(result) }?.resume(with: result)
                }
            }
        } onCancel: {
            outcome.withLock { $0.finish(.failure(CancellationError())) }?.resume(throwing: CancellationError())
        }
        #else
        return try await call()
        #endif
    }

    /// Who waits for a call and how it ended; the first ending wins.
    private struct Outcome<T: Sendable> {
        var continuation: CheckedContinuation<T, any Error>?
        var ended: Result<T, any Error>?
        var resumed = false

        /// Returns the ending when there is one already (a cancellation before the wait).
        mutating func wait(_ continuation: CheckedContinuation<T, any Error>) -> Result<T, any Error>? {
            if let ended { resumed = true; return ended }
            self.continuation = continuation
            return nil
        }

        /// Returns the continuation to resume with `result`, when nobody has been resumed yet.
        mutating func finish(_ result: Result<T, any Error>) -> CheckedContinuation<T, any Error>? {
            guard !resumed else { return nil }
            guard let continuation else { if ended == nil { ended = result }; return nil }
            resumed = true
            self.continuation = nil
            return continuation
        }
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
