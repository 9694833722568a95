import Foundation
import GatehouseTestSupport

/// A real PgBouncer for one test (Debian's `pgbouncer`, which `.ci/run` installs) in front of the
/// tests' PostgreSQL, in transaction mode with few server connections, so that consecutive
/// transactions of one client land on different server connections, as they do in production.
/// On 127.0.0.1 and a free port; killed at the end.
final class PgBouncer: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible { let description: String }

    let port: Int
    private let folder: URL
    private var process: Process?

    private init(port: Int, folder: URL) {
        self.port = port
        self.folder = folder
    }

    /// `url` (a PostgreSQL database's address) as reached through this pooler.
    func url(of url: String) -> String { LocalPorts.url(url, port: port) }

    /// Runs `body` with a PgBouncer in front of the PostgreSQL at `postgresURL`, in transaction mode
    /// with `serverConnections` per database, and kills it after.
    static func with<T>(inFrontOf postgresURL: String, serverConnections: Int = 2, _ body: (PgBouncer) async throws -> T) async throws -> T {
        guard let path = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"].first(where: FileManager.default.isExecutableFile) else {
            throw Failure(description: "pgbouncer is not installed (apt-get install pgbouncer; .ci/run does)")
        }
        guard let postgres = URLComponents(string: postgresURL) else { throw Failure(description: "not a PostgreSQL address: \(postgresURL)") }
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("gh-pgbouncer-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // PgBouncer will not run as root: `-u postgres` then, which must read the files and write the log.
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: folder.path)
        let bouncer = PgBouncer(port: LocalPorts.free(), folder: folder)
        defer {
            bouncer.kill()
            try? FileManager.default.removeItem(at: folder)
        }
        let user = postgres.user ?? "postgres"
        try "\"\(user)\" \"\"\n".write(to: folder.appendingPathComponent("users.txt"), atomically: true, encoding: .utf8)
        try """
        [databases]
        * = host=\(postgres.host ?? "127.0.0.1") port=\(postgres.port ?? 5432)

        [pgbouncer]
        listen_addr = 127.0.0.1
        listen_port = \(bouncer.port)
        unix_socket_dir =
        auth_type = trust
        auth_file = \(folder.path)/users.txt
        pool_mode = transaction
        default_pool_size = \(serverConnections)
        max_client_conn = 1000
        logfile = \(folder.path)/pgbouncer.log

        """.write(to: folder.appendingPathComponent("pgbouncer.ini"), atomically: true, encoding: .utf8)
        for file in ["users.txt", "pgbouncer.ini"] {
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: folder.appendingPathComponent(file).path)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = (getuid() == 0 ? ["-u", "postgres"] : []) + [folder.appendingPathComponent("pgbouncer.ini").path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try ChildProcesses.run(process)
        bouncer.process = process
        let deadline = ContinuousClock.now + .seconds(10)
        while !LocalPorts.answers(port: bouncer.port) {
            guard process.isRunning, ContinuousClock.now < deadline else {
                throw Failure(description: "pgbouncer did not start: \(bouncer.log)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return try await body(bouncer)
    }

    /// What PgBouncer logged.
    var log: String { (try? String(contentsOf: folder.appendingPathComponent("pgbouncer.log"), encoding: .utf8)) ?? "" }

    private func kill() {
        guard let process else { return }
        self.process = nil
        ChildProcesses.stop(process, grace: 0)
    }
}
