import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(WSClient)
import Logging
import WSClient
#endif

/// An open WebSocket connection carrying text frames.
public protocol WebSocketConnection: Sendable {
    /// Sends one text frame.
    func send(_ text: String) async throws
    /// The next text frame, or nil once the connection closed.
    func receive() async throws -> String?
    /// Closes the connection.
    func close() async
}

/// Opens WebSocket connections. ``WebSocketTransports/default`` picks the platform's.
public protocol WebSocketTransport: Sendable {
    /// Connects to `url` (`ws://` or `wss://`).
    func connect(to url: URL) async throws -> any WebSocketConnection
}

/// The platform's WebSocket transports.
public enum WebSocketTransports {
    /// `URLSessionWebSocketTask` on Apple platforms; swift-websocket's NIO client on Linux,
    /// where `URLSessionWebSocketTask` is not supported.
    public static var `default`: any WebSocketTransport {
        #if canImport(WSClient)
        return NIOWebSocketTransport()
        #else
        return URLSessionWebSocketTransport()
        #endif
    }
}

#if !canImport(FoundationNetworking)
/// WebSockets through `URLSessionWebSocketTask` (Apple platforms).
public struct URLSessionWebSocketTransport: WebSocketTransport {
    /// Creates the transport.
    public init() {}

    public func connect(to url: URL) async throws -> any WebSocketConnection {
        let task = URLSession.shared.webSocketTask(with: url)
        task.resume()
        return Connection(task: task)
    }

    final class Connection: WebSocketConnection, @unchecked Sendable {
        let task: URLSessionWebSocketTask
        init(task: URLSessionWebSocketTask) { self.task = task }

        func send(_ text: String) async throws { try await task.send(.string(text)) }

        func receive() async throws -> String? {
            do {
                switch try await task.receive() {
                case .string(let text): return text
                case .data(let data): return String(decoding: data, as: UTF8.self)
                @unknown default: return nil
                }
            } catch {
                if task.closeCode != .invalid { return nil }
                throw error
            }
        }

        func close() async { task.cancel(with: .normalClosure, reason: nil) }
    }
}
#endif

#if canImport(WSClient)
/// WebSockets through swift-websocket's NIO client (Linux).
public struct NIOWebSocketTransport: WebSocketTransport {
    /// Creates the transport.
    public init() {}

    public func connect(to url: URL) async throws -> any WebSocketConnection {
        let connection = Connection()
        let (opened, openedContinuation) = AsyncStream.makeStream(of: Result<Void, any Error>.self)
        var logger = Logger(label: "gatehouse.websocket")
        logger.logLevel = .critical
        let run = Task {
            do {
                _ = try await WebSocketClient.connect(url: url.absoluteString, logger: logger) { inbound, outbound, _ in
                    openedContinuation.yield(.success(()))
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            for try await message in inbound.messages(maxSize: 1 << 20) {
                                if case .text(let text) = message { connection.incoming.yield(text) }
                            }
                        }
                        group.addTask {
                            for await text in connection.outgoing { try await outbound.write(.text(text)) }
                            try await outbound.close(.normalClosure, reason: nil)
                        }
                        try await group.next()
                        group.cancelAll()
                    }
                }
                openedContinuation.yield(.failure(URLError(.networkConnectionLost)))
            } catch {
                openedContinuation.yield(.failure(error))
            }
            connection.incoming.finish()
        }
        connection.run = run
        var iterator = opened.makeAsyncIterator()
        switch await iterator.next() {
        case .success?: return connection
        case .failure(let error)?: throw error
        case nil: throw URLError(.cannotConnectToHost)
        }
    }

    final class Connection: WebSocketConnection, @unchecked Sendable {
        let (incomingStream, incoming) = AsyncThrowingStream.makeStream(of: String.self)
        let (outgoing, outgoingContinuation) = AsyncStream.makeStream(of: String.self)
        private let lock = NSLock()
        private var iterator: AsyncThrowingStream<String, any Error>.AsyncIterator?
        var run: Task<Void, Never>?

        func send(_ text: String) async throws {
            if case .terminated = outgoingContinuation.yield(text) { throw URLError(.networkConnectionLost) }
        }

        func receive() async throws -> String? {
            // One reader at a time (the gateway client's reader task).
            var it = lock.withLock { iterator ?? incomingStream.makeAsyncIterator() }
            let next = try await it.next()
            lock.withLock { iterator = it }
            return next
        }

        func close() async {
            outgoingContinuation.finish()
            _ = await run?.value
        }
    }
}
#endif
