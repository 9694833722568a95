import Foundation
import GatehouseAPI
import GatehouseDevSupport
import GatehouseKit
import GatehouseScreens

/// Draws `WalletFlow`'s screens as text and forwards what is chosen to their view models
/// (`gatehouse-demo wallet`). Nothing is decided here: which buttons work, what a payment line
/// says and what a request allows are the view models'.
@MainActor
final class WalletTerminal: AccountEntryTerminal {
    let flow: WalletFlow

    init(flow: WalletFlow, outbox: DevOutboxClient, language: String) {
        self.flow = flow
        super.init(outbox: outbox, language: language)
    }

    func run() async {
        await flow.launch()
        var appeared: ObjectIdentifier?
        while !quit {
            // A screen that shows server data loads it when it appears (viewWillAppear on iOS).
            let current = ObjectIdentifier(flow.state.screen.model)
            if current != appeared {
                appeared = current
                switch flow.state.screen {
                case .home(let vm): await vm.load()
                case .dialogs(let vm): await vm.load()
                case .dialog(let vm): await vm.load()
                case .send(let vm): await vm.load()
                default: break
                }
            }
            switch flow.state.screen {
            case .splash(let vm): await show(vm) { await flow.launch() }
            case .login(let vm): await show(vm)
            case .forgotPassword(let vm): await show(vm)
            case .registration(let vm): await show(vm)
            case .home(let vm): await show(vm)
            case .addInfo(let vm): await show(vm)
            case .addPhone(let vm): await show(vm)
            case .attachWallet(let vm): await show(vm)
            case .dialogs(let vm): await show(vm)
            case .dialog(let vm): await show(vm)
            case .send(let vm): await show(vm)
            case .request(let vm): await show(vm)
            case .topUp(let vm): await show(vm)
            case .deleteAccount(let vm): await show(vm)
            }
        }
    }

    private func value(_ text: String) -> String { text.isEmpty ? "—" : text }

    // MARK: Profile

    private func show(_ vm: WalletHomeViewModel) async {
        let s = vm.state
        header(s.title)
        for (key, text) in [("login", s.login), ("email", s.email), ("name", s.name), ("birthday", s.birthday), ("phone", s.phone)] {
            field(s.labels[key] ?? key, value(text))
        }
        if let balance = s.balance { field(s.labels["balance"] ?? "balance", balance) }
        if !s.isLoaded { Terminal.line(t("  … loading the profile", "  … загружаем профиль")) }
        notices(error: s.errorMessage, info: s.infoMessage)
        // Money that arrives while the menu waits (a credit, a transfer) reloads the profile: say so at once.
        let shown = s.balance
        let live = vm.observe { state in
            if let balance = state.balance, balance != shown { Terminal.line("\n  ℹ \(state.labels["balance"] ?? "balance"): \(balance)") }
        }
        defer { live.cancel() }
        await menu([
            Option(label: t("Refresh", "Обновить")) { await vm.load() },
            Option(label: s.labels["addInfo"] ?? "", enabled: s.isAddInfoEnabled) { vm.addInfo() },
            Option(label: s.labels["addPhone"] ?? "", enabled: s.isAddPhoneEnabled) { vm.addPhone() },
            Option(label: s.labels["attachWallet"] ?? "", enabled: s.isAttachEnabled) { vm.attachWallet() },
            Option(label: s.labels["payments"] ?? "", enabled: s.isPaymentsEnabled) { vm.payments() },
            Option(label: s.labels["topUp"] ?? "", enabled: s.isTopUpEnabled) { vm.topUp() },
            Option(label: s.labels["logout"] ?? "") { await vm.logout() },
            Option(label: s.labels["deleteAccount"] ?? "", enabled: s.isLoaded) { vm.deleteAccount() },
        ])
    }

