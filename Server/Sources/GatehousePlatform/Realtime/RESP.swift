import Foundation
import GatehouseFoundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A value of Redis's protocol, RESP2 (the Redis serialization protocol: simple strings, errors,
/// integers, bulk strings and arrays; a null bulk string or array is `.null`).
package enum RESPValue: Equatable, Sendable {
    case simple(String)
    case error(String)
    case integer(Int64)
    case bulk([UInt8])
    case array([RESPValue])
    case null

    /// A bulk or simple string's text.
    package var text: String? {
        switch self {
        case .bulk(let bytes): String(decoding: bytes, as: UTF8.self)
        case .simple(let text): text
        default: nil
        }
    }
}

/// Writes commands and reads values of RESP2.
package enum RESP {
    /// A command as the protocol sends it: an array of bulk strings.
    package static func command(_ parts: [String], into buffer: inout ByteBuffer) {
        buffer.writeString("*\(parts.count)\r\n")
        for part in parts {
            buffer.writeString("$\(part.utf8.count)\r\n")
            buffer.writeString(part)
            buffer.writeString("\r\n")
        }
    }

    package enum DecodingError: Error, Equatable {
        case unknownType(UInt8)
        case malformed(String)
    }

    /// The next whole value in `buffer`, consumed; nil (nothing consumed) when it has not all arrived.
    package static func read(from buffer: inout ByteBuffer) throws -> RESPValue? {
        var copy = buffer
        guard let value = try parse(&copy, depth: 0) else { return nil }
        buffer = copy
        return value
    }

    /// The deepest nesting of arrays read (Redis's own replies nest two or three levels).
    private static let maxDepth = 32
    /// The largest bulk string or array read: a reply beyond it is a broken stream, not data.
    private static let maxLength = 512 * 1024 * 1024

    private static func parse(_ buffer: inout ByteBuffer, depth: Int) throws -> RESPValue? {
        guard depth <= maxDepth else { throw DecodingError.malformed("arrays nested too deep") }
        guard let type: UInt8 = buffer.readInteger(), let line = readLine(&buffer) else { return nil }
        switch type {
        case UInt8(ascii: "+"): return .simple(line)
        case UInt8(ascii: "-"): return .error(line)
        case UInt8(ascii: ":"):
            guard let value = Int64(line) else { throw DecodingError.malformed("integer \(line.prefix(20))") }
            return .integer(value)
        case UInt8(ascii: "$"):
            guard let length = Int(line), length >= -1, length <= maxLength else { throw DecodingError.malformed("bulk length \(line.prefix(20))") }
            if length == -1 { return .null }
            guard buffer.readableBytes >= length + 2, let bytes = buffer.readBytes(length: length) else { return nil }
            guard buffer.readBytes(length: 2) == [13, 10] else { throw DecodingError.malformed("bulk string without CRLF") }
            return .bulk(bytes)
        case UInt8(ascii: "*"):
            guard let count = Int(line), count >= -1, count <= maxLength else { throw DecodingError.malformed("array length \(line.prefix(20))") }
            if count == -1 { return .null }
            var items: [RESPValue] = []
            items.reserveCapacity(min(count, 64))
            for _ in 0..<count {
                guard let item = try parse(&buffer, depth: depth + 1) else { return nil }
                items.append(item)
            }
            return .array(items)
        default:
            throw DecodingError.unknownType(type)
        }
    }

    /// A line up to CRLF, consumed with it; nil when the CRLF has not arrived.
    private static func readLine(_ buffer: inout ByteBuffer) -> String? {
        let view = buffer.readableBytesView
        guard let cr = view.firstIndex(of: 13), view.index(after: cr) < view.endIndex, view[view.index(after: cr)] == 10 else { return nil }
        let length = cr - view.startIndex
        let line = buffer.readString(length: length)
        buffer.moveReaderIndex(forwardBy: 2)
        return line
    }
}

/// Decodes a stream of RESP values.
private struct RESPDecoder: ByteToMessageDecoder {
    typealias InboundOut = RESPValue

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let value = try RESP.read(from: &buffer) else { return .needMoreData }
        context.fireChannelRead(Self.wrapInboundOut(value))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        try decode(context: context, buffer: &buffer)
    }
}

