import Foundation
import GatehouseTestSupport

/// A streaming replica of the tests' PostgreSQL (`POSTGRES_URL`) for one test: `pg_basebackup`
/// of the whole cluster, then a hot standby on a free port of 127.0.0.1 that streams from it.
/// Run as the `postgres` user when the tests run as root (`setpriv`, which replaces itself with
/// the server, so the process tracked is the server's). Stopped with SIGQUIT (PostgreSQL's
/// immediate shutdown, which takes its backends with it, as a crash of the machine would), and
/// its folder removed at the end.
final class PostgresReplica: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible { let description: String }

    let port: Int
    private let folder: URL
    /// PostgreSQL's programs (the newest installed version's).
    private let bin: String
    private var process: Process?

    private init(port: Int, folder: URL, bin: String) {
        self.port = port
        self.folder = folder
        self.bin = bin
    }

    /// `url`, a database of the primary, on this replica.
    func url(of url: String) -> String { LocalPorts.url(url, port: port) }

    static func with<T>(_ body: (PostgresReplica) async throws -> T) async throws -> T {
        guard let url = ProcessInfo.processInfo.environment["POSTGRES_URL"], let primary = URLComponents(string: url) else {
            throw Failure(description: "POSTGRES_URL is not set")
        }
        guard let bin = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql"))?
            .sorted(by: { $0.compare($1, options: .numeric) == .orderedAscending }).last.map({ "/usr/lib/postgresql/\($0)/bin" }) else {
            throw Failure(description: "PostgreSQL is not installed")
        }
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("gh-replica-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        if getuid() == 0 { try FileManager.default.setAttributes([.ownerAccountName: "postgres"], ofItemAtPath: folder.path) }
        let replica = PostgresReplica(port: LocalPorts.free(), folder: folder, bin: bin)
        defer {
            replica.stop()
            try? FileManager.default.removeItem(at: folder)
        }
        let base = try await blocking {
            try Self.run(bin + "/pg_basebackup", ["-h", primary.host ?? "127.0.0.1", "-p", String(primary.port ?? 5432), "-U", primary.user ?? "postgres",
                                                  "-D", folder.path, "-R", "-X", "stream", "--checkpoint=fast"])
        }
        guard base == 0 else { throw Failure(description: "pg_basebackup failed (\(base))") }
        try await replica.start()
        return try await body(replica)
    }

    /// Starts (or starts again) the standby and waits until it accepts connections.
    func start() async throws {
        let process = Process()
        let server = [bin + "/postgres", "-D", folder.path, "-p", String(port), "-k", "", "-c", "listen_addresses=127.0.0.1",
                      "-c", "max_connections=400", "-c", "fsync=off", "-c", "hot_standby=on"]
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
        self.process = process
        let deadline = ContinuousClock.now + .seconds(30)
        while !LocalPorts.answers(port: port) {
            guard process.isRunning, ContinuousClock.now < deadline else { throw Failure(description: "the replica did not start") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// PostgreSQL's immediate shutdown: the server and its backends end at once.
    func stop() {
        guard let process else { return }
        self.process = nil
        let pid = process.processIdentifier
        if process.isRunning { kill(pid, SIGQUIT) }
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
