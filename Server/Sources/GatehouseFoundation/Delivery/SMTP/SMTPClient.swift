import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL

/// Minimal async SMTP client: one connection per `send`, QUIT at the end.
///
/// Never logs or reports the password, AUTH payloads or the message body;
/// the SMTP dialogue is logged at `.trace` with AUTH lines redacted.
package struct SMTPClient: Sendable {
    package let configuration: SMTPConfiguration
    package let eventLoopGroup: any EventLoopGroup
    package let logger: Logger
    /// Built once; `nil` for `security == .none`.
    private let tlsContext: Result<NIOSSLContext, SMTPError>?

    package init(configuration: SMTPConfiguration, eventLoopGroup: any EventLoopGroup, logger: Logger) {
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
        var logger = logger
        logger[metadataKey: "smtp.host"] = "\(configuration.host):\(configuration.port)"
        self.logger = logger
        self.tlsContext = configuration.security == .none ? nil : Self.makeTLSContext(configuration)
    }

    /// Sends `message` as a base64-encoded UTF-8 text/plain email.
    package func send(_ message: EmailMessage) async throws {
        let data = try SMTPMessageFormatter.render(message, fallbackDomain: configuration.heloName)
        try await sendRaw(data, from: message.from, to: message.to)
    }

    /// Sends an already formatted message (header + body, any line endings; it is
    /// normalised to CRLF and dot-stuffed here).
    package func sendRaw(_ data: String, from: String, to: String) async throws {
        try SMTPMessageFormatter.validateAddress(from, role: "sender")
        try SMTPMessageFormatter.validateAddress(to, role: "recipient")
        if configuration.hasCredentials, configuration.security == .none, !configuration.allowInsecureAuth {
            throw SMTPError.insecureAuthRefused
        }
        var tls: NIOSSLContext?
        if let tlsContext { tls = try tlsContext.get() }

        let deadline = NIODeadline.now() + configuration.timeout
        let connection = try await connect(implicitTLS: configuration.security == .tls ? tls : nil)
        let timeoutTask = connection.channel.eventLoop.scheduleTask(deadline: deadline) {
            connection.handler.value.fail(.timeout)
        }
        defer {
            timeoutTask.cancel()
            connection.channel.close(promise: nil)
        }
        try await withTaskCancellationHandler {
            try await converse(connection, tls: tls, data: data, from: from, to: to)
        } onCancel: {
            connection.channel.close(promise: nil)
        }
    }

    // MARK: - Dialogue

    private func converse(_ conn: SMTPConnection, tls: NIOSSLContext?, data: String, from: String, to: String) async throws {
        try await conn.expect(conn.readReply(), 220, command: "greeting")
        var extensions = try await hello(conn)

        if configuration.security == .startTLS {
            guard extensions.keys.contains("STARTTLS"), let tls else { throw SMTPError.startTLSNotSupported }
            try await conn.expect(conn.command("STARTTLS"), 220, command: "STARTTLS")
            try await conn.upgradeToTLS(context: tls, serverHostname: Self.sniName(configuration.host))
            extensions = try await hello(conn)
        }

        if configuration.hasCredentials {
            try await authenticate(conn, offered: extensions["AUTH"] ?? [])
        }

        var mailParameters = ""
        if !(from + to).allSatisfy(\.isASCII) {
            guard extensions.keys.contains("SMTPUTF8") else {
                throw SMTPError.invalidMessage("non-ASCII address needs SMTPUTF8, which the server does not offer")
            }
            mailParameters = " SMTPUTF8"
        }
        try await conn.expect(conn.command("MAIL FROM:<\(from)>\(mailParameters)"), 250, command: "MAIL FROM")
        try await conn.expect(conn.command("RCPT TO:<\(to)>"), 250, 251, command: "RCPT TO")
        try await conn.expect(conn.command("DATA"), 354, command: "DATA")
        let payload = SMTPMessageFormatter.dotStuffed(data)
        try await conn.write(payload, logAs: "<message data, \(payload.utf8.count) bytes>")
        let accepted = try await conn.readReply()
        try conn.expect(accepted, 250, command: "end of data")
        logger.debug("SMTP message accepted", metadata: ["smtp.reply": "\(accepted.code) \(accepted.message)"])

        // The message is accepted: a failing QUIT must not make the caller retry (duplicates).
        do {
            let bye = try await conn.command("QUIT")
            if bye.code != 221 {
                logger.warning("unexpected SMTP reply to QUIT", metadata: ["smtp.reply": "\(bye.code) \(bye.message)"])
            }
        } catch {
            logger.debug("SMTP QUIT failed after delivery", metadata: ["error": "\(error)"])
        }
    }

    /// EHLO (falling back to HELO on a plain, unauthenticated connection) and returns
    /// the advertised extensions: keyword (upper-cased) -> parameters.
    private func hello(_ conn: SMTPConnection) async throws -> [String: [String]] {
        let reply = try await conn.command("EHLO \(configuration.heloName)")
        if reply.code == 250 {
            var extensions: [String: [String]] = [:]
            for line in reply.lines.dropFirst() {
                var words = line.split(whereSeparator: { $0 == " " || $0 == "=" }).map(String.init)
                guard !words.isEmpty else { continue }
                let keyword = words.removeFirst().uppercased()
                extensions[keyword, default: []] += words.map { $0.uppercased() }
            }
            return extensions
        }
        if (500...504).contains(reply.code), configuration.security == .none, !configuration.hasCredentials {
            try await conn.expect(conn.command("HELO \(configuration.heloName)"), 250, command: "HELO")
            return [:]
        }
        throw SMTPError.unexpectedReply(command: "EHLO", code: reply.code, message: reply.message)
    }

    private func authenticate(_ conn: SMTPConnection, offered: [String]) async throws {
        let username = configuration.username ?? ""
        let password = configuration.password ?? ""
        let secrets = [password, Self.base64(password), Self.base64("\0\(username)\0\(password)")].filter { !$0.isEmpty }
        func failed(_ reply: SMTPReply) -> SMTPError {
            var message = reply.message
            for secret in secrets { message = message.replacingOccurrences(of: secret, with: "<redacted>") }
            return .authenticationFailed(code: reply.code, message: message)
        }

        var reply: SMTPReply
        if offered.contains("PLAIN") {
            let token = Self.base64("\0\(username)\0\(password)")
            reply = try await conn.command("AUTH PLAIN \(token)", logAs: "AUTH PLAIN <redacted>")
            if reply.code == 334 { reply = try await conn.command(token, logAs: "<redacted>") }
        } else if offered.contains("LOGIN") {
            reply = try await conn.command("AUTH LOGIN")
            guard reply.code == 334 else { throw failed(reply) }
            reply = try await conn.command(Self.base64(username), logAs: "<redacted username>")
            guard reply.code == 334 else { throw failed(reply) }
            reply = try await conn.command(Self.base64(password), logAs: "<redacted>")
        } else {
            throw SMTPError.authenticationNotSupported(offered: offered)
        }
        guard reply.code == 235 else { throw failed(reply) }
    }

    // MARK: - Connection setup

    private func connect(implicitTLS: NIOSSLContext?) async throws -> SMTPConnection {
        let host = configuration.host
        let sniName = Self.sniName(host)
        // The reply handler is created up front (on the channel's future loop) so that a
        // failure during TLS setup is still known after the pipeline is torn down.
        let eventLoop = eventLoopGroup.next()
        let handler = try await eventLoop.submit { NIOLoopBound(SMTPReplyHandler(), eventLoop: eventLoop) }.get()
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(configuration.timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let implicitTLS {
                        let tls = try NIOSSLClientHandler(context: implicitTLS, serverHostname: sniName)
                        try channel.pipeline.syncOperations.addHandler(tls)
                    }
                    try channel.pipeline.syncOperations.addHandler(handler.value)
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: host, port: configuration.port).get()
        } catch {
            if case ChannelError.connectTimeout = error {
                throw SMTPError.connectionFailed("timed out connecting to \(host):\(configuration.port)")
            }
            throw SMTPError.connectionFailed("cannot connect to \(host):\(configuration.port): \(error)")
        }
        logger.debug("SMTP connected", metadata: ["smtp.security": "\(configuration.security.rawValue)"])
        return SMTPConnection(channel: channel, handler: handler, logger: logger)
    }

    private static func makeTLSContext(_ configuration: SMTPConfiguration) -> Result<NIOSSLContext, SMTPError> {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        if let path = configuration.caCertificatePath {
            tls.additionalTrustRoots = [.file(path)]
        }
        if !configuration.verifyCertificates {
            tls.certificateVerification = .none
        }
        do {
            return .success(try NIOSSLContext(configuration: tls))
        } catch {
            return .failure(.tlsFailed("cannot set up TLS (CA file \(configuration.caCertificatePath ?? "none")): \(error)"))
        }
    }

    /// SNI must not be an IP literal; without it NIOSSL checks the peer IP against the certificate.
    private static func sniName(_ host: String) -> String? {
        (try? SocketAddress(ipAddress: host, port: 0)) == nil ? host : nil
    }

    private static func base64(_ string: String) -> String {
        Data(string.utf8).base64EncodedString()
    }
}

