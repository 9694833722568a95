import Foundation
import GatehouseTestSupport
import Testing

/// The OpenID Connect provider driven by clients nobody here wrote against a `gatehouse serve` process
/// (`Support/oidc_browser.py`): Authlib's client through discovery, the code flow with PKCE, the ID token's
/// validation, userinfo, refresh, introspection, revocation and logout; headless Chromium on the sign-in page with the
/// authenticator app's code and consent (and in Russian); PyJWT's PyJWKClient across a key rotation. The screenshots
/// are attached to the test.
@Suite("OpenID Connect in a browser with Authlib")
struct OpenIDBrowserTests {
    static var serverBinary: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("gatehouse")
    }

    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Support/oidc_browser.py").path
    }

    @Test("Authlib and Chromium: discovery, the code flow with PKCE through the password, the app's code and consent, the ID token validated, userinfo, a backend's PyJWKClient across a rotation, refresh, introspection, revocation, logout, a public client in Russian with a passkey, and a passkey as the second step")
    func authlibAndChromium() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"), "install Debian's chromium and chromium-driver (.ci/run does)")
        #expect(FileManager.default.isExecutableFile(atPath: Self.serverBinary.path), "build the server first")
        let shots = FileManager.default.temporaryDirectory.appendingPathComponent("oidc-shots-\(UUID().uuidString)")
        let (status, text) = try await runPythonScript(Self.script, ["--gatehouse", Self.serverBinary.path, "--screenshots", shots.path])
        print(text)
        #expect(status == 0, "\(text)")
        #expect(text.contains("oidc browser session passed"))
        #expect(text.components(separatedBy: "refused:").count == 4, "three bad tokens refused by the backend sample")
        let files = (try? FileManager.default.contentsOfDirectory(at: shots, includingPropertiesForKeys: nil)) ?? []
        #expect(files.count == 6, "screenshots: \(files.map(\.lastPathComponent))")
        for file in files.sorted(by: { $0.lastPathComponent < $1.lastPathComponent }) {
            if let png = try? Data(contentsOf: file) { Attachment.record(png, named: file.lastPathComponent) }
        }
    }
}
