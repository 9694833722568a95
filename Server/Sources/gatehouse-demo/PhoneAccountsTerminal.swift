import Foundation
import GatehouseDevSupport
import GatehouseKit
import GatehouseScreens

/// Draws `PhoneAccountsFlow`'s screen as text and forwards what is typed to its view model.
/// No flow logic lives here: every decision is the view models'.
@MainActor
final class PhoneAccountsTerminal: TerminalMenu {
    let flow: PhoneAccountsFlow
    let outbox: DevOutboxClient

    init(flow: PhoneAccountsFlow, outbox: DevOutboxClient, language: String) {
        self.flow = flow
        self.outbox = outbox
        super.init(language: language)
    }

    func run() async {
        await flow.launch()
        while !quit {
            if let prompt = flow.state.prompt {
                await show(prompt)
                continue
            }
            switch flow.state.screen {
            case .launching: await flow.launch()
            case .start(let vm): await show(vm)
            case .registration(let vm): await show(vm)
            case .codeEntry(let vm): await show(vm)
            case .login(let vm): await show(vm)
            case .restorePassword(let vm): await show(vm)
            case .confirmationPending(let vm): await show(vm)
            case .final(let vm): await show(vm)
            case .deleteAccount(let vm): await show(vm)
            }
        }
    }

    // MARK: Screens

    private func show(_ vm: StartViewModel) async {
        header(vm.state.title)
        notices(error: nil, info: vm.state.notice)
        await menu([Option(label: vm.state.registerTitle) { vm.register() }, Option(label: vm.state.loginTitle) { vm.login() }])
    }

    private func show(_ vm: RegistrationViewModel) async {
        header(vm.state.title)
        for name in RegistrationViewModel.fieldOrder {
            let value = vm.state.values[name] ?? ""
            field(vm.state.labels[name] ?? name.rawValue, name == .password ? masked(value) : value, error: vm.state.fieldErrors[name])
        }
        Terminal.line("  [\(vm.state.termsAccepted ? "x" : " ")] \(vm.state.termsText)")
        notices(error: vm.state.errorMessage)
        await menu([
            Option(label: t("Fill in the form", "Заполнить форму")) { [self] in
                for field in RegistrationViewModel.fieldOrder {
                    guard let value = read(vm.state.labels[field] ?? field.rawValue, current: vm.state.values[field] ?? "", secret: field == .password) else { return }
                    vm.set(field, value)
                }
            },
            Option(label: (vm.state.termsAccepted ? "[x] " : "[ ] ") + vm.state.termsText) { vm.setTermsAccepted(!vm.state.termsAccepted) },
            Option(label: t("Read the terms", "Прочитать условия")) { Terminal.line("  " + vm.state.termsDetail) },
            Option(label: vm.state.sendCodeTitle, enabled: vm.state.isSendCodeEnabled, reason: vm.state.sendCodeHint) { await vm.sendCode() },
            Option(label: t("Back", "Назад")) { vm.back() },
        ])
    }

    private func show(_ vm: CodeEntryViewModel) async {
        vm.tick()
        header(vm.state.title)
        Terminal.line("  \(vm.state.prompt)")
        field(vm.state.codeLabel, vm.state.code)
        if let progress = vm.state.progressMessage { Terminal.line("  … \(progress)") }
        notices(error: vm.state.errorMessage)
        await menu([
            Option(label: t("Type the code", "Ввести код")) { [self] in
                if let code = read(vm.state.codeLabel, current: vm.state.code) { vm.setCode(code) }
            },
            Option(label: t("Fetch the code from the server's development outbox (stands in for SMS autofill)",
                            "Взять код из dev-outbox сервера (вместо автоподстановки из СМС)")) { [self] in
                await fetchCode(from: outbox, to: vm.form.phone, label: vm.state.codeLabel) { vm.setCode($0) }
            },
            Option(label: vm.state.submitTitle, enabled: vm.state.isSubmitEnabled) { await vm.submit() },
            Option(label: vm.state.resendTitle, enabled: vm.state.isResendEnabled) { await vm.resend() },
            Option(label: t("Back", "Назад")) { vm.back() },
        ])
    }

    private func show(_ vm: LoginViewModel) async {
        header(vm.state.title)
        field(vm.state.loginLabel, vm.state.login)
        field(vm.state.passwordLabel, masked(vm.state.password))
        notices(error: vm.state.errorMessage)
        await menu([
            Option(label: t("Type login and password", "Ввести логин и пароль")) { [self] in
                readCredentials(vm.state.loginLabel, vm.state.passwordLabel, current: (vm.state.login, vm.state.password), login: vm.setLogin, password: vm.setPassword)
            },
            Option(label: vm.state.submitTitle, enabled: vm.state.isSubmitEnabled) { await vm.submit() },
            Option(label: vm.state.forgotTitle) { vm.forgotPassword() },
            Option(label: t("Back", "Назад")) { vm.back() },
        ])
    }