// MARK: - Connection + reply reader

package struct SMTPReply: Sendable {
    package let code: Int
    package let lines: [String]
    package var message: String { lines.joined(separator: " ") }
}

private struct SMTPConnection: Sendable {
    let channel: any Channel
    let handler: NIOLoopBound<SMTPReplyHandler>
    let logger: Logger

    func readReply() async throws -> SMTPReply {
        let handler = self.handler
        let eventLoop = channel.eventLoop
        let reply = try await eventLoop.flatSubmit { handler.value.nextReply(on: eventLoop) }.get()
        logger.trace("S: \(reply.code) \(reply.lines.joined(separator: " | "))")
        return reply
    }

    func write(_ text: String, logAs: String? = nil) async throws {
        logger.trace("C: \(logAs ?? text)")
        var buffer = channel.allocator.buffer(capacity: text.utf8.count + 2)
        buffer.writeString(text)
        do {
            try await channel.writeAndFlush(buffer).get()
        } catch {
            throw await failure() ?? SMTPError.connectionFailed("write failed: \(error)")
        }
    }

    /// Sends one command line and reads its reply.
    func command(_ line: String, logAs: String? = nil) async throws -> SMTPReply {
        try await write(line + "\r\n", logAs: logAs ?? line)
        return try await readReply()
    }

