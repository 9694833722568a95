import Foundation
import GatehouseAPI
import GatehouseKit

/// The messenger's login screen: a login (an email or a tag) and a password, with "Forgot
/// password", "Register" and "Log in". A wrong password shows the server's message and the
/// user stays; a right one stores the token and goes into the messenger. An account with the
/// authenticator app on gets a second step on the same screen (``State/secondStep``): the app's
/// code, or a recovery code.
@MainActor
public final class MessengerLoginViewModel: ScreenModel<MessengerLoginViewModel.State> {
    /// What the login screen shows: the login form (its fields read as the state's own: `state.login`), "Register", a
    /// notice, and the second step.
    @dynamicMemberLookup
    public struct State: Equatable, Sendable, LoginFormState {
        /// The title, the login and password fields, "Log in" and "Forgot password", and what failed.
        public var form: LoginForm
        /// The label of "Register".
        public var registerTitle: String
        /// A neutral notice, e.g. that the password was just changed.
        public var infoMessage: String?
        /// The second step, once the password was right and the account asks for its authenticator
        /// app's code: draw its field (and its buttons) in place of the login and password.
        public var secondStep: SecondStep?

        /// A field of the login form, as the state's own.
        public subscript<T>(dynamicMember keyPath: WritableKeyPath<LoginForm, T>) -> T {
            get { form[keyPath: keyPath] }
            set { form[keyPath: keyPath] = newValue }
        }

        /// A field of the login form that never changes (the content types), as the state's own.
        public subscript<T>(dynamicMember keyPath: KeyPath<LoginForm, T>) -> T {
            form[keyPath: keyPath]
        }
    }

    /// The second step of a login: the authenticator app's code, or one of the recovery codes.
    public struct SecondStep: Equatable, Sendable {
        /// What to type, e.g. "Enter the code from your authenticator app."
        public var message: String
        /// The code field's label.
        public var codeLabel: String
        /// The code as typed.
        public var code = ""
        /// Whether the code is a recovery code rather than the app's.
        public var usesRecoveryCode = false
        /// The code field's content type (a one-time code).
        public let codeContentType = TextContentType.oneTimeCode
        /// The label of the button that switches between the app's code and a recovery code.
        public var switchTitle: String
        /// The label of "Back" (to the password).
        public var backTitle: String
    }

    /// Where the user goes from here.
    public enum Outcome: Equatable, Sendable {
        /// Logged in: into the messenger with this account.
        case authenticated(Account)
        /// "Forgot password", with the email typed so far (if the login is one).
        case forgotPassword(email: String?)
        /// "Register".
        case register
    }

    /// Called when the user leaves this screen; the coordinator navigates.
    public var onOutcome: ((Outcome) -> Void)?
    /// "Continue with Apple" and "Continue with Google", when the server takes them (``ProviderSignInViewModel/load()``
    /// asks, when the screen appears): draw its buttons under the form, and its link step in place of the form. A
    /// provider's sign-in that asks for the second factor goes on in this screen's second step.
    public let providers: ProviderSignInViewModel
    private let environment: MessengerEnvironment

    /// Creates the screen's model.
    /// - Parameters:
    ///   - login: pre-fills the login field (e.g. the email a password was just reset for).
    ///   - notice: a neutral notice to show, e.g. "Your password has been changed".
    public init(environment: MessengerEnvironment, login: String = "", notice: String? = nil) {
        self.environment = environment
        self.providers = ProviderSignInViewModel(client: environment.client, localizer: environment.localizer, device: environment.device)
        let l = environment.localizer
        super.init(state: State(form: LoginForm(title: l("messenger.login.title"), loginLabel: l("messenger.login.login"),
                                                passwordLabel: l("messenger.login.password"), submitTitle: l("messenger.login.submit"),
                                                forgotTitle: l("messenger.login.forgot")),
                                registerTitle: l("messenger.login.register"), infoMessage: notice))
        if !login.isEmpty { update { $0.login = login } }
        providers.onOutcome = { [weak self] outcome in
            guard let self else { return }
            switch outcome {
            case .authenticated(let account): self.onOutcome?(.authenticated(account))
            case .secondFactorRequired(let challenge):
                self.challenge = challenge
                self.showSecondStep(recovery: false)
            }
        }
    }

