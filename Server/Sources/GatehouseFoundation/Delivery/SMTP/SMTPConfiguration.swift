import NIOCore

/// Where and how ``SMTPClient`` delivers mail.
///
/// The password is never part of `description`, logs or error messages.
package struct SMTPConfiguration: Sendable, CustomStringConvertible {
    package enum Security: String, Sendable, CaseIterable {
        /// Plain TCP. Credentials are refused unless `allowInsecureAuth` is set.
        case none
        /// Plain TCP, then `STARTTLS` (fails if the server does not offer it). Usually port 587.
        case startTLS = "starttls"
        /// Implicit TLS from the first byte ("SMTPS"). Usually port 465.
        case tls
    }

    package var host: String
    package var port: Int
    package var security: Security
    /// AUTH is used only when both `username` and `password` are set.
    package var username: String?
    package var password: String?
    /// Name sent with EHLO/HELO.
    package var heloName: String
    /// Upper bound for one whole `send` (connect, TLS, dialogue, QUIT).
    package var timeout: TimeAmount
    /// Extra trusted CA certificate (PEM file), in addition to the system roots.
    package var caCertificatePath: String?
    /// Verify the server certificate chain and host name.
    /// DANGEROUS when false: anyone on the network path can read the mail and the
    /// credentials. Only for local development against self-signed servers.
    package var verifyCertificates: Bool
    /// Allow AUTH over an unencrypted connection (`security == .none`).
    /// DANGEROUS: the password travels in clear text.
    package var allowInsecureAuth: Bool

    /// - Parameter port: defaults to 25 (`.none`), 587 (`.startTLS`) or 465 (`.tls`).
    package init(
        host: String,
        port: Int? = nil,
        security: Security = .startTLS,
        username: String? = nil,
        password: String? = nil,
        heloName: String = "localhost",
        timeout: TimeAmount = .seconds(30),
        caCertificatePath: String? = nil,
        verifyCertificates: Bool = true,
        allowInsecureAuth: Bool = false
    ) {
        self.host = host
        self.port = port ?? Self.defaultPort(for: security)
        self.security = security
        self.username = username
        self.password = password
        self.heloName = heloName
        self.timeout = timeout
        self.caCertificatePath = caCertificatePath
        self.verifyCertificates = verifyCertificates
        self.allowInsecureAuth = allowInsecureAuth
    }

    package static func defaultPort(for security: Security) -> Int {
        switch security {
        case .none: 25
        case .startTLS: 587
        case .tls: 465
        }
    }

    /// True when AUTH will be attempted.
    package var hasCredentials: Bool {
        guard let username, !username.isEmpty, password != nil else { return false }
        return true
    }

    package var description: String {
        "SMTPConfiguration(host: \(host), port: \(port), security: \(security.rawValue), "
            + "username: \(username ?? "nil"), password: \(password == nil ? "nil" : "<redacted>"), "
            + "heloName: \(heloName), timeout: \(timeout.nanoseconds / 1_000_000) ms, "
            + "caCertificatePath: \(caCertificatePath ?? "nil"), verifyCertificates: \(verifyCertificates), "
            + "allowInsecureAuth: \(allowInsecureAuth))"
    }
}

/// A plain-text UTF-8 email.
package struct EmailMessage: Sendable {
    /// Envelope and header sender address, e.g. "no-reply@gatehouse.local".
    package var from: String
    /// Display name, e.g. "Gatehouse".
    package var fromName: String?
    package var to: String
    package var subject: String
    package var textBody: String

    package init(from: String, fromName: String? = nil, to: String, subject: String, textBody: String) {
        self.from = from
        self.fromName = fromName
        self.to = to
        self.subject = subject
        self.textBody = textBody
    }
}

/// Failures of ``SMTPClient/send(_:)``.
///
/// Descriptions never contain the password, AUTH payloads or the message body.
package enum SMTPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// TCP connection could not be made, or it broke during the dialogue.
    case connectionFailed(String)
    /// The whole exchange took longer than `SMTPConfiguration.timeout`.
    case timeout
    /// TLS setup or handshake failed (untrusted certificate, bad CA file, ...).
    case tlsFailed(String)
    /// The server answered `command` with an unexpected reply.
    case unexpectedReply(command: String, code: Int, message: String)
    /// `security == .startTLS` but the server did not offer STARTTLS.
    case startTLSNotSupported
    /// The server rejected the credentials (or the AUTH dialogue).
    case authenticationFailed(code: Int, message: String)
    /// Credentials are configured but the server offers neither AUTH PLAIN nor AUTH LOGIN.
    case authenticationNotSupported(offered: [String])
    /// Credentials configured for an unencrypted connection without `allowInsecureAuth`.
    case insecureAuthRefused
    /// The message or its addresses cannot be sent as given.
    case invalidMessage(String)
    /// The server broke the SMTP protocol.
    case protocolError(String)

    /// True when retrying the same message unchanged will not help
    /// (5xx replies and configuration problems); false for transient failures
    /// (4xx replies, network trouble, timeouts).
    package var isPermanent: Bool {
        switch self {
        case .unexpectedReply(_, let code, _), .authenticationFailed(let code, _):
            code >= 500
        case .startTLSNotSupported, .insecureAuthRefused, .authenticationNotSupported, .invalidMessage:
            true
        case .connectionFailed, .timeout, .tlsFailed, .protocolError:
            false
        }
    }

    package var description: String {
        switch self {
        case .connectionFailed(let reason): "SMTP connection failed: \(reason)"
        case .timeout: "SMTP exchange timed out"
        case .tlsFailed(let reason): "SMTP TLS failure: \(reason)"
        case .unexpectedReply(let command, let code, let message):
            "SMTP server replied \(code) to \(command): \(message)"
        case .startTLSNotSupported: "SMTP server does not offer STARTTLS"
        case .authenticationFailed(let code, let message): "SMTP authentication failed (\(code)): \(message)"
        case .authenticationNotSupported(let offered):
            "SMTP server offers no supported AUTH mechanism (offered: \(offered.isEmpty ? "none" : offered.joined(separator: " ")))"
        case .insecureAuthRefused: "refusing to send SMTP credentials over an unencrypted connection"
        case .invalidMessage(let reason): "invalid email message: \(reason)"
        case .protocolError(let reason): "SMTP protocol error: \(reason)"
        }
    }
}
