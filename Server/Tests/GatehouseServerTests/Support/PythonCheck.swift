import Foundation

/// Runs a Python snippet of the test environment (scripts/test.sh's venv) on some texts written
/// to files, and returns what it printed.
enum PythonCheck {
    struct Failure: Error, CustomStringConvertible { let description: String }

    static func run(_ script: String, files: [String]) async throws -> String {
        try await blocking { try runBlocking(script, files: files) }
    }

    private static func runBlocking(_ script: String, files: [String]) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pycheck-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var paths: [String] = []
        for (index, text) in files.enumerated() {
            let path = directory.appendingPathComponent("\(index)").path
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            paths.append(path)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script] + paths
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        guard process.terminationStatus == 0 else { throw Failure(description: "python3 failed (status \(process.terminationStatus))") }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
