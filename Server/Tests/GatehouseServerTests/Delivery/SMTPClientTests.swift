import Foundation
import Logging
import NIOCore
import NIOPosix
import Testing

import GatehouseFoundation
import GatehouseServer

/// End-to-end tests of `SMTPClient` against a real SMTP server process (aiosmtpd).
@Suite("SMTPClient against a real SMTP server", .timeLimit(.minutes(2)))
struct SMTPClientTests {
    static let user = "mailer"
    static let password = "s3cret-Pa55-word"
    static let subject = "Подтверждение регистрации — Gatehouse ✓ (код 123456)"
    static let body = """
        Здравствуйте, Алиса!

        Ваш код подтверждения: 123456
        .this line starts with a dot
        .
        ..two dots
        Ссылка: https://gatehouse.local/verify?token=abc

        — Gatehouse
        """

    static func message(to: String = "alice@example.org") -> EmailMessage {
        EmailMessage(from: "no-reply@gatehouse.local", fromName: "Gatehouse", to: to, subject: subject, textBody: body)
    }

    static func client(
        _ server: SMTPTestServer?, port: Int? = nil, host: String = "127.0.0.1", security: SMTPConfiguration.Security,
        username: String? = nil, password: String? = nil, trustTestCA: Bool = true, verify: Bool = true,
        allowInsecureAuth: Bool = false, timeout: TimeAmount = .seconds(10), logger: Logger? = nil
    ) throws -> SMTPClient {
        let configuration = SMTPConfiguration(
            host: host, port: port ?? server!.port, security: security, username: username, password: password,
            heloName: "gatehouse-test", timeout: timeout,
            caCertificatePath: trustTestCA ? try SMTPTestServer.certificates.get().caCertificate : nil,
            verifyCertificates: verify, allowInsecureAuth: allowInsecureAuth)
        return SMTPClient(
            configuration: configuration, eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            logger: logger ?? Logger(label: "smtp-test"))
    }

    /// Checks the common content of a delivered `message()`.
    static func expectDelivered(_ email: SMTPTestServer.ReceivedEmail, to: String = "alice@example.org") {
        #expect(email.mailFrom == "no-reply@gatehouse.local")
        #expect(email.rcptTos == [to])
        #expect(email.header("From") == "\"Gatehouse\" <no-reply@gatehouse.local>")
        #expect(email.header("To") == to)
        #expect(email.decodedHeader("Subject") == subject)
        #expect(email.header("Subject")?.hasPrefix("=?UTF-8?B?") == true)
        #expect(email.body == body.replacingOccurrences(of: "\n", with: "\r\n"))
        #expect(email.header("MIME-Version") == "1.0")
        #expect(email.header("Content-Type") == "text/plain; charset=UTF-8")
        #expect(email.header("Content-Transfer-Encoding") == "base64")
        let messageID = email.header("Message-ID") ?? ""
        #expect(messageID.hasPrefix("<") && messageID.hasSuffix("@gatehouse.local>"))
        let dateFormatter = DateFormatter()
        dateFormatter.locale = Locale(identifier: "en_US_POSIX")
        dateFormatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
        let date = dateFormatter.date(from: email.header("Date") ?? "")
        #expect(date.map { abs($0.timeIntervalSinceNow) < 300 } == true, "Date: \(email.header("Date") ?? "nil")")
        let rawLines = String(decoding: email.raw, as: UTF8.self).components(separatedBy: "\r\n")
        #expect(rawLines.allSatisfy { $0.utf8.count <= 78 }, "every line of the message is at most 78 octets")
        #expect(email.rawBody.split(separator: "\r\n").allSatisfy { $0.count <= 76 })
    }

    // 1
    @Test("plain, no auth: From/To/Subject/body arrive intact (Russian text, dot lines)")
    func plainDelivery() async throws {
        let server = try await SMTPTestServer.start(mode: .plain)
        defer { server.stop() }
        try await Self.client(server, security: .none).send(Self.message())
        let received = try server.receivedMessages()
        try #require(received.count == 1)
        Self.expectDelivered(received[0])
        #expect(received[0].tls == false)
        #expect(received[0].authUser == nil)
    }

