import Foundation
import GatehouseFoundation
import HummingbirdCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// Connection-level defences of the HTTP server (docs/security.md, "Slow clients"), which
/// Hummingbird leaves to the application:
///
/// - a request head must arrive within `headerTimeout` of the connection or of its first byte,
///   and its body may pause at most `bodyTimeout`; a keep-alive connection with nothing in flight is closed
///   after `idleTimeout` (before the first request, too: Hummingbird's own idle handler joins
///   the pipeline only once a first request has arrived);
/// - a request the HTTP parser refuses (an unknown method, a malformed head) is answered
///   (501, 431 or 400) and the connection closed, instead of being dropped unanswered;
/// - one client address may hold `maxConnectionsPerAddress` connections;
/// - on shutdown, idle connections close at once and every other one after `shutdownGrace`.
///
/// Two handlers share one state per connection: `RawSide` at the front of the pipeline sees
/// bytes (the first byte of a request, the socket to answer on, shutdown), `HTTPSide` right
/// after the HTTP decoder sees request and response parts. A WebSocket upgrade (the
/// `UpgradeStarting` event, fired before the 101 goes out) ends the HTTP rules for that
/// connection; the WebSocket layer has its own.
package enum ConnectionGuard {
    package struct Settings: Sendable {
        package var headerTimeout: TimeAmount
        package var bodyTimeout: TimeAmount
        package var idleTimeout: TimeAmount
        /// Nil: no per-address cap (behind a load balancer every connection has its address).
        package var maxConnectionsPerAddress: Int?
        package var shutdownGrace: TimeAmount

        package init(_ http: GatehouseConfiguration.HTTP, perAddressCap: Bool) {
            func amount(_ seconds: TimeInterval) -> TimeAmount { .nanoseconds(Int64(seconds * 1_000_000_000)) }
            headerTimeout = amount(http.headerTimeout)
            bodyTimeout = amount(http.bodyTimeout)
            idleTimeout = amount(http.idleTimeout)
            maxConnectionsPerAddress = perAddressCap ? http.maxConnectionsPerAddress : nil
            shutdownGrace = amount(http.shutdownGrace)
        }
    }

    /// Open connections per client address, shared by every event loop of the server.
    package final class AddressCounts: Sendable {
        package init() {}

        private let counts = NIOLockedValueBox<[String: Int]>([:])

        /// Counts a new connection; false when the address already has `limit`.
        package func open(_ address: String, limit: Int) -> Bool {
            counts.withLockedValue { counts in
                let current = counts[address, default: 0]
                guard current < limit else { return false }
                counts[address] = current + 1
                return true
            }
        }

        package func close(_ address: String) {
            counts.withLockedValue { counts in
                let left = counts[address, default: 1] - 1
                counts[address] = left > 0 ? left : nil
            }
        }
    }

    /// Wraps a child channel (HTTP/1 with WebSocket upgrade) and adds the two handlers once its
    /// HTTP pipeline is in place.
    package struct Channel<Inner: ServerChildChannel>: ServerChildChannel {
        package typealias Value = Inner.Value
        package let inner: Inner
        package let settings: Settings
        package let counts: AddressCounts

        package func setup(channel: any NIOCore.Channel, logger: Logger) -> EventLoopFuture<Value> {
            inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
                let state = State(settings: settings, counts: counts, logger: logger)
                let pipeline = channel.pipeline.syncOperations
                try pipeline.addHandler(RawSide(state: state), position: .first)
                let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
                try pipeline.addHandler(HTTPSide(state: state), position: .after(decoder))
                return value
            }
        }

        package func handle(value: Value, logger: Logger) async {
            await inner.handle(value: value, logger: logger)
        }
    
        package init(inner: Inner, settings: Settings, counts: AddressCounts) {
            self.inner = inner
            self.settings = settings
            self.counts = counts
        }
}

    /// One connection's state, touched on its event loop only.
    package final class State {
        package enum Phase {
            /// Nothing of a request has arrived yet (a new connection, or keep-alive between requests).
            case idle
            /// Some bytes of a head have arrived.
            case readingHead
            case readingBody
            /// The whole request is in; the application is answering. No deadline of ours.
            case responding
            /// A WebSocket now: the HTTP rules are over.
            case upgraded
            case closing
        }

        package let settings: Settings
        package let counts: AddressCounts
        package let logger: Logger
        package var phase: Phase = .idle
        package var isFirstRequest = true
        /// When the current phase runs out (nil: it has no deadline).
        package var deadline: NIODeadline?
        /// The one timer of the connection and when it fires: never later than the shortest of the timeouts from when it
        /// was set, so that every deadline a phase can set is at or after it. A phase that begins moves `deadline`
        /// only; the timer, when it fires before the deadline, sets itself again. So requests on a kept-alive
        /// connection schedule nothing (the timer fires once per shortest timeout while the connection is open):
        /// scheduling and cancelling a task on the event loop at each phase cost about 5% of the processor time of a
        /// plaintext answer.
        private var timer: Scheduled<Void>?
        private var timerFiresAt: NIODeadline?
        package var rawContext: ChannelHandlerContext?
        package var countedAddress: String?
        package var started = false
        package var quiescing = false
        /// Whether the request line starts with a well-formed method (an unknown one is 501, garbage 400).
        package var methodIsToken = true

        package init(settings: Settings, counts: AddressCounts, logger: Logger) {
            self.settings = settings
            self.counts = counts
            self.logger = logger
        }

        package func start(_ context: ChannelHandlerContext) {
            guard !started else { return }
            started = true
            if let limit = settings.maxConnectionsPerAddress, let address = context.channel.remoteAddress?.ipAddress {
                guard counts.open(address, limit: limit) else {
                    logger.notice("Connection refused: too many from one address", metadata: ["limit": "\(limit)"])
                    answer(.serviceUnavailable, reason: "too many connections from your address")
                    return
                }
                countedAddress = address
            }
            enter(.idle)
        }

        package func stop() {
            cancelTimer()
            if let address = countedAddress {
                counts.close(address)
                countedAddress = nil
            }
        }

        /// Moves to `phase` and sets its deadline.
        package func enter(_ phase: Phase) {
            self.phase = phase
            deadline = nil
            let timeout: TimeAmount? = switch phase {
            case .idle: isFirstRequest ? settings.headerTimeout : settings.idleTimeout
            case .readingHead: settings.headerTimeout
            case .readingBody: settings.bodyTimeout
            case .responding, .upgraded, .closing: nil
            }
            if quiescing, phase == .idle {
                closeAfterWrites()
                return
            }
            guard let timeout, let context = rawContext else { return }
            let deadline = NIODeadline.now() + timeout
            self.deadline = deadline
            if let timerFiresAt, timerFiresAt <= deadline { return }  // it fires first, and sets itself again
            setTimer(deadline, context)
        }

        private var shortestTimeout: TimeAmount {
            min(settings.headerTimeout, settings.bodyTimeout, settings.idleTimeout)
        }

        private func setTimer(_ due: NIODeadline, _ context: ChannelHandlerContext) {
            timer?.cancel()
            let at = min(due, .now() + shortestTimeout)
            timerFiresAt = at
            timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: at) { [self] in
                timer = nil
                timerFiresAt = nil
                guard let deadline else { return }  // a phase without one
                if deadline > .now() {
                    if let context = rawContext { setTimer(deadline, context) }
                } else {
                    expired(phase)
                }
            }
        }

        private func cancelTimer() {
            timer?.cancel()
            timer = nil
            timerFiresAt = nil
            deadline = nil
        }

        private func expired(_ phase: Phase) {
            switch phase {
            case .idle where !isFirstRequest:
                close()   // a keep-alive connection nobody uses
            case .idle, .readingHead, .readingBody:
                logger.debug("Request timed out", metadata: ["phase": "\(phase)"])
                answer(.requestTimeout, reason: "request not received in time")
            case .responding, .upgraded, .closing:
                break
            }
        }

        /// Answers on the socket itself (no response has started) and closes.
        package func answer(_ status: HTTPResponseStatus, reason: String) {
            guard phase != .closing, let context = rawContext else { return }
            phase = .closing
            cancelTimer()
            let body = reason + "\n"
            var buffer = context.channel.allocator.buffer(capacity: 160 + body.utf8.count)
            buffer.writeString("HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\nContent-Type: text/plain; charset=utf-8\r\n"
                + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
            context.writeAndFlush(NIOAny(buffer)).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }

        package func close() {
            guard phase != .closing, let context = rawContext else { return }
            phase = .closing
            cancelTimer()
            context.close(promise: nil)
        }

        /// Closes once what has been written is on the wire: an answer's parts can all be written before the first
        /// flush (Hummingbird writes a one-buffer answer's head, body and end in one go), and a close discards
        /// writes not yet flushed. An empty write after them completes only once they have.
        private func closeAfterWrites() {
            guard phase != .closing, let context = rawContext else { return }
            phase = .closing
            cancelTimer()
            context.writeAndFlush(NIOAny(context.channel.allocator.buffer(capacity: 0))).assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        }

        /// Shutdown: an idle connection closes now; any other one finishes within the grace period.
        package func quiesce() {
            guard !quiescing, let context = rawContext else { return }
            quiescing = true
            if phase == .idle || phase == .readingHead {
                close()   // no request accepted: nothing to finish
                return
            }
            context.eventLoop.assumeIsolated().scheduleTask(in: settings.shutdownGrace) { [self] in close() }
        }
    }

    /// Front of the pipeline: raw bytes.
    package final class RawSide: ChannelDuplexHandler, RemovableChannelHandler {
        package typealias InboundIn = ByteBuffer
        package typealias InboundOut = ByteBuffer
        package typealias OutboundIn = ByteBuffer
        package typealias OutboundOut = ByteBuffer
        package let state: State

        package init(state: State) { self.state = state }

        package func handlerAdded(context: ChannelHandlerContext) {
            state.rawContext = context
            if context.channel.isActive { state.start(context) }
        }

        package func handlerRemoved(context: ChannelHandlerContext) {
            state.stop()
            state.rawContext = nil
        }

        package func channelActive(context: ChannelHandlerContext) {
            state.start(context)
            context.fireChannelActive()
        }

        package func channelInactive(context: ChannelHandlerContext) {
            state.stop()
            context.fireChannelInactive()
        }

        package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch state.phase {
            case .closing:
                return   // the answer is on its way; whatever follows is not read
            case .idle:
                state.methodIsToken = State.startsWithToken(unwrapInboundIn(data))
                state.enter(.readingHead)
            default:
                break
            }
            context.fireChannelRead(data)
        }

        package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if event is ChannelShouldQuiesceEvent { state.quiesce() }
            context.fireUserInboundEventTriggered(event)
        }
    }

    /// Sent through the pipeline (on its event loop) when an upgrade was accepted and is about to start.
    package struct UpgradeStarting {}

    /// Right after the HTTP decoder: request and response parts, parser errors.
    package final class HTTPSide: ChannelDuplexHandler, RemovableChannelHandler {
        package typealias InboundIn = HTTPServerRequestPart
        package typealias InboundOut = HTTPServerRequestPart
        package typealias OutboundIn = HTTPServerResponsePart
        package typealias OutboundOut = HTTPServerResponsePart
        package let state: State
        /// Requests whose response has not ended (HTTP/1.1 pipelining can stack them).
        package var outstanding = 0

        package init(state: State) { self.state = state }

        package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head:
                outstanding += 1
                if state.phase != .responding { state.enter(.readingBody) }
            case .body:
                // The body deadline is between parts, not for the whole body: a 2 MiB avatar on a
                // slow mobile link may take longer than the deadline, but never stalls that long.
                if state.phase == .readingBody { state.enter(.readingBody) }
            case .end:
                state.isFirstRequest = false
                state.enter(.responding)
            }
            context.fireChannelRead(data)
        }

        package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if event is UpgradeStarting {
                // NIO removes the HTTP decoder before it answers 101, and the decoder hands any
                // bytes after the request (the client's first frames) to the next handler: that
                // must no longer be this one, which reads only HTTP parts.
                state.enter(.upgraded)
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            }
            context.fireUserInboundEventTriggered(event)
        }

        package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            let part = unwrapOutboundIn(data)
            switch part {
            case .end:
                outstanding = max(0, outstanding - 1)
                context.write(data, promise: promise)
                if outstanding == 0, state.phase == .responding { state.enter(.idle) }
                return
            default:
                context.write(data, promise: promise)
            }
        }

        package func errorCaught(context: ChannelHandlerContext, error: any Error) {
            guard let parserError = error as? HTTPParserError else {
                context.fireErrorCaught(error)
                return
            }
            // The parser gives up on this connection: answer if no response has started.
            guard state.phase == .readingHead || state.phase == .idle || state.phase == .readingBody else {
                state.close()
                return
            }
            switch parserError {
            case .invalidMethod where state.methodIsToken:
                state.answer(.notImplemented, reason: "unknown method")
            case .headerOverflow:
                state.answer(.requestHeaderFieldsTooLarge, reason: "request header too large")
            default:
                state.answer(.badRequest, reason: "malformed request")
            }
        }
    }
}

extension ConnectionGuard.State {
    /// Whether the bytes before the first space (or the first 32) are an RFC 9110 token.
    package static func startsWithToken(_ buffer: ByteBuffer) -> Bool {
        let bytes = buffer.readableBytesView.prefix(32)
        let method = bytes.prefix { $0 != UInt8(ascii: " ") }
        guard !method.isEmpty else { return false }
        return method.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            default:
                "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
        }
    }
}
