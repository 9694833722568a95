import Foundation
import GatehouseAPI
import GatehouseKit

/// "Forgot password": the email the account was registered with → the code mailed to it (with
/// its expiry and a resend countdown) → a new password, typed twice → back to login.
///
/// `/v1` checks the code together with the new password (`POST /v1/recovery`), so a wrong,
/// expired or used-up code is reported after the password step, and the user is taken back to
/// the code step with the server's message; the passwords typed are kept.
@MainActor
public final class ForgotPasswordViewModel: ScreenModel<ForgotPasswordViewModel.State> {
    /// The steps of the screen, in order.
    public enum Step: Equatable, Sendable {
        /// Typing the address to send the code to.
        case email
        /// Typing the code.
        case code
        /// Typing the new password.
        case newPassword
    }

    /// What the screen shows.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// The step on display.
        public var step: Step = .email
        /// The explanation of the current step (on the code step, the code's own prompt naming
        /// the address).
        public var prompt: String

        /// The email field's label.
        public var emailLabel: String
        /// The email typed.
        public var email = ""
        /// The email field's content type.
        public let emailContentType = TextContentType.emailAddress
        /// Shown under the email field while what was typed is not an email address.
        public var emailError: String?
        /// The label of "Send code".
        public var sendCodeTitle: String
        /// Whether "Send code" can be used: a valid email and nothing in flight.
        public var isSendCodeEnabled = false

        /// The code step, once a code went out.
        public var code: MessengerCodeState?
        /// The label of "Continue" on the code step.
        public var continueTitle: String
        /// Whether "Continue" can be used: a full-length code and nothing in flight.
        public var isContinueEnabled = false

        /// The new password's label.
        public var newPasswordLabel: String
        /// The repeated password's label.
        public var confirmationLabel: String
        /// The new password as typed; drawn masked.
        public var newPassword = ""
        /// The repetition as typed; drawn masked.
        public var confirmation = ""
        /// Both password fields' content type: a new password, so iOS suggests and saves one.
        public let passwordContentType = TextContentType.newPassword
        /// Which part of the password rule the new password breaks (once typed).
        public var newPasswordError: String?
        /// "The passwords do not match" (once the repetition is typed).
        public var confirmationError: String?
        /// The label of "Save password".
        public var saveTitle: String
        /// Whether "Save password" can be used: the rule is met, both match, nothing in flight.
        public var isSaveEnabled = false

