import Foundation
import GatehouseAPI
import GatehouseKit
import GatehouseScreens
import GatehouseTestSupport
import Testing

/// The five scenarios of `docs/phone-accounts.md` through the view models, against a real
/// server over loopback: what an iOS app would draw, step by step.
@Suite("Phone accounts through the view models")
@MainActor
struct PhoneAccountsScreensTests {
    func makeFlow(_ server: LiveServer, store: any SessionStore = InMemorySessionStore(), language: String = "en") -> PhoneAccountsFlow {
        let environment = PhoneAccountsEnvironment(
            client: server.client(store: store, language: language), localizer: Localizer(language: language),
            now: { [clock = server.clock] in clock.now }
        )
        return PhoneAccountsFlow(environment: environment)
    }

    @Test("registration without an email: the form says what is missing, then the prompt asks for the address after login")
    func registration_withoutEmail_asksForItAfterLogin() async throws {
        try await withLiveServer { server in
            // setup
            let flow = makeFlow(server)
            await flow.launch()
            guard case .start(let start) = flow.state.screen else { Issue.record("expected start"); return }
            start.register()
            guard case .registration(let form) = flow.state.screen else { Issue.record("expected registration"); return }
            let untouched = form.state.sendCodeHint

            // MUT
            form.set(.phone, "+7 912 345-67-89")
            form.set(.password, "secret-91!")
            form.set(.lastName, "Petrov")
            form.set(.firstName, "Ivan")
            let beforeTerms = form.state.sendCodeHint
            form.setTermsAccepted(true)
            await form.sendCode()
            guard case .codeEntry(let code) = flow.state.screen else { Issue.record("expected the code screen"); return }
            code.setCode(try await server.latestCode(to: "+79123456789"))
            await code.submit()

            // validate
            #expect(untouched == "Phone number (your login): Required")
            #expect(form.state.labels[.email] == "Email (optional)")
            #expect(beforeTerms == "Tick the terms box first.")
            #expect(flow.state.prompt?.reason == .missing, "the spec's \"no email\" category asks for one")
        }
    }

    @Test("1. Registration: form, code (a wrong one first), automatic login, confirmation mail, confirmed")
    func registration() async throws {
        try await withLiveServer { server in
            let flow = makeFlow(server)
            await flow.launch()
            guard case .start(let start) = flow.state.screen else { Issue.record("expected start"); return }
            #expect(start.state.registerTitle == "Register" && start.state.loginTitle == "Log in")
            start.register()
            guard case .registration(let form) = flow.state.screen else { Issue.record("expected registration"); return }

            // "Send code" disabled until every field is valid and the box is ticked
            #expect(!form.state.isSendCodeEnabled)
            #expect(RegistrationViewModel.contentTypes[.password] == .newPassword)
            #expect(RegistrationViewModel.contentTypes[.phone] == .telephoneNumber)
            form.set(.phone, "+7 912 345-67-89")
            form.set(.password, "secret")
            #expect(form.state.fieldErrors[.password] == "Add a digit")
            form.set(.password, "secret-91!")
            form.set(.lastName, "Petrov")
            form.set(.firstName, "Ivan")
            form.set(.email, "ivan@")
            #expect(form.state.fieldErrors[.email] != nil)
            form.set(.email, "ivan@example.com")
            #expect(form.state.fieldErrors.isEmpty)
            #expect(!form.state.isSendCodeEnabled, "the terms box is not ticked yet")
            form.setTermsAccepted(true)
            #expect(form.state.isSendCodeEnabled)
            await form.sendCode()

            guard case .codeEntry(let codeScreen) = flow.state.screen else { Issue.record("expected code entry: \(form.state.errorMessage ?? "")"); return }
            #expect(codeScreen.state.codeContentType == .oneTimeCode)
            #expect(!codeScreen.state.isResendEnabled)
            #expect(codeScreen.state.resendSecondsLeft == 60)
            #expect(codeScreen.state.resendTitle == "Send again in 1:00")
            #expect(!codeScreen.state.isSubmitEnabled)

            // a wrong code: the server's message, the screen stays
            let code = try await server.latestCode(to: "+79123456789")
            codeScreen.setCode(code == "000000" ? "111111" : "000000")
            await codeScreen.submit()
            #expect(codeScreen.state.errorMessage?.contains("code is wrong") == true)
            guard case .codeEntry = flow.state.screen else { Issue.record("left the code screen"); return }

            codeScreen.setCode(code)
            await codeScreen.submit()
            guard case .confirmationPending(let pending) = flow.state.screen else { Issue.record("expected pending: \(codeScreen.state.errorMessage ?? "")"); return }
            #expect(pending.state.email == "ivan@example.com")
            #expect(pending.state.message.contains("ivan@example.com"))

            // the mail went out; the user opens the link and comes back
            await pending.checkConfirmation()
            #expect(pending.state.infoMessage == "ivan@example.com is not confirmed yet.")
            try await server.followConfirmationLink(to: "ivan@example.com")
            await pending.checkConfirmation()
            guard case .final(let final) = flow.state.screen else { Issue.record("expected final"); return }
            #expect(final.state.isEmailConfirmed)
            #expect(final.state.confirmationText == "Email confirmed")
            #expect(final.state.rows.contains(FinalViewModel.Row(label: "Phone", value: "+79123456789")))
        }
    }

