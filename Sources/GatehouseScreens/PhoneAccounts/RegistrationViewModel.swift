import Foundation
import GatehouseKit

/// The fields of the registration form.
public enum RegistrationField: String, CaseIterable, Sendable {
    /// The phone field.
    case phone
    /// The password field.
    case password
    /// The last name field.
    case lastName
    /// The first name field.
    case firstName
    /// The email field.
    case email
}

/// What the form collected, handed to the code screen.
public struct RegistrationForm: Equatable, Sendable {
    /// The phone as typed (the login).
    public var phone: String
    /// The password as typed.
    public var password: String
    /// The last name.
    public var lastName: String
    /// The first name.
    public var firstName: String
    /// The email address shown.
    public var email: String
}

/// The registration form: phone (the login), password, last and first name, an optional email,
/// the terms box. "Send code" stays disabled until every field is valid and the box is ticked;
/// ``State/sendCodeHint`` says what is still missing.
@MainActor
public final class RegistrationViewModel: ScreenModel<RegistrationViewModel.State> {
    /// What the form shows.
    public struct State: Equatable, Sendable {
        /// The value of each field as typed.
        public var values: [RegistrationField: String] = [:]
        /// The label of each field; ``RegistrationViewModel/fieldOrder`` gives the order to draw them in.
        public var labels: [RegistrationField: String] = [:]
        /// A message under each field that has been edited and is not valid yet.
        public var fieldErrors: [RegistrationField: String] = [:]
        /// Whether the terms box is ticked.
        public var termsAccepted = false
        /// The terms box's text.
        public var termsText: String = ""
        /// The terms themselves, for a screen the terms text opens.
        public var termsDetail: String = ""
        /// The screen's title.
        public var title: String = ""
        /// The label of "Send code".
        public var sendCodeTitle: String = ""
        /// Whether "Send code" can be used: every field valid and the terms box ticked.
        public var isSendCodeEnabled = false
        /// While "Send code" is disabled, why: the first field still to fix, or the terms box.
        public var sendCodeHint: String?
        /// True while a request is in flight: show progress and ignore repeated taps.
        public var isLoading = false
        /// The server's refusal, shown above the button.
        public var errorMessage: String?
    }

    /// Where the user goes from here.
    public enum Outcome: Equatable, Sendable {
        /// The code went out: show the code screen for this form.
        case codeSent(RegistrationForm)
        /// Back to the previous screen.
        case back
    }

    /// Called when the user leaves this screen; the coordinator navigates.
    public var onOutcome: ((Outcome) -> Void)?
    private let environment: PhoneAccountsEnvironment
    private var edited: Set<RegistrationField> = []

    /// Creates the screen's model.
    public init(environment: PhoneAccountsEnvironment) {
        self.environment = environment
        let l = environment.localizer
        var state = State()
        state.title = l("registration.title")
        state.sendCodeTitle = l("registration.sendCode")
        state.termsText = l("registration.terms")
        state.termsDetail = l("registration.termsDetail")
        for field in RegistrationField.allCases {
            state.values[field] = ""
            state.labels[field] = l("registration.\(field.rawValue)")
        }
        super.init(state: state)
        revalidate()
    }

    /// Each field's content type, so iOS offers the right keyboard and autofill (a new
    /// password is suggested and saved to the keychain).
    public static let contentTypes: [RegistrationField: TextContentType] = [
        .phone: .telephoneNumber, .password: .newPassword, .lastName: .name, .firstName: .name, .email: .emailAddress,
    ]

    /// The order fields are drawn in.
    public static let fieldOrder: [RegistrationField] = [.phone, .password, .lastName, .firstName, .email]

    /// Sets a field as the user types.
    public func set(_ field: RegistrationField, _ value: String) {
        edited.insert(field)
        update { $0.values[field] = value; $0.errorMessage = nil }
        revalidate()
    }

    /// Ticks or clears the terms box.
    public func setTermsAccepted(_ accepted: Bool) {
        update { $0.termsAccepted = accepted }
        revalidate()
    }

    private func problem(_ field: RegistrationField, _ value: String) -> String? {
        let l = environment.localizer
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        switch field {
        case .phone:
            if trimmed.isEmpty { return l("field.required") }
            return InputRules.isPhone(trimmed) ? nil : l("field.phoneInvalid")
        case .password:
            return InputRules.passwordProblem(value, rule: environment.passwordRule).map { l($0, String(environment.passwordRule.minLength), String(environment.passwordRule.maxBytes)) }
        case .email:
            // Optional, as for the API: an account without one is asked for it after login.
            if trimmed.isEmpty { return nil }
            return InputRules.isEmail(trimmed) ? nil : l("field.emailInvalid")
        case .lastName, .firstName:
            return trimmed.isEmpty ? l("field.required") : nil
        }
    }

    private func revalidate() {
        update { state in
            var errors: [RegistrationField: String] = [:]
            var firstProblem: String?
            for field in Self.fieldOrder {
                if let problem = problem(field, state.values[field] ?? "") {
                    firstProblem = firstProblem ?? "\(state.labels[field] ?? field.rawValue): \(problem)"
                    if edited.contains(field) { errors[field] = problem }
                }
            }
            state.fieldErrors = errors
            state.isSendCodeEnabled = firstProblem == nil && state.termsAccepted && !state.isLoading
            state.sendCodeHint = state.isSendCodeEnabled || state.isLoading ? nil
                : firstProblem ?? environment.localizer("registration.hint.terms")
        }
    }

    var form: RegistrationForm {
        let v = state.values
        func t(_ f: RegistrationField) -> String { (v[f] ?? "").trimmingCharacters(in: .whitespaces) }
        return RegistrationForm(phone: t(.phone), password: v[.password] ?? "", lastName: t(.lastName), firstName: t(.firstName), email: t(.email))
    }

    /// "Send code": asks the server to text a code to the phone.
    public func sendCode() async {
        guard state.isSendCodeEnabled else { return }
        update { $0.isLoading = true; $0.isSendCodeEnabled = false; $0.errorMessage = nil }
        do {
            try await environment.client.sendRegistrationCode(phone: form.phone)
            update { $0.isLoading = false }
            revalidate()
            onOutcome?(.codeSent(form))
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
            revalidate()
        }
    }

    /// Leaves the form.
    public func back() { onOutcome?(.back) }
}
