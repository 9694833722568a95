import Foundation
import GatehouseAPI
import GatehouseKit
import GatehouseScreens
import GatehouseTestSupport
import Testing

/// The authorization epic of the messenger spec (`docs/specs.md`) through the view models, against a real
/// server's `/v1` over loopback: what an iOS app would draw, step by step.
@Suite("Messenger authorization through the view models")
@MainActor
struct MessengerAuthScreensTests {
    func makeFlow(_ server: LiveServer, store: any SessionStore = InMemorySessionStore(), language: String = "en") -> MessengerAppFlow {
        // No pause before the tag check: the tests wait for it with `settleTagCheck()` instead.
        let environment = MessengerEnvironment(client: server.accountsClient(store: store, language: language), localizer: Localizer(language: language),
                                                   now: { [clock = server.clock] in clock.now }, tagCheckDelay: 0, device: "tests",
                                                   stores: .temporary(), preferences: InMemoryPreferences())
        return MessengerAppFlow(environment: environment)
    }

    /// Launches with no session and lands on login.
    func openLogin(_ flow: MessengerAppFlow) async throws -> MessengerLoginViewModel {
        await flow.launch()
        guard case .login(let login) = flow.state.screen else { throw LiveServerError("expected login, got \(flow.state.screen)") }
        return login
    }

    func wrongCode(for code: String) -> String { code == "000000" ? "111111" : "000000" }

    // MARK: Splash

    @Test("splash_withAStoredUnexpiredToken_goesStraightIntoTheMessenger")
    func splash_withValidToken() async throws {
        try await withLiveServer { server in
            // setup
            try await server.makeV1Account(email: "ivan@example.com", tag: "ivan")
            let store = InMemorySessionStore()
            try await server.accountsClient(store: store).login(identifier: "ivan", password: "Secret-42!")
            let flow = makeFlow(server, store: store)
            guard case .splash(let splash) = flow.state.screen else { Issue.record("the flow starts on the splash"); return }
            #expect(splash.state.title == "OneOnOne")

            // MUT
            await flow.launch()

            // validate
            guard case .messenger(let home) = flow.state.screen else { Issue.record("expected the messenger, got \(flow.state.screen)"); return }
            #expect(home.repository.account.tag == "ivan")
            #expect(home.profile.state.name == "Ivan Petrov" && home.profile.state.tag == "@ivan" && home.profile.state.email == "ivan@example.com")
            #expect(try store.load() != nil)
        }
    }

    @Test("splash_withAnExpiredToken_goesToLogin_andForgetsIt")
    func splash_withExpiredToken() async throws {
        try await withLiveServer { server in
            // setup
            try await server.makeV1Account(email: "ivan@example.com", tag: "ivan")
            let store = InMemorySessionStore()
            try await server.accountsClient(store: store).login(identifier: "ivan", password: "Secret-42!")
            server.clock.advance(by: 86_401)
            let flow = makeFlow(server, store: store)

            // MUT
            await flow.launch()

            // validate
            let stored = try store.load()
            guard case .login = flow.state.screen else { Issue.record("expected login, got \(flow.state.screen)"); return }
            #expect(stored == nil)
        }
    }

    @Test("splash_withATokenTheServerRefuses_goesToLogin_andForgetsIt")
    func splash_withRefusedToken() async throws {
        try await withLiveServer { server in
            // setup
            let store = InMemorySessionStore(GatehouseSession(token: "revoked", expiresAt: server.clock.now.addingTimeInterval(3600)))
            let flow = makeFlow(server, store: store)

            // MUT
            await flow.launch()

            // validate
            let stored = try store.load()
            guard case .login = flow.state.screen else { Issue.record("expected login, got \(flow.state.screen)"); return }
            #expect(stored == nil)
        }
    }

    @Test("splash_withNoToken_goesToLogin")
    func splash_withNoToken() async throws {
        try await withLiveServer { server in
            // setup
            let flow = makeFlow(server)

            // MUT
            await flow.launch()

            // validate
            guard case .login(let login) = flow.state.screen else { Issue.record("expected login, got \(flow.state.screen)"); return }
            #expect(login.state.title == "Log in")
            #expect(login.state.forgotTitle == "Forgot password" && login.state.registerTitle == "Register" && login.state.submitTitle == "Log in")
        }
    }

