import Foundation

/// A peer written in Python (a local Stripe, a Pwned Passwords range API, …) started from this folder on a free
/// port: ready once it prints `ready`; what it prints goes to a log that a failure to start shows.
final class PythonPeer: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible { let description: String }

    let port: Int
    private let process = Process()
    var base: String { "http://127.0.0.1:\(port)" }

    private init(port: Int) { self.port = port }

    /// Starts `script` (a file of this folder) with `--port N` and `arguments`; `hint` says what a failure may mean.
    static func start(_ script: String, _ arguments: [String], hint: String = "") async throws -> PythonPeer {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(script).path
        let peer = PythonPeer(port: Int.random(in: 20_000...60_000))
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("\(script)-\(UUID().uuidString).log").path
        FileManager.default.createFile(atPath: log, contents: nil)
        peer.process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        peer.process.arguments = ["python3", path, "--port", String(peer.port)] + arguments
        peer.process.standardOutput = FileHandle(forWritingAtPath: log)
        peer.process.standardError = FileHandle(forWritingAtPath: log)
        try peer.process.run()
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            guard peer.process.isRunning else {
                throw Failure(description: "\(script) exited\(hint): " + ((try? String(contentsOfFile: log, encoding: .utf8)) ?? ""))
            }
            if (try? String(contentsOfFile: log, encoding: .utf8))?.contains("ready") == true { return peer }
            try await Task.sleep(for: .milliseconds(50))
        }
        peer.stop()
        throw Failure(description: "\(script) did not start within 30 s")
    }

    func stop() {
        if process.isRunning { process.terminate() }
    }
}
