import Foundation
import GatehouseAPI
import GatehouseKit

/// The coordinator of the messenger app: splash, login, forgot password, registration, choosing a tag, and the
/// messenger itself (the tab bar, which routes between its own screens). It acts on the screens'
/// outcomes, so an iOS app (or the terminal demo) only draws `state.screen` and forwards input to
/// its view model; it applies `state.theme` to the whole app.
@MainActor
public final class MessengerAppFlow: ScreenModel<MessengerAppFlow.State> {
    /// A screen and its view model.
    public enum Screen: Equatable {
        /// The splash screen.
        case splash(SplashViewModel)
        /// Shows ``MessengerLoginViewModel``.
        case login(MessengerLoginViewModel)
        /// Shows ``ForgotPasswordViewModel``.
        case forgotPassword(ForgotPasswordViewModel)
        /// Shows ``MessengerRegistrationViewModel``.
        case registration(MessengerRegistrationViewModel)
        /// Shows ``ChooseTagViewModel`` (an account a provider made has no tag yet).
        case chooseTag(ChooseTagViewModel)
        /// Shows ``MessengerMainViewModel``.
        case messenger(MessengerMainViewModel)

        /// Two values are equal when they show the same view model.
        public static func == (a: Screen, b: Screen) -> Bool {
            switch (a, b) {
            case let (.splash(x), .splash(y)): x === y
            case let (.login(x), .login(y)): x === y
            case let (.forgotPassword(x), .forgotPassword(y)): x === y
            case let (.registration(x), .registration(y)): x === y
            case let (.chooseTag(x), .chooseTag(y)): x === y
            case let (.messenger(x), .messenger(y)): x === y
            default: false
            }
        }
    }

    /// What is on screen.
    public struct State: Equatable {
        /// The screen on display.
        public var screen: Screen
        /// The appearance the user chose (kept on the device).
        public var theme: Theme
    }

    /// The client, strings and clock shared by every screen of the flow.
    public let environment: MessengerEnvironment

    /// The splash, login, recovery and registration screens.
    private var entry: AccountEntry!

    /// Creates the flow on the splash screen; call ``launch()`` to check the stored token.
    public init(environment: MessengerEnvironment) {
        self.environment = environment
        // The splash is made again once the entry exists; this one only fills the first state.
        super.init(state: State(screen: .splash(SplashViewModel(environment: environment)), theme: Theme.stored(in: environment.preferences)))
        entry = AccountEntry(environment: environment, asksForTag: true, show: { [unowned self] screen in
            update { $0.screen = Self.screen(screen) }
        }, enter: { [unowned self] account, offline in
            showMessenger(account, offline: offline)
        })
        update { $0.screen = .splash(entry.makeSplash()) }
    }

    private static func screen(_ screen: AccountEntry.Screen) -> Screen {
        switch screen {
        case .splash(let vm): .splash(vm)
        case .login(let vm): .login(vm)
        case .forgotPassword(let vm): .forgotPassword(vm)
        case .registration(let vm): .registration(vm)
        case .chooseTag(let vm): .chooseTag(vm)
        }
    }

    /// On launch: the splash screen checks the stored token and moves on.
    public func launch() async {
        guard case .splash(let splash) = state.screen else { return }
        await splash.start()
    }

    // MARK: Navigation

    func showLogin(prefill: String = "", notice: String? = nil) { entry.showLogin(prefill: prefill, notice: notice) }

    func showMessenger(_ account: Account, offline: Bool = false) {
        let repository: MessengerRepository
        do {
            repository = try MessengerRepository(accounts: environment.client, account: account, stores: environment.stores,
                                                 configuration: environment.repository, now: environment.now)
        } catch {
            // The device cannot keep a store (no space, no permission): say so on login.
            showLogin(notice: environment.localizer("messenger.storeFailed"))
            return
        }
        if offline { repository.startOffline() }
        let main = MessengerMainViewModel(environment: environment, repository: repository)
        main.onOutcome = { [weak self] outcome in
            switch outcome {
            case .loggedOut: self?.showLogin()
            case .accountDeleted(let notice): self?.showLogin(notice: notice)
            }
        }
        main.themeChanged = { [weak self] in
            guard let self else { return }
            update { $0.theme = Theme.stored(in: self.environment.preferences) }
        }
        update { $0.screen = .messenger(main) }
        main.start()
    }
}
