import Foundation
import GatehouseAPI
import GatehouseKit

/// The coordinator of the messenger's authorization epic: splash, login, forgot password,
/// registration, and the signed-in screen. It acts on the screens' outcomes, so an iOS app (or
/// the terminal demo) only draws `state.screen` and forwards input to its view model.
@MainActor
public final class MessengerAuthFlow: ScreenModel<MessengerAuthFlow.State> {
    /// A screen and its view model.
    public enum Screen: Equatable {
        case splash(SplashViewModel)
        case login(MessengerLoginViewModel)
        case forgotPassword(ForgotPasswordViewModel)
        case registration(MessengerRegistrationViewModel)
        case home(MessengerHomeViewModel)

        /// Two values are equal when they show the same view model.
        public static func == (a: Screen, b: Screen) -> Bool {
            switch (a, b) {
            case let (.splash(x), .splash(y)): x === y
            case let (.login(x), .login(y)): x === y
            case let (.forgotPassword(x), .forgotPassword(y)): x === y
            case let (.registration(x), .registration(y)): x === y
            case let (.home(x), .home(y)): x === y
            default: false
            }
        }
    }

    /// What is on screen.
    public struct State: Equatable {
        /// The screen on display.
        public var screen: Screen
    }

    /// The client, strings and clock shared by every screen of the flow.
    public let environment: MessengerAuthEnvironment

    /// Creates the flow on the splash screen; call ``launch()`` to check the stored token.
    public init(environment: MessengerAuthEnvironment) {
        self.environment = environment
        let splash = SplashViewModel(environment: environment)
        super.init(state: State(screen: .splash(splash)))
        wire(splash)
    }

    /// On launch: the splash screen checks the stored token and moves on.
    public func launch() async {
        guard case .splash(let splash) = state.screen else { return }
        await splash.start()
    }

    // MARK: Navigation

    private func wire(_ splash: SplashViewModel) {
        splash.onOutcome = { [unowned self] outcome in
            switch outcome {
            case .authenticated(let account): showHome(account)
            case .login: showLogin()
            }
        }
    }

    func showLogin(prefill: String = "", notice: String? = nil) {
        let login = MessengerLoginViewModel(environment: environment, login: prefill, notice: notice)
        login.onOutcome = { [unowned self] outcome in
            switch outcome {
            case .authenticated(let account): showHome(account)
            case .forgotPassword(let email): showForgotPassword(email: email ?? "")
            case .register: showRegistration()
            }
        }
        update { $0.screen = .login(login) }
    }

    func showForgotPassword(email: String) {
        let forgot = ForgotPasswordViewModel(environment: environment, email: email)
        forgot.onOutcome = { [unowned self] outcome in
            switch outcome {
            case .backToLogin(let email, let changed):
                showLogin(prefill: email ?? "", notice: changed ? environment.localizer("messenger.login.passwordChanged") : nil)
            }
        }
        update { $0.screen = .forgotPassword(forgot) }
    }

    func showRegistration() {
        let registration = MessengerRegistrationViewModel(environment: environment)
        registration.onOutcome = { [unowned self] outcome in
            switch outcome {
            case .authenticated(let account): showHome(account)
            case .back: showLogin()
            }
        }
        update { $0.screen = .registration(registration) }
    }

    func showHome(_ account: Account) {
        let home = MessengerHomeViewModel(environment: environment, account: account)
        home.onOutcome = { [unowned self] _ in showLogin() }
        update { $0.screen = .home(home) }
    }
}