    @Test("dot-stuffing: raw lines starting with '.' (and a lone '.') survive a real server")
    func dotStuffingRaw() async throws {
        let server = try await SMTPTestServer.start(mode: .plain)
        defer { server.stop() }
        let raw = "Subject: dots\nX-Test: 1\n\n.leading dot\n.\n..two dots\r\nmiddle\r.\nlast"
        try await Self.client(server, security: .none)
            .sendRaw(raw, from: "no-reply@gatehouse.local", to: "bob@example.org")
        let received = try server.receivedMessages()
        try #require(received.count == 1)
        #expect(received[0].header("Subject") == "dots")
        #expect(received[0].header("X-Test") == "1")
        #expect(received[0].rawBody == ".leading dot\r\n.\r\n..two dots\r\nmiddle\r\n.\r\nlast\r\n")
    }

    // 2
    @Test("STARTTLS + AUTH PLAIN with the test CA trusted; nothing secret is logged")
    func startTLSAuthPlain() async throws {
        let server = try await SMTPTestServer.start(mode: .startTLS, authUser: Self.user, authPassword: Self.password)
        defer { server.stop() }
        let logs = SMTPCapturedLogs()
        var logger = Logger(label: "smtp-test") { _ in SMTPCapturingLogHandler(logs: logs) }
        logger.logLevel = .trace
        try await Self.client(
            server, host: "localhost", security: .startTLS, username: Self.user, password: Self.password, logger: logger
        ).send(Self.message())

        let received = try server.receivedMessages()
        try #require(received.count == 1)
        Self.expectDelivered(received[0])
        #expect(received[0].tls)
        #expect(received[0].authUser == Self.user)
        #expect(try server.authAttempts() == ["PLAIN \(Self.user) ok"])

        let lines = logs.lines
        #expect(lines.contains { $0.contains("C: STARTTLS") })
        #expect(lines.contains { $0.contains("AUTH PLAIN <redacted>") })
        let secrets = [
            Self.password, Data("\0\(Self.user)\0\(Self.password)".utf8).base64EncodedString(),
            Data(Self.password.utf8).base64EncodedString(), "Здравствуйте", "123456",
            String(Data(Self.body.replacingOccurrences(of: "\n", with: "\r\n").utf8).base64EncodedString().prefix(40)),
        ]
        for secret in secrets {
            #expect(!lines.contains { $0.contains(secret) }, "log leaks \(secret.prefix(6))…")
        }
    }

    @Test("STARTTLS + AUTH LOGIN when the server offers only LOGIN")
    func startTLSAuthLogin() async throws {
        let server = try await SMTPTestServer.start(
            mode: .startTLS, authUser: Self.user, authPassword: Self.password, authExclude: "PLAIN")
        defer { server.stop() }
        try await Self.client(server, security: .startTLS, username: Self.user, password: Self.password)
            .send(Self.message())
        let received = try server.receivedMessages()
        try #require(received.count == 1)
        Self.expectDelivered(received[0])
        #expect(received[0].tls)
        #expect(try server.authAttempts() == ["LOGIN \(Self.user) ok"])
    }

    // 3
    @Test("implicit TLS + AUTH")
    func implicitTLSAuth() async throws {
        let server = try await SMTPTestServer.start(mode: .tls, authUser: Self.user, authPassword: Self.password)
        defer { server.stop() }
        try await Self.client(server, security: .tls, username: Self.user, password: Self.password)
            .send(Self.message(to: "carol@example.org"))
        let received = try server.receivedMessages()
        try #require(received.count == 1)
        Self.expectDelivered(received[0], to: "carol@example.org")
        #expect(received[0].tls)
        #expect(received[0].authUser == Self.user)
    }

