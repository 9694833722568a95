import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// A real HTTP server on loopback that records what it receives: the SMS gateway of the tests.
final class HTTPReceiver: @unchecked Sendable {
    struct Received: Sendable {
        var method: String
        var uri: String
        var headers: [String: String]
        var body: String
    }

    private let lock = NSLock()
    private var _received: [Received] = []
    private var _arrived = 0
    private var task: Task<Void, any Error>?
    private(set) var port: Int = 0
    let status: HTTPResponse.Status
    let answer: String
    let delay: Duration

    init(status: HTTPResponse.Status = .ok, answer: String = #"{"status":"queued"}"#, delay: Duration = .zero) {
        self.status = status
        self.answer = answer
        self.delay = delay
    }

    /// Requests answered, after `delay`.
    var received: [Received] { lock.withLock { _received } }
    /// Requests that have arrived, answered or still waiting out `delay`.
    var arrived: Int { lock.withLock { _arrived } }

    func header(_ request: Received, _ name: String) -> String? { request.headers[name.lowercased()] }

    /// Starts listening (on `port`, or a free one) and returns the port.
    @discardableResult
    func start(port requested: Int = 0) async throws -> Int {
        let router = Router()
        let handler: @Sendable (Request, BasicRequestContext) async throws -> Response = { [self] request, _ in
            let body = try await request.body.collect(upTo: 1 << 20)
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName] = field.value }
            lock.withLock { _arrived += 1 }
            if delay > .zero { try await Task.sleep(for: delay) }
            lock.withLock {
                _received.append(Received(method: request.method.rawValue, uri: request.uri.description, headers: headers, body: String(buffer: body)))
            }
            return Response(status: status, body: .init(byteBuffer: ByteBuffer(string: answer)))
        }
        router.post("**", use: handler)
        router.get("**", use: handler)
        router.put("**", use: handler)
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "http-receiver")
        logger.logLevel = .error
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: requested)),
            onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) },
            logger: logger
        )
        task = Task { try await app.runService(gracefulShutdownSignals: []) }
        var iterator = stream.makeAsyncIterator()
        port = await iterator.next() ?? 0
        return port
    }

    func stop() async {
        task?.cancel()
        _ = try? await task?.value
        task = nil
    }
}
