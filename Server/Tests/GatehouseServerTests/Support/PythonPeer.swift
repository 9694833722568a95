import Foundation
import GatehouseTestSupport

/// A peer written in Python (a local Stripe, a Pwned Passwords range API, …) started from this folder on port 0:
/// ready once it prints `ready PORT`, the port the system gave it (so no other process can have taken it in
/// between); what it prints goes to a log that a failure to start shows.
final class PythonPeer: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible { let description: String }

    let port: Int
    private let process: Process
    var base: String { "http://127.0.0.1:\(port)" }

    private init(process: Process, port: Int) { self.port = port; self.process = process }

    /// Starts `script` (a file of this folder) with `--port 0` and `arguments`; `hint` says what a failure may mean.
    static func start(_ script: String, _ arguments: [String], hint: String = "") async throws -> PythonPeer {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(script).path
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("\(script)-\(UUID().uuidString).log").path
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", ChildProcesses.pythonPeerPrelude, path, "--port", "0"] + arguments
        process.standardOutput = FileHandle(forWritingAtPath: log)
        process.standardError = FileHandle(forWritingAtPath: log)
        try ChildProcesses.run(process)
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            guard process.isRunning else {
                throw Failure(description: "\(script) exited\(hint): " + ((try? String(contentsOfFile: log, encoding: .utf8)) ?? ""))
            }
            let printed = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if let line = printed.split(separator: "\n", omittingEmptySubsequences: false).dropLast().first(where: { $0.hasPrefix("ready ") }),
               let port = Int(line.dropFirst("ready ".count).trimmingCharacters(in: .whitespaces)) {
                return PythonPeer(process: process, port: port)
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        ChildProcesses.stop(process)
        throw Failure(description: "\(script) did not start within 30 s")
    }

    func stop() {
        ChildProcesses.stop(process)
    }

    deinit { stop() }
}