    // 4
    @Test("wrong password: authenticationFailed, nothing delivered, password not in the error")
    func wrongPassword() async throws {
        let server = try await SMTPTestServer.start(mode: .startTLS, authUser: Self.user, authPassword: Self.password)
        defer { server.stop() }
        let wrong = "wrong-Pa55-guess"
        let error = await #expect(throws: SMTPError.self) {
            try await Self.client(server, security: .startTLS, username: Self.user, password: wrong)
                .send(Self.message())
        }
        guard case .authenticationFailed(let code, _) = error else {
            Issue.record("expected .authenticationFailed, got \(String(describing: error))")
            return
        }
        #expect(code == 535)
        #expect(error?.isPermanent == true)
        #expect(!"\(error!)".contains(wrong))
        #expect(try server.receivedMessages().isEmpty)
        #expect(try server.authAttempts() == ["PLAIN \(Self.user) fail"])
    }

    // 5
    @Test(
        "server rejects RCPT: unexpectedReply with the right isPermanent",
        arguments: [("rcpt-451", 451, false), ("rcpt-550", 550, true)])
    func rcptRejected(failMode: String, expectedCode: Int, permanent: Bool) async throws {
        let server = try await SMTPTestServer.start(mode: .plain, failMode: failMode)
        defer { server.stop() }
        let error = await #expect(throws: SMTPError.self) {
            try await Self.client(server, security: .none).send(Self.message())
        }
        guard case .unexpectedReply(let command, let code, let message) = error else {
            Issue.record("expected .unexpectedReply, got \(String(describing: error))")
            return
        }
        #expect(command == "RCPT TO")
        #expect(code == expectedCode)
        #expect(message.contains("Test server"))
        #expect(error?.isPermanent == permanent)
        #expect(try server.receivedMessages().isEmpty)
    }

    @Test("server rejects the message after DATA with 554: permanent unexpectedReply")
    func dataRejected() async throws {
        let server = try await SMTPTestServer.start(mode: .plain, failMode: "data-554")
        defer { server.stop() }
        let error = await #expect(throws: SMTPError.self) {
            try await Self.client(server, security: .none).send(Self.message())
        }
        #expect(error == .unexpectedReply(command: "end of data", code: 554, message: "5.6.0 Test server: message rejected"))
        #expect(error?.isPermanent == true)
    }

    @Test("server drops the connection at RCPT: transient connectionFailed")
    func connectionDropped() async throws {
        let server = try await SMTPTestServer.start(mode: .plain, failMode: "drop-on-rcpt")
        defer { server.stop() }
        let error = await #expect(throws: SMTPError.self) {
            try await Self.client(server, security: .none).send(Self.message())
        }
        guard case .connectionFailed = error else {
            Issue.record("expected .connectionFailed, got \(String(describing: error))")
            return
        }
        #expect(error?.isPermanent == false)
    }

    @Test("server never answers end of data: .timeout after the configured time")
    func exchangeTimeout() async throws {
        let server = try await SMTPTestServer.start(mode: .plain, failMode: "hang-on-data")
        defer { server.stop() }
        let clock = ContinuousClock()
        let start = clock.now
        let error = await #expect(throws: SMTPError.self) {
            try await Self.client(server, security: .none, timeout: .seconds(1)).send(Self.message())
        }
        #expect(error == .timeout)
        // The configured second, not the 30 s default (the bound leaves a loaded machine its slack).
        #expect(clock.now - start < .seconds(20))
    }

    // 6
    @Test("nothing listening: connectionFailed quickly")
    func nothingListening() async throws {
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(listener.localAddress?.port)
        try await listener.close()

        let clock = ContinuousClock()
        let start = clock.now
        let error = await #expect(throws: SMTPError.self) {
            try await Self.client(nil, port: port, security: .none, timeout: .seconds(30)).send(Self.message())
        }
        guard case .connectionFailed = error else {
            Issue.record("expected .connectionFailed, got \(String(describing: error))")
            return
        }
        #expect(error?.isPermanent == false)
        // Refused at once, not after the 30 s connect timeout (the bound leaves a loaded machine its slack).
        #expect(clock.now - start < .seconds(20))
    }

    @Test("server down (connectionFailed), then back on the same port: delivered")
    func serverDownThenBack() async throws {
        let probe = try await SMTPTestServer.start(mode: .startTLS, authUser: Self.user, authPassword: Self.password)
        let port = probe.port
        await probe.stopAndWait()
        let client = try Self.client(
            nil, port: port, security: .startTLS, username: Self.user, password: Self.password, timeout: .seconds(5))
        let error = await #expect(throws: SMTPError.self) { try await client.send(Self.message()) }
        guard case .connectionFailed = error else {
            Issue.record("expected .connectionFailed, got \(String(describing: error))")
            return
        }
        let server = try await SMTPTestServer.start(
            mode: .startTLS, authUser: Self.user, authPassword: Self.password, port: port)
        defer { server.stop() }
        #expect(server.port == port)
        try await client.send(Self.message())
        let received = try server.receivedMessages()
        try #require(received.count == 1)
        Self.expectDelivered(received[0])
    }

    // 7
    @Test("STARTTLS demanded but not offered: startTLSNotSupported")
    func startTLSNotOffered() async throws {
        let server = try await SMTPTestServer.start(mode: .plain)
        defer { server.stop() }
        let error = await #expect(throws: SMTPError.self) {
            try await Self.client(server, security: .startTLS).send(Self.message())
        }
        #expect(error == .startTLSNotSupported)
        #expect(try server.receivedMessages().isEmpty)
    }

    // 8
    @Test("AUTH over plain TCP without allowInsecureAuth: refused before any credential is sent")
    func insecureAuthRefused() async throws {
        // This server offers AUTH over plain TCP, so only the client's own check stops it.
        let server = try await SMTPTestServer.start(mode: .plain, authUser: Self.user, authPassword: Self.password)
        defer { server.stop() }
        let error = await #expect(throws: SMTPError.self) {
            try await Self.client(server, security: .none, username: Self.user, password: Self.password)
                .send(Self.message())
        }
        #expect(error == .insecureAuthRefused)
        #expect(try server.authAttempts().isEmpty)
        #expect(try server.receivedMessages().isEmpty)

        // Control: the same server does accept the credentials in clear text when explicitly allowed.
        try await Self.client(
            server, security: .none, username: Self.user, password: Self.password, allowInsecureAuth: true
        ).send(Self.message())
        #expect(try server.authAttempts() == ["PLAIN \(Self.user) ok"])
        #expect(try server.receivedMessages().count == 1)
    }

    // 9
    @Test("untrusted certificate: TLS error, nothing delivered", arguments: [SMTPConfiguration.Security.startTLS, .tls])
    func untrustedCertificate(security: SMTPConfiguration.Security) async throws {
        let server = try await SMTPTestServer.start(
            mode: security == .tls ? .tls : .startTLS, authUser: Self.user, authPassword: Self.password)
        defer { server.stop() }
        let error = await #expect(throws: SMTPError.self) {
            try await Self.client(
                server, security: security, username: Self.user, password: Self.password, trustTestCA: false
            ).send(Self.message())
        }
        guard case .tlsFailed(let reason) = error else {
            Issue.record("expected .tlsFailed, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("CERTIFICATE_VERIFY_FAILED") || reason.lowercased().contains("certificate"), "\(reason)")
        #expect(try server.receivedMessages().isEmpty)
        #expect(try server.authAttempts().isEmpty)
    }

    @Test("verifyCertificates false (dangerous) accepts the untrusted certificate")
    func verificationDisabled() async throws {
        let server = try await SMTPTestServer.start(mode: .tls)
        defer { server.stop() }
        try await Self.client(server, security: .tls, trustTestCA: false, verify: false).send(Self.message())
        #expect(try server.receivedMessages().count == 1)
    }

    @Test("a missing CA file is a tlsFailed error, not a crash")
    func missingCAFile() async throws {
        let configuration = SMTPConfiguration(
            host: "127.0.0.1", port: 1, security: .tls, caCertificatePath: "/nonexistent/ca.pem")
        let client = SMTPClient(
            configuration: configuration, eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            logger: Logger(label: "smtp-test"))
        let error = await #expect(throws: SMTPError.self) { try await client.send(Self.message()) }
        guard case .tlsFailed = error else {
            Issue.record("expected .tlsFailed, got \(String(describing: error))")
            return
        }
    }
}

