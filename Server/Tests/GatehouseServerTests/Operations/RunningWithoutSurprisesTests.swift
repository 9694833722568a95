import Foundation
import GatehouseFoundation
import GatehouseServer
import GatehouseTestSupport
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Production never fakes delivery: a server whose codes would stay in the outbox does not start, unless the operator
/// said so, and then it says so at every start.
@Suite("Production delivery")
struct ProductionDeliveryTests {
    let production = ["GATEHOUSE_ENV": "production", "GATEHOUSE_SECRET": String(repeating: "s", count: 40)]

    @Test("gatehouse serve in production without SMTP or an SMS gateway exits 78 naming the variable, before it listens")
    func productionWithoutDeliveryDoesNotStart() async throws {
        let cli = CommandLineTests()
        let directory = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // MUT
        let (process, output) = try cli.run(["serve", "--port", "0"], in: directory, env: production)
        try await cli.waitForExit(process, seconds: 60)
        let log = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        #expect(process.terminationStatus == 78, "\(log)")
        #expect(log.contains("GATEHOUSE_EMAIL_CHANNEL") && log.contains("GATEHOUSE_ALLOW_DEV_DELIVERY=true"), "\(log)")
        #expect(!log.contains("Gatehouse listening"), "\(log)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("gatehouse.sqlite").path), "nothing was made")
    }

    @Test("with SMTP but no SMS gateway the SMS channel is named; with both the configuration is accepted")
    func eachChannelIsChecked() throws {
        let smtp = production.merging(["GATEHOUSE_EMAIL_CHANNEL": "smtp", "SMTP_HOST": "mail.example.com"]) { $1 }
        let error = try #require(throws: ConfigurationError.self) { try GatehouseConfiguration.fromEnvironment(smtp) }
        #expect(error.variable == "GATEHOUSE_SMS_CHANNEL" && error.description.contains("SMS_HTTP_URL"))
        let both = try GatehouseConfiguration.fromEnvironment(smtp.merging(["GATEHOUSE_SMS_CHANNEL": "sms-http",
                                                                             "SMS_HTTP_URL": "https://sms.example.com/send"]) { $1 })
        #expect(both.delivery.emailChannel == .smtp && both.delivery.smsChannel == .smsHTTP && !both.allowDevelopmentDelivery)
        #expect(!ServerCommands.banner(configuration: both, port: 8080).contains { $0.contains("outbox") })
    }

    @Test("the explicit opt-out starts, and the banner warns that codes reach nobody")
    func optOutIsLoud() throws {
        let c = try GatehouseConfiguration.fromEnvironment(production.merging(["GATEHOUSE_ALLOW_DEV_DELIVERY": "true"]) { $1 })
        #expect(c.allowDevelopmentDelivery && c.delivery.emailChannel == .dev)
        let banner = ServerCommands.banner(configuration: c, port: 8080)
        #expect(banner.contains { $0.hasPrefix("WARNING: production with development delivery") && $0.contains("reach nobody") }, "\(banner)")
        #expect(!banner.contains { $0.contains("/dev/outbox") }, "production serves no /dev/outbox: the banner does not send anyone there")
    }
}

/// Errors that say why: the port and the database named, never a password, before anything is migrated.
@Suite("Start-up errors")
struct StartupErrorTests {
    @Test("a port in use: serve says which and what to do, before any migration (no database made)")
    func portInUse() async throws {
        // setup: a port another process would hold (this test's own HTTP receiver listens there)
        let holder = HTTPReceiver()
        let port = try await holder.start()
        defer { Task { await holder.stop() } }

        // MUT 1: the check itself
        let error = try #require(throws: ReadableError.self) { try ServerCommands.checkListenable(host: "127.0.0.1", port: port) }
        #expect(error.description.contains("127.0.0.1:\(port)") && error.description.contains("another process"), "\(error)")
        // MUT 2: the binary
        let cli = CommandLineTests()
        let directory = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (process, output) = try cli.run(["serve", "--port", "\(port)"], in: directory)
        try await cli.waitForExit(process, seconds: 60)
        let log = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        #expect(process.terminationStatus != 0 && log.contains("cannot listen on 127.0.0.1:\(port): another process"), "\(log)")
        #expect(!log.contains("errno") && !log.contains("bind(descriptor"), "\(log)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("gatehouse.sqlite").path), "refused before migrating")
    }

