import Foundation
import GatehouseDevSupport
import GatehouseKit
import GatehouseScreens

/// Draws `MessengerAppFlow`'s screens as text and forwards what is typed to their view models.
/// No flow logic lives here: every decision is the view models'.
@MainActor
final class MessengerAuthTerminal: AccountEntryTerminal {
    let flow: MessengerAppFlow
    /// Signed in, the whole messenger full-screen (`gatehouse-demo messenger`), or only the
    /// profile card (`messenger-auth`).
    let fullScreen: Bool
    private let language: String

    init(flow: MessengerAppFlow, outbox: DevOutboxClient, language: String, fullScreen: Bool = false) {
        self.flow = flow
        self.fullScreen = fullScreen
        self.language = language
        super.init(outbox: outbox, language: language)
    }

    func run() async {
        await flow.launch()
        while !quit {
            switch flow.state.screen {
            case .splash(let vm): await show(vm) { await flow.launch() }
            case .login(let vm): await show(vm)
            case .forgotPassword(let vm): await show(vm)
            case .registration(let vm): await show(vm)
            case .chooseTag(let vm): await show(vm)
            case .messenger(let vm):
                guard fullScreen else { await show(vm.profile); break }
                let flow = flow
                let quitNow = await MessengerTerminal(main: vm, language: language).run {
                    if case .messenger(let current) = flow.state.screen { current === vm } else { false }
                }
                if quitNow { quit = true }
            }
        }
    }

    /// The signed-in side as far as the authorization epic goes: the Profile tab's card and
    /// "Log out" (`gatehouse-demo messenger` draws the whole messenger).
    private func show(_ vm: ProfileViewModel) async {
        if let question = vm.state.confirmation {
            header(question.title)
            if let message = question.message { Terminal.line("  \(message)") }
            await menu([
                Option(label: question.confirmTitle) { await vm.confirmLogout() },
                Option(label: question.cancelTitle) { vm.cancelLogout() },
            ])
            return
        }
        header(vm.state.title)
        Terminal.line("  \(t("Name", "Имя")): \(vm.state.name.isEmpty ? "—" : vm.state.name)")
        Terminal.line("  \(t("Tag", "Тег")): \(vm.state.tag.isEmpty ? "—" : vm.state.tag)")
        Terminal.line("  \(t("Email", "Почта")): \(vm.state.email.isEmpty ? "—" : vm.state.email)")
        await menu([
            Option(label: t("Refresh", "Обновить")) { await vm.refresh() },
            Option(label: vm.state.settings.first { $0.item == .logout }?.title ?? "Log out") { vm.open(.logout) },
        ])
    }
}
