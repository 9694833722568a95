import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehouseServer
import GatehouseTestSupport
import HummingbirdTesting
import Logging
import NIOCore
import ServiceLifecycle
import Testing

/// A WebSocket client written out byte by byte on a `RawConnection`: it answers nothing by
/// itself (no pongs), so a test sees exactly what the server sends and when it closes.
struct RawWebSocket {
    struct Frame: Equatable {
        var opcode: UInt8
        var payload: [UInt8]
        var closeCode: UInt16? { opcode == 8 && payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil }
        var closeReason: String { String(decoding: payload.dropFirst(2), as: UTF8.self) }
    }

    let connection: RawConnection

    static func open(port: Int, path: String = CustomerGatewayAPI.path) async throws -> RawWebSocket {
        let connection = try await RawConnection.open(port: port)
        try await connection.send("GET \(path) HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        return RawWebSocket(connection: connection)
    }

    /// A masked client frame.
    func send(opcode: UInt8, _ payload: [UInt8], fin: Bool = true) async throws {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        precondition(payload.count < 126)
        bytes.append(0x80 | UInt8(payload.count))
        let mask: [UInt8] = [1, 2, 3, 4]
        bytes += mask
        bytes += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        try await connection.send(bytes: bytes)
    }

    func sendText(_ text: String) async throws { try await send(opcode: 1, Array(text.utf8)) }

    /// The frames received after the 101 answer.
    var frames: [Frame] {
        let bytes = connection.bytes
        guard let end = bytes.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound else { return [] }
        var frames: [Frame] = []
        var i = end
        while i + 2 <= bytes.count {
            let opcode = bytes[i] & 0x0F
            var length = Int(bytes[i + 1] & 0x7F)
            var start = i + 2
            if length == 126 {
                guard start + 2 <= bytes.count else { break }
                length = Int(bytes[start]) << 8 | Int(bytes[start + 1])
                start += 2
            }
            guard start + length <= bytes.count else { break }
            frames.append(Frame(opcode: opcode, payload: Array(bytes[start..<start + length])))
            i = start + length
        }
        return frames
    }

    var head: String { String(decoding: connection.bytes.prefix(12), as: UTF8.self) }

    /// Waits for the server's close frame, answers it as a client must, and waits for the server
    /// to close the socket; the server's close frame.
    func closeHandshake(within limit: Duration = .seconds(10)) async throws -> Frame? {
        guard await eventually(within: limit, { frames.contains { $0.opcode == 8 } }) else { return nil }
        let close = frames.first { $0.opcode == 8 }!
        try? await send(opcode: 8, Array(close.payload.prefix(2)))
        guard await connection.closedByServer(within: limit) else { return nil }
        return close
    }
}

@Suite("WebSocket host")
struct WebSocketHostTests {
    @Test("a peer that does not answer pings is closed with 1001; one that answers is kept")
    func unansweredPings_close() async throws {
        // A pong is due within one interval: two seconds, so that a loaded machine's scheduling (eight tests at once on
        // two cores) does not make the polite peer late. (It was late when two long synchronous tests held both of the
        // test process's threads; those now give them up now and then.)
        try await withApp(.sqlite, configure: { $0.gateway.pingInterval = .seconds(2); $0.gateway.idleTimeout = .seconds(60) }) { app in
            let port = try #require(app.client.port)
            let silent = try await RawWebSocket.open(port: port)
            let polite = try await RawWebSocket.open(port: port)
            // The polite peer answers every ping it gets, until the silent one is gone.
            let answering = Task {
                var answered = 0
                while !Task.isCancelled {
                    let pings = polite.frames.filter { $0.opcode == 9 }
                    for ping in pings.dropFirst(answered) { try await polite.send(opcode: 10, ping.payload) }
                    answered = pings.count
                    try await Task.sleep(for: .milliseconds(10))
                }
            }
            let close = try #require(try await silent.closeHandshake())
            #expect(await eventually { polite.frames.filter { $0.opcode == 9 }.count >= 4 }, "pings go on")
            answering.cancel()
            #expect(silent.head == "HTTP/1.1 101")
            #expect(silent.frames.first?.opcode == 9, "a ping first")
            #expect(close.closeCode == 1001 && close.closeReason == "ping timeout", "\(silent.frames)")
            #expect(polite.connection.isOpen, "the peer that answered is still connected")
            await polite.connection.close()
        }
    }

