import Foundation
import GatehouseDevSupport
import GatehouseKit
import GatehouseScreens

/// Draws the way into a `/v1` app (splash, login, forgot password, registration) as text and
/// forwards what is typed to the view models; the messenger and the wallet terminals both start
/// with it, as their flows both start with `AccountEntry`.
@MainActor
class AccountEntryTerminal: TerminalMenu {
    let outbox: DevOutboxClient

    init(outbox: DevOutboxClient, language: String) {
        self.outbox = outbox
        super.init(language: language)
    }

    // MARK: Drawing helpers

    /// The code block shared by the code steps: the field, the expiry, the resend countdown.
    func draw(_ code: MessengerCodeState, prompt: Bool = true) {
        if prompt { Terminal.line("  \(code.prompt)") }
        field(code.codeLabel, code.code)
        Terminal.line("  ⏱ \(code.expiryText)")
    }

    var fetchLabel: String {
        t("Fetch the code from the server's development outbox (stands in for the mailbox)",
          "Взять код из dev-outbox сервера (вместо почтового ящика)")
    }

    // MARK: Screens

    func show(_ vm: SplashViewModel, launch: () async -> Void) async {
        header(vm.state.title)
        if let progress = vm.state.progressMessage { Terminal.line("  … \(progress)") }
        notices(error: vm.state.errorMessage)
        if vm.state.isRetryEnabled {
            await menu([Option(label: vm.state.retryTitle) { await vm.retry() }])
        } else {
            await launch()
        }
    }

    func show(_ vm: MessengerLoginViewModel) async {
        let providers = vm.providers
        // A terminal draws once per input: the buttons must be known before the menu is.
        if !providers.state.hasLoaded { await providers.load() }
        header(vm.state.title)
        if let link = providers.state.link {
            // The provider's address is an account's: its password links the two.
            Terminal.line("  \(link.message)")
            field(link.passwordLabel, masked(link.password))
            if link.needsCode { field(link.codeLabel, link.code) }
            notices(error: providers.state.errorMessage, info: nil)
            return await menu([
                Option(label: t("Type the password", "Ввести пароль")) { [self] in if let text = read(link.passwordLabel, secret: true) { providers.setLinkPassword(text) } },
                Option(label: t("Type the code", "Ввести код"), enabled: link.needsCode) { [self] in if let text = read(link.codeLabel) { providers.setLinkCode(text) } },
                Option(label: link.submitTitle, enabled: link.isSubmitEnabled) { await providers.submitLink() },
                Option(label: link.cancelTitle) { providers.cancelLink() },
            ])
        }
        field(vm.state.loginLabel, vm.state.login)
        field(vm.state.passwordLabel, masked(vm.state.password))
        notices(error: vm.state.errorMessage ?? providers.state.errorMessage, info: vm.state.infoMessage)
        // The providers the server takes (none unless its operator configured them). A terminal cannot open Apple's or
        // Google's sheet: it says what the sheet would be given and takes the identity token it gave, pasted.
        let buttons = providers.state.buttons.map { button in
            Option(label: button.title) { [self] in
                let sheet = providers.sheetRequest(for: button.provider)
                Terminal.line(t("  The sheet is opened with the nonce \(sheet.nonce) for \(sheet.clientID ?? "the app"): paste the identity token it gave.",
                                "  Лист открыт с nonce \(sheet.nonce) для \(sheet.clientID ?? "приложения"): вставьте identity token, который он вернул."))
                guard let token = read(t("Identity token", "Identity token")), !token.isEmpty else {
                    return providers.sheetFailed(button.provider, cancelled: true)
                }
                await providers.complete(button.provider, idToken: token)
            }
        }
        await menu([
            Option(label: t("Type login and password", "Ввести логин и пароль")) { [self] in
                readCredentials(vm.state.loginLabel, vm.state.passwordLabel, current: (vm.state.login, vm.state.password), login: vm.setLogin, password: vm.setPassword)
            },
            Option(label: vm.state.submitTitle, enabled: vm.state.isSubmitEnabled) { await vm.submit() },
        ] + buttons + [
            Option(label: vm.state.forgotTitle) { vm.forgotPassword() },
            Option(label: vm.state.registerTitle) { vm.register() },
        ])
    }