    @Test("2. Login, each category: confirmed → final; unconfirmed → mail sent; no email → the prompt")
    func loginCategories() async throws {
        try await withLiveServer { server in
            try await server.makeAccount(phone: "+79000000001", email: "confirmed@example.com", confirmed: true)
            try await server.makeAccount(phone: "+79000000002", email: "pending@example.com")
            try await server.makeAccount(phone: "+79000000003", email: nil)

            // confirmed
            var flow = makeFlow(server)
            await flow.openLogin()
            var login = try #require(flow.loginScreen)
            #expect(!login.state.isSubmitEnabled)
            login.setLogin("confirmed@example.com")
            login.setPassword("secret-91!")
            #expect(login.state.isSubmitEnabled)
            await login.submit()
            guard case .final = flow.state.screen else { Issue.record("confirmed account should see the final screen"); return }

            // unconfirmed: a new confirmation mail goes out
            let mailsBefore = try await server.outbox.messages(to: "pending@example.com").count
            flow = makeFlow(server)
            await flow.openLogin()
            login = try #require(flow.loginScreen)
            login.setLogin("8 900 000-00-02")
            login.setPassword("secret-91!")
            await login.submit()
            guard case .confirmationPending(let pending) = flow.state.screen else { Issue.record("expected pending"); return }
            #expect(pending.state.email == "pending@example.com")
            #expect(try await server.outbox.messages(to: "pending@example.com").count == mailsBefore + 1)

            // no email: the prompt, "Save" disabled while empty or invalid
            flow = makeFlow(server)
            await flow.openLogin()
            login = try #require(flow.loginScreen)
            login.setLogin("+79000000003")
            login.setPassword("secret-91!")
            await login.submit()
            guard case .confirmationPending(let noEmail) = flow.state.screen else { Issue.record("expected pending with prompt"); return }
            let prompt = try #require(flow.state.prompt)
            #expect(prompt.reason == .missing)
            #expect(prompt.state.title == "Add your email")
            #expect(!prompt.state.isConfirmEnabled)
            prompt.setEmail("not-an-email")
            #expect(!prompt.state.isConfirmEnabled)
            prompt.setEmail("added@example.com")
            #expect(prompt.state.isConfirmEnabled)
            await prompt.confirm()
            #expect(flow.state.prompt == nil)
            #expect(noEmail.state.email == "added@example.com")
            #expect(try await server.outbox.messages(to: "added@example.com").count == 1)
        }
    }

    @Test("delete account from the final screen, through /v1 on the phone API's session: cancel returns, the password deletes, the start screen says until when")
    func deleteAccount_fromFinal() async throws {
        try await withLiveServer { server in
            try await server.makeAccount(phone: "+79000000011", email: "leaving@example.com", confirmed: true)
            let flow = makeFlow(server)
            await flow.openLogin()
            let login = try #require(flow.loginScreen)
            login.setLogin("+79000000011")
            login.setPassword("secret-91!")
            await login.submit()
            guard case .final(let final) = flow.state.screen else { Issue.record("expected the final screen"); return }
            #expect(final.state.deleteAccountTitle == "Delete account")

            // MUT: open and cancel, open again and delete
            final.deleteAccount()
            guard case .deleteAccount(let first) = flow.state.screen else { Issue.record("expected delete account"); return }
            first.cancel()
            #expect(flow.state.screen == .final(final))
            final.deleteAccount()
            guard case .deleteAccount(let screen) = flow.state.screen else { Issue.record("expected delete account"); return }
            screen.setPassword("secret-91!")
            await screen.confirm()

            // validate: the start screen with the notice; the phone API's token no longer works
            guard case .start(let start) = flow.state.screen else { Issue.record("expected start, got \(flow.state.screen)"); return }
            #expect(start.state.notice?.hasPrefix("Your account is being deleted") == true)
            let relaunched = makeFlow(server)
            await relaunched.launch()
            guard case .start = relaunched.state.screen else { Issue.record("a relaunch has no session to restore"); return }
        }
    }

