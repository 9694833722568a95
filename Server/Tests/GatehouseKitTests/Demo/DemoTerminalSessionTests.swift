import Foundation
import GatehouseTestSupport
import Testing

/// The terminal demo driven through a pseudo-terminal (pexpect) against a running server:
/// proof that the view models carry the whole flow and the demo only draws and forwards.
@Suite("gatehouse-demo in a terminal")
struct DemoTerminalSessionTests {
    static var demoBinary: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("gatehouse-demo")
    }

    static var serverBinary: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("gatehouse")
    }

    static func script(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Support/\(name)").path
    }

    /// Runs a script of `Support/` (`demo_session.py` by default) with `arguments`; its exit
    /// status and everything it printed.
    static func runSession(_ arguments: [String], script name: String = "demo_session.py") async throws -> (Int32, String) {
        try await runPythonScript(script(name), arguments)
    }

    @Test("registering and logging in a new account through the demo's menus")
    func registerAndLogIn() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.demoBinary.path), "build the demo first: \(Self.demoBinary.path)")
        try await withLiveServer { server in
            let sessionFile = FileManager.default.temporaryDirectory.appendingPathComponent("demo-session-\(UUID().uuidString).json").path
            let (status, text) = try await Self.runSession(["--demo", Self.demoBinary.path, "--server", server.baseURL.absoluteString, "--session-file", sessionFile])
            #expect(status == 0, "\(text)")
            #expect(text.contains("demo session passed"))
            try? FileManager.default.removeItem(atPath: sessionFile)
        }
    }

    @Test("the demo's login screen offers Continue with Apple and with Google when the server takes them; Apple's token, signed by PyJWT with the stand-in provider's key for the nonce the demo showed, signs a new person in")
    func providersOffered() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.demoBinary.path), "build the demo first: \(Self.demoBinary.path)")
        try await IdentityProviderStandIn.run { provider in
            let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("provider-key-\(UUID().uuidString).pem")
            try provider.current.key.pemRepresentation.write(to: keyFile, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: keyFile) }
            try await withLiveServer(configure: { provider.configure(&$0) }) { server in
                let sessionFile = FileManager.default.temporaryDirectory.appendingPathComponent("demo-session-\(UUID().uuidString).json").path
                let (status, text) = try await Self.runSession(["--demo", Self.demoBinary.path, "--server", server.baseURL.absoluteString, "--session-file", sessionFile,
                                                                "--scenario", "providers", "--key-file", keyFile.path, "--client", IdentityProviderStandIn.appleClient])
                #expect(status == 0, "\(text)")
                #expect(text.contains("providers demo session passed"))
                try? FileManager.default.removeItem(atPath: sessionFile)
            }
        }
    }

    @Test("gatehouse-demo messenger, two people full-screen against a server process: friends, a live chat, reply, edit, delete, forward; offline sends arrive once after a restart; a file attached by path is opened from the profile byte for byte")
    func messengerTwoPeople() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.demoBinary.path), "build the demo first: \(Self.demoBinary.path)")
        #expect(FileManager.default.isExecutableFile(atPath: Self.serverBinary.path), "build the server first: \(Self.serverBinary.path)")
        let (status, text) = try await Self.runSession(["--demo", Self.demoBinary.path, "--gatehouse", Self.serverBinary.path],
                                                       script: "demo_messenger.py")
        #expect(status == 0, "\(text)")
        #expect(text.contains("messenger demo session passed"))
    }

    @Test("gatehouse-demo notifications: signed in, a token registered; a friend request and a message from another person show as pushes with where they lead")
    func notifications() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.demoBinary.path), "build the demo first: \(Self.demoBinary.path)")
        #expect(FileManager.default.isExecutableFile(atPath: Self.serverBinary.path), "build the server first: \(Self.serverBinary.path)")
        let (status, text) = try await Self.runSession(["--demo", Self.demoBinary.path, "--gatehouse", Self.serverBinary.path],
                                                       script: "demo_notifications.py")
        #expect(status == 0, "\(text)")
        #expect(text.contains("notifications demo session passed"))
    }

    @Test("gatehouse-demo wallet, two people against a server process: sign up, add info, verify phones, attach wallets; the operator credits one, the other tops up through the local payment page; one pays the other; a loan asked back in the dialog, paid, repaid; both sides and the ledger agree")
    func walletTwoPeople() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.demoBinary.path), "build the demo first: \(Self.demoBinary.path)")
        #expect(FileManager.default.isExecutableFile(atPath: Self.serverBinary.path), "build the server first: \(Self.serverBinary.path)")
        let (status, text) = try await Self.runSession(["--demo", Self.demoBinary.path, "--gatehouse", Self.serverBinary.path],
                                                       script: "demo_wallet.py")
        #expect(status == 0, "\(text)")
        #expect(text.contains("wallet demo session passed"))
    }

    @Test("gatehouse-demo sign-to-login: register with ten signatures, sign a PDF from elsewhere, move and save it, the history; the profile picture picked by path; relaunched, a stranger's signature is refused at the save, her own drawn in a hurry is signed with a low-match warning, and the stl:// link opens the history; the photo taken when signing is in the history; the email is an .eml whose PDF is the signed one")
    @MainActor
    func signToLogin() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.demoBinary.path), "build the demo first: \(Self.demoBinary.path)")
        try await withLiveServer { server in
            let client = try await server.signToLoginClient()
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stl-demo-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let pdf = folder.appendingPathComponent("Contract.pdf")
            try minimalPDF(text: "Contract").write(to: pdf)
            let (status, text) = try await Self.runSession(["--demo", Self.demoBinary.path, "--server", server.baseURL.absoluteString,
                                                            "--apikey", client.apiKey, "--documents", folder.appendingPathComponent("docs").path,
                                                            "--state-file", folder.appendingPathComponent("state.json").path, "--pdf", pdf.path],
                                                           script: "demo_sign_to_login.py")
            #expect(status == 0, "\(text)")
            #expect(text.contains("sign-to-login demo session passed"))
        }
    }

    @Test("gatehouse-demo sign-pdf and open-pdf: registered from point files, a generated PDF signed and registered; opened unchanged, then with one byte changed outside: the warning")
    @MainActor
    func signAndOpenPDF() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.demoBinary.path), "build the demo first: \(Self.demoBinary.path)")
        try await withLiveServer { server in
            let client = try await server.signToLoginClient()
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stl-pdf-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let pdf = folder.appendingPathComponent("Contract.pdf")
            try minimalPDF(text: "Contract").write(to: pdf)
            let (status, text) = try await Self.runSession(["--demo", Self.demoBinary.path, "--server", server.baseURL.absoluteString,
                                                            "--apikey", client.apiKey, "--folder", folder.path, "--pdf", pdf.path],
                                                           script: "demo_sign_pdf.py")
            #expect(status == 0, "\(text)")
            #expect(text.contains("sign-pdf demo session passed"))
        }
    }
}
