import Foundation
import GatehouseAPI
import GatehouseKit

/// The code screen: the code from the SMS registers the account, then the app logs in with the
/// phone and password from the form, asks for the confirmation mail and checks `isConfirmed`.
/// A resend is offered after a visible countdown.
@MainActor
public final class CodeEntryViewModel: ScreenModel<CodeEntryViewModel.State> {
    /// What the code screen shows.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// The instruction, naming the phone the code went to.
        public var prompt: String
        /// The code field's label.
        public var codeLabel: String
        /// The code typed or autofilled, digits only.
        public var code = ""
        /// How many digits a code has.
        public var codeLength: Int
        /// The field's content type: a one-time code, so iOS autofills it from the SMS.
        public let codeContentType = TextContentType.oneTimeCode
        /// The label of the main action.
        public var submitTitle: String
        /// Whether the main action can be used now (the input is valid and nothing is in flight).
        public var isSubmitEnabled = false
        /// True while a request is in flight: show progress and ignore repeated taps.
        public var isLoading = false
        /// What is happening during submit ("Creating your account…").
        public var progressMessage: String?
        /// The server's (localized) message for the last failed action; cleared by the next edit.
        public var errorMessage: String?
        /// Seconds until "send again" works; 0 when it does.
        public var resendSecondsLeft: Int
        /// Whether "send again" can be used (the countdown is over).
        public var isResendEnabled = false
        /// "Send again in 0:42" or "Send the code again".
        public var resendTitle: String
    }

    /// Where the user goes from here.
    public enum Outcome: Equatable, Sendable {
        /// The code is confirmed: where the account goes next.
        case completed(AccountDestination)
        /// Back to the previous screen.
        case back
    }

    /// Called when the user leaves this screen; the coordinator navigates.
    public var onOutcome: ((Outcome) -> Void)?
    /// The phone the code went to.
    public let form: RegistrationForm
    private let environment: PhoneAccountsEnvironment
    private var resendAllowedAt: Date
    private var registered = false
    private let ticker = SecondTicker()

    /// Creates the screen's model.
    public init(environment: PhoneAccountsEnvironment, form: RegistrationForm) {
        self.environment = environment
        self.form = form
        self.resendAllowedAt = environment.now().addingTimeInterval(TimeInterval(environment.resendCooldown))
        let l = environment.localizer
        super.init(state: State(
            title: l("code.title"), prompt: l("code.prompt", form.phone), codeLabel: l("code.field"), codeLength: environment.codeLength,
            submitTitle: l("code.submit"), resendSecondsLeft: environment.resendCooldown, resendTitle: ""
        ))
        tick()
    }

    /// Sets the code as typed or autofilled; digits only, at most `codeLength`.
    public func setCode(_ text: String) {
        let digits = InputRules.codeDigits(text, length: state.codeLength)
        update { $0.code = digits; $0.errorMessage = nil; $0.isSubmitEnabled = digits.count == $0.codeLength && !$0.isLoading }
    }

    /// Recomputes the countdown from the clock. Views call ``startCountdown()`` instead.
    public func tick() {
        let left = Countdown.secondsLeft(until: resendAllowedAt, now: environment.now())
        let l = environment.localizer
        update {
            $0.resendSecondsLeft = left
            $0.isResendEnabled = left == 0 && !$0.isLoading
            $0.resendTitle = left == 0 ? l("code.resend") : l("code.resendIn", Countdown.clock(left))
        }
    }

    /// Ticks once a second until the resend is allowed (while the screen is shown).
    public func startCountdown() {
        ticker.start { [weak self] in
            guard let self else { return false }
            self.tick()
            return self.state.resendSecondsLeft != 0
        }
    }

    /// Stops the countdown (the screen went away).
    public func stopCountdown() { ticker.stop() }

    /// "Send the code again".
    public func resend() async {
        guard state.isResendEnabled else { return }
        update { $0.isLoading = true; $0.isResendEnabled = false; $0.errorMessage = nil }
        do {
            try await environment.client.sendRegistrationCode(phone: form.phone)
            resendAllowedAt = environment.now().addingTimeInterval(TimeInterval(environment.resendCooldown))
        } catch GatehouseClientError.rateLimited(_, let message, let retryAfter) {
            resendAllowedAt = environment.now().addingTimeInterval(TimeInterval(retryAfter ?? environment.resendCooldown))
            update { $0.errorMessage = message }
        } catch {
            update { $0.errorMessage = environment.message(for: error) }
        }
        update { $0.isLoading = false }
        tick()
        startCountdown()
    }

    /// "Confirm": register, log in, request the confirmation mail, check the account.
    public func submit() async {
        guard state.isSubmitEnabled else { return }
        let l = environment.localizer
        update { $0.isLoading = true; $0.isSubmitEnabled = false; $0.errorMessage = nil }
        do {
            if !registered {
                update { $0.progressMessage = l("code.progress.registering") }
                _ = try await environment.client.register(PhoneRegisterRequest(
                    phone: form.phone, code: state.code, password: form.password,
                    firstName: form.firstName, lastName: form.lastName, email: form.email
                ))
                registered = true   // a retry after a later failure must not register twice
            }
            update { $0.progressMessage = l("code.progress.loggingIn") }
            try await environment.client.login(login: form.phone, password: form.password)
            update { $0.progressMessage = l("code.progress.mailing") }
            let destination = try await environment.destinationAfterLogin(sendConfirmation: true)
            stopCountdown()
            update { $0.isLoading = false; $0.progressMessage = nil }
            onOutcome?(.completed(destination))
        } catch {
            update {
                $0.isLoading = false
                $0.progressMessage = nil
                $0.errorMessage = environment.message(for: error)
                $0.isSubmitEnabled = $0.code.count == $0.codeLength
            }
            tick()
        }
    }

    /// Back to the form.
    public func back() {
        stopCountdown()
        onOutcome?(.back)
    }
}