    private func show(_ vm: AddInfoViewModel) async {
        let s = vm.state
        header(s.title)
        field(s.labels["firstName"] ?? "", value(s.firstName))
        field(s.labels["lastName"] ?? "", value(s.lastName))
        field(s.labels["birthday"] ?? "", value(s.birthday), error: s.birthdayError)
        field(s.labels["photo"] ?? "", s.photoBytes.map { t("\($0) bytes picked", "выбрано \($0) байт") } ?? (s.avatarURL == nil ? "—" : t("set", "есть")))
        notices(error: s.errorMessage)
        await menu([
            Option(label: t("Type the name and birthday", "Ввести имя и дату рождения")) { [self] in
                guard let first = read(s.labels["firstName"] ?? "", current: s.firstName) else { return }
                vm.setFirstName(first)
                guard let last = read(s.labels["lastName"] ?? "", current: s.lastName) else { return }
                vm.setLastName(last)
                guard let birthday = read(s.labels["birthday"] ?? "", current: s.birthday) else { return }
                vm.setBirthday(birthday)
            },
            Option(label: t("Pick a photo (an image file)", "Выбрать фото (файл изображения)")) { [self] in
                guard let path = read(t("Image file", "Файл изображения")), !path.isEmpty else { return }
                guard let data = FileManager.default.contents(atPath: path) else { return Terminal.line(t("  Cannot read it.", "  Не удаётся прочитать.")) }
                let type = path.lowercased().hasSuffix(".png") ? "image/png" : path.lowercased().hasSuffix(".webp") ? "image/webp" : "image/jpeg"
                vm.setPhoto(data, contentType: type)
            },
            Option(label: s.labels["save"] ?? "", enabled: s.isSaveEnabled) { await vm.save() },
            Option(label: s.labels["back"] ?? "") { vm.back() },
        ])
    }

    private func show(_ vm: AddPhoneViewModel) async {
        let s = vm.state
        header(s.title)
        field(s.labels["phone"] ?? "", value(s.phone), error: s.phoneError)
        field(s.labels["password"] ?? "", masked(s.password))
        if let code = s.code { draw(code) }
        notices(error: s.errorMessage, info: s.infoMessage)
        var options = [
            Option(label: t("Type the phone and password", "Ввести телефон и пароль")) { [self] in
                guard let phone = read(s.labels["phone"] ?? "", current: s.phone) else { return }
                vm.setPhone(phone)
                guard let password = read(s.labels["password"] ?? "", current: s.password, secret: true) else { return }
                vm.setPassword(password)
            },
            Option(label: s.code?.resendTitle ?? s.labels["sendCode"] ?? "", enabled: s.isSendEnabled && (s.code?.isResendEnabled ?? true)) { await vm.sendCode() },
        ]
        if let code = s.code {
            options.append(Option(label: t("Type the code", "Ввести код")) { [self] in if let text = read(code.codeLabel) { vm.setCode(text) } })
            options.append(Option(label: t("Fetch the code from the server's development outbox (stands in for the SMS)",
                                           "Взять код из dev-outbox сервера (вместо SMS)")) { [self] in
                await fetchCode(from: outbox, to: code.destination, label: code.codeLabel) { vm.setCode($0) }
            })
        }
        options.append(Option(label: s.labels["confirm"] ?? "", enabled: s.isConfirmEnabled,
                              reason: t("Send the code first, then type it.", "Сначала отправьте код, потом введите его.")) { await vm.confirm() })
        options.append(Option(label: s.labels["back"] ?? "") { vm.back() })
        await menu(options)
    }

    private func show(_ vm: AttachWalletViewModel) async {
        header(vm.state.title)
        Terminal.line("  \(vm.state.explanation)")
        notices(error: vm.state.errorMessage)
        await menu([
            Option(label: vm.state.attachTitle, enabled: vm.state.isAttachEnabled) { await vm.attach() },
            Option(label: vm.state.backTitle) { vm.back() },
        ])
    }

    // MARK: Payments

