import ArgumentParser
import Foundation
import GatehouseAPI
import GatehouseServer

@main
struct Gatehouse: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatehouse",
        abstract: "Gatehouse: accounts and identity for iOS apps.",
        subcommands: [Serve.self, Migrate.self, Outbox.self, BcryptSpeed.self],
        defaultSubcommand: Serve.self
    )
}

/// Reads the environment, printing one clear line and exiting on a bad value.
func loadConfiguration(host: String? = nil, port: Int? = nil) throws -> GatehouseConfiguration {
    var env = ProcessInfo.processInfo.environment
    if let host { env["GATEHOUSE_HOST"] = host }
    if let port { env["GATEHOUSE_PORT"] = String(port) }
    do {
        return try GatehouseConfiguration.fromEnvironment(env)
    } catch let error as ConfigurationError {
        FileHandle.standardError.write(Data("gatehouse: \(error.description)\n".utf8))
        throw ExitCode(78)  // EX_CONFIG
    }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the server (the default).")

    @Option(help: "Address to listen on (env GATEHOUSE_HOST, default 127.0.0.1).")
    var host: String?

    @Option(help: "Port to listen on (env GATEHOUSE_PORT, default 8080).")
    var port: Int?

    func run() async throws {
        let configuration = try loadConfiguration(host: host, port: port)
        // The banner goes out once the port is bound, so "listening" is true when it is read.
        let app = try await buildApplication(configuration: configuration, onServerRunning: { boundPort in
            for line in ServerCommands.banner(configuration: configuration, port: boundPort) {
                print(line)
            }
            fflush(nil)  // flush stdout even when it is a pipe or a file
        })
        try await app.runService()
    }
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run pending database migrations and exit.")

    func run() async throws {
        let configuration = try loadConfiguration()
        try await ServerCommands.migrate(configuration: configuration)
        print("migrations applied")
    }
}

struct Outbox: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print queued and sent messages (codes, mails) from the outbox.")

    @Option(help: "Only messages to this destination (E.164 phone or lower-case email).")
    var to: String?

    @Option(help: "How many of the newest messages to print.")
    var last: Int = 10

    func run() async throws {
        let configuration = try loadConfiguration()
        let messages = try await ServerCommands.outbox(configuration: configuration, to: to, last: max(1, min(last, 1000)))
        if messages.isEmpty {
            print("outbox is empty" + (to.map { " for \($0)" } ?? ""))
        }
        for message in messages.reversed() {
            print("[\(message.createdAt)] \(message.channel) to \(message.to)" + (message.subject.map { ": \($0)" } ?? ""))
            if let code = message.code { print("  code: \(code)") }
            for line in message.body.split(separator: "\n", omittingEmptySubsequences: false) {
                print("  \(line)")
            }
        }
    }
}

struct BcryptSpeed: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bcrypt-speed",
        abstract: "Time bcrypt at the configured cost (GATEHOUSE_BCRYPT_COST) on one core, to choose a cost."
    )

    @Option(help: "bcrypt cost (default: GATEHOUSE_BCRYPT_COST, else 10).")
    var cost: Int?

    @Option(help: "How many hashes to time.")
    var count: Int = 20

    func run() async throws {
        let cost = try self.cost ?? loadConfiguration().passwords.bcryptCost
        guard (4...16).contains(cost) else { throw ValidationError("--cost must be 4…16") }
        let seconds = ServerCommands.bcryptSecondsPerHash(cost: cost, count: max(1, count))
        let cores = ProcessInfo.processInfo.activeProcessorCount
        print(String(format: "bcrypt cost %d: %.2f ms per hash, %.1f hashes/s per core, %.1f hashes/s on %d cores",
                     cost, seconds * 1000, 1 / seconds, Double(cores) / seconds, cores))
    }
}
