import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import GatehouseServer
import GatehouseTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// Passkeys (docs/security.md, "Passkeys") against a software authenticator written with
/// python-fido2 (`Support/webauthn_authenticator.py`): it parses the server's options as a
/// browser's `parse…OptionsFromJSON` would, and answers as a phone's platform does.
@Suite("Passkeys: registration and login against a software authenticator")
struct PasskeyTests {
    static let password = "secret-91!"
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Support/webauthn_authenticator.py").path

    /// The authenticator's answer to `options` (the server's JSON), from `origin`; `state` is its key.
    struct Answer {
        var credential: String
        var state: String
    }

    static func authenticator(_ command: String, options: String, origin: String, state: String? = nil, flags: [String: Any] = [:]) async throws -> Answer {
        let flagText = String(decoding: try JSONSerialization.data(withJSONObject: flags), as: UTF8.self)
        let output = try await PythonCheck.run("""
            import sys, runpy
            sys.argv = ["webauthn_authenticator.py", "\(command)"] + sys.argv[1:]
            runpy.run_path("\(script)", run_name="__main__")
            """, files: [options, origin] + (state.map { [$0] } ?? []) + [flagText])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "authenticator: \(output)")
        let credential = try JSONSerialization.data(withJSONObject: try #require(object["credential"]), options: [.sortedKeys])
        let keptState = try JSONSerialization.data(withJSONObject: try #require(object["state"]), options: [.sortedKeys])
        return Answer(credential: String(decoding: credential, as: UTF8.self), state: String(decoding: keptState, as: UTF8.self))
    }

    static func origin(_ app: TestHarness) throws -> String { try #require(app.configuration.passkeyOrigins.first) }

    /// A step-up's passkey assertion by the authenticator of `state` (the options from
    /// `POST /v1/me/passkeys/step-up-options`): the assertion and the authenticator's state after it.
    static func stepUp(_ app: TestHarness, token: String, state: String) async throws -> (assertion: PasskeyAssertion, state: String) {
        let options = try await app.v1.post(V1.Passkeys.stepUpOptions.path, json: "{}", token: token)
        #expect(options.status == .ok, "\(options.text)")
        let answer = try await authenticator("get", options: options.text, origin: try origin(app), state: state)
        return (try V1.decoder.decode(PasskeyAssertion.self, from: Data(answer.credential.utf8)), answer.state)
    }

    /// Registers a passkey on the account of `token` (`proof`: the step-up an account with a second
    /// factor needs): its authenticator state.
    static func register(_ app: TestHarness, token: String, name: String = "iPhone", flags: [String: Any] = [:],
                         proof: PasskeyOptionsRequest = PasskeyOptionsRequest(currentPassword: password)) async throws -> String {
        let options = try await app.v1.post(V1.Passkeys.creationOptions.path, proof, token: token)
        #expect(options.status == .ok, "\(options.text)")
        let made = try await authenticator("create", options: options.text, origin: try origin(app), flags: flags)
        let saved = try await app.v1.post(V1.Passkeys.register.path, json: #"{"name":"\#(name)","credential":\#(made.credential)}"#, token: token)
        #expect(saved.status == .created, "\(saved.text)")
        return made.state
    }

    /// Options for a login (`challenge`: a password login's second step), and the authenticator's assertion.
    static func assertion(_ app: TestHarness, state: String, challenge: String? = nil, origin: String? = nil, flags: [String: Any] = [:]) async throws -> Answer {
        let options = try await app.v1.post(V1.Passkeys.requestOptions.path, PasskeyLoginOptionsRequest(challenge: challenge))
        #expect(options.status == .ok, "\(options.text)")
        return try await authenticator("get", options: options.text, origin: try origin ?? Self.origin(app), state: state, flags: flags)
    }

    static func login(_ app: TestHarness, _ answer: Answer, challenge: String? = nil) async throws -> TestResponse {
        let challengeMember = challenge.map { #","challenge":"\#($0)""# } ?? ""
        return try await app.v1.post(V1.Passkeys.login.path, json: #"{"device":"phone","credential":\#(answer.credential)\#(challengeMember)}"#)
    }

    @Test("register with the password (none and packed self-attestation); log in without a password, the user verified; a lowered counter is refused as a suspected clone (audited, told); a wrong origin, another RP id, no UV, a bad signature, a spent challenge are refused; remove with the password, another's id is 404", arguments: TestEngine.once)
    func registerAndLogIn(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            try await app.registerPhoneAccount(email: "fpi@bk.ru", confirmingEmail: true)
            let token = try await app.v1.login("fpi@bk.ru", Self.password).token
            let options = try await app.v1.post(V1.Passkeys.creationOptions.path, PasskeyOptionsRequest(currentPassword: Self.password), token: token)
                .decoded(as: PasskeyCreationOptions.self)
            #expect(options.rp.id == app.configuration.passkeyRPID && options.authenticatorSelection.userVerification == "required")
            #expect(options.user.name == "fpi@bk.ru" && !options.user.id.contains("fpi") && options.pubKeyCredParams.map(\.alg) == [-7, -257])
            try expectProblem(try await app.v1.post(V1.Passkeys.creationOptions.path, PasskeyOptionsRequest(currentPassword: "wrong-91!"), token: token),
                              .badRequest, .invalidCredentials)
            try expectProblem(try await app.v1.post(V1.Passkeys.creationOptions.path, PasskeyOptionsRequest(currentPassword: Self.password)),
                              .unauthorized, .unauthorized)

            // MUT: two passkeys, one of each attestation
            let phoneState = try await Self.register(app, token: token, name: "iPhone")
            // A second one is a step-up: the password alone no longer adds a way in.
            try expectProblem(try await app.v1.post(V1.Passkeys.creationOptions.path, PasskeyOptionsRequest(currentPassword: Self.password), token: token),
                              .forbidden, .secondFactorRequired)
            let (proof, phone) = try await Self.stepUp(app, token: token, state: phoneState)
            let laptop = try await Self.register(app, token: token, name: "Laptop", flags: ["packed": true, "backupEligible": true],
                                                 proof: PasskeyOptionsRequest(currentPassword: Self.password, passkey: proof))
            let list = try await app.v1.get(V1.Passkeys.list.path, token: token).decoded(as: PasskeyList.self).passkeys
            #expect(Set(list.map(\.name)) == ["iPhone", "Laptop"] && list.first { $0.name == "Laptop" }?.synced == true)
            #expect(try await app.outbox(to: "fpi@bk.ru").first?.subject == "Добавлен ключ входа")

            // A login without a password.
            let first = try await Self.assertion(app, state: phone)
            let signedIn = try await Self.login(app, first)
            #expect(signedIn.status == .created, "\(signedIn.text)")
            #expect(try await app.v1.me(try signedIn.decoded(as: AuthSession.self).token).email == "fpi@bk.ru")
            // The same answer again: its challenge is spent.
            try expectProblem(try await Self.login(app, first), .badRequest, .passkeyInvalid)

            // Refusals, each by name.
            let clone = try await Self.login(app, try await Self.assertion(app, state: first.state, flags: ["counter": 1]))
            #expect(try expectProblem(clone, .badRequest, .passkeyInvalid).detail.contains("counter"), "\(clone.text)")
            let otherOrigin = try await Self.login(app, try await Self.assertion(app, state: first.state, origin: "https://evil.example", flags: [:]))
            #expect(try expectProblem(otherOrigin, .badRequest, .passkeyInvalid).detail.contains("origin"))
            let otherRP = try await Self.login(app, try await Self.assertion(app, state: first.state, flags: ["rpId": "evil.example"]))
            #expect(try expectProblem(otherRP, .badRequest, .passkeyInvalid).detail.contains("relying party"))
            let noUV = try await Self.login(app, try await Self.assertion(app, state: first.state, flags: ["uv": false]))
            #expect(try expectProblem(noUV, .badRequest, .passkeyInvalid).detail.contains("verified"))
            let forged = try await Self.login(app, try await Self.assertion(app, state: first.state, flags: ["badSignature": true]))
            #expect(try expectProblem(forged, .badRequest, .passkeyInvalid).detail.contains("signature"))
            // The real device goes on working after all that.
            let againAnswer = try await Self.assertion(app, state: first.state)
            let again = try await Self.login(app, againAnswer)
            #expect(again.status == .created, "\(again.text)")
            #expect(try await Self.login(app, try await Self.assertion(app, state: laptop)).status == .created)

            let clones = try await app.services.audit.events(AuditLog.Query(kinds: [.passkeyCloneSuspected]))
            #expect(clones.count == 1 && clones.first?.detail["name"] == "iPhone" && clones.first?.detail["received"] == "1")
            #expect(try await app.outbox(to: "fpi@bk.ru").contains { $0.subject == "Использована копия вашего ключа входа" })

            // Removing: the password; another account's id is 404.
            try await app.registerPhoneAccount(phone: "+79123456780", email: "ann@example.com", confirmingEmail: true)
            let stranger = try await app.v1.login("ann@example.com", Self.password).token
            let laptopID = try #require(list.first { $0.name == "Laptop" }?.id)
            let path = V1Client.path(V1.Passkeys.remove.path, ["id": laptopID.uuidString.lowercased()])
            try expectProblem(try await app.v1.send(.delete, path, body: try V1Client.encode(PasskeyRemoval(currentPassword: Self.password)),
                                                    contentType: "application/json", token: stranger), .notFound, .passkeyNotFound)
            try expectProblem(try await app.v1.send(.delete, path, body: try V1Client.encode(PasskeyRemoval(currentPassword: Self.password)),
                                                    contentType: "application/json", token: token), .forbidden, .secondFactorRequired)
            let removal = try await Self.stepUp(app, token: token, state: againAnswer.state).assertion
            let removed = try await app.v1.send(.delete, path, body: try V1Client.encode(PasskeyRemoval(currentPassword: Self.password, passkey: removal)),
                                                contentType: "application/json", token: token)
            #expect(removed.status == .noContent, "\(removed.text)")
            try expectProblem(try await Self.login(app, try await Self.assertion(app, state: laptop)), .badRequest, .passkeyInvalid)
            #expect(try await app.v1.get(V1.Passkeys.list.path, token: token).decoded(as: PasskeyList.self).passkeys.map(\.name) == ["iPhone"])
        }
    }

    @Test("with the authenticator app on, a passkey finishes a password login: the challenge offers it, its options name the account's passkeys, another account's passkey is refused", arguments: TestEngine.once)
    func secondStep(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let (token, uri, _) = try await SecondFactorTests.accountWithTOTP(app)
            // The app is on: adding a passkey takes its code too (the next step's: the first one is spent).
            app.clock.advance(by: 30)
            let phone = try await Self.register(app, token: token, proof: PasskeyOptionsRequest(
                currentPassword: Self.password, code: try await SecondFactorTests.appCode(uri, at: app.clock.now)))
            try await app.registerPhoneAccount(phone: "+79123456780", email: "ann@example.com", confirmingEmail: true)
            let annToken = try await app.v1.login("ann@example.com", Self.password).token
            let anns = try await Self.register(app, token: annToken)

            // MUT
            let challenge = try await SecondFactorTests.challenge(app)
            let options = try await app.v1.post(V1.Passkeys.requestOptions.path, PasskeyLoginOptionsRequest(challenge: challenge.challenge))
                .decoded(as: PasskeyRequestOptions.self)
            let foreign = try await Self.login(app, try await Self.authenticator("get", options: try await app.v1.post(
                V1.Passkeys.requestOptions.path, PasskeyLoginOptionsRequest()).text, origin: try Self.origin(app), state: anns), challenge: challenge.challenge)
            let finished = try await Self.login(app, try await Self.assertion(app, state: phone, challenge: challenge.challenge), challenge: challenge.challenge)

            // validate
            #expect(challenge.methods == ["totp", "recovery_code", "passkey"])
            #expect(options.allowCredentials.count == 1 && options.userVerification == "required")
            try expectProblem(foreign, .badRequest, .passkeyInvalid)
            #expect(finished.status == .created, "\(finished.text)")
            let events = try await app.services.audit.events(AuditLog.Query(kinds: [.loginSucceeded]))
            #expect(events.contains { $0.detail["with"] == "password + passkey" })
        }
    }

    @Test("login options are limited per client address: each writes a challenge")
    func optionsAreLimited() async throws {
        try await withApp(.sqlite, configure: { $0.passkeys.optionsPerIP = 2 }) { app in
            for _ in 0..<2 {
                #expect(try await app.v1.post(V1.Passkeys.requestOptions.path, PasskeyLoginOptionsRequest()).status == .ok)
            }
            try expectProblem(try await app.v1.post(V1.Passkeys.requestOptions.path, PasskeyLoginOptionsRequest()), .tooManyRequests, .rateLimited)
        }
    }

    @Test("limits: an account holds GATEHOUSE_PASSKEYS_PER_ACCOUNT passkeys (then 422 too_many_passkeys, before and after the platform); a waiting authenticator secret expires (code_expired) and asking again starts over; the app shows GATEHOUSE_TOTP_ISSUER")
    func accountLimits() async throws {
        try await withApp(.sqlite, configure: { $0.passkeys.perAccount = 1; $0.secondFactors.issuer = "Acme Bank" }) { app in
            try await app.registerPhoneAccount(email: "fpi@bk.ru", confirmingEmail: true)
            let token = try await app.v1.login("fpi@bk.ru", Self.password).token
            // Two ceremonies started while there was room: the second's answer is refused once the first is kept.
            let first = try await app.v1.post(V1.Passkeys.creationOptions.path, PasskeyOptionsRequest(currentPassword: Self.password), token: token).text
            let second = try await app.v1.post(V1.Passkeys.creationOptions.path, PasskeyOptionsRequest(currentPassword: Self.password), token: token).text
            var kept = ""
            for (options, status) in [(first, HTTPResponse.Status.created), (second, .unprocessableContent)] {
                let made = try await Self.authenticator("create", options: options, origin: try Self.origin(app))
                if status == .created { kept = made.state }
                let saved = try await app.v1.post(V1.Passkeys.register.path, json: #"{"credential":\#(made.credential)}"#, token: token)
                #expect(saved.status == status, "\(saved.text)")
                if status != .created { try expectProblem(saved, status, .tooManyPasskeys) }
            }
            try expectProblem(try await app.v1.post(V1.Passkeys.creationOptions.path, PasskeyOptionsRequest(currentPassword: Self.password), token: token),
                              .unprocessableContent, .tooManyPasskeys)
            #expect(try await app.v1.get(V1.Passkeys.list.path, token: token).decoded(as: PasskeyList.self).passkeys.map(\.name) == ["Passkey"])

            // With a passkey, turning the app on is a step-up with it.
            var stepUp = try await Self.stepUp(app, token: token, state: kept)
            let late = try await app.v1.post(V1.SecondFactors.enrolTOTP.path, TOTPEnrolmentRequest(currentPassword: Self.password, passkey: stepUp.assertion),
                                             token: token).decoded(as: TOTPEnrolment.self)
            #expect(late.uri.hasPrefix("otpauth://totp/Acme%20Bank:fpi%40bk.ru?") && late.uri.contains("&issuer=Acme%20Bank&"), "\(late.uri)")
            app.clock.advance(by: 901)
            let expired = try await app.v1.post(V1.SecondFactors.confirmTOTP.path,
                                                CodeVerification(code: try await SecondFactorTests.appCode(late.uri, at: app.clock.now)), token: token)
            try expectProblem(expired, .badRequest, .codeExpired)
            stepUp = try await Self.stepUp(app, token: token, state: stepUp.state)
            let fresh = try await app.v1.post(V1.SecondFactors.enrolTOTP.path, TOTPEnrolmentRequest(currentPassword: Self.password, passkey: stepUp.assertion),
                                              token: token).decoded(as: TOTPEnrolment.self)
            #expect(fresh.secret != late.secret)
            let confirmed = try await app.v1.post(V1.SecondFactors.confirmTOTP.path,
                                                  CodeVerification(code: try await SecondFactorTests.appCode(fresh.uri, at: app.clock.now)), token: token)
            #expect(confirmed.status == .ok, "\(confirmed.text)")
        }
    }
}