    private func show(_ vm: WalletDialogsViewModel) async {
        let s = vm.state
        header(s.title)
        field(s.balanceLabel, s.balance)
        if s.rows.isEmpty { Terminal.line("  \(s.emptyText)") }
        for row in s.rows {
            Terminal.line("  • \(row.name)\(row.unread ? " ●" : ""): \(row.preview)")
        }
        notices(error: s.errorMessage)
        var options = s.rows.map { row in Option(label: t("Open the dialog with ", "Открыть диалог: ") + row.name) { vm.open(row.id) } }
        options += [
            Option(label: s.sendTitle) { vm.send() },
            Option(label: s.requestTitle) { vm.request() },
            Option(label: t("Refresh", "Обновить")) { await vm.load() },
            Option(label: s.backTitle) { vm.back() },
        ]
        await menu(options)
    }

    private func show(_ vm: WalletDialogViewModel) async {
        let s = vm.state
        header(s.title)
        field(s.balanceLabel, s.balance)
        for item in s.items {
            var line = "  \(item.time) \(item.mine ? "→" : "←") \(item.text)"
            if let comment = item.comment { line += " · \(comment)" }
            if let state = item.requestState { line += " [\(state)]" }
            Terminal.line(line)
        }
        notices(error: s.errorMessage, info: s.infoMessage)
        var options: [Option] = []
        for item in s.items {
            guard let request = item.requestID else { continue }
            for action in item.actions {
                options.append(Option(label: "\(s.actionTitles[action] ?? action.rawValue): \(item.text)") { await vm.act(action, on: request) })
            }
        }
        options += [
            Option(label: s.sendTitle) { vm.send() },
            Option(label: s.requestTitle) { vm.request() },
            Option(label: t("Refresh", "Обновить")) { await vm.load() },
            Option(label: s.backTitle) { vm.back() },
        ]
        await menu(options)
    }

    private func show(_ vm: SendMoneyViewModel) async {
        let s = vm.state
        header(s.title)
        if !s.balance.isEmpty { field(t("Balance", "Баланс"), s.balance) }
        switch s.step {
        case .form:
            field(s.labels["recipient"] ?? "", value(s.recipient))
            field(s.labels["amount"] ?? "", value(s.amount), error: s.amountError)
            field(s.labels["comment"] ?? "", value(s.comment))
            notices(error: s.errorMessage)
            await menu([
                fillIn(s.labels, current: (s.recipient, s.amount, s.comment), set: (vm.setRecipient, vm.setAmount, vm.setComment)),
                Option(label: s.labels["continue"] ?? "", enabled: s.isContinueEnabled) { await vm.review() },
                Option(label: s.labels["back"] ?? "") { vm.back() },
            ])
        case .confirm:
            await confirmStep(s.confirmText, error: s.errorMessage, labels: s.labels, enabled: s.isConfirmEnabled,
                              confirm: vm.confirm, edit: vm.editAgain, back: vm.back)
        case .done:
            await doneStep(s.doneText, back: s.labels["back"] ?? "", vm.back)
        }
    }

    private func show(_ vm: RequestMoneyViewModel) async {
        let s = vm.state
        header(s.title)
        switch s.step {
        case .form:
            field(s.labels["recipient"] ?? "", value(s.recipient))
            field(s.labels["amount"] ?? "", value(s.amount), error: s.amountError)
            field(s.labels["kind"] ?? "", s.kindTitles[s.kind] ?? s.kind.rawValue)
            field(s.labels["comment"] ?? "", value(s.comment))
            notices(error: s.errorMessage)
            await menu([
                fillIn(s.labels, current: (s.recipient, s.amount, s.comment), set: (vm.setRecipient, vm.setAmount, vm.setComment)),
                Option(label: "\(s.labels["kind"] ?? ""): \(s.kindTitles[.invoice] ?? "invoice")") { vm.setKind(.invoice) },
                Option(label: "\(s.labels["kind"] ?? ""): \(s.kindTitles[.loan] ?? "loan")") { vm.setKind(.loan) },
                Option(label: s.labels["continue"] ?? "", enabled: s.isContinueEnabled) { await vm.review() },
                Option(label: s.labels["back"] ?? "") { vm.back() },
            ])
        case .confirm:
            await confirmStep(s.confirmText, error: s.errorMessage, labels: s.labels, enabled: s.isConfirmEnabled,
                              confirm: vm.confirm, edit: vm.editAgain, back: vm.back)
        case .done:
            await doneStep(s.doneText, back: s.labels["back"] ?? "", vm.back)
        }
    }