    @Test("splash_withoutANetwork_saysSo_andOffersToTryAgain")
    func splash_withoutNetwork() async throws {
        // setup
        let store = InMemorySessionStore(GatehouseSession(token: "kept", expiresAt: Date().addingTimeInterval(3600)))
        let client = AccountsClient(baseURL: URL(string: "http://127.0.0.1:9")!, sessionStore: store, transport: URLSessionTransport(timeout: 5), language: "en")
        let flow = MessengerAppFlow(environment: MessengerEnvironment(client: client, localizer: Localizer(language: "en")))

        // MUT
        await flow.launch()

        // validate
        guard case .splash(let splash) = flow.state.screen else { Issue.record("expected to stay on the splash"); return }
        #expect(splash.state.errorMessage == "No connection to the server. Check the network and try again.")
        #expect(splash.state.isRetryEnabled && !splash.state.isLoading)
        #expect(try store.load()?.token == "kept", "a network failure does not log out")
    }

    // MARK: Login

    @Test("login_byEmail_goesIntoTheMessenger; Log in is enabled only with both fields")
    func login_byEmail() async throws {
        try await withLiveServer { server in
            // setup
            try await server.makeV1Account(email: "ivan@example.com", tag: "ivan")
            let store = InMemorySessionStore()
            let flow = makeFlow(server, store: store)
            let login = try await openLogin(flow)
            #expect(login.state.loginContentType == .username && login.state.passwordContentType == .password)
            #expect(!login.state.isSubmitEnabled)
            login.setLogin(" ivan@example.com ")
            #expect(!login.state.isSubmitEnabled, "no password yet")
            login.setPassword("Secret-42!")
            #expect(login.state.isSubmitEnabled)

            // MUT
            await login.submit()

            // validate
            guard case .messenger(let home) = flow.state.screen else { Issue.record("expected home: \(login.state.errorMessage ?? "")"); return }
            #expect(home.repository.account.email == "ivan@example.com")
            #expect(try store.load() != nil)
        }
    }

    @Test("login_byTag_withOrWithoutTheAt_goesIntoTheMessenger")
    func login_byTag() async throws {
        try await withLiveServer { server in
            // setup
            try await server.makeV1Account(email: "ivan@example.com", tag: "ivan")
            let flows = [makeFlow(server), makeFlow(server)]

            for (flow, typed) in zip(flows, ["ivan", "@Ivan"]) {
                let login = try await openLogin(flow)
                login.setLogin(typed)
                login.setPassword("Secret-42!")

                // MUT
                await login.submit()

                // validate
                guard case .messenger(let home) = flow.state.screen else { Issue.record("\(typed): expected home: \(login.state.errorMessage ?? "")"); return }
                #expect(home.repository.account.tag == "ivan")
            }
        }
    }

    @Test("login_withAWrongPassword_showsTheServersMessage_andStays")
    func login_wrongPassword() async throws {
        try await withLiveServer { server in
            for language in ["en", "ru"] {
                // setup
                try await server.makeV1Account(email: "\(language)@example.com", tag: "user_\(language)")
                let direct = await clientError { try await server.accountsClient(language: language).login(identifier: "user_\(language)", password: "Wrong-42!") }
                let store = InMemorySessionStore()
                let flow = makeFlow(server, store: store, language: language)
                let login = try await openLogin(flow)
                login.setLogin("user_\(language)")
                login.setPassword("Wrong-42!")

                // MUT
                await login.submit()

                // validate
                #expect(direct?.code == .invalidCredentials)
                #expect(login.state.errorMessage == direct?.message, "the server's own message")
                #expect(login.state.errorMessage?.isEmpty == false)
                #expect(login.state.isSubmitEnabled && !login.state.isLoading)
                guard case .login(let still) = flow.state.screen, still === login else { Issue.record("left login"); return }
                #expect(try store.load() == nil)
                login.setPassword("Wrong-43!")
                #expect(login.state.errorMessage == nil, "editing clears the message")
            }
        }
    }

    // MARK: Forgot password