    func show(_ vm: ForgotPasswordViewModel) async {
        vm.tick()
        header(vm.state.title)
        Terminal.line("  \(vm.state.prompt)")
        switch vm.state.step {
        case .email:
            field(vm.state.emailLabel, vm.state.email, error: vm.state.emailError)
            notices(error: vm.state.errorMessage, info: vm.state.infoMessage)
            await menu([
                Option(label: t("Type the email", "Ввести почту")) { [self] in if let email = read(vm.state.emailLabel, current: vm.state.email) { vm.setEmail(email) } },
                Option(label: vm.state.sendCodeTitle, enabled: vm.state.isSendCodeEnabled) { await vm.sendCode() },
                Option(label: vm.state.backTitle) { vm.back() },
            ])
        case .code:
            guard let code = vm.state.code else { return vm.back() }
            draw(code, prompt: false)   // the step's prompt above is the code's
            notices(error: vm.state.errorMessage, info: vm.state.infoMessage)
            await menu([
                Option(label: t("Type the code", "Ввести код")) { [self] in if let text = read(code.codeLabel) { vm.setCode(text) } },
                Option(label: fetchLabel) { [self] in await fetchCode(from: outbox, to: code.destination, label: code.codeLabel) { vm.setCode($0) } },
                Option(label: vm.state.continueTitle, enabled: vm.state.isContinueEnabled) { vm.continueWithCode() },
                Option(label: code.resendTitle, enabled: code.isResendEnabled) { await vm.resend() },
                Option(label: vm.state.backTitle) { vm.back() },
            ])
        case .newPassword:
            field(vm.state.newPasswordLabel, masked(vm.state.newPassword), error: vm.state.newPasswordError)
            field(vm.state.confirmationLabel, masked(vm.state.confirmation), error: vm.state.confirmationError)
            notices(error: vm.state.errorMessage, info: vm.state.infoMessage)
            await menu([
                Option(label: t("Type the new password twice", "Ввести новый пароль дважды")) { [self] in
                    guard let password = read(vm.state.newPasswordLabel, secret: true) else { return }
                    vm.setNewPassword(password)
                    guard let again = read(vm.state.confirmationLabel, secret: true) else { return }
                    vm.setConfirmation(again)
                },
                Option(label: vm.state.saveTitle, enabled: vm.state.isSaveEnabled) { await vm.save() },
                Option(label: vm.state.backTitle) { vm.back() },
            ])
        }
    }

    func show(_ vm: MessengerRegistrationViewModel) async {
        vm.tick()
        header(vm.state.title)
        switch vm.state.step {
        case .form:
            for name in MessengerRegistrationViewModel.fieldOrder {
                let value = vm.state.values[name] ?? ""
                let secret = MessengerRegistrationViewModel.contentTypes[name] == .newPassword
                let note = name == .tag ? vm.state.tagMessage : vm.state.fieldErrors[name]
                field(vm.state.labels[name] ?? name.rawValue, secret ? masked(value) : value, error: note)
            }
            notices(error: vm.state.errorMessage, info: vm.state.infoMessage)
            await menu([
                Option(label: t("Fill in the form", "Заполнить форму")) { [self] in
                    for name in MessengerRegistrationViewModel.fieldOrder {
                        let secret = MessengerRegistrationViewModel.contentTypes[name] == .newPassword
                        guard let value = read(vm.state.labels[name] ?? name.rawValue, current: vm.state.values[name] ?? "", secret: secret) else { return }
                        vm.set(name, value)
                    }
                    // The tag is checked after a pause in typing; wait for the answer before drawing.
                    await vm.settleTagCheck()
                },
                Option(label: t("Change the tag", "Изменить тег")) { [self] in
                    guard let tag = read(vm.state.labels[.tag] ?? "tag", current: vm.state.values[.tag] ?? "") else { return }
                    vm.set(.tag, tag)
                    await vm.settleTagCheck()
                },
                Option(label: vm.state.continueTitle, enabled: vm.state.isContinueEnabled) { await vm.continueToCode() },
                Option(label: vm.state.backTitle) { vm.back() },
            ])
        case .code:
            guard let code = vm.state.code else { return vm.back() }
            draw(code)
            if let progress = vm.state.progressMessage { Terminal.line("  … \(progress)") }
            notices(error: vm.state.errorMessage, info: vm.state.infoMessage)
            await menu([
                Option(label: t("Type the code", "Ввести код")) { [self] in if let text = read(code.codeLabel) { vm.setCode(text) } },
                Option(label: fetchLabel) { [self] in await fetchCode(from: outbox, to: code.destination, label: code.codeLabel) { vm.setCode($0) } },
                Option(label: vm.state.submitTitle, enabled: vm.state.isSubmitEnabled) { await vm.submit() },
                Option(label: code.resendTitle, enabled: code.isResendEnabled) { await vm.resend() },
                Option(label: vm.state.backTitle) { vm.back() },
            ])
        }
    }

    /// "Choose your tag", for an account a provider made.
    func show(_ vm: ChooseTagViewModel) async {
        header(vm.state.title)
        Terminal.line("  \(vm.state.message)")
        field(vm.state.tagLabel, vm.state.tag, error: vm.state.tagMessage)
        notices(error: vm.state.errorMessage, info: nil)
        await menu([
            Option(label: t("Type the tag", "Ввести тег")) { [self] in
                guard let tag = read(vm.state.tagLabel, current: vm.state.tag) else { return }
                vm.setTag(tag)
                // The tag is checked after a pause in typing; wait for the answer before drawing.
                await vm.settleTagCheck()
            },
            Option(label: vm.state.continueTitle, enabled: vm.state.isContinueEnabled) { await vm.submit() },
            Option(label: vm.state.signOutTitle) { await vm.signOut() },
        ])
    }
}
