import Foundation
import Testing

/// The terminal demo driven through a pseudo-terminal (pexpect) against a running server:
/// proof that the view models carry the whole flow and the demo only draws and forwards.
@Suite("gatehouse-demo in a terminal")
struct DemoTerminalSessionTests {
    static var demoBinary: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("gatehouse-demo")
    }

    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Support/demo_session.py").path
    }

    @Test("registering and logging in a new account through the demo's menus")
    func registerAndLogIn() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.demoBinary.path), "build the demo first: \(Self.demoBinary.path)")
        try await withLiveServer { server in
            let sessionFile = FileManager.default.temporaryDirectory.appendingPathComponent("demo-session-\(UUID().uuidString).json").path
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", Self.script, "--demo", Self.demoBinary.path, "--server", server.baseURL.absoluteString, "--session-file", sessionFile]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            try process.run()
            let data = await Task.detached { output.fileHandleForReading.readDataToEndOfFile() }.value
            process.waitUntilExit()
            let text = String(decoding: data, as: UTF8.self)
            #expect(process.terminationStatus == 0, "\(text)")
            #expect(text.contains("demo session passed"))
            try? FileManager.default.removeItem(atPath: sessionFile)
        }
    }
}
