import Foundation
import GatehouseKit
import GatehouseScreens

/// Draws `WebSocketLoginFlow`'s two screens as text and forwards input; no logic of its own.
@MainActor
final class WebSocketLoginTerminal: TerminalMenu {
    let flow: WebSocketLoginFlow

    init(flow: WebSocketLoginFlow, language: String) {
        self.flow = flow
        super.init(language: language)
    }

    func run() async {
        flow.launch()
        while !quit {
            switch flow.state.screen {
            case .login(let vm): await show(vm)
            case .app(let vm): await show(vm)
            }
        }
    }

    /// The 1-based number of the enabled option chosen; nil otherwise (after saying so).
    private func chosenNumber(_ options: [(label: String, enabled: Bool)]) async -> Int? {
        switch await choose(options) {
        case .option(let index):
            return index + 1
        case .invalid, .unavailable:
            Terminal.line(t("  Choose one of the available numbers.", "  Выберите один из доступных номеров."))
            return nil
        case .quit:
            return nil
        }
    }

    private func show(_ vm: WebSocketLoginViewModel) async {
        header(vm.state.title)
        field(vm.state.emailLabel, vm.state.email, error: vm.state.emailError)
        field(vm.state.passwordLabel, masked(vm.state.password))
        if let error = vm.state.errorOutput { Terminal.line("  ! \(error)") }
        switch await chosenNumber([(t("Type email and password", "Ввести почту и пароль"), true), (vm.state.submitTitle, vm.state.isSubmitEnabled)]) {
        case 1:
            readCredentials(vm.state.emailLabel, vm.state.passwordLabel, current: (vm.state.email, vm.state.password), login: vm.setEmail, password: vm.setPassword)
        case 2:
            await vm.submit()
        default:
            break
        }
    }

    private func show(_ vm: WebSocketAppViewModel) async {
        header(vm.state.title)
        Terminal.line("  \(vm.state.information)")
        if await chosenNumber([(vm.state.logoutTitle, true)]) == 1 { await vm.logout() }
    }
}