    @Test("a wrong password shows the server's message and stays on login")
    func login_wrongPassword() async throws {
        try await withLiveServer { server in
            try await server.makeAccount(phone: "+79000000001", email: nil)
            let flow = makeFlow(server, language: "ru")
            await flow.openLogin()
            let login = try #require(flow.loginScreen)
            #expect(login.state.title == "Вход")
            login.setLogin("+79000000001")
            login.setPassword("wrong-1!")
            await login.submit()
            #expect(login.state.errorMessage == "Неверный логин или пароль.")
            #expect(login.state.isSubmitEnabled)
            guard case .login = flow.state.screen else { Issue.record("left login"); return }
        }
    }

    @Test("3. Restore by SMS and by email; back to login with the temporary password")
    func restorePassword() async throws {
        try await withLiveServer { server in
            try await server.makeAccount(phone: "+79000000001", email: "r@example.com", confirmed: true)
            let flow = makeFlow(server)
            await flow.openLogin()
            try #require(flow.loginScreen).forgotPassword()
            guard case .restorePassword(let restore) = flow.state.screen else { Issue.record("expected restore"); return }
            #expect(!restore.state.isSubmitEnabled)
            restore.setValue("+7 900 000 00 01")
            #expect(restore.state.isSubmitEnabled)
            await restore.submit()
            #expect(restore.state.successMessage?.contains("by SMS") == true)
            #expect(!restore.state.isSubmitEnabled)
            let temporary = try await server.latestCode(to: "+79000000001")

            restore.backToLogin()
            guard case .login(let login) = flow.state.screen else { Issue.record("expected login"); return }
            #expect(login.state.login == "+7 900 000 00 01")
            login.setPassword(temporary)
            await login.submit()
            guard case .final = flow.state.screen else { Issue.record("expected final: \(login.state.errorMessage ?? "")"); return }

            // by email
            let byMail = makeFlow(server)
            await byMail.openLogin()
            try #require(byMail.loginScreen).forgotPassword()
            guard case .restorePassword(let mailRestore) = byMail.state.screen else { return }
            mailRestore.setMethod(.email)
            #expect(mailRestore.state.fieldContentType == .emailAddress)
            mailRestore.setValue("r@example.com")
            await mailRestore.submit()
            #expect(mailRestore.state.successMessage == "A new password was sent to r@example.com. Your old password works until you use it.")
            #expect(try await server.outbox.messages(to: "r@example.com").first?.subject == "Your new Gatehouse password")
        }
    }

    @Test("4/5. Wrong email: the prompt (confirm disabled while empty) saves the new address and re-sends the mail")
    func changeEmail() async throws {
        try await withLiveServer { server in
            try await server.makeAccount(phone: "+79000000001", email: "typo@exmaple.com")
            let flow = makeFlow(server)
            await flow.openLogin()
            let login = try #require(flow.loginScreen)
            login.setLogin("+79000000001")
            login.setPassword("secret-91!")
            await login.submit()
            guard case .confirmationPending(let pending) = flow.state.screen else { Issue.record("expected pending"); return }
            pending.changeEmail()
            let prompt = try #require(flow.state.prompt)
            #expect(prompt.reason == .wrong(current: "typo@exmaple.com"))
            #expect(prompt.state.email == "typo@exmaple.com")
            prompt.setEmail("")
            #expect(!prompt.state.isConfirmEnabled, "an empty field cannot be confirmed")
            prompt.setEmail("right@example.com")
            await prompt.confirm()
            #expect(flow.state.prompt == nil)
            #expect(pending.state.email == "right@example.com")
            #expect(try await server.outbox.messages(to: "right@example.com").count == 1)
            let user = try await flow.environment.client.currentUser()
            #expect(user.email == "right@example.com" && !user.isConfirmed)
            try await server.followConfirmationLink(to: "right@example.com")
            await pending.checkConfirmation()
            guard case .final = flow.state.screen else { Issue.record("expected final"); return }
        }
    }