    @Test("forgotPassword_email_code_newPasswordTwice_thenBackToLoginWithANotice")
    func forgotPassword_fullPath() async throws {
        try await withLiveServer { server in
            // setup
            try await server.makeV1Account(email: "ivan@example.com", tag: "ivan")
            let flow = makeFlow(server)
            let login = try await openLogin(flow)
            login.setLogin("ivan@example.com")
            login.forgotPassword()
            guard case .forgotPassword(let forgot) = flow.state.screen else { Issue.record("expected forgot password"); return }
            forgot.stopCountdown()

            // email step: pre-filled from the login field
            #expect(forgot.state.step == .email && forgot.state.email == "ivan@example.com" && forgot.state.isSendCodeEnabled)
            forgot.setEmail("ivan@")
            #expect(!forgot.state.isSendCodeEnabled && forgot.state.emailError == "Enter an email address such as name@example.com")
            forgot.setEmail("ivan@example.com")
            await forgot.sendCode()
            forgot.stopCountdown()

            // code step: the code's life and the resend countdown on the clock
            #expect(forgot.state.step == .code, "\(forgot.state.errorMessage ?? "")")
            let codeState = try #require(forgot.state.code)
            #expect(codeState.codeContentType == .oneTimeCode)
            #expect(codeState.destination == "ivan@example.com" && codeState.prompt == "Enter the code we sent to ivan@example.com")
            #expect(forgot.state.prompt == codeState.prompt)
            #expect(codeState.expiryText == "The code is valid for 10:00")
            #expect(codeState.resendTitle == "Send again in 1:00" && !codeState.isResendEnabled)
            #expect(!forgot.state.isContinueEnabled)
            server.clock.advance(by: 30)
            forgot.tick()
            #expect(forgot.state.code?.expiryText == "The code is valid for 9:30")
            #expect(forgot.state.code?.resendTitle == "Send again in 0:30")
            let code = try await server.latestCodeV1(to: "ivan@example.com")

            // a wrong code first: checked with the password, then back to the code step
            forgot.setCode(wrongCode(for: code))
            #expect(forgot.state.isContinueEnabled)
            forgot.continueWithCode()
            #expect(forgot.state.step == .newPassword)
            #expect(forgot.state.passwordContentType == .newPassword)
            forgot.setNewPassword("Better-43!")
            forgot.setConfirmation("Better-44!")
            #expect(forgot.state.confirmationError == "The passwords do not match")
            #expect(!forgot.state.isSaveEnabled, "mismatched passwords cannot be saved")
            forgot.setNewPassword("better")
            forgot.setConfirmation("better")
            #expect(forgot.state.newPasswordError == "Add a digit")
            #expect(!forgot.state.isSaveEnabled, "the password rule is checked before the server")
            forgot.setNewPassword("Better-43!")
            forgot.setConfirmation("Better-43!")
            #expect(forgot.state.isSaveEnabled && forgot.state.confirmationError == nil && forgot.state.newPasswordError == nil)
            await forgot.save()
            forgot.stopCountdown()
            #expect(forgot.state.step == .code)
            #expect(forgot.state.errorMessage?.hasSuffix(" Attempts left: 4.") == true, "the server's message on the wrong code: \(forgot.state.errorMessage ?? "")")
            guard case .forgotPassword = flow.state.screen else { Issue.record("left the screen on a wrong code"); return }

            // MUT: the right code, the passwords kept
            forgot.setCode(code)
            forgot.continueWithCode()
            #expect(forgot.state.newPassword == "Better-43!" && forgot.state.isSaveEnabled)
            await forgot.save()

            // validate
            guard case .login(let back) = flow.state.screen else { Issue.record("expected login: \(forgot.state.errorMessage ?? "")"); return }
            #expect(back.state.login == "ivan@example.com")
            #expect(back.state.infoMessage == "Your password has been changed. Log in with the new one.")
            back.setPassword("Better-43!")
            await back.submit()
            guard case .messenger = flow.state.screen else { Issue.record("the new password should work: \(back.state.errorMessage ?? "")"); return }
        }
    }