        /// The label of "Back".
        public var backTitle: String
        /// True while a request is in flight: show progress and ignore repeated taps.
        public var isLoading = false
        /// The server's (localized) message for the last failed action; cleared by the next edit.
        public var errorMessage: String?
        /// A neutral notice ("A new code was sent to …").
        public var infoMessage: String?
    }

    /// Where the user goes from here.
    public enum Outcome: Equatable, Sendable {
        /// Back to login: with the email pre-filled and, once the password was changed, a notice.
        case backToLogin(email: String?, passwordChanged: Bool)
    }

    /// Called when the user leaves this screen; the coordinator navigates.
    public var onOutcome: ((Outcome) -> Void)?
    private let environment: MessengerEnvironment
    private let codeStep: CodeStep

    /// Creates the screen's model.
    /// - Parameter email: pre-fills the email (what the login field held, if it was one).
    public init(environment: MessengerEnvironment, email: String = "") {
        self.environment = environment
        self.codeStep = CodeStep(environment: environment) { [client = environment.client] in try await client.requestRecoveryCode(email: $0) }
        let l = environment.localizer
        super.init(state: State(
            title: l("messenger.forgot.title"), prompt: l("messenger.forgot.emailPrompt"), emailLabel: l("messenger.forgot.email"),
            sendCodeTitle: l("messenger.forgot.sendCode"), continueTitle: l("messenger.forgot.continue"),
            newPasswordLabel: l("messenger.forgot.newPassword"), confirmationLabel: l("messenger.forgot.confirmation"),
            saveTitle: l("messenger.forgot.save"), backTitle: l("common.back")
        ))
        if !email.isEmpty { update { $0.email = email } }
        refresh()
    }

    // MARK: Input

    /// Sets the email as the user types.
    public func setEmail(_ text: String) {
        update {
            $0.email = text
            $0.errorMessage = nil
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            $0.emailError = trimmed.isEmpty || InputRules.isEmail(trimmed) ? nil : environment.localizer("field.emailInvalid")
        }
        refresh()
    }

    /// Sets the code as typed or autofilled; digits only, at most the code's length.
    public func setCode(_ text: String) {
        codeStep.setCode(text, on: self, refresh: refresh)
    }

    /// Sets the new password as the user types.
    public func setNewPassword(_ text: String) {
        update { $0.newPassword = text; $0.errorMessage = nil }
        refresh()
    }

    /// Sets the repeated password as the user types.
    public func setConfirmation(_ text: String) {
        update { $0.confirmation = text; $0.errorMessage = nil }
        refresh()
    }

    private func refresh() {
        update { state in
            let email = state.email.trimmingCharacters(in: .whitespaces)
            state.isSendCodeEnabled = InputRules.isEmail(email) && !state.isLoading
            state.isContinueEnabled = (state.code?.isComplete ?? false) && !state.isLoading
            state.newPasswordError = state.newPassword.isEmpty ? nil : environment.passwordProblem(state.newPassword)
            state.confirmationError = state.confirmation.isEmpty || state.confirmation == state.newPassword ? nil : environment.localizer("messenger.password.mismatch")
            state.isSaveEnabled = environment.passwordProblem(state.newPassword) == nil && state.confirmation == state.newPassword
                && (state.code?.isComplete ?? false) && !state.isLoading
            codeStep.apply(to: &state)
        }
    }

    // MARK: Countdown

    /// Recomputes the code's expiry and resend countdowns from the clock. Views call
    /// ``startCountdown()`` instead.
    public func tick() { refresh() }

    /// Ticks once a second while the code step is shown.
    public func startCountdown() { codeStep.startCountdown { [weak self] in self?.tick() } }

    /// Stops the countdown (the screen went away).
    public func stopCountdown() { codeStep.stopCountdown() }

    // MARK: Actions

    /// "Send code" on the email step: asks for a recovery code and shows the code step.
    public func sendCode() async {
        guard state.isSendCodeEnabled else { return }
        // A code already sent to this address that still works is shown again: no second mail (and no 429).
        await codeStep.send(to: state.email.trimmingCharacters(in: .whitespaces), on: self, refresh: refresh, show: showCodeStep)
    }

    private func showCodeStep() {
        update { $0.step = .code; $0.prompt = $0.code?.prompt ?? "" }
        refresh()
        startCountdown()
    }

    /// "Send the code again" on the code step.
    public func resend() async {
        await codeStep.resend(on: self, refresh: refresh)
    }

    /// "Continue" on the code step: on to the new password.
    public func continueWithCode() {
        guard state.isContinueEnabled else { return }
        update { $0.step = .newPassword; $0.prompt = environment.localizer("messenger.forgot.passwordPrompt"); $0.errorMessage = nil; $0.infoMessage = nil }
        refresh()
    }

    /// "Save password": sets the new password with the code, then back to login.
    public func save() async {
        guard state.isSaveEnabled, let email = codeStep.email, let code = state.code?.code else { return }
        update { $0.isLoading = true; $0.errorMessage = nil }
        refresh()
        do {
            try await environment.client.recoverPassword(RecoveryRequest(email: email, code: code, password: state.newPassword))
            stopCountdown()
            update { $0.isLoading = false; $0.newPassword = ""; $0.confirmation = "" }
            refresh()
            onOutcome?(.backToLogin(email: email, passwordChanged: true))
        } catch let error as GatehouseClientError where error.code?.isAboutTheCode == true {
            // The code is checked only now: back to it, with the server's word on what is wrong.
            update {
                $0.isLoading = false
                $0.step = .code
                $0.prompt = $0.code?.prompt ?? ""
                $0.errorMessage = environment.codeMessage(for: error)
            }
            refresh()
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
            refresh()
        }
    }

    /// "Back": the previous step, or back to login from the first one.
    public func back() {
        let l = environment.localizer
        switch state.step {
        case .email:
            stopCountdown()
            let email = state.email.trimmingCharacters(in: .whitespaces)
            onOutcome?(.backToLogin(email: email.isEmpty ? nil : email, passwordChanged: false))
        case .code:
            stopCountdown()
            update { $0.step = .email; $0.prompt = l("messenger.forgot.emailPrompt"); $0.errorMessage = nil; $0.infoMessage = nil }
        case .newPassword:
            update { $0.step = .code; $0.prompt = $0.code?.prompt ?? ""; $0.errorMessage = nil }
            startCountdown()
        }
        refresh()
    }
}