    @Test("an unreachable PostgreSQL: a command names its host, port and database and the reason, and never the password")
    func unreachablePostgres() async throws {
        let cli = CommandLineTests()
        let directory = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Port 1 on loopback: nothing listens there.
        let url = "postgres://gatehouse:hunter2-secret@127.0.0.1:1/gatehouse"
        for command in [["accounts", "find", "annlee"], ["migrate"]] {
            // MUT
            let (process, output) = try cli.run(command, in: directory, env: ["DATABASE_URL": url])
            try await cli.waitForExit(process, seconds: 60)
            let log = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            #expect(process.terminationStatus != 0, "\(command): \(log)")
            #expect(log.contains("cannot reach PostgreSQL 127.0.0.1:1/gatehouse: connection refused"), "\(command): \(log)")
            #expect(!log.contains("hunter2") && !log.contains("Generic description"), "\(command): \(log)")
        }
    }
}

extension StartupErrorTests {
    @Test("a blob folder this user cannot write: serve names it and the setting, before any migration (no 500 at the first upload)")
    func blobFolderNotWritable() async throws {
        let cli = CommandLineTests()
        let directory = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A folder inside a plain file: refused even to root, which CI's tests run as.
        let file = directory.appendingPathComponent("a-file")
        try Data("x".utf8).write(to: file)
        let folder = file.appendingPathComponent("blobs").path

        // MUT
        let (process, output) = try cli.run(["serve", "--port", "0"], in: directory, env: ["GATEHOUSE_BLOB_DIR": folder])
        try await cli.waitForExit(process, seconds: 60)

        // validate
        let log = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        #expect(process.terminationStatus != 0, "\(log)")
        #expect(log.contains("the blob folder \(folder) cannot be written by this user (not a directory): set GATEHOUSE_BLOB_DIR"), "\(log)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("gatehouse.sqlite").path), "refused before migrating")
        // A folder that can be made passes the check, which makes it and leaves nothing in it.
        let fine = directory.appendingPathComponent("new/blobs")
        var configuration = GatehouseConfiguration.testing(database: .sqlite(path: directory.appendingPathComponent("x.sqlite").path))
        configuration.storage.directory = fine.path
        try ServerCommands.checkBlobFolder(configuration)
        #expect(try FileManager.default.contentsOfDirectory(atPath: fine.path).isEmpty)
    }
}

