import Foundation
import GatehouseTestSupport
import Testing

/// The Sign To Login service's pages in headless Chromium against a `gatehouse serve`
/// process (`Support/console_browser.py`, Selenium with Debian's chromium and chromedriver): the
/// developer console (sign in, add an app with an icon, the key once, disable, enable, rotate, the
/// two-step login with the authenticator app on,
/// CSRF, cookie flags, CSP), and a document's history page on a desktop and, in Russian, on an
/// iPhone (the app tried, then the App Store offered). The screenshots are attached to the test.
@Suite("Sign To Login: the console and the history page in a browser")
struct ConsoleBrowserTests {
    static var serverBinary: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("gatehouse")
    }

    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Support/console_browser.py").path
    }

    @Test("a developer signs in, adds an app with its icon, sees the key once, disables, enables and rotates it; a signed document's history on a desktop and an iPhone")
    func console() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"), "install Debian's chromium and chromium-driver (.ci/run does)")
        #expect(FileManager.default.isExecutableFile(atPath: Self.serverBinary.path), "build the server first")
        let shots = FileManager.default.temporaryDirectory.appendingPathComponent("console-shots-\(UUID().uuidString)")
        let (status, text) = try await runPythonScript(Self.script, ["--gatehouse", Self.serverBinary.path, "--screenshots", shots.path])
        print(text)
        #expect(status == 0, "\(text)")
        #expect(text.contains("console browser session passed"))
        let files = (try? FileManager.default.contentsOfDirectory(at: shots, includingPropertiesForKeys: nil)) ?? []
        #expect(files.count >= 7, "screenshots: \(files.map(\.lastPathComponent))")
        for file in files.sorted(by: { $0.lastPathComponent < $1.lastPathComponent }) {
            if let png = try? Data(contentsOf: file) { Attachment.record(png, named: file.lastPathComponent) }
        }
    }
}