    private func show(_ vm: RestorePasswordViewModel) async {
        header(vm.state.title)
        Terminal.line("  \(vm.state.methodTitles[vm.state.method] ?? "") · \(vm.state.fieldLabel): \(vm.state.value)")
        notices(error: vm.state.errorMessage, info: vm.state.successMessage)
        let other: RestorePasswordViewModel.Method = vm.state.method == .sms ? .email : .sms
        await menu([
            Option(label: vm.state.methodTitles[other] ?? "") { vm.setMethod(other) },
            Option(label: vm.state.fieldLabel) { [self] in if let value = read(vm.state.fieldLabel, current: vm.state.value) { vm.setValue(value) } },
            Option(label: vm.state.submitTitle, enabled: vm.state.isSubmitEnabled) { await vm.submit() },
            Option(label: t("Read the new password from the server's development outbox (stands in for the SMS or mail)",
                            "Прочитать новый пароль в dev-outbox сервера (вместо СМС или письма)"),
                   enabled: vm.state.successMessage != nil,
                   reason: t("Send the new password first.", "Сначала отправьте новый пароль.")) { [self] in
                // The outbox normalises a phone as the server does.
                let destination = vm.state.method == .sms ? vm.state.value : vm.state.value.lowercased()
                await fetchCode(from: outbox, to: destination, label: t("New password", "Новый пароль")) { _ in }
            },
            Option(label: vm.state.backTitle) { vm.backToLogin() },
        ])
    }

    private func show(_ vm: ConfirmationPendingViewModel) async {
        header(vm.state.title)
        Terminal.line("  \(vm.state.message)")
        notices(error: vm.state.errorMessage, info: vm.state.infoMessage)
        await menu([
            Option(label: vm.state.checkTitle) { await vm.checkConfirmation() },
            Option(label: vm.state.resendTitle) { await vm.resend() },
            Option(label: vm.state.changeEmailTitle) { vm.changeEmail() },
            Option(label: t("Open the link from the server's development outbox (stands in for the mailbox)",
                            "Открыть ссылку из dev-outbox сервера (вместо почтового ящика)")) { [self] in
                do {
                    let opened = try await outbox.openLatestLink(to: vm.state.email.lowercased())
                    Terminal.line(opened ? t("  Link opened and its button pressed.", "  Ссылка открыта, кнопка на странице нажата.")
                                         : t("  No working link in the outbox.", "  В outbox нет действующей ссылки."))
                    if opened { await vm.checkConfirmation() }   // the screen's "not confirmed yet" is stale now
                } catch {
                    Terminal.line("  ! \(error.localizedDescription)")
                }
            },
            Option(label: vm.state.logoutTitle) { await vm.logout() },
        ])
    }

    private func show(_ vm: EmailPromptViewModel) async {
        header(vm.state.title)
        Terminal.line("  \(vm.state.message)")
        Terminal.line("  [\(vm.state.email.isEmpty ? vm.state.placeholder : vm.state.email)]")
        if vm.state.isPasswordRequested {
            Terminal.line("  \(vm.state.passwordPlaceholder): [\(vm.state.password.isEmpty ? "" : "••••••")]")
        }
        notices(error: vm.state.errorMessage)
        var options = [
            Option(label: t("Type the email", "Ввести почту")) { [self] in if let email = read(vm.state.placeholder, current: vm.state.email) { vm.setEmail(email) } },
        ]
        if vm.state.isPasswordRequested {
            options.append(Option(label: vm.state.passwordPlaceholder) { [self] in if let password = read(vm.state.passwordPlaceholder, secret: true) { vm.setPassword(password) } })
        }
        await menu(options + [
            Option(label: vm.state.confirmTitle, enabled: vm.state.isConfirmEnabled) { await vm.confirm() },
            Option(label: vm.state.cancelTitle) { vm.cancel() },
        ])
    }

    private func show(_ vm: FinalViewModel) async {
        header(vm.state.title)
        for row in vm.state.rows { Terminal.line("  \(row.label): \(row.value)") }
        Terminal.line("  \(vm.state.isEmailConfirmed ? "✓" : "✗") \(vm.state.confirmationText)")
        notices(error: vm.state.errorMessage)
        await menu([
            Option(label: t("Refresh", "Обновить")) { await vm.refresh() },
            Option(label: vm.state.changeEmailTitle) { vm.changeEmail() },
            Option(label: vm.state.logoutTitle) { await vm.logout() },
            Option(label: vm.state.deleteAccountTitle) { vm.deleteAccount() },
        ])
    }
}