    @Test("forgotPassword_resend_isOfferedAfterTheCountdown_andReArms")
    func forgotPassword_resend() async throws {
        try await withLiveServer { server in
            // setup
            try await server.makeV1Account(email: "ivan@example.com", tag: "ivan")
            let flow = makeFlow(server)
            try await openLogin(flow).forgotPassword()
            guard case .forgotPassword(let forgot) = flow.state.screen else { Issue.record("expected forgot password"); return }
            forgot.setEmail("ivan@example.com")
            await forgot.sendCode()
            forgot.stopCountdown()
            server.clock.advance(by: 60)
            forgot.tick()
            #expect(forgot.state.code?.isResendEnabled == true && forgot.state.code?.resendTitle == "Send the code again")

            // MUT
            await forgot.resend()
            forgot.stopCountdown()

            // validate
            #expect(forgot.state.errorMessage == nil)
            #expect(forgot.state.infoMessage == "A new code was sent to ivan@example.com.")
            #expect(forgot.state.code?.isResendEnabled == false && forgot.state.code?.resendTitle == "Send again in 1:00")
            #expect(try await server.outbox.messages(to: "ivan@example.com").filter { $0.code != nil }.count == 3, "sign-up, and two recovery codes")
        }
    }

    // MARK: Registration

    @Test("registration_tagIsCheckedAsTyped: the rule first, then the server (free, taken, invalid)")
    func registration_liveTagAvailability() async throws {
        try await withLiveServer { server in
            // setup
            try await server.makeV1Account(email: "taken@example.com", tag: "taken")
            let flow = makeFlow(server)
            try await openLogin(flow).register()
            guard case .registration(let form) = flow.state.screen else { Issue.record("expected registration"); return }
            #expect(form.state.tagStatus == .empty && form.state.tagMessage == nil)

            // MUT + validate: the local rule answers at once, without the server
            form.set(.tag, "ab")
            #expect(form.state.tagStatus == .invalid && form.state.tagMessage == "At least 3 characters")
            form.set(.tag, "12345")
            #expect(form.state.tagStatus == .invalid && form.state.tagMessage == "Add at least one letter")
            form.set(.tag, "ivan petrov")
            #expect(form.state.tagStatus == .invalid && form.state.tagMessage == "Only latin letters, digits, _ and .")

            // the server: taken
            form.set(.tag, "@Taken")
            #expect(form.state.tagStatus == .checking && form.state.tagMessage == "Checking @taken…")
            await form.settleTagCheck()
            #expect(form.state.tagStatus == .taken && form.state.tagMessage == "@taken is already taken")

            // free
            form.set(.tag, "Free_One")
            await form.settleTagCheck()
            #expect(form.state.tagStatus == .available && form.state.tagMessage == "@free_one is free")

            // an answer about a tag no longer typed is dropped
            form.set(.tag, "taken")
            form.set(.tag, "free_two")
            await form.settleTagCheck()
            #expect(form.state.tagStatus == .available && form.state.tagMessage == "@free_two is free")
        }
    }

    @Test("registration_passwordMismatch_keepsContinueDisabled")
    func registration_passwordMismatch() async throws {
        try await withLiveServer { server in
            // setup
            let flow = makeFlow(server)
            try await openLogin(flow).register()
            guard case .registration(let form) = flow.state.screen else { Issue.record("expected registration"); return }
            #expect(MessengerRegistrationViewModel.contentTypes[.password] == .newPassword)
            #expect(MessengerRegistrationViewModel.contentTypes[.passwordConfirmation] == .newPassword)
            #expect(MessengerRegistrationViewModel.contentTypes[.email] == .emailAddress)
            #expect(!form.state.isContinueEnabled)

            // MUT
            form.set(.email, "ivan@example.com")
            form.set(.lastName, "Petrov")
            form.set(.firstName, "Ivan")
            form.set(.tag, "ivan")
            await form.settleTagCheck()
            form.set(.password, "Secret-42!")
            form.set(.passwordConfirmation, "Secret-24!")

            // validate
            #expect(form.state.tagStatus == .available)
            #expect(form.state.fieldErrors[.passwordConfirmation] == "The passwords do not match")
            #expect(!form.state.isContinueEnabled)
            form.set(.passwordConfirmation, "Secret-42!")
            #expect(form.state.fieldErrors.isEmpty)
            #expect(form.state.isContinueEnabled)
            form.set(.password, "secret")
            #expect(form.state.fieldErrors[.password] == "Add a digit" && !form.state.isContinueEnabled)
        }
    }