    func expect(_ reply: SMTPReply, _ codes: Int..., command: String) throws {
        guard codes.contains(reply.code) else {
            throw SMTPError.unexpectedReply(command: command, code: reply.code, message: reply.message)
        }
    }

    func upgradeToTLS(context: NIOSSLContext, serverHostname: String?) async throws {
        let handler = self.handler
        let channel = self.channel
        do {
            try await channel.eventLoop.submit {
                // Anything already received after the 220 would be unauthenticated plaintext
                // (STARTTLS response injection): refuse.
                try handler.value.checkNothingPending()
                let tls = try NIOSSLClientHandler(context: context, serverHostname: serverHostname)
                try channel.pipeline.syncOperations.addHandler(tls, position: .first)
            }.get()
        } catch let error as SMTPError {
            throw error
        } catch {
            throw SMTPError.tlsFailed("cannot start TLS: \(error)")
        }
    }

    private func failure() async -> SMTPError? {
        let handler = self.handler
        return try? await channel.eventLoop.submit { handler.value.failure }.get()
    }
}

/// Splits inbound bytes into lines, assembles (multi-line) SMTP replies and hands
/// them to waiters. Event-loop confined.
package final class SMTPReplyHandler: ChannelInboundHandler {
    package typealias InboundIn = ByteBuffer

    private static let maxLineLength = 8192
    private static let maxReplyLines = 512

    private var buffer = ByteBuffer()
    private var partialLines: [String] = []
    private var partialCode: Int?
    private var replies = CircularBuffer<SMTPReply>()
    private var waiters = CircularBuffer<EventLoopPromise<SMTPReply>>()
    private var context: ChannelHandlerContext?
    package private(set) var failure: SMTPError?

    package func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    package func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    package func nextReply(on eventLoop: any EventLoop) -> EventLoopFuture<SMTPReply> {
        if let reply = replies.popFirst() { return eventLoop.makeSucceededFuture(reply) }
        if let failure { return eventLoop.makeFailedFuture(failure) }
        if context == nil { return eventLoop.makeFailedFuture(SMTPError.connectionFailed("connection closed")) }
        let promise = eventLoop.makePromise(of: SMTPReply.self)
        waiters.append(promise)
        return promise.futureResult
    }

    package func checkNothingPending() throws {
        if let failure { throw failure }
        if buffer.readableBytes > 0 || !replies.isEmpty || partialCode != nil {
            fail(.protocolError("server sent data after the STARTTLS reply"))
            throw SMTPError.protocolError("server sent data after the STARTTLS reply")
        }
    }

    /// First failure wins; fails all waiters and closes the channel.
    package func fail(_ error: SMTPError) {
        if failure == nil { failure = error }
        while let waiter = waiters.popFirst() { waiter.fail(failure!) }
        context?.close(promise: nil)
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var incoming = unwrapInboundIn(data)
        guard failure == nil else { return }
        buffer.writeBuffer(&incoming)
        while let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
            var bytes = buffer.readBytes(length: newline - buffer.readerIndex + 1)!
            bytes.removeLast()
            if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
            if let error = parse(line: String(decoding: bytes, as: UTF8.self)) {
                fail(error)
                return
            }
        }
        if buffer.readableBytes > Self.maxLineLength {
            fail(.protocolError("reply line too long"))
            return
        }
        buffer.discardReadBytes()
    }

    private func parse(line: String) -> SMTPError? {
        let utf8 = Array(line.utf8)
        guard utf8.count >= 3, utf8[0..<3].allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              let code = Int(String(decoding: utf8[0..<3], as: UTF8.self)),
              utf8.count == 3 || utf8[3] == UInt8(ascii: " ") || utf8[3] == UInt8(ascii: "-")
        else {
            return .protocolError("malformed reply line")
        }
        if let partialCode, partialCode != code { return .protocolError("reply code changed within a multi-line reply") }
        partialCode = code
        partialLines.append(utf8.count > 4 ? String(decoding: utf8[4...], as: UTF8.self) : "")
        if partialLines.count > Self.maxReplyLines { return .protocolError("reply has too many lines") }
        if utf8.count > 3, utf8[3] == UInt8(ascii: "-") { return nil }
        let reply = SMTPReply(code: code, lines: partialLines)
        partialCode = nil
        partialLines = []
        if let waiter = waiters.popFirst() { waiter.succeed(reply) } else { replies.append(reply) }
        return nil
    }

    package func channelInactive(context: ChannelHandlerContext) {
        fail(.connectionFailed("connection closed by server"))
        context.fireChannelInactive()
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        switch error {
        case is NIOSSLError, is BoringSSLError, is NIOSSLExtraError:
            fail(.tlsFailed("\(error)"))
        default:
            fail(.connectionFailed("\(error)"))
        }
    }
}

