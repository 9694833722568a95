import Foundation
import GatehouseTestSupport

/// A real Redis server for one test (Debian's `redis-server`, which `.ci/run` installs): on
/// 127.0.0.1 and a free port, nothing saved to disk, killed at the end (and by `restart`, as a
/// crash would).
final class RedisServer: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible { let description: String }

    let port: Int
    private var process: Process?

    var url: String { "redis://127.0.0.1:\(port)" }

    /// Its process's id while it runs (a test stops it with `SIGSTOP` to make it silent).
    var pid: Int32? { process?.processIdentifier }

    private init(port: Int) { self.port = port }

    /// A started server, answering.
    static func start() async throws -> RedisServer {
        let server = RedisServer(port: LocalPorts.free())
        try await server.launch()
        return server
    }

    /// Runs `body` with a started server, and kills it after.
    static func with<T>(_ body: (RedisServer) async throws -> T) async throws -> T {
        let server = try await start()
        defer { server.kill() }
        return try await body(server)
    }

    private func launch() async throws {
        guard let path = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"].first(where: FileManager.default.isExecutableFile) else {
            throw Failure(description: "redis-server is not installed (apt-get install redis-server; .ci/run does)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try ChildProcesses.run(process)
        self.process = process
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if !process.isRunning { throw Failure(description: "redis-server exited at start (port \(port))") }
            if LocalPorts.answers(port: port) { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw Failure(description: "redis-server did not answer within 10 s")
    }

    /// Kills the server (SIGKILL: no goodbye to its clients) and waits until its port is closed.
    func kill() {
        guard let process else { return }
        self.process = nil
        ChildProcesses.stop(process, grace: 0)
        let deadline = Date().addingTimeInterval(5)
        while LocalPorts.answers(port: port), Date() < deadline { usleep(10_000) }
    }

    /// Kills the server and starts a new one on the same port, as a crash and a supervisor would.
    func restart(after pause: Duration = .zero) async throws {
        kill()
        try await Task.sleep(for: pause)
        try await launch()
    }
}
