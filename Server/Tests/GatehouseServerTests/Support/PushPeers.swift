import Foundation
import GatehouseFoundation
import GatehouseTestSupport

/// `push_peers.py` running: local APNs, OAuth and FCM endpoints over HTTP/2 and TLS that check
/// requests as Apple's and Google's documentation says (one per test, on a free port), with the
/// keys and the CA their clients need.
final class PushPeers: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible { let description: String }

    let port: Int
    let directory: URL
    private let process: Process

    var base: String { "https://127.0.0.1:\(port)" }
    var caFile: String { directory.appendingPathComponent("ca.pem").path }

    private init(port: Int, directory: URL, process: Process) {
        self.port = port
        self.directory = directory
        self.process = process
    }

    static func start() async throws -> PushPeers {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("push_peers.py").path
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("push-peers-\(UUID().uuidString)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // Port 0: the peer binds a port the system chooses and writes it into `ready`. A port
        // picked here at random could be one of the test run's own outgoing connections.
        process.arguments = ["python3", "-c", ChildProcesses.pythonPeerPrelude, script, "--port", "0", "--dir", directory.path]
        let log = directory.path + ".log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process.standardOutput = FileHandle(forWritingAtPath: log)
        process.standardError = FileHandle(forWritingAtPath: log)
        try ChildProcesses.run(process)
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            guard process.isRunning else {
                throw Failure(description: "push_peers.py exited (is hypercorn installed? run scripts/test.sh): " + ((try? String(contentsOfFile: log, encoding: .utf8)) ?? ""))
            }
            if let ready = try? String(contentsOf: directory.appendingPathComponent("ready"), encoding: .utf8), let port = Int(ready),
               LocalPorts.answers(port: port) {
                return PushPeers(port: port, directory: directory, process: process)
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        ChildProcesses.stop(process)
        try? FileManager.default.removeItem(at: directory)
        throw Failure(description: "push_peers.py did not answer within 30 s")
    }

    func stop() {
        ChildProcesses.stop(process)
        try? FileManager.default.removeItem(at: directory)
    }

    private func file(_ name: String) throws -> String {
        try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
    }

    /// The APNs settings the peer expects (its key, key id, team, endpoint for both environments).
    func apns() throws -> GatehouseConfiguration.Push.APNs {
        let info = try JSONSerialization.jsonObject(with: Data(try file("apns.json").utf8)) as? [String: String] ?? [:]
        var settings = GatehouseConfiguration.Push.APNs(privateKeyPEM: try file("apns.p8"), keyID: info["keyId"] ?? "", teamID: info["teamId"] ?? "")
        settings.productionEndpoint = base
        settings.sandboxEndpoint = base
        return settings
    }

    var bundleID: String { "com.example.gatehouse" }

    func fcm() throws -> GatehouseConfiguration.Push.FCM {
        var settings = GatehouseConfiguration.Push.FCM(serviceAccountJSON: try file("fcm.json"))
        settings.endpoint = base
        return settings
    }

    /// Every request the peer judged, in order.
    func received() -> [[String: Any]] {
        guard let text = try? file("received.jsonl") else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }
}
