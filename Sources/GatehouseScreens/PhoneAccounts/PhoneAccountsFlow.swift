import Foundation
import GatehouseAPI
import GatehouseKit

/// The coordinator of the phone-accounts app: which screen is shown, and the prompt over it.
/// It acts on the screens' outcomes, so an iOS app (or the terminal demo) only draws
/// `state.screen` and `state.prompt` and forwards input to them.
@MainActor
public final class PhoneAccountsFlow: ScreenModel<PhoneAccountsFlow.State> {
    /// A screen and its view model.
    public enum Screen: Equatable {
        /// Reading the stored session.
        case launching
        /// Shows ``StartViewModel``.
        case start(StartViewModel)
        /// Shows ``RegistrationViewModel``.
        case registration(RegistrationViewModel)
        /// Shows ``CodeEntryViewModel``.
        case codeEntry(CodeEntryViewModel)
        /// Shows ``LoginViewModel``.
        case login(LoginViewModel)
        /// Shows ``RestorePasswordViewModel``.
        case restorePassword(RestorePasswordViewModel)
        /// Shows ``ConfirmationPendingViewModel``.
        case confirmationPending(ConfirmationPendingViewModel)
        /// Shows ``FinalViewModel``.
        case final(FinalViewModel)
        /// Shows ``DeleteAccountViewModel``.
        case deleteAccount(DeleteAccountViewModel)

        /// Two values are equal when they show the same view models.
        public static func == (a: Screen, b: Screen) -> Bool {
            switch (a, b) {
            case (.launching, .launching): true
            case let (.start(x), .start(y)): x === y
            case let (.registration(x), .registration(y)): x === y
            case let (.codeEntry(x), .codeEntry(y)): x === y
            case let (.login(x), .login(y)): x === y
            case let (.restorePassword(x), .restorePassword(y)): x === y
            case let (.confirmationPending(x), .confirmationPending(y)): x === y
            case let (.final(x), .final(y)): x === y
            case let (.deleteAccount(x), .deleteAccount(y)): x === y
            default: false
            }
        }
    }

    /// What is on screen.
    public struct State: Equatable {
        /// The screen on display.
        public var screen: Screen = .launching
        /// The email prompt, shown over the screen (an alert on iOS).
        public var prompt: EmailPromptViewModel?

        /// Two values are equal when they show the same view models.
        public static func == (a: State, b: State) -> Bool { a.screen == b.screen && a.prompt === b.prompt }
    }

    /// The client, strings and clock shared by every screen of the flow.
    public let environment: PhoneAccountsEnvironment
    /// The registration form is kept while its code screen is shown, so "back" returns to it filled in.
    private var registration: RegistrationViewModel?

    /// Creates the screen's model.
    public init(environment: PhoneAccountsEnvironment) {
        self.environment = environment
        super.init(state: State())
    }

    /// On launch: a stored session that has not expired goes straight to its account's screen;
    /// anything else (none, expired, refused by the server) shows the start screen.
    public func launch() async {
        guard environment.client.restoreSession() != nil else { return showStart() }
        do {
            show(try await environment.destinationAfterLogin(sendConfirmation: false))
        } catch {
            showStart()
        }
    }

    // MARK: Navigation

    private func set(_ screen: Screen, prompt: EmailPromptViewModel? = nil) {
        update { $0.screen = screen; $0.prompt = prompt }
    }

    func showStart(notice: String? = nil) {
        let start = StartViewModel(environment: environment, notice: notice)
        start.onOutcome = { [unowned self] outcome in
            switch outcome {
            case .register: showRegistration()
            case .login: showLogin()
            }
        }
        set(.start(start))
    }

    func showRegistration() {
        let form = registration ?? RegistrationViewModel(environment: environment)
        registration = form
        form.onOutcome = { [unowned self] outcome in
            switch outcome {
            case .codeSent(let data): showCodeEntry(data)
            case .back: registration = nil; showStart()
            }
        }
        set(.registration(form))
    }

