import Foundation
import GatehouseTestSupport

/// A PostgreSQL primary of its own and a streaming replica of it, for one test: `initdb` of a small
/// cluster with one empty database, `pg_basebackup` of it, and a hot standby that streams from it,
/// each on a free port of 127.0.0.1, with PostgreSQL's programs (the newest installed version's).
///
/// Not a replica of the tests' shared server (`POSTGRES_URL`): every other test creates and drops
/// databases there, each copy of the migrated template written to the WAL, and on a CI machine with
/// a slower disk the replica of all that stayed further behind than any lag limit for a whole test.
/// A cluster of its own replays only what the test writes.
///
/// Run as the `postgres` user when the tests run as root (`setpriv`, which replaces itself with the
/// server, so the process tracked is the server's). The replica is stopped with SIGQUIT (PostgreSQL's
/// immediate shutdown, which takes its backends with it, as a crash of the machine would); both are
/// stopped and their folder removed at the end.
final class PostgresReplica: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible { let description: String }

    /// The primary's database and the same database on the replica.
    let primaryURL: String
    let replicaURL: String
    private let primaryPort: Int
    private let replicaPort: Int
    private let folder: URL
    private let bin: String
    private var primary: Process?
    private var replica: Process?

    private init(primaryPort: Int, replicaPort: Int, folder: URL, bin: String) {
        self.primaryURL = "postgres://postgres@127.0.0.1:\(primaryPort)/gatehouse"
        self.replicaURL = "postgres://postgres@127.0.0.1:\(replicaPort)/gatehouse"
        self.primaryPort = primaryPort
        self.replicaPort = replicaPort
        self.folder = folder
        self.bin = bin
    }

    static func with<T>(_ body: (PostgresReplica) async throws -> T) async throws -> T {
        guard let bin = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql"))?
            .sorted(by: { $0.compare($1, options: .numeric) == .orderedAscending }).last.map({ "/usr/lib/postgresql/\($0)/bin" }) else {
            throw Failure(description: "PostgreSQL is not installed")
        }
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("gh-replica-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        if getuid() == 0 { try FileManager.default.setAttributes([.ownerAccountName: "postgres"], ofItemAtPath: folder.path) }
        let pair = PostgresReplica(primaryPort: LocalPorts.free(), replicaPort: LocalPorts.free(), folder: folder, bin: bin)
        defer {
            pair.stop()
            pair.primary.map { Self.stop($0, port: pair.primaryPort, signal: SIGINT) }
            try? FileManager.default.removeItem(at: folder)
        }
        let primaryData = folder.appendingPathComponent("primary").path
        let made = try await blocking { try Self.run(bin + "/initdb", ["-D", primaryData, "-A", "trust", "-U", "postgres"]) }
        guard made == 0 else { throw Failure(description: "initdb failed (\(made))") }
        pair.primary = try await pair.serve(data: primaryData, port: pair.primaryPort)
        try await TestDatabase.postgresAdmin(url: "postgres://postgres@127.0.0.1:\(pair.primaryPort)/postgres", "CREATE DATABASE gatehouse")
        let base = try await blocking {
            try Self.run(bin + "/pg_basebackup", ["-h", "127.0.0.1", "-p", String(pair.primaryPort), "-U", "postgres",
                                                  "-D", folder.appendingPathComponent("replica").path, "-R", "-X", "stream", "--checkpoint=fast"])
        }
        guard base == 0 else { throw Failure(description: "pg_basebackup failed (\(base))") }
        try await pair.start()
        return try await body(pair)
    }

    /// Starts (or starts again) the standby and waits until it accepts connections (a standby refuses
    /// them until its replay is consistent).
    func start() async throws {
        replica = try await serve(data: folder.appendingPathComponent("replica").path, port: replicaPort)
    }

    /// PostgreSQL's immediate shutdown of the standby: the server and its backends end at once.
    func stop() {
        guard let replica else { return }
        self.replica = nil
        Self.stop(replica, port: replicaPort, signal: SIGQUIT)
    }

    private func serve(data: String, port: Int) async throws -> Process {
        let process = Process()
        let server = [bin + "/postgres", "-D", data, "-p", String(port), "-k", "", "-c", "listen_addresses=127.0.0.1",
                      "-c", "max_connections=200", "-c", "fsync=off", "-c", "hot_standby=on"]
        if getuid() == 0 {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=postgres", "--regid=postgres", "--init-groups", "--"] + server
        } else {
            process.executableURL = URL(fileURLWithPath: server[0])
            process.arguments = Array(server.dropFirst())
        }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try ChildProcesses.run(process)
        let deadline = ContinuousClock.now + .seconds(30)
        while !LocalPorts.answers(port: port) {
            guard process.isRunning, ContinuousClock.now < deadline else {
                Self.stop(process, port: port, signal: SIGQUIT)
                throw Failure(description: "PostgreSQL did not start in \(data)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        // The port answers before the server takes connections: until its start-up (a standby: its
        // replay to a consistent state) is done, each one is refused with 57P03 "the database system
        // is starting up", which a test's first statement met on a loaded machine.
        while true {
            do {
                try await TestDatabase.postgresAdmin(url: "postgres://postgres@127.0.0.1:\(port)/postgres", "SELECT 1")
                return process
            } catch {
                guard process.isRunning, ContinuousClock.now < deadline else {
                    Self.stop(process, port: port, signal: SIGQUIT)
                    throw Failure(description: "PostgreSQL in \(data) did not take connections: \(String(reflecting: error))")
                }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// `signal` (SIGQUIT immediate, SIGINT fast shutdown), then waits for the process and its port.
    private static func stop(_ process: Process, port: Int, signal: Int32) {
        if process.isRunning { kill(process.processIdentifier, signal) }
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        ChildProcesses.stop(process, grace: 0)
        while LocalPorts.answers(port: port), Date() < deadline { usleep(20_000) }
    }

    private static func run(_ path: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        if getuid() == 0 {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=postgres", "--regid=postgres", "--init-groups", "--", path] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = arguments
        }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try ChildProcesses.run(process)
        process.waitUntilExit()
        ChildProcesses.exited(process)
        return process.terminationStatus
    }
}
