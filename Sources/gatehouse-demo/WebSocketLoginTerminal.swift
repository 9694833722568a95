import Foundation
import GatehouseKit
import GatehouseScreens

/// Draws `WebSocketLoginFlow`'s two screens as text and forwards input; no logic of its own.
@MainActor
final class WebSocketLoginTerminal {
    let flow: WebSocketLoginFlow
    let ru: Bool
    private var quit = false

    init(flow: WebSocketLoginFlow, language: String) {
        self.flow = flow
        self.ru = language == "ru"
    }

    private func t(_ en: String, _ ru: String) -> String { self.ru ? ru : en }

    func run() async {
        flow.launch()
        while !quit {
            switch flow.state.screen {
            case .login(let vm): await show(vm)
            case .app(let vm): await show(vm)
            }
        }
    }

    private func choose(_ options: [(String, Bool)]) -> Int? {
        for (index, option) in options.enumerated() {
            Terminal.line("  \(index + 1)) \(option.0)" + (option.1 ? "" : t(" (unavailable)", " (недоступно)")))
        }
        Terminal.line("  q) " + t("Quit", "Выход"))
        guard let answer = Terminal.ask("> ")?.trimmingCharacters(in: .whitespaces), answer.lowercased() != "q" else {
            quit = true
            return nil
        }
        guard let number = Int(answer), options.indices.contains(number - 1), options[number - 1].1 else {
            Terminal.line(t("  Choose one of the available numbers.", "  Выберите один из доступных номеров."))
            return nil
        }
        return number
    }

    private func show(_ vm: WebSocketLoginViewModel) async {
        Terminal.line("")
        Terminal.line("== \(vm.state.title) ==")
        Terminal.line("  \(vm.state.emailLabel): \(vm.state.email)" + (vm.state.emailError.map { "   ← \($0)" } ?? ""))
        Terminal.line("  \(vm.state.passwordLabel): \(String(repeating: "*", count: vm.state.password.count))")
        if let error = vm.state.errorOutput { Terminal.line("  ! \(error)") }
        switch choose([(t("Type email and password", "Ввести почту и пароль"), true), (vm.state.submitTitle, vm.state.isSubmitEnabled)]) {
        case 1:
            guard let email = Terminal.ask("  \(vm.state.emailLabel): ") else { quit = true; return }
            vm.setEmail(email)
            guard let password = Terminal.askSecret("  \(vm.state.passwordLabel): ") else { quit = true; return }
            vm.setPassword(password)
        case 2:
            await vm.submit()
        default:
            break
        }
    }

    private func show(_ vm: WebSocketAppViewModel) async {
        Terminal.line("")
        Terminal.line("== \(vm.state.title) ==")
        Terminal.line("  \(vm.state.information)")
        if choose([(vm.state.logoutTitle, true)]) == 1 { await vm.logout() }
    }
}
