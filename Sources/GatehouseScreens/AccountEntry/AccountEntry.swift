import Foundation
import GatehouseAPI
import GatehouseKit

/// The way into an app that runs on `/v1` accounts: the splash screen that checks the stored
/// token, login, "forgot password" and registration, wired to each other. The messenger and the
/// wallet both enter through it (the specs ask the same fields), and each coordinator says what
/// to draw (`show`) and where a signed-in account goes (`enter`). The messenger's entry also asks an account without a
/// tag for one (``ChooseTagViewModel``) before entering: a provider's sign-in makes accounts without one.
@MainActor
final class AccountEntry {
    /// A screen of the way in.
    enum Screen {
        case splash(SplashViewModel)
        case login(MessengerLoginViewModel)
        case forgotPassword(ForgotPasswordViewModel)
        case registration(MessengerRegistrationViewModel)
        case chooseTag(ChooseTagViewModel)
    }

    let environment: MessengerEnvironment
    private let show: (Screen) -> Void
    private let enterApp: (Account, _ offline: Bool) -> Void
    /// Whether an account without a tag is asked for one before it enters (the messenger: people find each other by
    /// tags; the wallet finds them by phone or email as well).
    private let asksForTag: Bool

    init(environment: MessengerEnvironment, asksForTag: Bool = false, show: @escaping (Screen) -> Void,
         enter: @escaping (Account, _ offline: Bool) -> Void) {
        self.environment = environment
        self.asksForTag = asksForTag
        self.show = show
        self.enterApp = enter
    }

    /// A signed-in account goes in, by way of "Choose your tag" when it has none and the app asks for one (offline, the
    /// tag cannot be saved: the app opens, and the next launch online asks).
    private func enter(_ account: Account, _ offline: Bool) {
        guard asksForTag, account.tag == nil, !offline else { return enterApp(account, offline) }
        let choose = ChooseTagViewModel(environment: environment, account: account)
        choose.onOutcome = { [unowned self] outcome in
            switch outcome {
            case .chosen(let account): enterApp(account, false)
            case .signedOut: showLogin()
            }
        }
        show(.chooseTag(choose))
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