    @Test("launch: a stored unexpired session goes straight in; an expired one shows the start screen and is forgotten")
    func launch_withStoredSessions() async throws {
        try await withLiveServer { server in
            try await server.makeAccount(phone: "+79000000001", email: "l@example.com", confirmed: true)
            let store = InMemorySessionStore()
            try await server.client(store: store).login(login: "+79000000001", password: "secret-91!")

            let flow = makeFlow(server, store: store)
            await flow.launch()
            guard case .final(let final) = flow.state.screen else { Issue.record("expected final"); return }

            // log out from the final screen
            await final.logout()
            guard case .start = flow.state.screen else { Issue.record("expected start after logout"); return }
            #expect(try store.load() == nil)

            // expired on launch
            try await server.client(store: store).login(login: "+79000000001", password: "secret-91!")
            server.clock.advance(by: 86_401)
            let later = makeFlow(server, store: store)
            await later.launch()
            guard case .start = later.state.screen else { Issue.record("expected start"); return }
            #expect(try store.load() == nil)
        }
    }

    @Test("a relaunch with an unconfirmed email sends no mail and does not claim one was sent")
    func launch_unconfirmed_sendsNothing() async throws {
        try await withLiveServer { server in
            try await server.makeAccount(phone: "+79000000001", email: "u@example.com")
            let store = InMemorySessionStore()
            try await server.client(store: store).login(login: "+79000000001", password: "secret-91!")
            let flow = makeFlow(server, store: store)
            await flow.launch()
            guard case .confirmationPending(let pending) = flow.state.screen else { Issue.record("expected pending"); return }
            #expect(pending.state.message == "u@example.com is not confirmed yet. Send the confirmation mail again, or change the address.")
            let mails = try await server.outbox.messages(to: "u@example.com")
            #expect(mails.isEmpty)
        }
    }

    @Test("the resend countdown runs on the clock and re-arms after a resend")
    func resendCountdown() async throws {
        try await withLiveServer { server in
            let flow = makeFlow(server)
            await flow.openRegistration()
            guard case .registration(let form) = flow.state.screen else { return }
            for (field, value) in [(RegistrationField.phone, "+79000000009"), (.password, "secret-91!"), (.lastName, "A"), (.firstName, "B"), (.email, "c@example.com")] {
                form.set(field, value)
            }
            form.setTermsAccepted(true)
            await form.sendCode()
            guard case .codeEntry(let code) = flow.state.screen else { Issue.record("expected code"); return }
            code.stopCountdown()
            server.clock.advance(by: 45)
            code.tick()
            #expect(code.state.resendSecondsLeft == 15 && code.state.resendTitle == "Send again in 0:15" && !code.state.isResendEnabled)
            server.clock.advance(by: 15)
            code.tick()
            #expect(code.state.isResendEnabled && code.state.resendTitle == "Send the code again")
            await code.resend()
            code.stopCountdown()
            #expect(code.state.errorMessage == nil)
            #expect(!code.state.isResendEnabled && code.state.resendSecondsLeft == 60)
            let sent = try await server.outbox.messages(to: "+79000000009")
            #expect(sent.count == 2)
        }
    }

    @Test("every screen string exists in English and Russian")
    func strings_complete() {
        #expect(Localizer.keys("en") == Localizer.keys("ru"))
        #expect(Localizer.keys("en").count > 50)
        #expect(Localizer(language: "ru-RU")("start.register") == "Зарегистрироваться")
        #expect(Localizer(language: "de")("start.register") == "Register")
    }
}

extension PhoneAccountsFlow {
    /// Launch with no session, then "Log in" on the start screen, as a user would.
    func openLogin() async {
        await launch()
        if case .start(let start) = state.screen { start.login() }
    }

    func openRegistration() async {
        await launch()
        if case .start(let start) = state.screen { start.register() }
    }

    var loginScreen: LoginViewModel? {
        if case .login(let login) = state.screen { return login }
        return nil
    }
}
