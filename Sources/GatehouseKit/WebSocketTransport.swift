import Foundation
import GatehouseAPI
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(NIOWebSocket)
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
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
    /// `URLSessionWebSocketTask` on Apple platforms; swift-nio's WebSocket codec on Linux,
    /// where `URLSessionWebSocketTask` is not supported.
    public static var `default`: any WebSocketTransport {
        #if canImport(NIOWebSocket)
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

    /// Opens a WebSocket to `url` (the server's realtime endpoint), with the SDK's `User-Agent`.
    public func connect(to url: URL) async throws -> any WebSocketConnection {
        var request = URLRequest(url: url)
        request.setValue(GatehouseVersion.userAgent, forHTTPHeaderField: "User-Agent")
        let task = URLSession.shared.webSocketTask(with: request)
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

#if canImport(NIOWebSocket)
/// WebSockets through swift-nio's own HTTP upgrade and frame codec (Linux, where Foundation's
/// `URLSessionWebSocketTask` needs a libcurl built with WebSockets, which distributions do not ship).
///
/// Plain `ws://` only: TLS would bring NIOSSL into every app that adds the SDK. On Linux, reach a
/// `wss://` server through a transport of your own (this protocol) or a TLS-terminating proxy;
/// Apple platforms use `URLSessionWebSocketTransport`, TLS included.
public struct NIOWebSocketTransport: WebSocketTransport {
    /// The largest message accepted from the server (1 MiB).
    public var maxMessageBytes: Int
    /// How long the server may take to answer the upgrade, and to answer a close, before the
    /// connection is cut.
    public var answerTimeout: Duration

    /// Creates the transport.
    public init(maxMessageBytes: Int = 1 << 20, answerTimeout: Duration = .seconds(5)) {
        self.maxMessageBytes = maxMessageBytes
        self.answerTimeout = answerTimeout
    }

    /// Opens a WebSocket to `url` (the server's realtime endpoint), with the SDK's `User-Agent`.
    public func connect(to url: URL) async throws -> any WebSocketConnection {
        guard url.scheme?.lowercased() == "ws", let host = url.host, !host.isEmpty else {
            throw GatehouseClientError.transport(
                "The SDK's Linux WebSocket client speaks ws:// only; \(url.scheme ?? "this") needs a WebSocketTransport of your own")
        }
        let port = url.port ?? 80
        var target = url.path.isEmpty ? "/" : url.path
        if let query = url.query { target += "?" + query }
        var headers = HTTPHeaders()
        let hostName = host.contains(":") ? "[\(host)]" : host  // an IPv6 literal
        headers.add(name: "Host", value: url.port.map { "\(hostName):\($0)" } ?? hostName)
        headers.add(name: "Content-Length", value: "0")
        headers.add(name: "User-Agent", value: GatehouseVersion.userAgent)
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: target, headers: headers)
        let maxBytes = maxMessageBytes
        let timeout = TimeAmount.nanoseconds(Int64(answerTimeout.components.seconds) * 1_000_000_000
            + answerTimeout.components.attoseconds / 1_000_000_000)

        let upgraded: EventLoopFuture<Upgrade> = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(10))
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    // A server that never answers the upgrade: the connection closes, failing the wait.
                    let deadline = channel.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
                    let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(maxFrameSize: maxBytes) { channel, _ in
                        deadline.cancel()
                        return channel.eventLoop.makeCompletedFuture {
                            // Fragmented messages arrive whole.
                            try channel.pipeline.syncOperations.addHandler(NIOWebSocketFrameAggregator(
                                minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 1 << 12, maxAccumulatedFrameSize: maxBytes))
                            return .upgraded(try NIOAsyncChannel<WebSocketFrame, WebSocketFrame>(wrappingChannelSynchronously: channel))
                        }
                    }
                    let configuration = NIOTypedHTTPClientUpgradeConfiguration<Upgrade>(
                        upgradeRequestHead: head, upgraders: [upgrader],
                        notUpgradingCompletionHandler: { channel in
                            deadline.cancel()
                            channel.close(promise: nil)
                            return channel.eventLoop.makeCompletedFuture { .refused }
                        })
                    return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
                        configuration: .init(upgradeConfiguration: configuration))
                }
            }
        switch try await upgraded.get() {
        case .refused:
            throw GatehouseClientError.transport("The server refused the WebSocket upgrade")
        case .upgraded(let channel):
            return Connection(channel: channel, closeTimeout: answerTimeout)
        }
    }

    enum Upgrade: Sendable {
        case upgraded(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case refused
    }

    /// One connection: a task runs the channel, reading frames (answering pings and the server's
    /// close) into one stream and writing what `send` queued, masked as RFC 6455 requires of a client.
    final class Connection: WebSocketConnection, @unchecked Sendable {
        private let (incomingStream, incoming) = AsyncThrowingStream.makeStream(of: String.self)
        private let (outgoing, outgoingContinuation) = AsyncStream.makeStream(of: WebSocketFrame.self)
        private let lock = NSLock()
        private var iterator: AsyncThrowingStream<String, any Error>.AsyncIterator?
        private var run: Task<Void, Never>?
        private let channel: any Channel
        private let closeTimeout: Duration

        init(channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, closeTimeout: Duration) {
            self.channel = channel.channel
            self.closeTimeout = closeTimeout
            let (incoming, outgoing, queue) = (self.incoming, self.outgoing, self.outgoingContinuation)
            run = Task {
                do {
                    try await channel.executeThenClose { inbound, outbound in
                        try await withThrowingTaskGroup(of: Void.self) { group in
                            group.addTask {
                                for await frame in outgoing { try await outbound.write(frame) }
                            }
                            group.addTask {
                                for try await frame in inbound {
                                    switch frame.opcode {
                                    case .text, .binary:
                                        incoming.yield(String(buffer: frame.unmaskedData))
                                    case .ping:
                                        queue.yield(Self.frame(.pong, frame.unmaskedData))
                                    case .connectionClose:
                                        // Echo the status code, then the connection is over.
                                        var data = frame.unmaskedData
                                        queue.yield(Self.frame(.connectionClose, data.readSlice(length: min(2, data.readableBytes)) ?? ByteBuffer()))
                                        queue.finish()
                                        return
                                    default:
                                        break
                                    }
                                }
                                queue.finish()
                            }
                            // The writer ends after a close (ours or the echo of the server's); the
                            // reader when the server ends the connection.
                            try await group.next()
                            try await group.next()
                        }
                    }
                    incoming.finish()
                } catch is CancellationError {
                    // `close` cut a connection whose server never answered: over, not failed.
                    queue.finish()
                    incoming.finish()
                } catch {
                    queue.finish()
                    incoming.finish(throwing: error)
                }
            }
        }

        static func frame(_ opcode: WebSocketOpcode, _ data: ByteBuffer) -> WebSocketFrame {
            WebSocketFrame(fin: true, opcode: opcode, maskKey: .random(), data: data)
        }

        func send(_ text: String) async throws {
            if case .terminated = outgoingContinuation.yield(Self.frame(.text, ByteBuffer(string: text))) {
                throw URLError(.networkConnectionLost)
            }
        }

        func receive() async throws -> String? {
            // One reader at a time (the gateway client's reader task).
            var it = lock.withLock { iterator ?? incomingStream.makeAsyncIterator() }
            let next = try await it.next()
            lock.withLock { iterator = it }
            return next
        }

        func close() async {
            var code = ByteBuffer()
            code.write(webSocketErrorCode: .normalClosure)
            outgoingContinuation.yield(Self.frame(.connectionClose, code))
            outgoingContinuation.finish()
            // The server answers the close and ends the connection; one that does not is cut off.
            let (run, channel, timeout) = (self.run, self.channel, closeTimeout)
            let deadline = Task {
                guard (try? await Task.sleep(for: timeout)) != nil else { return }  // answered in time
                channel.close(promise: nil)
                run?.cancel()
            }
            _ = await run?.value
            deadline.cancel()
        }
    }
}
#endif
