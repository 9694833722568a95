import Foundation
import GatehouseAPI
import GatehouseKit

/// The fields of the messenger's registration form.
public enum MessengerRegistrationField: String, CaseIterable, Sendable {
    /// The email field.
    case email
    /// The last name field.
    case lastName
    /// The first name field.
    case firstName
    /// The tag field.
    case tag
    /// The password field.
    case password
    /// The password confirmation field.
    case passwordConfirmation
}

/// Whether the tag typed can be had, as the form shows it under the field.
public enum TagStatus: Equatable, Sendable {
    /// Nothing typed yet.
    case empty
    /// It breaks the tag rule (checked locally, or refused by the server).
    case invalid
    /// The server is being asked (after a short pause in typing).
    case checking
    /// Free.
    case available
    /// Someone has it.
    case taken
    /// The server could not be asked; editing the tag asks again.
    case unknown
}

/// The messenger's registration: email, last and first name, a tag (checked as you type: first
/// against the tag rule, then, after a pause, with the server), a password typed twice. "Continue"
/// mails a code to the address; the code step (expiry and resend countdowns) creates the account
/// and logs in.
///
/// Server refusals put the user where the fix is: a taken tag or email, or a weak password,
/// back on the form with the field marked; a wrong, expired or used-up code on the code step.
@MainActor
public final class MessengerRegistrationViewModel: ScreenModel<MessengerRegistrationViewModel.State> {
    /// The steps of the screen, in order.
    public enum Step: Equatable, Sendable {
        /// Filling in the form.
        case form
        /// Typing the emailed code.
        case code
    }

    /// What the screen shows.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// The step on display.
        public var step: Step = .form
        /// The value of each field as typed.
        public var values: [MessengerRegistrationField: String] = [:]
        /// The label of each field; ``MessengerRegistrationViewModel/fieldOrder`` gives the order.
        public var labels: [MessengerRegistrationField: String] = [:]
        /// A message under each field that has been edited and is not valid yet (the tag's is
        /// in ``tagMessage``).
        public var fieldErrors: [MessengerRegistrationField: String] = [:]
        /// Whether the tag typed can be had.
        public var tagStatus: TagStatus = .empty
        /// The line under the tag field: the rule it breaks, "Checking…", free or taken.
        public var tagMessage: String?
        /// The label of "Continue".
        public var continueTitle: String
        /// Whether "Continue" can be used: every field valid, the passwords match, the tag is
        /// free, nothing in flight.
        public var isContinueEnabled = false

        /// The code step, once a code went out.
        public var code: MessengerCodeState?
        /// The label of "Create account" on the code step.
        public var submitTitle: String
        /// Whether "Create account" can be used: a full-length code and nothing in flight.
        public var isSubmitEnabled = false