/// The server's log lines as a log pipeline reads them.
@Suite("Log lines")
struct LogLineTests {
    @Test("GATEHOUSE_LOG_FORMAT=json: every line one JSON object; a request logged with one id, the one it answered with")
    func jsonLines() async throws {
        let cli = CommandLineTests()
        let directory = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // The banner's lines (for people) are left out by their prefixes; every other line is the log.
        let (process, output) = try cli.run(["serve", "--port", "0"], in: directory, env: ["GATEHOUSE_LOG_FORMAT": "json"])
        let port = try await cli.boundPort(of: process, output: output)
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/health")!)
        request.setValue("trace-42", forHTTPHeaderField: "X-Request-Id")
        var answered: HTTPURLResponse?
        for _ in 0..<100 where answered?.statusCode != 200 {
            answered = (try? await URLSession.shared.data(for: request))?.1 as? HTTPURLResponse
            if answered?.statusCode != 200 { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(answered?.value(forHTTPHeaderField: "X-Request-Id") == "trace-42")
        process.interrupt()
        try await cli.waitForExit(process)

        // validate: the log lines (everything but the banner's) are JSON objects
        let log = try String(contentsOf: output, encoding: .utf8)
        let lines = log.split(separator: "\n").filter { !$0.hasPrefix("Gatehouse listening") && !$0.hasPrefix("database: ")
            && !$0.hasPrefix("dev delivery: ") && !$0.hasPrefix("push: ") }
        var objects: [[String: Any]] = []
        for line in lines {
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object != nil, "not a JSON object: \(line)")
            if let object { objects.append(object) }
        }
        #expect(objects.allSatisfy { $0["time"] is String && $0["level"] is String && $0["message"] is String })
        let health = objects.filter { ($0["message"] as? String)?.hasPrefix("GET /health 200") == true && $0["request.id"] as? String == "trace-42" }
        #expect(health.count == 1, "\(objects)")
        #expect(objects.allSatisfy { $0["hb.request.id"] == nil }, "one request id")
        let time = health.first?["time"] as? String ?? ""
        #expect(time.hasSuffix("Z"), "UTC: \(time)")
    }
}

/// What a script reads from `--json`: the API's dates, the right exit status.
@Suite("The commands' --json")
struct CommandJSONTests {
    /// The command's JSON: the last line of its output (the first, on standard error, names the database).
    func json(_ output: URL) throws -> Any {
        let log = try String(contentsOf: output, encoding: .utf8)
        let last = log.split(separator: "\n").last.map(String.init) ?? ""
        return try JSONSerialization.jsonObject(with: Data(last.utf8))
    }

    @Test("dates in ISO 8601 as the API writes them; clients import --json exits 2 when a row is refused, as its text form does")
    func datesAndExitStatus() async throws {
        let cli = CommandLineTests()
        let directory = try await cli.migratedDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let configuration = CommandLineTests.configuration(of: directory)
        _ = try await ConsoleCommands.createOperator(configuration: configuration, name: "ann", role: "admin", password: "correct-horse-battery-9", as: nil)

        // MUT 1: a date in --json
        let (list, listed) = try cli.run(["operators", "list", "--json"], in: directory)
        try await cli.waitForExit(list, seconds: 60)
        let operators = try #require(try json(listed) as? [[String: Any]])
        let createdAt = try #require(operators.first?["createdAt"] as? String, "\(operators)")
        #expect(ISO8601DateFormatter().date(from: createdAt) != nil, "ISO 8601, not seconds since 2001: \(createdAt)")

        // MUT 2: refused rows in --json
        let file = directory.appendingPathComponent("clients.jsonl")
        try Data("{\"phone\":\"+79123456789\",\"room\":\"12\"}\n{\"phone\":\"not a phone\"}\n".utf8).write(to: file)
        let (importing, imported) = try cli.run(["clients", "import", file.path, "--json"], in: directory)
        try await cli.waitForExit(importing, seconds: 60)
        let report = try #require(try json(imported) as? [String: Any])
        #expect(importing.terminationStatus == 2, "\(report)")
        #expect(report["created"] as? Int == 1 && (report["refused"] as? [Any])?.count == 1, "\(report)")
    }
}


@Suite("Operators made at a terminal")
struct OperatorsAtATerminalTests {
    @Test("gatehouse operators create in a pseudo-terminal: asked twice, never echoed; two that differ make nothing")
    func passwordPrompt() async throws {
        let cli = CommandLineTests()
        let directory = try await cli.migratedDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Support/operators_create_tty.py").path

        // MUT
        let (status, output) = try await runPythonScript(script, ["--gatehouse", CommandLineTests.binary.path, "--dir", directory.path])

        // validate: the script's steps, then the database: ann made, bob not
        #expect(status == 0 && output.contains("operators create at a terminal passed"), "\(output)")
        let configuration = CommandLineTests.configuration(of: directory)
        let names = try await ConsoleCommands.listOperators(configuration: configuration).map(\.name)
        #expect(names == ["ann"], "\(names)")
    }
}