    @Test("a frame sent in the same packet as the handshake is answered (it reached an HTTP handler and crashed the server once)")
    func frameBehindHandshake_isAnswered() async throws {
        try await withApp(.sqlite) { app in
            let connection = try await RawConnection.open(port: try #require(app.client.port))
            let socket = RawWebSocket(connection: connection)
            let frame = #"{"type":"LOGIN_CUSTOMER","sequence_id":"7","data":{"email":"nobody@example.com","password":"x"}}"#
            var bytes = Array(("GET \(CustomerGatewayAPI.path) HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8)
            bytes += [0x81, 0x80 | UInt8(frame.utf8.count), 0, 0, 0, 0] + Array(frame.utf8)   // mask 0: payload as is
            try await connection.send(bytes: bytes)
            #expect(await eventually { socket.frames.contains { $0.opcode == 1 } })
            let answer = try #require(socket.frames.first { $0.opcode == 1 })
            #expect(String(decoding: answer.payload, as: UTF8.self).contains(#""sequence_id":"7""#))
            await connection.close()
        }
    }

    @Test("a connection failed while its requests hold reading back still reads the client's closing answer: closed at once, not after the close timeout")
    func pipelineThenClose_isClosedPromptly() async throws {
        try await withApp(.sqlite, configure: {
            $0.gateway.maxInFlightPerConnection = 1
            $0.gateway.closeTimeout = .seconds(60)
            $0.limits.loginFailuresPerAccount = 1000
            $0.gateway.failuresPerConnection = 1000
        }) { app in
            let socket = try await RawWebSocket.open(port: try #require(app.client.port))
            #expect(await eventually { socket.head == "HTTP/1.1 101" })
            for n in 0..<30 {
                try await socket.sendText(#"{"type":"LOGIN_CUSTOMER","sequence_id":"\#(n)","data":{"email":"a@b.cd","password":"x"}}"#)
            }
            try await socket.send(opcode: 3, [])   // a reserved opcode: the server fails the connection (1002)
            // The server's close comes while requests are still in flight and reading is held back; the
            // client's answering close must still be read: well within the close timeout of a minute.
            let close = try await socket.closeHandshake(within: .seconds(20))
            #expect(close?.closeCode == 1002)
        }
    }

    @Test("a peer that never answers the server's close frame is dropped after the close timeout")
    func unansweredClose_isDroppedAfterCloseTimeout() async throws {
        try await withApp(.sqlite, configure: { $0.gateway.closeTimeout = .milliseconds(300) }) { app in
            // setup
            let socket = try await RawWebSocket.open(port: try #require(app.client.port))
            #expect(await eventually { socket.head == "HTTP/1.1 101" })
            // MUT: a reserved opcode makes the server fail the connection; this peer never answers.
            try await socket.send(opcode: 3, [])
            // validate
            #expect(await eventually { socket.frames.contains { $0.opcode == 8 } })
            #expect(socket.frames.first { $0.opcode == 8 }?.closeCode == 1002)
            #expect(await socket.connection.closedByServer(within: .seconds(20)), "the server gave up waiting and closed the socket")
        }
    }

    @Test("the connection cap counts open connections: a place freed by a close is taken again")
    func connectionCap_isReleased() async throws {
        try await withApp(.sqlite, configure: { $0.gateway.maxConnections = 2 }) { app in
            let port = try #require(app.client.port)
            let first = try await RawWebSocket.open(port: port)
            let second = try await RawWebSocket.open(port: port)
            // Upgrades are admitted concurrently: the third must come after both, not race them.
            #expect(await eventually { first.head == "HTTP/1.1 101" && second.head == "HTTP/1.1 101" })
            let third = try await RawWebSocket.open(port: port)
            #expect(try await third.closeHandshake()?.closeCode == 1013)
            // A clean close by the first frees its place.
            try await first.send(opcode: 8, [0x03, 0xE8])
            #expect(await first.connection.closedByServer(within: .seconds(10)))
            #expect(first.frames.last?.closeCode == 1000)
            let fourth = try await RawWebSocket.open(port: port)
            try await fourth.sendText(#"{"type":"LOGIN_CUSTOMER","sequence_id":"1","data":{"email":"nobody@example.com","password":"x"}}"#)
            #expect(await eventually { fourth.frames.contains { $0.opcode == 1 } }, "admitted and answered")
            #expect(!fourth.frames.contains { $0.opcode == 8 })
            await fourth.connection.close()
            await second.connection.close()
        }
    }

    @Test("a server shutting down closes its WebSockets with 1001 and stops")
    func shutdown_closesWith1001() async throws {
        let database = try await TestDatabase.make(.sqlite)
        defer { Task { await database.cleanup() } }
        let configuration = GatehouseConfiguration.testing(database: database.location)
        var logger = Logger(label: "gatehouse-test")
        logger.logLevel = .warning
        let services = try GatehouseServices(configuration: configuration, logger: logger)
        let port = AsyncStream.makeStream(of: Int.self)
        let app = buildApplication(services: services) { port.continuation.yield($0) }
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var ports = port.stream.makeAsyncIterator()
            let bound = try #require(await ports.next())
            let socket = try await RawWebSocket.open(port: bound)
            #expect(await eventually { socket.head == "HTTP/1.1 101" })
            await group.triggerGracefulShutdown()
            let close = try #require(try await socket.closeHandshake())
            #expect(close.closeCode == 1001 && close.closeReason == "server shutting down")
            try await tasks.next()  // the server stops
        }
    }
}