    @Test("registration_fullPath: form, code mailed, a wrong code shown, the right one logs in")
    func registration_fullPath() async throws {
        try await withLiveServer { server in
            // setup
            let store = InMemorySessionStore()
            let flow = makeFlow(server, store: store)
            try await openLogin(flow).register()
            guard case .registration(let form) = flow.state.screen else { Issue.record("expected registration"); return }
            #expect(form.state.title == "Registration" && form.state.continueTitle == "Continue")
            for (field, value) in [(MessengerRegistrationField.email, "ivan@example.com"), (.lastName, "Petrov"), (.firstName, "Ivan"),
                                   (.tag, "Ivan"), (.password, "Secret-42!"), (.passwordConfirmation, "Secret-42!")] {
                form.set(field, value)
            }
            await form.settleTagCheck()
            #expect(form.state.isContinueEnabled)
            await form.continueToCode()
            form.stopCountdown()
            #expect(form.state.step == .code, "\(form.state.errorMessage ?? "")")
            let codeState = try #require(form.state.code)
            #expect(codeState.codeContentType == .oneTimeCode && codeState.codeLength == 6)
            #expect(codeState.resendTitle == "Send again in 1:00" && codeState.expiryText == "The code is valid for 10:00")
            #expect(!form.state.isSubmitEnabled)
            let code = try await server.latestCodeV1(to: "ivan@example.com")

            // a wrong code: the server's message, the code step stays
            form.setCode(wrongCode(for: code))
            await form.submit()
            form.stopCountdown()
            #expect(form.state.step == .code)
            #expect(form.state.errorMessage?.hasSuffix(" Attempts left: 4.") == true, "\(form.state.errorMessage ?? "")")
            guard case .registration = flow.state.screen else { Issue.record("left registration on a wrong code"); return }
            #expect(try store.load() == nil)

            // MUT
            form.setCode(code)
            await form.submit()

            // validate
            guard case .messenger(let home) = flow.state.screen else { Issue.record("expected home: \(form.state.errorMessage ?? "")"); return }
            #expect(home.repository.account.tag == "ivan" && home.repository.account.email == "ivan@example.com" && home.repository.account.emailConfirmed)
            #expect(home.repository.account.locale == "en")
            #expect(try store.load() != nil)
        }
    }

    @Test("registration_aTagTakenMeanwhile_returnsToTheFormWithTheTagMarked, and Continue reuses the live code")
    func registration_tagTakenMeanwhile() async throws {
        try await withLiveServer { server in
            // setup
            let flow = makeFlow(server)
            try await openLogin(flow).register()
            guard case .registration(let form) = flow.state.screen else { Issue.record("expected registration"); return }
            for (field, value) in [(MessengerRegistrationField.email, "ivan@example.com"), (.lastName, "Petrov"), (.firstName, "Ivan"),
                                   (.tag, "ivan"), (.password, "Secret-42!"), (.passwordConfirmation, "Secret-42!")] {
                form.set(field, value)
            }
            await form.settleTagCheck()
            await form.continueToCode()
            form.stopCountdown()
            let code = try await server.latestCodeV1(to: "ivan@example.com")
            try await server.makeV1Account(email: "other@example.com", tag: "ivan")   // someone is quicker
            form.setCode(code)

            // MUT
            await form.submit()
            form.stopCountdown()

            // validate
            #expect(form.state.step == .form)
            #expect(form.state.tagStatus == .taken)
            #expect(form.state.errorMessage?.isEmpty == false && form.state.tagMessage == form.state.errorMessage)
            #expect(!form.state.isContinueEnabled)
            form.set(.tag, "ivan2")
            await form.settleTagCheck()
            await form.continueToCode()
            form.stopCountdown()
            #expect(form.state.step == .code && form.state.errorMessage == nil)
            #expect(try await server.outbox.messages(to: "ivan@example.com").filter { $0.code != nil }.count == 1, "the first code still lives: no second mail")
            form.setCode(code)
            await form.submit()
            guard case .messenger(let home) = flow.state.screen else { Issue.record("expected home: \(form.state.errorMessage ?? "")"); return }
            #expect(home.repository.account.tag == "ivan2")
        }
    }

    // MARK: Home

