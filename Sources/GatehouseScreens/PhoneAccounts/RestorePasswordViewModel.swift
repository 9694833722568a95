import Foundation
import GatehouseAPI
import GatehouseKit

/// Restore password: a phone (the new password comes by SMS) or an email.
@MainActor
public final class RestorePasswordViewModel: ScreenModel<RestorePasswordViewModel.State> {
    /// How the new password travels.
    public enum Method: String, Equatable, Sendable, CaseIterable {
        /// By SMS to the phone.
        case sms
        /// By mail.
        case email
    }

    /// What the screen shows.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// How the new password travels.
        public var method: Method = .sms
        /// The labels of the two methods.
        public var methodTitles: [Method: String]
        /// The input field's label.
        public var fieldLabel: String
        /// The phone or email typed.
        public var value = ""
        /// The input field's content type (phone or email keyboard and autofill).
        public var fieldContentType = TextContentType.telephoneNumber
        /// The label of the main action.
        public var submitTitle: String
        /// The label of the "back to login" action.
        public var backTitle: String
        /// Whether the main action can be used now (the input is valid and nothing is in flight).
        public var isSubmitEnabled = false
        /// True while a request is in flight: show progress and ignore repeated taps.
        public var isLoading = false
        /// The server's (localized) message for the last failed action; cleared by the next edit.
        public var errorMessage: String?
        /// Set once the password went out; the screen then offers only "Back to login".
        public var successMessage: String?
    }

    /// Where the user goes from here; the coordinator acts on it.
    public enum Outcome: Equatable, Sendable {
        /// Back to login, with the identifier pre-filled.
        case backToLogin(login: String)
    }

    /// Called when the user leaves this screen; the coordinator navigates.
    public var onOutcome: ((Outcome) -> Void)?
    private let environment: PhoneAccountsEnvironment

    /// Creates the screen's model. `prefill`: what the login screen had (an email chooses the
    /// email method, anything else is offered as the phone).
    public init(environment: PhoneAccountsEnvironment, prefill: String = "") {
        self.environment = environment
        let l = environment.localizer
        super.init(state: State(title: l("restore.title"), methodTitles: [.sms: l("restore.bySMS"), .email: l("restore.byEmail")],
                                fieldLabel: l("restore.phone"), submitTitle: l("restore.submit"), backTitle: l("restore.back")))
        if prefill.contains("@") { setMethod(.email) }
        if !prefill.isEmpty { setValue(prefill) }
    }

    /// Switches between restoring by SMS and by email.
    public func setMethod(_ method: Method) {
        let l = environment.localizer
        update {
            $0.method = method
            $0.fieldLabel = method == .sms ? l("restore.phone") : l("restore.email")
            $0.fieldContentType = method == .sms ? .telephoneNumber : .emailAddress
            $0.errorMessage = nil
        }
        setValue(state.value)
    }

    /// Sets the phone or email as the user types.
    public func setValue(_ text: String) {
        update {
            $0.value = text
            $0.errorMessage = nil
            let valid = $0.method == .sms ? InputRules.isPhone(text) : InputRules.isEmail(text)
            $0.isSubmitEnabled = valid && !$0.isLoading && $0.successMessage == nil
        }
    }

    /// "Send a new password".
    public func submit() async {
        guard state.isSubmitEnabled else { return }
        let value = state.value.trimmingCharacters(in: .whitespaces)
        update { $0.isLoading = true; $0.isSubmitEnabled = false; $0.errorMessage = nil }
        do {
            switch state.method {
            case .sms: try await environment.client.restorePassword(.phone(value), viaSMS: true)
            case .email: try await environment.client.restorePassword(.email(value), viaSMS: false)
            }
            let key = state.method == .sms ? "restore.sentSMS" : "restore.sentEmail"
            update { $0.isLoading = false; $0.successMessage = environment.localizer(key, value) }
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
            setValue(state.value)
        }
    }

    /// "Back to login".
    public func backToLogin() { onOutcome?(.backToLogin(login: state.value.trimmingCharacters(in: .whitespaces))) }
}
