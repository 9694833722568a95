import Crypto
import Foundation
import GatehouseKit
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

/// The SDK's Linux WebSocket client (`NIOWebSocketTransport`, swift-nio's codec) against servers
/// that misbehave: one that never answers the upgrade, one that refuses it, one that never answers
/// a close. Each must end (the suite's time limit catches a hang), with an error where there is no connection. (Against
/// Gatehouse itself the transport runs in every realtime, gateway and demo test.)
@Suite("GatehouseKit: the Linux WebSocket transport", .timeLimit(.minutes(1)))
struct WebSocketTransportTests {
    enum Behaviour: Sendable { case silent, refuse, upgradeThenIgnore }

    /// A TCP server on a free loopback port that reads a request head and answers as `behaviour` says.
    final class RawServer: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let behaviour: Behaviour
        var request = ""
        let framesAfterUpgrade = NIOLockedValueBox(0)

        init(_ behaviour: Behaviour) { self.behaviour = behaviour }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data)
            let text = buffer.readString(length: buffer.readableBytes) ?? ""
            guard !request.contains("\r\n\r\n") else {
                framesAfterUpgrade.withLockedValue { $0 += 1 }  // a close frame, say: never answered
                return
            }
            request += text
            guard request.contains("\r\n\r\n") else { return }
            switch behaviour {
            case .silent:
                return
            case .refuse:
                context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")), promise: nil)
            case .upgradeThenIgnore:
                let key = request.split(separator: "\r\n").first { $0.lowercased().hasPrefix("sec-websocket-key:") }
                    .map { String($0.split(separator: ":", maxSplits: 1)[1]).trimmingCharacters(in: .whitespaces) } ?? ""
                let accept = Data(Insecure.SHA1.hash(data: Data((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))).base64EncodedString()
                let answer = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n\r\n"
                context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: answer)), promise: nil)
            }
        }
    }

    func withServer(_ behaviour: Behaviour, _ body: (URL, RawServer) async throws -> Void) async throws {
        let handler = RawServer(behaviour)
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in channel.pipeline.addHandler(handler) }
            .bind(host: "127.0.0.1", port: 0).get()
        defer { server.close(promise: nil) }
        try await body(URL(string: "ws://127.0.0.1:\(server.localAddress!.port!)/socket")!, handler)
    }

    @Test("a server that never answers the upgrade: connect fails after the answer timeout")
    func silentServer() async throws {
        try await withServer(.silent) { url, _ in
            let transport = NIOWebSocketTransport(answerTimeout: .milliseconds(300))
            await #expect(throws: (any Error).self) { _ = try await transport.connect(to: url) }
        }
    }

    @Test("a refused upgrade is a transport error naming the refusal")
    func refusedUpgrade() async throws {
        try await withServer(.refuse) { url, _ in
            do {
                _ = try await NIOWebSocketTransport().connect(to: url)
                Issue.record("connected to a server that refused the upgrade")
            } catch let error as GatehouseClientError {
                #expect(error == .transport("The server refused the WebSocket upgrade"))
            }
        }
    }

    @Test("a server that never answers a close: close returns after the answer timeout, and receive ends")
    func closeNeverAnswered() async throws {
        try await withServer(.upgradeThenIgnore) { url, server in
            let connection = try await NIOWebSocketTransport(answerTimeout: .milliseconds(300)).connect(to: url)
            try await connection.send("hello")
            await connection.close()
            #expect(try await connection.receive() == nil)
            #expect(server.framesAfterUpgrade.withLockedValue { $0 } >= 1)  // the text frame (and the close) reached it
        }
    }

    @Test("wss:// is refused on Linux with a clear error, not attempted in clear text")
    func secureSchemeRefused() async throws {
        do {
            _ = try await NIOWebSocketTransport().connect(to: URL(string: "wss://example.com/socket")!)
            Issue.record("connected to wss:// without TLS")
        } catch let error as GatehouseClientError {
            guard case .transport(let message) = error else { Issue.record("unexpected \(error)"); return }
            #expect(message.contains("ws:// only"))
        }
    }
}
