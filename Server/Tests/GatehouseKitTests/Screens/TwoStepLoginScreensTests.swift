import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehouseKit
import GatehouseScreens
import GatehouseTestSupport
import Testing

/// The authenticator app through the SDK: `AccountsClient`'s calls, the settings screen that turns
/// it on, and the login screen's second step, against a real server over loopback. The app's codes
/// are computed from the secret the server handed out (the server's tests check the same secrets
/// against pyotp).
@Suite("Two-step login through the SDK and the view models")
@MainActor
struct TwoStepLoginScreensTests {
    /// What the authenticator app shows at the server's time.
    static func appCode(_ enrolmentSecret: String, _ server: LiveServer, after seconds: TimeInterval = 0) -> String {
        let secret = Base32.decode(enrolmentSecret.replacingOccurrences(of: " ", with: ""))!
        return TOTP(secret: secret).code(at: server.clock.now.addingTimeInterval(seconds))
    }

    /// A code the app does not show now, nor one step either side.
    static func wrongCode(_ enrolmentSecret: String, _ server: LiveServer) -> String {
        let window = Set([-30.0, 0, 30].map { appCode(enrolmentSecret, server, after: $0) })
        return ["000000", "111111", "222222", "333333"].first { !window.contains($0) }!
    }

    @Test("AccountsClient: beginLogin signs in without a factor; enrol, confirm, then beginLogin answers the challenge, completeLogin with a wrong code tells the attempts left and with the right one stores the session; renew with a recovery code, turn off with the app's code")
    func clientCalls() async throws {
        try await withLiveServer { server in
            // setup
            try await server.makeV1Account(email: "ivan@example.com", tag: "ivan")
            let owner = server.accountsClient()
            guard case .signedIn = try await owner.beginLogin(identifier: "ivan", password: "Secret-42!") else {
                Issue.record("no factor yet: signed in at once"); return
            }
            let enrolment = try await owner.enrolTOTP(currentPassword: "Secret-42!")
            let codes = try await owner.confirmTOTP(code: Self.appCode(enrolment.secret, server))
            #expect(codes.codes.count == 10)
            #expect(try await owner.secondFactors().totp)

            // MUT: a new device logs in
            let phone = server.accountsClient()
            guard case .secondFactorRequired(let challenge) = try await phone.beginLogin(identifier: "ivan", password: "Secret-42!", device: "phone") else {
                Issue.record("expected the second step"); return
            }
            #expect(phone.session == nil, "no session from the password alone")
            await #expect(throws: GatehouseClientError.self) { try await phone.login(identifier: "ivan", password: "Secret-42!") }
            var wrong: GatehouseClientError?
            do { try await phone.completeLogin(challenge: challenge, code: Self.wrongCode(enrolment.secret, server)) } catch { wrong = error as? GatehouseClientError }
            let attemptsLeft = phone.lastProblem?.attemptsLeft
            server.clock.advance(by: 30)
            let session = try await phone.completeLogin(challenge: challenge, code: Self.appCode(enrolment.secret, server), device: "phone")

            // validate
            #expect(wrong?.code == .invalidCode && attemptsLeft == 4)
            #expect(phone.session?.token == session.token)
            #expect(try await phone.me().tag == "ivan")
            let renewed = try await phone.renewRecoveryCodes(currentPassword: "Secret-42!", recoveryCode: codes.codes[0])
            #expect(renewed.codes.count == 10 && Set(renewed.codes).isDisjoint(with: codes.codes))
            server.clock.advance(by: 30)
            try await phone.disableTOTP(currentPassword: "Secret-42!", code: Self.appCode(enrolment.secret, server))
            #expect(try await phone.secondFactors() == SecondFactorStatus(totp: false, totpSince: nil, recoveryCodesLeft: 0))
            try await server.accountsClient().login(identifier: "ivan", password: "Secret-42!")
        }
    }