/// Hands each reply to the command that waits for it, in order (Redis answers commands in the
/// order they came); in subscriber mode, hands the pushes (`message`) to `onPush`.
private final class RESPReplies: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = RESPValue

    // Touched only on the channel's event loop.
    private var waiting: CircularBuffer<EventLoopPromise<RESPValue>> = []
    private let onPush: (@Sendable (RESPValue) -> Void)?
    private let onClose: @Sendable () -> Void

    init(onPush: (@Sendable (RESPValue) -> Void)?, onClose: @escaping @Sendable () -> Void) {
        self.onPush = onPush
        self.onClose = onClose
    }

    func expect(_ promise: EventLoopPromise<RESPValue>) { waiting.append(promise) }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let value = unwrapInboundIn(data)
        if let onPush, case .array(let items) = value, items.first?.text == "message" {
            onPush(value)
            return
        }
        if let promise = waiting.popFirst() { promise.succeed(value) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(RESPConnection.Failure.closed)
        onClose()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error)
        context.close(promise: nil)
    }

    private func fail(_ error: any Error) {
        while let promise = waiting.popFirst() { promise.fail(error) }
    }
}

/// One connection to a Redis server: commands answered in order, or (`onPush`) a subscriber's
/// connection whose `message` pushes go to the handler. No pooling, no cluster: the event bus
/// needs one connection to publish and one to listen.
package final class RESPConnection: Sendable {
    package enum Failure: Error, Equatable {
        case closed
        /// The server answered an error (`-ERR …`).
        case server(String)
        case unexpected(String)
    }

    /// Where a Redis server is (parsed once, by the configuration's own rule).
    package typealias Address = RedisAddress

    private let channel: any Channel
    private let replies: RESPReplies

    private init(channel: any Channel, replies: RESPReplies) {
        self.channel = channel
        self.replies = replies
    }

    /// Connects, authenticates when the address has a password, and selects its database.
    package static func connect(to address: Address, timeout: TimeAmount = .seconds(5), onPush: (@Sendable (RESPValue) -> Void)? = nil,
                                onClose: @escaping @Sendable () -> Void = {}) async throws -> RESPConnection {
        let replies = RESPReplies(onPush: onPush, onClose: onClose)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(timeout)
            .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(RESPDecoder()))
                    try channel.pipeline.syncOperations.addHandler(replies)
                }
            }
            .connect(host: address.host, port: address.port).get()
        let connection = RESPConnection(channel: channel, replies: replies)
        do {
            if let password = address.password {
                try await connection.expectOK(connection.send(address.user.map { ["AUTH", $0, password] } ?? ["AUTH", password]))
            }
            if address.database != 0 { try await connection.expectOK(connection.send(["SELECT", String(address.database)])) }
        } catch {
            try? await connection.close()
            throw error
        }
        return connection
    }

    /// Sends a command and waits for its reply (a server error throws `.server`).
    package func send(_ parts: [String]) async throws -> RESPValue {
        try await sendAll([parts])[0]
    }

    /// Sends commands in one write and waits for their replies, in order.
    package func sendAll(_ commands: [[String]]) async throws -> [RESPValue] {
        let loop = channel.eventLoop
        var buffer = channel.allocator.buffer(capacity: 64 * commands.count)
        for parts in commands { RESP.command(parts, into: &buffer) }
        let promises = commands.map { _ in loop.makePromise(of: RESPValue.self) }
        let (replies, channel, data) = (self.replies, self.channel, buffer)
        loop.execute {
            for promise in promises { replies.expect(promise) }
            channel.writeAndFlush(data).whenFailure { error in
                for promise in promises { promise.fail(error) }
            }
        }
        var values: [RESPValue] = []
        for promise in promises {
            let value = try await promise.futureResult.get()
            if case .error(let message) = value { throw Failure.server(message) }
            values.append(value)
        }
        return values
    }

    private func expectOK(_ value: RESPValue) throws {
        guard value == .simple("OK") else { throw Failure.unexpected("\(value)") }
    }

    package var isActive: Bool { channel.isActive }

    package func close() async throws {
        try await channel.close()
    }
}