@Suite("SMTP message formatting")
struct SMTPMessageFormatterTests {
    @Test("long non-ASCII subject becomes folded encoded-words that decode back")
    func encodedWords() {
        let subject = String(repeating: "Длинная тема письма 😀 ", count: 8)
        let encoded = SMTPMessageFormatter.encodeHeaderValue(subject)
        let lines = encoded.components(separatedBy: "\r\n")
        #expect(lines.count > 1)
        #expect(lines.allSatisfy { $0.trimmingCharacters(in: .whitespaces).utf8.count <= 75 })
        // Unfolding removes the CRLF; whitespace between encoded-words is ignored when decoding.
        #expect(SMTPTestServer.decodeEncodedWords(encoded.replacingOccurrences(of: "\r\n", with: "")) == subject)
        #expect(SMTPMessageFormatter.encodeHeaderValue("Plain ASCII") == "Plain ASCII")
    }

    @Test("header injection via subject or display name is neutralised")
    func headerInjection() throws {
        let message = EmailMessage(
            from: "a@b.example", fromName: "Evil\r\nBcc: victim@example.org", to: "c@d.example",
            subject: "Hi\r\nBcc: victim@example.org", textBody: "x")
        let rendered = try SMTPMessageFormatter.render(message, fallbackDomain: "localhost")
        #expect(!rendered.contains("\r\nBcc:"))
        let bad = EmailMessage(from: "a@b.example", to: "c@d.example>\r\nRCPT TO:<x@y", subject: "s", textBody: "x")
        #expect(throws: SMTPError.self) { try SMTPMessageFormatter.render(bad, fallbackDomain: "localhost") }
    }