    /// Sets the login field (an email or a tag) as the user types.
    public func setLogin(_ text: String) { editLogin(text) }

    /// Sets the password as the user types.
    public func setPassword(_ text: String) { editPassword(text) }

    /// The identifier as typed, trimmed; the server reads an email, a tag (with or without `@`)
    /// or a phone from it.
    var identifier: String {
        state.login.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The challenge the password answered, while the second step is shown.
    private var challenge: SecondFactorChallenge?

    /// "Log in": the password, or (in the second step) the code.
    public func submit() async {
        guard state.isSubmitEnabled else { return }
        if let challenge { return await finish(challenge) }
        update { $0.isLoading = true; $0.isSubmitEnabled = false; $0.errorMessage = nil; $0.infoMessage = nil }
        do {
            switch try await environment.client.beginLogin(identifier: identifier, password: state.password, device: environment.device) {
            case .signedIn(let session):
                update { $0.isLoading = false; $0.password = "" }
                refreshLoginEnabled()
                onOutcome?(.authenticated(session.account))
            case .secondFactorRequired(let challenge):
                self.challenge = challenge
                update { $0.isLoading = false; $0.password = "" }
                showSecondStep(recovery: false)
            }
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
            refreshLoginEnabled()
        }
    }

    /// Sets the second step's code as the user types.
    public func setCode(_ text: String) {
        guard state.secondStep != nil else { return }
        update { $0.secondStep?.code = text; $0.errorMessage = nil }
        refreshCodeEnabled()
    }

    /// Switches the second step between the app's code and a recovery code.
    public func switchCodeKind() {
        guard let step = state.secondStep else { return }
        showSecondStep(recovery: !step.usesRecoveryCode)
    }

    /// "Back": from the second step to the password (the challenge is dropped).
    public func backToPassword() {
        challenge = nil
        update { $0.secondStep = nil; $0.errorMessage = nil }
        refreshLoginEnabled()
    }

    private func showSecondStep(recovery: Bool) {
        let l = environment.localizer
        update {
            $0.secondStep = SecondStep(
                message: l(recovery ? "messenger.login.secondStep.recoveryMessage" : "messenger.login.secondStep.message"),
                codeLabel: l(recovery ? "messenger.login.secondStep.recoveryCode" : "messenger.login.secondStep.code"),
                usesRecoveryCode: recovery,
                switchTitle: l(recovery ? "messenger.login.secondStep.useApp" : "messenger.login.secondStep.useRecovery"),
                backTitle: l("messenger.login.secondStep.back"))
            $0.errorMessage = nil
        }
        refreshCodeEnabled()
    }

    /// The app's code is six digits (spaces allowed); a recovery code ten letters and digits (a dash allowed).
    private func refreshCodeEnabled() {
        update {
            guard let step = $0.secondStep else { return }
            let typed = step.code.filter { !$0.isWhitespace && $0 != "-" }
            let complete = step.usesRecoveryCode ? typed.count == 10 : (typed.count == 6 && typed.allSatisfy(\.isASCII) && typed.allSatisfy(\.isNumber))
            $0.isSubmitEnabled = complete && !$0.isLoading
        }
    }

    private func finish(_ challenge: SecondFactorChallenge) async {
        guard let step = state.secondStep else { return }
        update { $0.isLoading = true; $0.isSubmitEnabled = false; $0.errorMessage = nil }
        do {
            let session = try await environment.client.completeLogin(
                challenge: challenge, code: step.usesRecoveryCode ? nil : step.code, recoveryCode: step.usesRecoveryCode ? step.code : nil,
                device: environment.device)
            self.challenge = nil
            update { $0.isLoading = false; $0.secondStep = nil }
            refreshLoginEnabled()
            onOutcome?(.authenticated(session.account))
        } catch let error as GatehouseClientError where error.code == .loginChallengeInvalid {
            // Used up or expired: the password again, with the server's reason.
            backToPassword()
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
            refreshLoginEnabled()
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.codeMessage(for: error); $0.secondStep?.code = "" }
            refreshCodeEnabled()
        }
    }

    /// "Forgot password".
    public func forgotPassword() {
        let typed = state.login.trimmingCharacters(in: .whitespaces)
        onOutcome?(.forgotPassword(email: InputRules.isEmail(typed) ? typed : nil))
    }

    /// "Register".
    public func register() { onOutcome?(.register) }
}
