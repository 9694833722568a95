import Foundation
import GatehouseAPI
import GatehouseKit

/// The alert-style prompt of the spec (a `UIAlertController` with a text field): asks for an
/// email when the account has none, or for the right one when it is wrong. "Save" is disabled
/// while the field is empty or not an email; saving stores it with `/api/users/change` (which
/// resets `isConfirmed`) and sends the confirmation mail.
@MainActor
public final class EmailPromptViewModel: ScreenModel<EmailPromptViewModel.State> {
    /// Why the prompt is shown.
    public enum Reason: Equatable, Sendable { case missing, wrong(current: String) }

    /// What the prompt shows.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// The explanation under the title.
        public var message: String
        /// The text field's placeholder.
        public var placeholder: String
        /// The email address shown.
        public var email = ""
        /// The text field's content type (email keyboard and autofill).
        public let emailContentType = TextContentType.emailAddress
        /// The label of "Save".
        public var confirmTitle: String
        /// The label of "Cancel".
        public var cancelTitle: String
        /// Whether "Save" can be used: the field holds a valid email and nothing is in flight.
        public var isConfirmEnabled = false
        /// True while a request is in flight: show progress and ignore repeated taps.
        public var isLoading = false
        /// The server's (localized) message for the last failed action; cleared by the next edit.
        public var errorMessage: String?
    }

    /// How the prompt ends.
    public enum Outcome: Equatable, Sendable {
        /// Saved and the confirmation mail sent.
        case saved(PhoneUser)
        case cancelled
    }

    /// Called when the user leaves this screen; the coordinator navigates.
    public var onOutcome: ((Outcome) -> Void)?
    /// Why the prompt is shown (no email, or a wrong one).
    public let reason: Reason
    private let environment: PhoneAccountsEnvironment

    /// Creates the screen's model.
    public init(environment: PhoneAccountsEnvironment, reason: Reason) {
        self.environment = environment
        self.reason = reason
        let l = environment.localizer
        let key = reason == .missing ? "missing" : "wrong"
        super.init(state: State(title: l("prompt.\(key).title"), message: l("prompt.\(key).message"), placeholder: l("prompt.field"),
                                confirmTitle: l("prompt.confirm"), cancelTitle: l("prompt.cancel")))
        if case .wrong(let current) = reason { setEmail(current) }
    }

    /// Sets the address as the user types; "Save" is enabled only for a valid email.
    public func setEmail(_ text: String) {
        update {
            $0.email = text
            $0.errorMessage = nil
            $0.isConfirmEnabled = InputRules.isEmail(text) && !$0.isLoading
        }
    }

    /// "Save".
    public func confirm() async {
        guard state.isConfirmEnabled else { return }
        update { $0.isLoading = true; $0.isConfirmEnabled = false; $0.errorMessage = nil }
        do {
            try await environment.client.changeProfile(PhoneProfileChange(email: state.email.trimmingCharacters(in: .whitespaces)))
            do {
                try await environment.client.sendConfirmationEmail()
            } catch GatehouseClientError.rateLimited {
                // A mail went out moments ago; the new address gets one once the cooldown ends.
            }
            let user = try await environment.client.currentUser()
            update { $0.isLoading = false }
            onOutcome?(.saved(user))
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
            setEmail(state.email)
        }
    }

    /// "Cancel".
    public func cancel() { onOutcome?(.cancelled) }
}
