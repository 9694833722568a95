import Foundation
import GatehouseTestSupport
import Testing

/// The operator console in headless Chromium against a `gatehouse serve` process
/// (`Support/operator_browser.py`): sign-in with password and TOTP, finding a person by phone,
/// ending their sessions, locking, crediting and reversing with reasons, a client import with its
/// preview, the outbox and the audit trail; roles that may not act; CSRF and session separation.
@Suite("The operator console in a browser")
struct OperatorConsoleBrowserTests {
    @Test("an admin signs in with password + TOTP, finds a person by phone, revokes (401), locks (login refused), credits and reverses with reasons, imports client records with a preview; the audit page lists each action with actor and reason; support cannot credit, read-only cannot act; no CSRF, a /v1 session and an operator's token on /v1 are refused")
    func console() async throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("gatehouse")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Support/operator_browser.py").path
        #expect(FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"), "install Debian's chromium and chromium-driver (.ci/run does)")
        #expect(FileManager.default.isExecutableFile(atPath: binary.path), "build the server first")
        let shots = FileManager.default.temporaryDirectory.appendingPathComponent("operator-shots-\(UUID().uuidString)")
        let (status, text) = try await runPythonScript(script, ["--gatehouse", binary.path, "--screenshots", shots.path])
        print(text)
        #expect(status == 0, "\(text)")
        #expect(text.contains("operator console browser session passed"))
        let files = (try? FileManager.default.contentsOfDirectory(at: shots, includingPropertiesForKeys: nil)) ?? []
        #expect(files.count >= 7, "screenshots: \(files.map(\.lastPathComponent))")
        for file in files.sorted(by: { $0.lastPathComponent < $1.lastPathComponent }) {
            if let png = try? Data(contentsOf: file) { Attachment.record(png, named: file.lastPathComponent) }
        }
    }
}