        /// The label of "Back".
        public var backTitle: String
        /// True while a request is in flight: show progress and ignore repeated taps.
        public var isLoading = false
        /// What is happening ("Creating your account…").
        public var progressMessage: String?
        /// The server's (localized) message for the last failed action; cleared by the next edit.
        public var errorMessage: String?
        /// A neutral notice ("A new code was sent to …").
        public var infoMessage: String?
    }

    /// Where the user goes from here.
    public enum Outcome: Equatable, Sendable {
        /// The account exists and the session is stored: into the messenger.
        case authenticated(Account)
        /// Back to login.
        case back
    }

    /// Each field's content type, so iOS offers the right keyboard and autofill (a new password
    /// is suggested and saved to the keychain).
    public static let contentTypes: [MessengerRegistrationField: TextContentType] = [
        .email: .emailAddress, .lastName: .name, .firstName: .name, .tag: .username,
        .password: .newPassword, .passwordConfirmation: .newPassword,
    ]

    /// The order fields are drawn in.
    public static let fieldOrder: [MessengerRegistrationField] = [.email, .lastName, .firstName, .tag, .password, .passwordConfirmation]

    /// Called when the user leaves this screen; the coordinator navigates.
    public var onOutcome: ((Outcome) -> Void)?
    private let environment: MessengerEnvironment
    private var edited: Set<MessengerRegistrationField> = []
    /// Messages the server gave for a field's current value (`email_taken`, `weak_password`);
    /// dropped when the field is edited.
    private var serverErrors: [MessengerRegistrationField: String] = [:]
    private let tagCheck: TagCheck
    private let codeStep: CodeStep

    /// Creates the screen's model.
    public init(environment: MessengerEnvironment) {
        self.environment = environment
        self.tagCheck = TagCheck(environment: environment)
        self.codeStep = CodeStep(environment: environment) { [client = environment.client] in try await client.requestSignupCode(email: $0) }
        let l = environment.localizer
        var state = State(title: l("messenger.registration.title"), continueTitle: l("messenger.registration.continue"),
                          submitTitle: l("messenger.registration.createAccount"), backTitle: l("common.back"))
        for field in MessengerRegistrationField.allCases {
            state.values[field] = ""
            state.labels[field] = l("messenger.registration.\(field.rawValue)")
        }
        super.init(state: state)
    }

    // MARK: Form

    /// Sets a field as the user types. The tag is checked against the rule at once and with the
    /// server after ``MessengerEnvironment/tagCheckDelay`` of quiet.
    public func set(_ field: MessengerRegistrationField, _ value: String) {
        edited.insert(field)
        serverErrors[field] = nil
        update { $0.values[field] = value; $0.errorMessage = nil }
        if field == .tag { scheduleTagCheck() }
        revalidate()
    }

    /// Waits for the pending tag check, if any (a terminal or a test that wants the answer
    /// before drawing again).
    public func settleTagCheck() async {
        await tagCheck.settle()
    }

    private var canonicalTag: String { TagRule.canonical(state.values[.tag] ?? "") }

    private func scheduleTagCheck() {
        tagCheck.schedule(canonicalTag, current: { [weak self] in self?.canonicalTag }) { [weak self] status, message in
            self?.update { $0.tagStatus = status; $0.tagMessage = message }
            self?.revalidate()
        }
    }

    private func problem(_ field: MessengerRegistrationField, in values: [MessengerRegistrationField: String]) -> String? {
        if let server = serverErrors[field] { return server }
        let l = environment.localizer
        let value = values[field] ?? ""
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        switch field {
        case .email:
            if trimmed.isEmpty { return l("field.required") }
            return InputRules.isEmail(trimmed) ? nil : l("field.emailInvalid")
        case .lastName, .firstName:
            return trimmed.isEmpty ? l("field.required") : nil
        case .tag:
            // Drawn from `tagStatus`/`tagMessage`; "required" only until something is typed.
            return trimmed.isEmpty ? l("field.required") : nil
        case .password:
            if value.isEmpty { return l("field.required") }
            return environment.passwordProblem(value)
        case .passwordConfirmation:
            if value.isEmpty { return l("field.required") }
            return value == (values[.password] ?? "") ? nil : l("messenger.password.mismatch")
        }
    }

    private func revalidate() {
        update { state in
            var errors: [MessengerRegistrationField: String] = [:]
            var allValid = true
            for field in MessengerRegistrationField.allCases {
                if let problem = problem(field, in: state.values) {
                    allValid = false
                    if edited.contains(field) && field != .tag { errors[field] = problem }
                }
            }
            state.fieldErrors = errors
            state.isContinueEnabled = allValid && state.tagStatus == .available && !state.isLoading
            state.isSubmitEnabled = (state.code?.isComplete ?? false) && !state.isLoading
            codeStep.apply(to: &state)
        }
    }

    // MARK: Countdown

    /// Recomputes the code's expiry and resend countdowns from the clock. Views call
    /// ``startCountdown()`` instead.
    public func tick() { revalidate() }

    /// Ticks once a second while the code step is shown.
    public func startCountdown() { codeStep.startCountdown { [weak self] in self?.tick() } }

    /// Stops the countdown (the screen went away).
    public func stopCountdown() { codeStep.stopCountdown() }

    // MARK: Actions

    private var email: String { (state.values[.email] ?? "").trimmingCharacters(in: .whitespaces) }

    /// "Continue": mails a code to the address and shows the code step. Coming back to the form
    /// and on again with the same address reuses the code already sent while it lives.
    public func continueToCode() async {
        guard state.isContinueEnabled else { return }
        await codeStep.send(to: email, on: self, refresh: revalidate, show: showCodeStep)
    }

    private func showCodeStep() {
        update { $0.step = .code; $0.errorMessage = nil }
        revalidate()
        startCountdown()
    }

    /// Sets the code as typed or autofilled; digits only, at most the code's length.
    public func setCode(_ text: String) {
        codeStep.setCode(text, on: self, refresh: revalidate)
    }

    /// "Send the code again" on the code step.
    public func resend() async {
        await codeStep.resend(on: self, refresh: revalidate)
    }

    /// "Create account": signs up with the code, which stores the session; then into the messenger.
    public func submit() async {
        guard state.isSubmitEnabled, let email = codeStep.email, let code = state.code?.code else { return }
        let v = state.values
        func t(_ f: MessengerRegistrationField) -> String { (v[f] ?? "").trimmingCharacters(in: .whitespaces) }
        let request = SignupRequest(email: email, code: code, password: v[.password] ?? "", firstName: t(.firstName), lastName: t(.lastName),
                                    tag: canonicalTag, locale: environment.localizer.language, device: environment.device)
        update { $0.isLoading = true; $0.errorMessage = nil; $0.infoMessage = nil; $0.progressMessage = environment.localizer("messenger.registration.creating") }
        revalidate()
        do {
            let session = try await environment.client.signup(request)
            stopCountdown()
            update { $0.isLoading = false; $0.progressMessage = nil }
            revalidate()
            onOutcome?(.authenticated(session.account))
        } catch let error as GatehouseClientError {
            update { $0.isLoading = false; $0.progressMessage = nil }
            handle(error)
        } catch {
            update { $0.isLoading = false; $0.progressMessage = nil; $0.errorMessage = environment.message(for: error) }
            revalidate()
        }
    }

    /// Puts the user where the refusal can be fixed.
    private func handle(_ error: GatehouseClientError) {
        let message = environment.message(for: error)
        let backToForm: MessengerRegistrationField?
        switch error.code {
        case .tagTaken?, .invalidTag?: backToForm = .tag
        case .emailTaken?, .invalidEmail?: backToForm = .email
        case .weakPassword?: backToForm = .password
        default: backToForm = nil
        }
        guard let field = backToForm else {
            // The code (or anything else): stay on the code step with the server's message.
            update { $0.errorMessage = environment.codeMessage(for: error) }
            revalidate()
            return
        }
        stopCountdown()
        if field == .tag {
            update { $0.tagStatus = error.code == .tagTaken ? .taken : .invalid; $0.tagMessage = message }
        } else {
            serverErrors[field] = message
            edited.insert(field)
        }
        update { $0.step = .form; $0.errorMessage = message }
        revalidate()
    }

    /// "Back": from the code step to the form (filled in), from the form to login.
    public func back() {
        switch state.step {
        case .form:
            tagCheck.cancel()
            stopCountdown()
            onOutcome?(.back)
        case .code:
            stopCountdown()
            update { $0.step = .form; $0.errorMessage = nil; $0.infoMessage = nil }
            revalidate()
        }
    }
}
