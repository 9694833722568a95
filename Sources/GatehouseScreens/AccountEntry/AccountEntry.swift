import Foundation
import GatehouseAPI
import GatehouseKit

/// The way into an app that runs on `/v1` accounts: the splash screen that checks the stored
/// token, login, "forgot password" and registration, wired to each other. The messenger and the
/// wallet both enter through it (the specs ask the same fields), and each coordinator says what
/// to draw (`show`) and where a signed-in account goes (`enter`).
@MainActor
final class AccountEntry {
    /// A screen of the way in.
    enum Screen {
        case splash(SplashViewModel)
        case login(MessengerLoginViewModel)
        case forgotPassword(ForgotPasswordViewModel)
        case registration(MessengerRegistrationViewModel)
    }

    let environment: MessengerEnvironment
    private let show: (Screen) -> Void
    private let enter: (Account, _ offline: Bool) -> Void

    init(environment: MessengerEnvironment, show: @escaping (Screen) -> Void, enter: @escaping (Account, _ offline: Bool) -> Void) {
        self.environment = environment
        self.show = show
        self.enter = enter
    }

    /// A splash screen wired to the rest; the caller shows it first.
    func makeSplash() -> SplashViewModel {
        let splash = SplashViewModel(environment: environment)
        splash.onOutcome = { [unowned self] outcome in
            switch outcome {
            case .authenticated(let account): enter(account, false)
            case .offline(let account): enter(account, true)
            case .login: showLogin()
            }
        }
        return splash
    }

    func showLogin(prefill: String = "", notice: String? = nil) {
        let login = MessengerLoginViewModel(environment: environment, login: prefill, notice: notice)
        login.onOutcome = { [unowned self] outcome in
            switch outcome {
            case .authenticated(let account): enter(account, false)
            case .forgotPassword(let email): showForgotPassword(email: email ?? "")
            case .register: showRegistration()
            }
        }
        show(.login(login))
        // The providers' buttons, once the server has said which it takes.
        Task { await login.providers.load() }
    }

    func showForgotPassword(email: String) {
        let forgot = ForgotPasswordViewModel(environment: environment, email: email)
        forgot.onOutcome = { [unowned self] outcome in
            switch outcome {
            case .backToLogin(let email, let changed):
                showLogin(prefill: email ?? "", notice: changed ? environment.localizer("messenger.login.passwordChanged") : nil)
            }
        }
        show(.forgotPassword(forgot))
    }

    func showRegistration() {
        let registration = MessengerRegistrationViewModel(environment: environment)
        registration.onOutcome = { [unowned self] outcome in
            switch outcome {
            case .authenticated(let account): enter(account, false)
            case .back: showLogin()
            }
        }
        show(.registration(registration))
    }
}
