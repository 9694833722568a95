import NIOCore
import NIOWebSocket

/// One WebSocket connection: the last handler of its pipeline, after NIO's frame decoder and
/// encoder. It runs RFC 6455 for the surface (fragments, UTF-8, control frames, the close
/// handshake), answers pings, pings the peer, closes idle connections, keeps at most
/// `maxInFlightPerConnection` messages in the surface's hands (reading no further meanwhile),
/// closes with 1001 when the server shuts down, and takes pushes from any thread.
///
/// Its state is touched on its event loop only; `send` and `close` hop there.
package final class WebSocketConnection: ChannelDuplexHandler, @unchecked Sendable {
    package typealias InboundIn = WebSocketFrame
    package typealias OutboundIn = WebSocketFrame
    package typealias OutboundOut = WebSocketFrame

    private enum Phase: UInt8 { case open, closing, closed }

    package let endpoint: WebSocketHost.Endpoint
    package let session: (any WebSocketSession)?
    package let wheel: TimerWheel
    package let loop: any EventLoop
    private var context: ChannelHandlerContext?
    private var phase = Phase.open
    private var fragments: ByteBuffer?
    private var fragmentsAreText = false
    private var inFlight = 0
    private var waiting: [WebSocketMessage] = []
    private var readHeld = false
    /// Calls from the session (`send`, `close`) running on this loop right now. A write that fails
    /// (the peer reset the socket) closes the channel inside the write, so `channelInactive` can
    /// run inside such a call, where the session may hold a lock of its own that `closed` takes
    /// too: then `closed` runs on the loop's next turn instead (the realtime session sends under
    /// its lock, and a reset at that moment took the lock twice and stopped the event loop).
    private var sessionCalls = 0
    private var lastActivity: NIODeadline
    /// When to send the next ping, or, while one is unanswered, when the peer is late.
    private var pingDue: NIODeadline
    private var pingPayload: UInt64 = 0
    private var closeDeadline: NIODeadline?
    /// The wheel's bookkeeping (0: not in the wheel).
    package var wheelTick: Int64 = 0

    package init(admission: WebSocketHost.Admission, wheel: TimerWheel) {
        self.endpoint = admission.endpoint
        self.session = admission.session
        self.wheel = wheel
        self.loop = wheel.loop
        let now = NIODeadline.now()
        self.lastActivity = now
        self.pingDue = now + TimeAmount(endpoint.limits.pingInterval)
    }

    private var limits: WebSocketLimits { endpoint.limits }

    // MARK: - from any thread

    /// Sends one text frame (dropped once the connection is closing).
    package func send(_ text: String) {
        if loop.inEventLoop { fromSession { write(text) } } else { loop.execute { self.write(text) } }
    }

    /// Starts the close handshake with `code`.
    package func close(code: WebSocketErrorCode, reason: String = "") {
        if loop.inEventLoop { fromSession { startClose(code, reason: reason) } } else { loop.execute { self.startClose(code, reason: reason) } }
    }

    private func fromSession(_ call: () -> Void) {
        sessionCalls += 1
        defer { sessionCalls -= 1 }
        call()
    }

    // MARK: - pipeline

    package func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        guard session != nil else {
            startClose(.unknown(1013), reason: "too many connections, try again later")
            return
        }
        wheel.schedule(self, at: nextDeadline)
        session?.opened(self)
    }

    package func channelInactive(context: ChannelHandlerContext) {
        if phase != .closed {
            phase = .closed
            if let session {
                endpoint.release()
                if sessionCalls > 0 { loop.execute { session.closed() } } else { session.closed() }
            }
        }
        waiting.removeAll()
        context.fireChannelInactive()
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    package func read(context: ChannelHandlerContext) {
        // Backpressure holds reads only while open: once closing, the peer's close frame must be read.
        if phase == .open, inFlight >= limits.maxInFlightPerConnection || !waiting.isEmpty {
            readHeld = true
        } else {
            context.read()
        }
    }

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            startClose(.goingAway, reason: "server shutting down")
        } else if let event = event as? ChannelEvent, event == .inputClosed {
            context.close(promise: nil)  // the peer is gone without a close frame
        }
        context.fireUserInboundEventTriggered(event)
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        switch error as? NIOWebSocketError {
        case .invalidFrameLength?: fail(.messageTooLarge)
        case .fragmentedControlFrame?, .multiByteControlFrameLength?: fail(.protocolError)
        case nil: context.close(promise: nil)  // a socket error: nothing more can be said
        }
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch phase {
        case .closed: return
        case .closing:
            // Only the peer's close matters now: it ends the connection.
            if frame.opcode == .connectionClose { context.close(promise: nil) }
            return
        case .open: break
        }
        // No extension is negotiated, so no reserved bit may be set; a client masks every frame.
        guard !frame.rsv1, !frame.rsv2, !frame.rsv3, frame.maskKey != nil else { return fail(.protocolError) }
        switch frame.opcode {
        case .text, .binary:
            guard fragments == nil else { return fail(.protocolError) }
            guard frame.length <= limits.maxMessageBytes else { return fail(.messageTooLarge) }
            if frame.fin {
                deliver(frame.unmaskedData, text: frame.opcode == .text)
            } else {
                fragments = frame.unmaskedData
                fragmentsAreText = frame.opcode == .text
            }
        case .continuation:
            guard var buffer = fragments else { return fail(.protocolError) }
            guard buffer.readableBytes + frame.length <= limits.maxMessageBytes else { return fail(.messageTooLarge) }
            var part = frame.unmaskedData
            buffer.writeBuffer(&part)
            if frame.fin {
                fragments = nil
                deliver(buffer, text: fragmentsAreText)
            } else {
                fragments = buffer
            }
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .pong:
            var data = frame.unmaskedData
            if pingPayload != 0, data.readInteger(as: UInt64.self) == pingPayload {
                pingPayload = 0
                pingDue = .now() + TimeAmount(limits.pingInterval)
            }
        case .connectionClose:
            receivedClose(frame.unmaskedData)
        default:
            fail(.protocolError)  // a reserved opcode
        }
    }

    // MARK: - messages

    private func deliver(_ payload: ByteBuffer, text: Bool) {
        lastActivity = .now()
        let message: WebSocketMessage
        if text {
            guard let string = String(validating: payload.readableBytesView, as: UTF8.self) else { return fail(.dataInconsistentWithMessage) }
            message = .text(string)
        } else {
            message = .binary(payload)
        }
        if inFlight < limits.maxInFlightPerConnection, waiting.isEmpty {
            start(message)
        } else {
            waiting.append(message)
        }
    }

    private func start(_ message: WebSocketMessage) {
        guard let session else { return }
        inFlight += 1
        let work = endpoint.work
        work.begin()
        Task {
            defer { work.end() }
            let answer = await session.respond(to: message, on: self)
            self.loop.execute { self.finished(answer) }
        }
    }

    private func finished(_ answer: String?) {
        inFlight -= 1
        guard phase == .open else {
            if readHeld {
                readHeld = false
                context?.read()
            }
            return
        }
        if let answer { write(answer) }
        while inFlight < limits.maxInFlightPerConnection, !waiting.isEmpty {
            start(waiting.removeFirst())
        }
        if readHeld, inFlight < limits.maxInFlightPerConnection, waiting.isEmpty {
            readHeld = false
            context?.read()
        }
    }

    private func write(_ text: String) {
        guard phase == .open, let context else { return }
        let buffer = context.channel.allocator.buffer(string: text)
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, data: buffer)), promise: nil)
    }

    // MARK: - closing

    private func receivedClose(_ payload: ByteBuffer) {
        var data = payload
        let reply: WebSocketErrorCode
        switch data.readableBytes {
        case 0: reply = .normalClosure
        case 1: reply = .protocolError
        default:
            let code = data.readInteger(as: UInt16.self)!
            if String(validating: data.readableBytesView, as: UTF8.self) == nil {
                reply = .dataInconsistentWithMessage
            } else {
                reply = Self.isValidCloseCode(code) ? .normalClosure : .protocolError
            }
        }
        phase = .closing
        guard let context else { return }
        var buffer = context.channel.allocator.buffer(capacity: 2)
        buffer.write(webSocketErrorCode: reply)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: buffer))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }

    /// Codes a peer may send (RFC 6455 7.4; 1004-1006 and 1015 are never sent on the wire).
    package static func isValidCloseCode(_ code: UInt16) -> Bool {
        (1000...1003).contains(code) || (1007...1014).contains(code) || (3000...4999).contains(code)
    }

    private func fail(_ code: WebSocketErrorCode) {
        fragments = nil
        waiting.removeAll()
        startClose(code, reason: "")
    }

    /// Sends our close frame and waits `closeTimeout` for the peer's before closing the socket
    /// (RFC 6455 7.1.1). Closing our side at once (a FIN right behind the frame, even behind the
    /// 101 of a refused connection) left clients mid-upgrade waiting forever: the stall in the
    /// "1013" test (docs/decisions.md).
    private func startClose(_ code: WebSocketErrorCode, reason: String) {
        guard phase == .open, let context else { return }
        phase = .closing
        var buffer = context.channel.allocator.buffer(capacity: 2 + reason.utf8.count)
        buffer.write(webSocketErrorCode: code)
        buffer.writeString(reason)
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: buffer)), promise: nil)
        let deadline = NIODeadline.now() + TimeAmount(limits.closeTimeout)
        closeDeadline = deadline
        wheel.schedule(self, at: deadline)
        if readHeld {
            readHeld = false
            context.read()  // to see the peer's close
        }
    }

    // MARK: - timers

    private var nextDeadline: NIODeadline {
        if let closeDeadline { return closeDeadline }
        return min(lastActivity + TimeAmount(limits.idleTimeout), pingDue)
    }

    /// Called by the wheel at (or after) this connection's deadline.
    package func timerFired(now: NIODeadline) {
        switch phase {
        case .closed: return
        case .closing:
            if let closeDeadline, now >= closeDeadline {
                context?.close(promise: nil)
                return
            }
        case .open:
            if now >= lastActivity + TimeAmount(limits.idleTimeout) {
                return startClose(.goingAway, reason: "idle timeout")
            }
            if now >= pingDue {
                if pingPayload != 0 {
                    return startClose(.goingAway, reason: "ping timeout")
                }
                sendPing(now: now)
            }
        }
        wheel.schedule(self, at: nextDeadline)
    }

    private func sendPing(now: NIODeadline) {
        guard let context else { return }
        pingPayload = UInt64.random(in: 1...UInt64.max)
        pingDue = now + TimeAmount(limits.pingInterval)
        var buffer = context.channel.allocator.buffer(capacity: 8)
        buffer.writeInteger(pingPayload)
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .ping, data: buffer)), promise: nil)
    }
}