    /// "Top up": the amount, then the provider's page. A terminal has no browser: the page's
    /// address is printed, and on a development server (the local provider) the demo can press
    /// its button itself.
    private func show(_ vm: TopUpViewModel) async {
        let s = vm.state
        header(s.title)
        switch s.step {
        case .form:
            field(s.labels["amount"] ?? "", value(s.amount), error: s.amountError)
            Terminal.line("  \(s.labels["hint"] ?? "")")
            notices(error: s.errorMessage)
            await menu([
                Option(label: t("Enter the amount", "Ввести сумму")) { [self] in
                    if let amount = read(s.labels["amount"] ?? "", current: s.amount) { vm.setAmount(amount) }
                },
                Option(label: s.labels["pay"] ?? "", enabled: s.isPayEnabled) { await vm.pay() },
                Option(label: s.labels["back"] ?? "") { vm.back() },
            ])
        case .paying(let url):
            Terminal.line("  \(s.statusText)")
            Terminal.line("  \(t("Payment page", "Страница оплаты")): \(url.absoluteString)")
            notices(error: s.errorMessage)
            var options = [Option(label: s.labels["check"] ?? "") { await vm.refresh() }]
            if url.path.hasPrefix("/dev/payments/") {
                options.insert(Option(label: t("Pay on the local page (development)", "Оплатить на локальной странице (разработка)")) { [self] in
                    if (try? await outbox.payLocally(url)) != true { Terminal.line(t("  ✗ the local page did not take the payment", "  ✗ локальная страница не приняла оплату")) }
                    await vm.refresh()
                }, at: 0)
            }
            options.append(Option(label: s.labels["back"] ?? "") { vm.back() })
            await menu(options)
        case .paid, .expired:
            Terminal.line("  \(s.step == .paid ? "✓" : "✗") \(s.statusText)")
            await menu([
                Option(label: s.labels["again"] ?? "") { vm.startAgain() },
                Option(label: s.labels["back"] ?? "") { vm.back() },
            ])
        }
    }

    // MARK: What the two payment forms share

    /// "Fill in the form": the person, the amount and the comment, each keeping its value on Enter.
    private func fillIn(_ labels: [String: String], current: (String, String, String),
                        set: ((String) -> Void, (String) -> Void, (String) -> Void)) -> Option {
        Option(label: t("Fill in the form", "Заполнить форму")) { [self] in
            guard let recipient = read(labels["recipient"] ?? "", current: current.0) else { return }
            set.0(recipient)
            guard let amount = read(labels["amount"] ?? "", current: current.1) else { return }
            set.1(amount)
            guard let comment = read(labels["comment"] ?? "", current: current.2) else { return }
            set.2(comment)
        }
    }

    private func confirmStep(_ question: String, error: String?, labels: [String: String], enabled: Bool,
                             confirm: @escaping () async -> Void, edit: @escaping () -> Void, back: @escaping () -> Void) async {
        Terminal.line("  \(question)")
        notices(error: error)
        await menu([
            Option(label: labels["confirm"] ?? "", enabled: enabled) { await confirm() },
            Option(label: labels["edit"] ?? "") { edit() },
            Option(label: labels["back"] ?? "") { back() },
        ])
    }

    private func doneStep(_ text: String, back label: String, _ back: @escaping () -> Void) async {
        Terminal.line("  ✓ \(text)")
        await menu([Option(label: label) { back() }])
    }
}
