import Foundation
import GatehouseTestSupport

/// A real SMTP server (aiosmtpd, see `smtp_test_server.py` next to this file) running
/// as a child process on 127.0.0.1 and a free port. Needs `python3` with
/// `aiosmtpd` installed (`pip install aiosmtpd`) and the `openssl` command.
final class SMTPTestServer: @unchecked Sendable {
    /// Same spelling as `SMTPConfiguration.Security`.
    enum Mode: String, Sendable { case plain, startTLS = "starttls", tls }

    /// A message as stored by the server, parsed.
    struct ReceivedEmail: Sendable {
        var mailFrom: String
        var rcptTos: [String]
        /// User that authenticated for this message, if any.
        var authUser: String?
        /// Whether the message came over TLS (STARTTLS or implicit).
        var tls: Bool
        /// Raw message bytes as received (after dot-unstuffing).
        var raw: Data
        /// Unfolded headers in order (name as sent, raw value).
        var headers: [(name: String, value: String)]
        /// Body as received (still transfer-encoded).
        var rawBody: String
        /// Body decoded (base64 when Content-Transfer-Encoding says so) as UTF-8.
        var body: String

        func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        /// Header value with RFC 2047 encoded-words decoded.
        func decodedHeader(_ name: String) -> String? {
            header(name).map(SMTPTestServer.decodeEncodedWords)
        }
    }

    struct Certificates: Sendable {
        let directory: String
        var caCertificate: String { directory + "/ca.pem" }
        var serverCertificate: String { directory + "/server.pem" }
        var serverKey: String { directory + "/server.key" }
    }

    static let scriptPath: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().appendingPathComponent("smtp_test_server.py").path

    /// A test CA and a server certificate for localhost/127.0.0.1, generated once per test run.
    static let certificates: Result<Certificates, any Error> = Result {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("smtp-test-certs-\(UUID().uuidString)").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", scriptPath, "gen-certs", "--out", directory]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        // Not `waitUntilExit`: on Linux it spins the calling thread's run loop, and a missed exit
        // spins it for ever (seen stalling parallel test runs). A bounded poll instead.
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        guard !process.isRunning, process.terminationStatus == 0 else {
            throw SMTPTestServerError("certificate generation failed (status \(process.terminationStatus))")
        }
        atexit {
            if case .success(let certificates) = SMTPTestServer.certificates {
                try? FileManager.default.removeItem(atPath: certificates.directory)
            }
        }
        return Certificates(directory: directory)
    }

    let port: Int
    let mode: Mode
    let directory: URL
    private let process: Process
    private let stdin: Pipe
    private let lock = NSLock()
    private var stopped = false

    /// Starts the server and waits (up to 15 s) until it prints `READY <port>`.
    /// `port` nil picks a free port; a given port lets a test bring a "down" server back.
    static func start(
        mode: Mode = .plain,
        authUser: String? = nil,
        authPassword: String? = nil,
        authExclude: String? = nil,
        failMode: String? = nil,
        rejectFraction: Double? = nil,
        port: Int? = nil
    ) async throws -> SMTPTestServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("smtp-test-\(UUID().uuidString)")
        let messages = directory.appendingPathComponent("messages")
        try FileManager.default.createDirectory(at: messages, withIntermediateDirectories: true)

        var arguments = ["python3", scriptPath, "serve", "--dir", messages.path, "--mode", mode.rawValue, "--exit-on-stdin-eof"]
        if mode != .plain {
            let certificates = try await blocking { try SMTPTestServer.certificates.get() }
            arguments += ["--cert", certificates.serverCertificate, "--key", certificates.serverKey]
        }
        if let authUser { arguments += ["--auth-user", authUser, "--auth-pass", authPassword ?? ""] }
        if let authExclude { arguments += ["--auth-exclude", authExclude] }
        if let failMode { arguments += ["--fail-mode", failMode] }
        if let rejectFraction { arguments += ["--reject-fraction", String(rejectFraction)] }
        if let port { arguments += ["--port", String(port)] }

