import Foundation
import GatehouseDevSupport
import GatehouseKit
import GatehouseScreens

/// What every demo terminal draws with: headers, fields, notices, numbered menus and field
/// reads, in the terminal's own words (English or Russian, not app strings). A terminal
/// subclasses it and stops its loop once ``quit`` is set ("q", or the end of input).
@MainActor
class TerminalMenu {
    /// One numbered line of a menu and what choosing it does.
    struct Option {
        var label: String
        var enabled: Bool = true
        /// Why it is unavailable, shown when it is chosen anyway (the view model's words).
        var reason: String? = nil
        var action: () async -> Void
    }

    /// What was chosen from a menu.
    enum Choice: Equatable {
        /// The option at this index (an enabled one).
        case option(Int)
        /// Not one of the numbers.
        case invalid
        /// One of the numbers, but the option at this index is disabled.
        case unavailable(Int)
        /// "q" or the end of input; ``quit`` is set.
        case quit
    }

    /// Whether the terminal speaks Russian.
    let ru: Bool
    /// Set by "q" or the end of input: the terminal's loop stops.
    var quit = false

    init(language: String) {
        self.ru = language == "ru"
    }

    /// Demo-only words (menus of the terminal itself), not app strings.
    func t(_ en: String, _ ru: String) -> String { self.ru ? ru : en }

    // MARK: Drawing

    func header(_ title: String) {
        Terminal.line("")
        Terminal.line("== \(title) ==")
    }

    func notices(error: String?, info: String? = nil) {
        if let info { Terminal.line("  ℹ \(info)") }
        if let error { Terminal.line("  ! \(error)") }
    }

    func masked(_ text: String) -> String { String(repeating: "*", count: text.count) }

    func field(_ label: String, _ value: String, error: String? = nil) {
        Terminal.line("  \(label): \(value)" + (error.map { "   ← \($0)" } ?? ""))
    }

    // MARK: Input

    /// Prints numbered options and the quit line, and reads a choice. The line is read off the main
    /// actor, so what arrives meanwhile (a payment, a message, an answer on the realtime socket)
    /// reaches the view models while the person decides, and the next screen drawn shows it.
    func choose(_ options: [(label: String, enabled: Bool)]) async -> Choice {
        for (index, option) in options.enumerated() {
            Terminal.line("  \(index + 1)) \(option.label)" + (option.enabled ? "" : t(" (unavailable)", " (недоступно)")))
        }
        // Not "Выход": the apps' own "Выйти" (log out) would sit next to a look-alike.
        Terminal.line("  q) " + t("Quit the demo", "Закрыть демо"))
        guard let answer = await Terminal.askOffMain("> ")?.trimmingCharacters(in: .whitespaces), answer.lowercased() != "q" else {
            quit = true
            return .quit
        }
        guard let number = Int(answer), options.indices.contains(number - 1) else { return .invalid }
        return options[number - 1].enabled ? .option(number - 1) : .unavailable(number - 1)
    }

    /// Prints numbered options, reads a choice, runs it.
    func menu(_ options: [Option]) async {
        switch await choose(options.map { ($0.label, $0.enabled) }) {
        case .option(let index): await options[index].action()
        case .invalid: Terminal.line(t("  Choose one of the numbers.", "  Выберите один из номеров."))
        case .unavailable(let index):
            Terminal.line("  " + (options[index].reason ?? t("That is not available yet.", "Это пока недоступно.")))
        case .quit: break
        }
    }

    /// Reads one field (masked when `secret`). The current value is shown in brackets and an empty
    /// answer keeps it, so one wrong field never means typing the others again. Nil, and ``quit``
    /// set, at the end of input.
    func read(_ label: String, current: String = "", secret: Bool = false) -> String? {
        let shown = current.isEmpty ? "" : " [\(secret ? masked(current) : current)]"
        let prompt = "  \(label)\(shown): "
        guard let answer = secret ? Terminal.askSecret(prompt) : Terminal.ask(prompt) else {
            quit = true
            return nil
        }
        return answer.isEmpty ? current : answer
    }

    /// "Delete account", alike in every app: what happens, the password, then the destructive choice.
    func show(_ vm: DeleteAccountViewModel) async {
        header(vm.state.title)
        Terminal.line("  \(vm.state.message)")
        field(vm.state.passwordLabel, masked(vm.state.password))
        notices(error: vm.state.errorMessage)
        await menu([
            Option(label: t("Type the password", "Ввести пароль")) { [self] in
                if let password = read(vm.state.passwordLabel, current: vm.state.password, secret: true) { vm.setPassword(password) }
            },
            Option(label: vm.state.confirmTitle, enabled: vm.state.isConfirmEnabled) { await vm.confirm() },
            Option(label: vm.state.cancelTitle) { vm.cancel() },
        ])
    }

    /// Reads a login (or email) and then its password, masked, into the screen, each keeping its
    /// current value on Enter; stops at the end of input.
    func readCredentials(_ loginLabel: String, _ passwordLabel: String, current: (login: String, password: String),
                         login setLogin: (String) -> Void, password setPassword: (String) -> Void) {
        guard let login = read(loginLabel, current: current.login) else { return }
        setLogin(login)
        guard let password = read(passwordLabel, current: current.password, secret: true) else { return }
        setPassword(password)
    }

    /// "Fetch the code from the dev outbox": stands in for the user reading the SMS or the mail.
    func fetchCode(from outbox: DevOutboxClient, to destination: String, label: String, into setCode: (String) -> Void) async {
        do {
            if let code = try await outbox.latestCode(to: destination) {
                Terminal.line("  \(label): \(code)")
                setCode(code)
            } else {
                Terminal.line(t("  No code in the outbox.", "  В outbox нет кода."))
            }
        } catch {
            Terminal.line("  ! \(error.localizedDescription)")
        }
    }
}