    @Test("logout_asksFirst: cancel stays signed in, confirm ends the session and returns to login")
    func logout_confirmation() async throws {
        try await withLiveServer { server in
            // setup
            try await server.makeV1Account(email: "ivan@example.com", tag: "ivan")
            let store = InMemorySessionStore()
            let flow = makeFlow(server, store: store)
            let login = try await openLogin(flow)
            login.setLogin("ivan")
            login.setPassword("Secret-42!")
            await login.submit()
            guard case .messenger(let home) = flow.state.screen else { Issue.record("expected home"); return }
            let token = try #require(try store.load())
            let profile = home.profile
            let logout = try #require(profile.state.settings.first { $0.item == .logout })
            #expect(logout.item == .logout && logout.title == "Log out" && logout.isDestructive && profile.state.confirmation == nil)

            // cancel
            profile.open(.logout)
            #expect(profile.state.confirmation?.title == "Log out?")
            #expect(profile.state.confirmation?.confirmTitle == "Log out" && profile.state.confirmation?.cancelTitle == "Cancel")
            profile.cancelLogout()
            #expect(profile.state.confirmation == nil)
            guard case .messenger = flow.state.screen else { Issue.record("cancel must stay signed in"); return }
            #expect(try store.load() != nil)

            // MUT
            profile.open(.logout)
            await profile.confirmLogout()

            // validate
            guard case .login = flow.state.screen else { Issue.record("expected login after logout"); return }
            #expect(try store.load() == nil)
            let reused = server.accountsClient(store: InMemorySessionStore(token))
            guard case .sessionExpired? = await clientError({ try await reused.me() }) else { Issue.record("the token must be dead on the server"); return }
        }
    }

    @Test("the screens speak Russian from the same view models")
    func russian() async throws {
        try await withLiveServer { server in
            // setup
            let flow = makeFlow(server, language: "ru")

            // MUT
            let login = try await openLogin(flow)
            login.register()

            // validate
            #expect(login.state.title == "Вход" && login.state.forgotTitle == "Забыл пароль" && login.state.registerTitle == "Зарегистрироваться")
            guard case .registration(let form) = flow.state.screen else { Issue.record("expected registration"); return }
            #expect(form.state.labels[.tag] == "Тег")
            form.set(.tag, "ab")
            #expect(form.state.tagMessage == "Не короче 3 символов")
            #expect(Localizer.keys("en") == Localizer.keys("ru"))
        }
    }
}

/// `gatehouse-demo messenger-auth` driven through a pseudo-terminal against a running server:
/// proof that the view models carry the whole epic and the demo only draws and forwards.
@Suite("gatehouse-demo messenger-auth in a terminal")
struct MessengerAuthDemoSessionTests {
    @Test("registering by email code, logging out and logging in by tag through the demo's menus")
    func registerLogOutLogInByTag() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: DemoTerminalSessionTests.demoBinary.path), "build the demo first: \(DemoTerminalSessionTests.demoBinary.path)")
        try await withLiveServer { server in
            let sessionFile = FileManager.default.temporaryDirectory.appendingPathComponent("demo-messenger-\(UUID().uuidString).json").path
            let (status, text) = try await DemoTerminalSessionTests.runSession(["--scenario", "messenger-auth", "--demo", DemoTerminalSessionTests.demoBinary.path,
                                                                                "--server", server.baseURL.absoluteString, "--session-file", sessionFile])
            #expect(status == 0, "\(text)")
            #expect(text.contains("messenger-auth demo session passed"))
            try? FileManager.default.removeItem(atPath: sessionFile)
        }
    }

    @Test("two people, two terminals: --as keeps each one's session, so the second is not signed in as the first")
    func twoPeopleAsNames() async throws {
        try await withLiveServer { server in
            let home = FileManager.default.temporaryDirectory.appendingPathComponent("demo-home-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: home) }
            let (status, text) = try await DemoTerminalSessionTests.runSession(["--scenario", "two-people", "--demo", DemoTerminalSessionTests.demoBinary.path,
                                                                                "--server", server.baseURL.absoluteString, "--session-file", "unused",
                                                                                "--home", home.path])
            #expect(status == 0, "\(text)")
            #expect(text.contains("two-people demo session passed"))
        }
    }
}
