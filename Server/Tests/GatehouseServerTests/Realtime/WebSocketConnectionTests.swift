import GatehousePlatform
import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing

/// A session that calls into its connection the way the realtime session does, and records
/// whether `closed` reached it from inside one of those calls.
private final class RecordingSession: WebSocketSession, @unchecked Sendable {
    // Touched on the embedded loop's thread only.
    var connection: WebSocketConnection?
    var insideCall = false
    var closedInsideCall = false
    var closedCount = 0

    func opened(_ connection: WebSocketConnection) { self.connection = connection }
    func respond(to message: WebSocketMessage, on connection: WebSocketConnection) async -> String? { nil }

    /// The realtime session sends under the lock that keeps its frames in order, and `closed`
    /// takes that lock: a `closed` from inside the call would take it twice.
    func call(_ body: (WebSocketConnection) -> Void) {
        insideCall = true
        defer { insideCall = false }
        body(connection!)
    }

    func closed() {
        closedCount += 1
        if insideCall { closedInsideCall = true }
    }
}

private struct TestEndpoint: WebSocketEndpoint {
    var path: String { "/test" }
    var limits: WebSocketLimits {
        WebSocketLimits(maxMessageBytes: 4096, pingInterval: .seconds(30), idleTimeout: .seconds(60), maxConnections: 10, maxInFlightPerConnection: 4)
    }
    func open(_ opening: WebSocketOpening) async -> (any WebSocketSession)? { nil }
}

/// What NIO's socket channel does when a write fails because the peer reset the socket: it
/// closes the channel inside the flush.
private final class ResetOnFlush: ChannelOutboundHandler, @unchecked Sendable {
    typealias OutboundIn = WebSocketFrame
    func flush(context: ChannelHandlerContext) { context.close(promise: nil) }
}

@Suite("WebSocket connection")
struct WebSocketConnectionTests {
    private func connection(with session: RecordingSession) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        let endpoint = WebSocketHost.Endpoint(TestEndpoint(), work: InFlightWork())
        let wheel = TimerWheel(loop: channel.eventLoop, tick: .milliseconds(100))
        try channel.pipeline.syncOperations.addHandler(ResetOnFlush())
        try channel.pipeline.syncOperations.addHandler(WebSocketConnection(admission: .init(endpoint: endpoint, session: session), wheel: wheel))
        return channel
    }

    @Test("a peer that resets the socket while the session sends or closes: the session hears of it once, after its call returns")
    func closedNeverInsideTheSessionsCall() throws {
        for (name, body) in [("send", { (c: WebSocketConnection) in c.send("{}") }),
                             ("close", { (c: WebSocketConnection) in c.close(code: .normalClosure) })] {
            let session = RecordingSession()
            let channel = try connection(with: session)
            #expect(session.connection != nil, "\(name): opened")
            session.call(body)
            #expect(!channel.isActive, "\(name): the failed write closed the channel")
            #expect(!session.closedInsideCall, "\(name): closed ran inside the session's call")
            #expect(session.closedCount == 0, "\(name): not yet, the loop has not turned")
            channel.embeddedEventLoop.run()
            #expect(session.closedCount == 1, "\(name): closed once, on the loop's next turn")
        }
    }

    @Test("a connection closed outside the session's calls tells the session at once")
    func closedAtOnceOtherwise() throws {
        let session = RecordingSession()
        let channel = try connection(with: session)
        channel.pipeline.close(promise: nil)
        #expect(!channel.isActive)
        #expect(session.closedCount == 1, "told before the loop turns")
        #expect(!session.closedInsideCall)
    }
}