    @Test("dot-stuffing and CRLF normalisation")
    func dotStuffing() {
        #expect(SMTPMessageFormatter.dotStuffed("a\n.b\n.\nc") == "a\r\n..b\r\n..\r\nc\r\n.\r\n")
        #expect(SMTPMessageFormatter.dotStuffed("a\r\n") == "a\r\n.\r\n")
        #expect(SMTPMessageFormatter.dotStuffed(".\u{301}x") == "..\u{301}x\r\n.\r\n")
    }

    @Test("RFC 5322 date")
    func date() {
        #expect(SMTPMessageFormatter.rfc5322Date(Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 +0000")
    }

    @Test("errors never show the password; isPermanent")
    func errors() {
        let configuration = SMTPConfiguration(host: "h", username: "u", password: "hunter2")
        #expect(!configuration.description.contains("hunter2"))
        #expect(SMTPError.unexpectedReply(command: "RCPT TO", code: 451, message: "").isPermanent == false)
        #expect(SMTPError.unexpectedReply(command: "RCPT TO", code: 550, message: "").isPermanent)
        #expect(SMTPError.timeout.isPermanent == false)
        #expect(configuration.port == 587)
    }
}

/// Collects formatted log lines (message + metadata) for leak checks.
final class SMTPCapturedLogs: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [String] = []
    func append(_ line: String) { lock.withLock { storage.append(line) } }
    var lines: [String] { lock.withLock { storage } }
}

struct SMTPCapturingLogHandler: LogHandler {
    let logs: SMTPCapturedLogs
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        logs.append("\(event.level) \(event.message) \(all)")
    }
}
