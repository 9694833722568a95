import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A bare TCP connection to a test server: the bytes a slow, broken or hostile client sends, and
/// everything the server answers, including whether it closed the connection.
struct RawConnection: Sendable {
    let channel: any Channel
    private let received: NIOLockedValueBox<String>
    private let receivedBytes: NIOLockedValueBox<[UInt8]>

    /// `source`: another loopback address to connect from (Linux routes all of 127/8 to the
    /// loopback), for tests that count connections per client address apart from the harness's own.
    static func open(port: Int, from source: String? = nil) async throws -> RawConnection {
        let received = NIOLockedValueBox("")
        let bytes = NIOLockedValueBox<[UInt8]>([])
        var bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        if let source { bootstrap = bootstrap.bind(to: try SocketAddress(ipAddress: source, port: 0)) }
        let channel = try await bootstrap
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Collector(received: received, bytes: bytes))
                }
            }
            .connect(host: "127.0.0.1", port: port)
            .get()
        return RawConnection(channel: channel, received: received, receivedBytes: bytes)
    }

    func send(_ text: String) async throws {
        try await channel.writeAndFlush(ByteBuffer(string: text)).get()
    }

    func send(bytes: [UInt8]) async throws {
        try await channel.writeAndFlush(ByteBuffer(bytes: bytes)).get()
    }

    /// Every byte the server has sent so far.
    var bytes: [UInt8] { receivedBytes.withLockedValue { $0 } }

    /// Whether the connection is still open (the server has not closed it).
    var isOpen: Bool { channel.isActive }

    /// What the server has sent so far.
    var text: String { received.withLockedValue { $0 } }

    /// Waits for the server to close the connection, at most `limit`; whether it did. After the
    /// limit the connection is closed from this side.
    func closedByServer(within limit: Duration) async -> Bool {
        let timedOut = NIOLockedValueBox(false)
        let channel = self.channel
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await channel.closeFuture.get() }
            group.addTask {
                do {
                    try await Task.sleep(for: limit)
                    timedOut.withLockedValue { $0 = true }
                    try? await channel.close().get()
                } catch {}   // cancelled: the server closed first
            }
            await group.next()
            group.cancelAll()
        }
        return !timedOut.withLockedValue { $0 }
    }

    func close() async {
        try? await channel.close().get()
    }

    private final class Collector: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let received: NIOLockedValueBox<String>
        let bytes: NIOLockedValueBox<[UInt8]>
        init(received: NIOLockedValueBox<String>, bytes: NIOLockedValueBox<[UInt8]>) {
            self.received = received
            self.bytes = bytes
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data)
            bytes.withLockedValue { $0 += buffer.readableBytesView }
            let text = buffer.readString(length: buffer.readableBytes) ?? ""
            received.withLockedValue { $0 += text }
        }
    }
}
