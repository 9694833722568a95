import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOWebSocket

/// The server's child channel: HTTP/1.1, upgraded to a WebSocket on the paths of the
/// `WebSocketHost`. Unlike hummingbird-websocket's upgrade channel, an upgraded connection keeps no
/// task: once its pipeline holds a `WebSocketConnection`, `handle` returns and the connection lives
/// in its handlers alone (the server's quiescing still reaches it on shutdown).
package struct HTTPAndWebSocketChannel: ServerChildChannel, HTTPChannelHandler {
    package enum UpgradeResult: Sendable {
        case websocket
        case notUpgraded(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        case failedUpgrade(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
    }

    package struct Value: ServerChildChannelValue {
        package let upgradeResult: EventLoopFuture<UpgradeResult>
        package let channel: any Channel
    }

    package let responder: HTTPChannelHandler.Responder
    package let host: WebSocketHost
    package let http1: HTTP1Channel.Configuration

    package init(responder: @escaping HTTPChannelHandler.Responder, host: WebSocketHost, http1: HTTP1Channel.Configuration = .init()) {
        self.responder = Self.upgradeOnFreshConnection(responder)
        self.host = host
        self.http1 = http1
    }

    package func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let upgradeAttempted = NIOLoopBoundBox(false, eventLoop: channel.eventLoop)
            let admitted = NIOLoopBoundBox<WebSocketHost.Admission?>(nil, eventLoop: channel.eventLoop)
            let host = self.host
            let upgrader = NIOTypedWebSocketServerUpgrader<UpgradeResult>(
                maxFrameSize: host.maxFrameBytes,
                enableAutomaticErrorHandling: false,  // WebSocketConnection answers protocol errors
                shouldUpgrade: { channel, head in
                    upgradeAttempted.value = true
                    return host.admit(head, channel: channel).map { admission -> HTTPHeaders? in
                        guard let admission else { return nil }
                        admitted.value = admission
                        // An admitted connection that closes before its handler is in place
                        // gives its place back.
                        channel.closeFuture.whenComplete { _ in
                            if let pending = admitted.value, let session = pending.session {
                                admitted.value = nil
                                pending.endpoint.release()
                                session.closed()
                            }
                        }
                        channel.pipeline.fireUserInboundEventTriggered(ConnectionGuard.UpgradeStarting())
                        return HTTPHeaders()
                    }
                },
                upgradePipelineHandler: { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        guard let admission = admitted.value else { throw ChannelError.ioOnClosedChannel }
                        admitted.value = nil
                        let connection = WebSocketConnection(admission: admission, wheel: host.wheel(for: channel.eventLoop))
                        try channel.pipeline.syncOperations.addHandler(connection)
                        return UpgradeResult.websocket
                    }
                }
            )
            let serverUpgradeConfiguration = NIOTypedHTTPServerUpgradeConfiguration(
                upgraders: [upgrader],
                notUpgradingCompletionHandler: { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                        try channel.pipeline.syncOperations.addHandlers(self.http1.additionalChannelHandlers())
                        try channel.pipeline.syncOperations.addHandler(
                            HTTPConnectionStateHandler(idleTimeout: self.http1.idleTimeout.map { .init($0) }, logger: logger)
                        )
                        let asyncChannel = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                            wrappingChannelSynchronously: channel,
                            configuration: .init(isOutboundHalfClosureEnabled: true)
                        )
                        return upgradeAttempted.value ? UpgradeResult.failedUpgrade(asyncChannel) : UpgradeResult.notUpgraded(asyncChannel)
                    }
                }
            )
            var configuration = NIOUpgradableHTTPServerPipelineConfiguration<UpgradeResult>(upgradeConfiguration: serverUpgradeConfiguration)
            configuration.enablePipelining = false  // HTTP is pipelined by NIOAsyncChannel
            configuration.enableErrorHandling = false  // ConnectionGuard answers parser errors
            configuration.enableResponseHeaderValidation = false  // swift-http-types validates
            configuration.decoderConfiguration.maxHeaderFieldSize = http1.httpDecoder.maxHeaderFieldSize
            configuration.decoderConfiguration.maxHeaderListSize = http1.httpDecoder.maxHeaderListSize
            configuration.decoderConfiguration.maxHeaderFieldCount = http1.httpDecoder.maxHeaderFieldCount
            let result = try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(configuration: configuration)
            return Value(upgradeResult: result, channel: channel)
        }
    }

    package func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.upgradeResult.get() {
            case .websocket:
                return  // the connection lives in its pipeline from here on
            case .notUpgraded(let http):
                await handleHTTP(asyncChannel: http, logger: logger)
            case .failedUpgrade(let http):
                await Self.refuseUpgrade(http, logger: logger)
            }
        } catch let error as ChannelError where error == .inputClosed {
            logger.trace("upgrade: input closed")
        } catch {
            logger.debug("upgrade failed", metadata: ["error.type": "\(error)"])
        }
    }

    /// A refused upgrade: 400 with no body, and the connection closed.
    private static func refuseUpgrade(_ channel: NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>, logger: Logger) async {
        try? await channel.executeThenClose { _, outbound in
            let head = HTTPResponse(status: .badRequest, headerFields: [.connection: "close", .contentLength: "0"])
            try await outbound.write(contentsOf: [.head(head), .end(nil)])
        }
    }

    /// NIO upgrades only on a connection's first request: an upgrade asked for later on a
    /// keep-alive connection is redirected to the same URI on a new connection.
    private static func upgradeOnFreshConnection(_ responder: @escaping HTTPChannelHandler.Responder) -> HTTPChannelHandler.Responder {
        struct RedirectedToFreshConnection: Error {}
        return { (request: Request, writer: consuming ResponseWriter, channel: any Channel) in
            guard request.headers[.upgrade]?.lowercased() == "websocket" else {
                return try await responder(request, writer, channel)
            }
            var location = request.uri.path
            if let query = request.uri.query { location += "?\(query)" }
            try await writer.writeResponse(HTTPResponse(status: .temporaryRedirect, headerFields: [.connection: "close", .location: location]))
            throw RedirectedToFreshConnection()
        }
    }
}
