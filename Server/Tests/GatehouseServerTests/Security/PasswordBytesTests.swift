import Foundation
import GatehouseAPI
import GatehouseServer
import GatehouseTestSupport
import Testing

/// bcrypt reads a password up to a NUL and at most 72 bytes of it. Found by the WebSocket
/// fuzzer: the right password followed by NUL and anything, or a 72-byte password followed by
/// anything, used to log in.
@Suite("Passwords bcrypt cannot read whole")
struct PasswordBytesTests {
    let phone = "+79123456789"

    @Test("the right password followed by NUL and more never logs in", arguments: TestEngine.once)
    func login_passwordWithNULSuffix_isRefused(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            try await app.registerPhoneAccount(password: "secret-91!")

            // MUT + validate: /api and /v1 alike. Text never holds NUL, so the request is refused before the
            // password is looked at (invalid_parameter on it); `PasswordHasher.verify` refuses it too, in case.
            for candidate in ["secret-91!\u{0}", "secret-91!\u{0}anything"] {
                let api = try await app.postForm(PhoneAccountsAPI.Path.login, [("login", phone), ("password", candidate)])
                #expect(api.status == .badRequest && api.headers[.init("X-Error-Code")!] == "invalid_parameter")
                let v1 = try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: phone, password: candidate))
                #expect(v1.status == .badRequest && v1.text.contains("invalid_parameter") && v1.text.contains("\"field\":\"password\""))
            }
            _ = try await app.login(phone, "secret-91!")
        }
    }

    @Test("a 72-byte password followed by anything never logs in", arguments: TestEngine.once)
    func login_passwordLongerThan72Bytes_isRefused(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup: the longest password the rules take
            let password = "Aa1!" + String(repeating: "x", count: 68)
            #expect(password.utf8.count == 72)
            _ = try await app.v1.signedUp(email: "ann@example.com", password: password)

            // MUT
            let longer = try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "ann@example.com", password: password + "y"))

            // validate
            #expect(longer.status == .badRequest && longer.text.contains("invalid_credentials"))
            _ = try await app.v1.login("ann@example.com", password)
        }
    }

    @Test("a new password with a control character is refused as weak", arguments: TestEngine.once)
    func signup_passwordWithControlCharacter_isWeak(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            let sent = try await app.v1.requestSignupCode(email: "ann@example.com")
            let code = try await app.v1.code(sentTo: sent.destination)
            // (NUL never gets this far: text never holds it.)
            let response = try await app.v1.post(V1.Accounts.signup.path, SignupRequest(email: "ann@example.com", code: code, password: "secret-91!\u{7}x"))
            #expect(response.status == .badRequest)
            #expect(response.text.contains("weak_password") && response.text.contains("\"field\":\"password\""))
        }
    }
}