    @Test("the settings screen turns it on (password, the secret to scan, the app's first code, the ten codes once), then the login screen asks for the code on the same screen: a wrong one says so with the tries left, a recovery code lets the person in; in Russian too")
    func settingsThenLogin() async throws {
        try await withLiveServer { server in
            // setup
            try await server.makeV1Account(email: "ivan@example.com", tag: "ivan")
            let owner = server.accountsClient(language: "ru")
            try await owner.login(identifier: "ivan", password: "Secret-42!")
            let settings = TwoStepLoginViewModel(client: owner, localizer: Localizer(language: "ru"), message: { ($0 as? GatehouseClientError)?.message })

            // MUT: turn it on
            await settings.load()
            #expect(settings.state.phase == .off && settings.state.title == "Вход в два шага" && !settings.state.isPrimaryEnabled)
            settings.setPassword("Secret-42!")
            await settings.primary()
            guard case .enrolling(let enrolment) = settings.state.phase else { Issue.record("expected the secret: \(settings.state)"); return }
            #expect(enrolment.uri.hasPrefix("otpauth://totp/Gatehouse:ivan%40example.com?secret="))
            #expect(enrolment.secret.split(separator: " ").allSatisfy { $0.count <= 4 } && enrolment.secret.count == 32 + 7)
            settings.setCode(Self.wrongCode(enrolment.secret, server))
            await settings.primary()
            #expect(settings.state.errorMessage == "Неверный код. Проверьте его или запросите новый." && settings.state.code.isEmpty)
            settings.setCode(Self.appCode(enrolment.secret, server))
            await settings.primary()
            guard case .recoveryCodes(let codes) = settings.state.phase else { Issue.record("expected the codes: \(settings.state)"); return }
            #expect(codes.count == 10 && settings.state.primaryTitle == "Готово")
            await settings.primary()
            #expect(settings.state.phase == .on(recoveryCodesLeft: 10) && settings.state.message.contains("Осталось резервных кодов: 10"))

            // MUT: log in on another device
            let environment = MessengerEnvironment(client: server.accountsClient(), localizer: Localizer(language: "en"),
                                                   now: { [clock = server.clock] in clock.now }, tagCheckDelay: 0, device: "tests",
                                                   stores: .temporary(), preferences: InMemoryPreferences())
            let login = MessengerLoginViewModel(environment: environment)
            var outcome: MessengerLoginViewModel.Outcome?
            login.onOutcome = { outcome = $0 }
            login.setLogin("ivan")
            login.setPassword("Secret-42!")
            await login.submit()
            let step = try #require(login.state.secondStep, "the second step: \(login.state)")
            #expect(step.message == "Enter the code from your authenticator app." && !login.state.isSubmitEnabled && outcome == nil)
            login.setCode("12345")
            #expect(!login.state.isSubmitEnabled, "six digits")
            login.setCode(Self.wrongCode(enrolment.secret, server))
            await login.submit()
            #expect(login.state.errorMessage?.contains("4") == true, "\(login.state.errorMessage ?? "")")
            login.switchCodeKind()
            #expect(login.state.secondStep?.codeLabel == "Recovery code" && login.state.secondStep?.switchTitle == "Use the app's code")
            login.setCode(codes[2].uppercased())
            await login.submit()

            // validate
            guard case .authenticated(let account) = outcome else { Issue.record("expected to be in: \(login.state)"); return }
            #expect(account.tag == "ivan" && login.state.secondStep == nil)
            #expect(try await owner.secondFactors().recoveryCodesLeft == 9)
        }
    }
}

/// Passkeys through `AccountsClient`, with a software authenticator playing the platform: the options
/// it is handed as bytes (as AuthenticationServices takes them), its answers passed back as the
/// platform's objects would be.
@Suite("Passkeys through the SDK")
struct PasskeyClientTests {
    @Test("add a passkey (options → the platform's bytes → registerPasskey), list it, log in without a password on a new device, then remove it")
    func addLogInRemove() async throws {
        try await withLiveServer { server in
            // setup
            try await server.makeV1Account(email: "ivan@example.com", tag: "ivan")
            let owner = server.accountsClient()
            try await owner.login(identifier: "ivan", password: "Secret-42!")
            var authenticator = SoftwareAuthenticator()
            let origin = try #require(server.configuration.passkeyOrigins.first)

            // MUT: add
            let options = try await owner.passkeyCreationOptions(currentPassword: "Secret-42!")
            #expect(options.userIDData.count == 32 && options.challengeData.count == 32)
            let (clientData, attestation) = try authenticator.register(Array(options.challengeData), origin: origin, rpID: options.rp.id)
            let added = try await owner.registerPasskey(PasskeyRegistrationCredential(credentialID: Data(authenticator.credentialID), clientDataJSON: Data(clientData),
                                                                                     attestationObject: Data(attestation)), name: "iPhone")
            // MUT: log in on a new device
            let device = server.accountsClient()
            let request = try await device.passkeyLoginOptions()
            let (data, auth, signature) = try authenticator.assert(Array(request.challengeData), origin: origin, rpID: request.rpId)
            let session = try await device.loginWithPasskey(PasskeyAssertion(credentialID: Data(authenticator.credentialID), clientDataJSON: Data(data),
                                                                             authenticatorData: Data(auth), signature: Data(signature),
                                                                             userHandle: options.userIDData), device: "iPad")

            // validate
            #expect(try await owner.passkeys().map(\.id) == [added.id])
            #expect(request.allowCredentials.isEmpty && device.session?.token == session.token && session.account.tag == "ivan")
            // Removing is a step-up: the password alone is refused, the password and a passkey assertion remove it.
            await #expect(throws: GatehouseClientError.self) { try await device.removePasskey(id: added.id, currentPassword: "Secret-42!") }
            let stepUp = try await device.passkeyStepUpOptions()
            let (upData, upAuth, upSignature) = try authenticator.assert(Array(stepUp.challengeData), origin: origin, rpID: stepUp.rpId)
            try await device.removePasskey(id: added.id, currentPassword: "Secret-42!", passkey: PasskeyAssertion(
                credentialID: Data(authenticator.credentialID), clientDataJSON: Data(upData), authenticatorData: Data(upAuth), signature: Data(upSignature),
                userHandle: options.userIDData))
            #expect(stepUp.allowCredentials.count == 1)
            #expect(try await owner.passkeys().isEmpty)
        }
    }
}