    func showCodeEntry(_ form: RegistrationForm) {
        let code = CodeEntryViewModel(environment: environment, form: form)
        code.onOutcome = { [unowned self] outcome in
            switch outcome {
            case .completed(let destination): registration = nil; show(destination)
            case .back: showRegistration()
            }
        }
        set(.codeEntry(code))
        code.startCountdown()
    }

    func showLogin(prefill: String = "") {
        let login = LoginViewModel(environment: environment, login: prefill)
        login.onOutcome = { [unowned self] outcome in
            switch outcome {
            case .loggedIn(let destination): show(destination)
            case .restorePassword(let typed): showRestore(prefill: typed)
            case .back: showStart()
            }
        }
        set(.login(login))
    }

    func showRestore(prefill: String = "") {
        let restore = RestorePasswordViewModel(environment: environment, prefill: prefill)
        restore.onOutcome = { [unowned self] outcome in
            switch outcome {
            case .backToLogin(let login): showLogin(prefill: login)
            }
        }
        set(.restorePassword(restore))
    }

    func show(_ destination: AccountDestination) {
        switch destination {
        case .final(let user): showFinal(user)
        case .confirmationPending(let user, let mailSent): showPending(user, mailSent: mailSent)
        case .needsEmail(let user): showPending(user, mailSent: false, prompt: .missing)
        }
    }

    func showPending(_ user: PhoneUser, mailSent: Bool, prompt reason: EmailPromptViewModel.Reason? = nil) {
        let pending = ConfirmationPendingViewModel(environment: environment, user: user, mailSent: mailSent)
        pending.onOutcome = { [unowned self] outcome in
            switch outcome {
            case .confirmed(let user): showFinal(user)
            case .changeEmail(let current): showPrompt(.wrong(current: current), over: pending)
            case .loggedOut: showStart()
            }
        }
        set(.confirmationPending(pending))
        if let reason { showPrompt(reason, over: pending) }
    }

    /// The prompt over the final screen: a saved address is pending until its link is opened, so
    /// the pending screen follows.
    func showPrompt(_ reason: EmailPromptViewModel.Reason, fromFinal final: FinalViewModel) {
        let prompt = EmailPromptViewModel(environment: environment, reason: reason)
        prompt.onOutcome = { [unowned self] outcome in
            update { $0.prompt = nil }
            if case .saved(let user) = outcome { showPending(user, mailSent: true) }
        }
        update { $0.prompt = prompt }
    }

    func showPrompt(_ reason: EmailPromptViewModel.Reason, over pending: ConfirmationPendingViewModel) {
        let prompt = EmailPromptViewModel(environment: environment, reason: reason)
        prompt.onOutcome = { [unowned self, unowned pending] outcome in
            switch outcome {
            case .saved(let user):
                pending.emailChanged(to: user)
                update { $0.prompt = nil }
            case .cancelled:
                // An account without email cannot go on without one: cancelling logs out.
                if reason == .missing {
                    Task { await pending.logout() }
                } else {
                    update { $0.prompt = nil }
                }
            }
        }
        update { $0.prompt = prompt }
    }

    func showFinal(_ user: PhoneUser) {
        let final = FinalViewModel(environment: environment, user: user)
        final.onOutcome = { [unowned self] outcome in
            switch outcome {
            case .loggedOut: showStart()
            case .changeEmail(let current): showPrompt(.wrong(current: current), fromFinal: final)
            case .deleteAccount: showDeleteAccount(returningTo: final)
            }
        }
        set(.final(final))
    }

    /// "Delete account", through `/v1` on the phone API's session (a token of `/api` is a session
    /// of every surface); deleted, the start screen says until when a login takes it back.
    private func showDeleteAccount(returningTo final: FinalViewModel) {
        let accounts = AccountsClient(core: environment.client.core)
        let vm = DeleteAccountViewModel(localizer: environment.localizer, delete: { try await accounts.deleteAccount(currentPassword: $0) },
                                        message: environment.message(for:))
        vm.onOutcome = { [unowned self] outcome in
            switch outcome {
            case .cancelled: set(.final(final))
            case .deleted(_, let notice): showStart(notice: notice)
            }
        }
        set(.deleteAccount(vm))
    }
}