// MARK: - Message formatting

package enum SMTPMessageFormatter {
    package static func render(_ message: EmailMessage, date: Date = Date(), fallbackDomain: String) throws -> String {
        try validateAddress(message.from, role: "sender")
        try validateAddress(message.to, role: "recipient")
        var domain = message.from.split(separator: "@").last.map(String.init) ?? ""
        if !message.from.contains("@") || domain.isEmpty { domain = fallbackDomain }
        var random = SystemRandomNumberGenerator()
        let id = (0..<2).map { _ in String(random.next() as UInt64, radix: 16) }.joined(separator: ".")

        var from = message.from
        if let name = message.fromName.map(headerText), !name.isEmpty {
            let printable = name.unicodeScalars.allSatisfy { (0x20...0x7E).contains($0.value) }
            let phrase = printable && !name.contains("=?")
                ? "\"" + name.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
                : encodedWords(name)
            from = "\(phrase) <\(message.from)>"
        }

        var lines = [
            "Date: \(rfc5322Date(date))",
            "From: \(from)",
            "To: \(message.to)",
            "Subject: \(encodeHeaderValue(message.subject))",
            "Message-ID: <\(id)@\(domain)>",
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=UTF-8",
            "Content-Transfer-Encoding: base64",
            "",
        ]
        let body = Data(normalizeLineEndings(message.textBody).utf8).base64EncodedString()
        var index = body.startIndex
        while index < body.endIndex {
            let end = body.index(index, offsetBy: 76, limitedBy: body.endIndex) ?? body.endIndex
            lines.append(String(body[index..<end]))
            index = end
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// Header value as is when it is short printable ASCII, else RFC 2047 B encoded-words.
    package static func encodeHeaderValue(_ value: String) -> String {
        let text = headerText(value)
        let plain = text.unicodeScalars.allSatisfy { (0x20...0x7E).contains($0.value) }
        return plain && !text.contains("=?") && text.utf8.count <= 900 ? text : encodedWords(text)
    }

    /// `=?UTF-8?B?...?=` words of at most 42 bytes (whole scalars), folded with CRLF SP,
    /// so that even "Subject: " + one word stays within 78 octets.
    package static func encodedWords(_ text: String) -> String {
        var words: [String] = []
        var chunk: [UInt8] = []
        func flush() {
            if !chunk.isEmpty { words.append("=?UTF-8?B?\(Data(chunk).base64EncodedString())?=") }
            chunk = []
        }
        for scalar in text.unicodeScalars {
            let bytes = Array(String(scalar).utf8)
            if chunk.count + bytes.count > 42 { flush() }
            chunk += bytes
        }
        flush()
        return words.isEmpty ? "" : words.joined(separator: "\r\n ")
    }

    /// RFC 5322 date, e.g. "Thu, 20 Nov 2026 12:00:00 +0000".
    package static func rfc5322Date(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
        return formatter.string(from: date)
    }

    /// CRLF line endings, a leading "." doubled on every line, terminated by "CRLF.CRLF".
    package static func dotStuffed(_ data: String) -> String {
        var lines = normalizeLineEndings(data).components(separatedBy: "\r\n")
        if lines.last == "" { lines.removeLast() }
        // Byte-wise check: a "." followed by a combining mark is not a Character prefix ".".
        return lines.map { $0.utf8.first == UInt8(ascii: ".") ? "." + $0 : $0 }.joined(separator: "\r\n")
            + (lines.isEmpty ? "" : "\r\n") + ".\r\n"
    }

    package static func normalizeLineEndings(_ text: String) -> String {
        text.replacingOccurrences(of: "\r\n", with: "\n")
            .replacingOccurrences(of: "\r", with: "\n")
            .replacingOccurrences(of: "\n", with: "\r\n")
    }

    package static func validateAddress(_ address: String, role: String) throws {
        let forbidden: Set<Character> = ["<", ">", " ", "\t", "\r", "\n", "\0", ","]
        guard !address.isEmpty, address.utf8.count <= 320, !address.contains(where: { forbidden.contains($0) }),
              address.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
        else {
            throw SMTPError.invalidMessage("invalid \(role) address")
        }
    }

    /// Header text without control characters (no header injection).
    private static func headerText(_ value: String) -> String {
        String(String.UnicodeScalarView(value.unicodeScalars.map {
            $0.value < 0x20 || $0.value == 0x7F ? " " : $0
        }))
    }
}