        let stdoutURL = directory.appendingPathComponent("stdout.log")
        let stderrURL = directory.appendingPathComponent("stderr.log")
        _ = FileManager.default.createFile(atPath: stdoutURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let stdin = Pipe()
        process.standardInput = stdin
        process.standardOutput = try FileHandle(forWritingTo: stdoutURL)
        process.standardError = try FileHandle(forWritingTo: stderrURL)
        try ChildProcesses.run(process)

        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            let output = (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? ""
            if let line = output.split(separator: "\n").first(where: { $0.hasPrefix("READY ") }),
               let port = Int(line.dropFirst("READY ".count).trimmingCharacters(in: .whitespaces)) {
                return SMTPTestServer(port: port, mode: mode, directory: directory, process: process, stdin: stdin)
            }
            if !process.isRunning { break }
            try await Task.sleep(for: .milliseconds(25))
        }
        if process.isRunning { process.terminate() }
        let stderr = (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? ""
        throw SMTPTestServerError("SMTP test server did not start: \(stderr)")
    }

    private init(port: Int, mode: Mode, directory: URL, process: Process, stdin: Pipe) {
        self.port = port
        self.mode = mode
        self.directory = directory
        self.process = process
        self.stdin = stdin
    }

    deinit { stop() }

    /// Stops the server without waiting for it: the wait (and a SIGKILL if it lingers) happens on a
    /// thread of its own. It used to wait here, on a thread of Swift's cooperative pool, with
    /// `waitUntilExit`, which spins for ever when Foundation misses the child's exit: with two
    /// cores that is half the pool, and the parallel test runs stalled on it (the hang issue).
    func stop() {
        guard beginStop() else { return }
        let process = self.process, directory = self.directory
        Thread.detachNewThread {
            Self.reap(process, within: 3)
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// Stops the server and waits until it is gone (a test that needs its port closed), without
    /// holding a thread: it polls with `Task.sleep`.
    func stopAndWait() async {
        guard beginStop() else { return }
        for _ in 0..<150 where process.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        for _ in 0..<150 where process.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Marks the server stopping and asks it to stop (EOF on stdin and SIGTERM both do);
    /// false when it was stopped already.
    private func beginStop() -> Bool {
        let alreadyStopped = lock.withLock {
            defer { stopped = true }
            return stopped
        }
        guard !alreadyStopped else { return false }
        try? stdin.fileHandleForWriting.close()
        if process.isRunning { process.terminate() }
        return true
    }

    /// Waits up to `seconds` for the process to end, then SIGKILLs it; never blocks longer.
    private static func reap(_ process: Process, within seconds: TimeInterval) {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// Messages the server accepted, in arrival order.
    func receivedMessages() throws -> [ReceivedEmail] {
        let messages = directory.appendingPathComponent("messages")
        let names = try FileManager.default.contentsOfDirectory(atPath: messages.path)
            .filter { $0.hasPrefix("msg-") && $0.hasSuffix(".json") }.sorted()
        return try names.map { name in
            let meta = try JSONDecoder().decode(
                Envelope.self, from: Data(contentsOf: messages.appendingPathComponent(name)))
            let raw = try Data(contentsOf: messages.appendingPathComponent(meta.file))
            return Self.parse(raw: raw, envelope: meta)
        }
    }

    /// AUTH attempts seen by the server, "MECHANISM login ok|fail" (never the password).
    func authAttempts() throws -> [String] {
        let url = directory.appendingPathComponent("messages/auth.log")
        guard FileManager.default.fileExists(atPath: url.path) else { return [] }
        return try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map(String.init)
    }

    // MARK: - Parsing

    private struct Envelope: Decodable {
        var mail_from: String
        var rcpt_tos: [String]
        var auth_user: String?
        var tls: Bool
        var file: String
    }

    private static func parse(raw: Data, envelope: Envelope) -> ReceivedEmail {
        let text = String(decoding: raw, as: UTF8.self)
        let separator = text.range(of: "\r\n\r\n")
        let headerText = separator.map { String(text[..<$0.lowerBound]) } ?? text
        let rawBody = separator.map { String(text[$0.upperBound...]) } ?? ""

        var headers: [(name: String, value: String)] = []
        for line in headerText.components(separatedBy: "\r\n") {
            if line.first == " " || line.first == "\t", !headers.isEmpty {
                headers[headers.count - 1].value += line  // unfold: drop the CRLF, keep the WSP
            } else if let colon = line.firstIndex(of: ":") {
                headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
            }
        }
        var email = ReceivedEmail(
            mailFrom: envelope.mail_from, rcptTos: envelope.rcpt_tos, authUser: envelope.auth_user,
            tls: envelope.tls, raw: raw, headers: headers, rawBody: rawBody, body: rawBody)
        if email.header("Content-Transfer-Encoding")?.lowercased() == "base64" {
            let compact = rawBody.filter { !$0.isWhitespace }
            email.body = Data(base64Encoded: compact).map { String(decoding: $0, as: UTF8.self) } ?? "<invalid base64>"
        }
        return email
    }

    /// Decodes RFC 2047 `=?charset?B|Q?...?=` words (UTF-8 only); whitespace between
    /// adjacent encoded-words is dropped, as the RFC requires.
    static func decodeEncodedWords(_ value: String) -> String {
        let tokens = value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        var result = ""
        var previousWasEncoded = false
        for token in tokens {
            if let decoded = decodeWord(token) {
                if !result.isEmpty, !previousWasEncoded { result += " " }
                result += decoded
                previousWasEncoded = true
            } else {
                if !result.isEmpty { result += " " }
                result += token
                previousWasEncoded = false
            }
        }
        return result
    }

    private static func decodeWord(_ token: String) -> String? {
        guard token.hasPrefix("=?"), token.hasSuffix("?="), token.count > 4 else { return nil }
        let parts = token.dropFirst(2).dropLast(2).split(separator: "?", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].uppercased() == "UTF-8" else { return nil }
        switch parts[1].uppercased() {
        case "B":
            return Data(base64Encoded: String(parts[2])).map { String(decoding: $0, as: UTF8.self) }
        case "Q":
            var bytes: [UInt8] = []
            var index = parts[2].startIndex
            let text = parts[2]
            while index < text.endIndex {
                let character = text[index]
                if character == "=", let end = text.index(index, offsetBy: 3, limitedBy: text.endIndex),
                   let byte = UInt8(text[text.index(after: index)..<end], radix: 16) {
                    bytes.append(byte)
                    index = end
                    continue
                }
                bytes += character == "_" ? [0x20] : Array(String(character).utf8)
                index = text.index(after: index)
            }
            return String(decoding: bytes, as: UTF8.self)
        default:
            return nil
        }
    }
}

struct SMTPTestServerError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
