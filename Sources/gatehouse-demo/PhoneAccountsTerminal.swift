import Foundation
import GatehouseKit
import GatehouseScreens

/// Draws `PhoneAccountsFlow`'s screen as text and forwards what is typed to its view model.
/// No flow logic lives here: every decision is the view models'.
@MainActor
final class PhoneAccountsTerminal {
    let flow: PhoneAccountsFlow
    let outbox: DevOutboxClient
    let ru: Bool
    private var quit = false

    init(flow: PhoneAccountsFlow, outbox: DevOutboxClient, language: String) {
        self.flow = flow
        self.outbox = outbox
        self.ru = language == "ru"
    }

    /// Demo-only words (menus of the terminal itself), not app strings.
    private func t(_ en: String, _ ru: String) -> String { self.ru ? ru : en }

    struct Option {
        var label: String
        var enabled: Bool = true
        var action: () async -> Void
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
            }
        }
    }

    // MARK: Drawing helpers

    private func header(_ title: String) {
        Terminal.line("")
        Terminal.line("== \(title) ==")
    }

    private func notices(error: String?, info: String? = nil) {
        if let info { Terminal.line("  ℹ \(info)") }
        if let error { Terminal.line("  ! \(error)") }
    }

    /// Prints numbered options, reads a choice, runs it.
    private func menu(_ options: [Option]) async {
        for (index, option) in options.enumerated() {
            Terminal.line("  \(index + 1)) \(option.label)" + (option.enabled ? "" : t(" (unavailable)", " (недоступно)")))
        }
        Terminal.line("  q) " + t("Quit", "Выход"))
        guard let answer = Terminal.ask("> ")?.trimmingCharacters(in: .whitespaces) else {
            quit = true
            return
        }
        if answer.lowercased() == "q" {
            quit = true
            return
        }
        guard let number = Int(answer), options.indices.contains(number - 1) else {
            Terminal.line(t("  Choose one of the numbers.", "  Выберите один из номеров."))
            return
        }
        let option = options[number - 1]
        guard option.enabled else {
            Terminal.line(t("  That is not available yet.", "  Это пока недоступно."))
            return
        }
        await option.action()
    }

    private func read(_ label: String, secret: Bool = false) -> String? {
        secret ? Terminal.askSecret("  \(label): ") : Terminal.ask("  \(label): ")
    }

    // MARK: Screens

    private func show(_ vm: StartViewModel) async {
        header(vm.state.title)
        await menu([Option(label: vm.state.registerTitle) { vm.register() }, Option(label: vm.state.loginTitle) { vm.login() }])
    }

    private func show(_ vm: RegistrationViewModel) async {
        header(vm.state.title)
        for field in RegistrationViewModel.fieldOrder {
            let value = vm.state.values[field] ?? ""
            let shown = field == .password ? String(repeating: "*", count: value.count) : value
            Terminal.line("  \(vm.state.labels[field] ?? field.rawValue): \(shown)" + (vm.state.fieldErrors[field].map { "   ← \($0)" } ?? ""))
        }
        Terminal.line("  [\(vm.state.termsAccepted ? "x" : " ")] \(vm.state.termsText)")
        notices(error: vm.state.errorMessage)
        await menu([
            Option(label: t("Fill in the form", "Заполнить форму")) { [self] in
                for field in RegistrationViewModel.fieldOrder {
                    guard let value = read(vm.state.labels[field] ?? field.rawValue, secret: field == .password) else { return }
                    vm.set(field, value)
                }
            },
            Option(label: (vm.state.termsAccepted ? "[x] " : "[ ] ") + vm.state.termsText) { vm.setTermsAccepted(!vm.state.termsAccepted) },
            Option(label: vm.state.sendCodeTitle, enabled: vm.state.isSendCodeEnabled) { await vm.sendCode() },
            Option(label: t("Back", "Назад")) { vm.back() },
        ])
    }

    private func show(_ vm: CodeEntryViewModel) async {
        vm.tick()
        header(vm.state.title)
        Terminal.line("  \(vm.state.prompt)")
        Terminal.line("  \(vm.state.codeLabel): \(vm.state.code)")
        if let progress = vm.state.progressMessage { Terminal.line("  … \(progress)") }
        notices(error: vm.state.errorMessage)
        await menu([
            Option(label: t("Type the code", "Ввести код")) { [self] in
                if let code = read(vm.state.codeLabel) { vm.setCode(code) }
            },
            Option(label: t("Fetch the code from the server's development outbox (stands in for SMS autofill)",
                            "Взять код из dev-outbox сервера (вместо автоподстановки из СМС)")) { [self] in
                do {
                    if let code = try await outbox.latestCode(to: vm.form.phone) {
                        Terminal.line("  \(vm.state.codeLabel): \(code)")
                        vm.setCode(code)
                    } else {
                        Terminal.line(t("  No code in the outbox.", "  В outbox нет кода."))
                    }
                } catch {
                    Terminal.line("  ! \(error.localizedDescription)")
                }
            },
            Option(label: vm.state.submitTitle, enabled: vm.state.isSubmitEnabled) { await vm.submit() },
            Option(label: vm.state.resendTitle, enabled: vm.state.isResendEnabled) { await vm.resend() },
            Option(label: t("Back", "Назад")) { vm.back() },
        ])
    }

    private func show(_ vm: LoginViewModel) async {
        header(vm.state.title)
        Terminal.line("  \(vm.state.loginLabel): \(vm.state.login)")
        Terminal.line("  \(vm.state.passwordLabel): \(String(repeating: "*", count: vm.state.password.count))")
        notices(error: vm.state.errorMessage)
        await menu([
            Option(label: t("Type login and password", "Ввести логин и пароль")) { [self] in
                guard let login = read(vm.state.loginLabel) else { return }
                vm.setLogin(login)
                guard let password = read(vm.state.passwordLabel, secret: true) else { return }
                vm.setPassword(password)
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
            Option(label: vm.state.fieldLabel) { [self] in if let value = read(vm.state.fieldLabel) { vm.setValue(value) } },
            Option(label: vm.state.submitTitle, enabled: vm.state.isSubmitEnabled) { await vm.submit() },
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
                    Terminal.line(opened ? t("  Link opened.", "  Ссылка открыта.") : t("  No working link in the outbox.", "  В outbox нет действующей ссылки."))
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
        notices(error: vm.state.errorMessage)
        await menu([
            Option(label: t("Type the email", "Ввести почту")) { [self] in if let email = read(vm.state.placeholder) { vm.setEmail(email) } },
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
            Option(label: vm.state.logoutTitle) { await vm.logout() },
        ])
    }
}
