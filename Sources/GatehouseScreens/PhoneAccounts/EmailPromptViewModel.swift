import Foundation
import GatehouseAPI
import GatehouseKit

/// The alert-style prompt of the spec (a `UIAlertController` with a text field): asks for an
/// email when the account has none, or for the right one when it is wrong. "Save" is disabled
/// while the field is empty or not an email; saving stores it with `/api/users/change` (which
/// resets `isConfirmed`) and sends the confirmation mail. When the server asks for the current
/// password (the address is a way into the account: a confirmed one, or a session opened more than
/// a few minutes ago), the prompt shows a password field and "Save" sends it along.
@MainActor
public final class EmailPromptViewModel: ScreenModel<EmailPromptViewModel.State> {
    /// Why the prompt is shown.
    public enum Reason: Equatable, Sendable {
        /// The account has no address yet.
        case missing
        /// The address on file could not be used (the current one).
        case wrong(current: String)
    }

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
        /// Whether the password field is shown: the server asked for the current password.
        public var isPasswordRequested = false
        /// The password field's content (secure entry).
        public var password = ""
        /// The password field's placeholder.
        public var passwordPlaceholder: String
        /// The password field's content type (password autofill).
        public let passwordContentType = TextContentType.password
        /// Whether "Save" can be used: the field holds a valid email (and the password, when asked
        /// for) and nothing is in flight.
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
        /// The person cancelled.
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
                                confirmTitle: l("prompt.confirm"), cancelTitle: l("prompt.cancel"), passwordPlaceholder: l("prompt.password")))
        if case .wrong(let current) = reason { setEmail(current) }
    }

    /// Sets the address as the user types; "Save" is enabled only for a valid email.
    public func setEmail(_ text: String) {
        update {
            $0.email = text
            $0.errorMessage = nil
            $0.isConfirmEnabled = Self.canConfirm($0)
        }
    }

    /// Sets the current password (shown once the server asked for it).
    public func setPassword(_ text: String) {
        update {
            $0.password = text
            $0.errorMessage = nil
            $0.isConfirmEnabled = Self.canConfirm($0)
        }
    }

    private static func canConfirm(_ state: State) -> Bool {
        InputRules.isEmail(state.email) && !state.isLoading && (!state.isPasswordRequested || !state.password.isEmpty)
    }

    /// "Save".
    public func confirm() async {
        guard state.isConfirmEnabled else { return }
        update { $0.isLoading = true; $0.isConfirmEnabled = false; $0.errorMessage = nil }
        do {
            let password = state.isPasswordRequested ? state.password : nil
            try await environment.client.changeProfile(PhoneProfileChange(email: state.email.trimmingCharacters(in: .whitespaces), currentPassword: password))
            do {
                try await environment.client.sendConfirmationEmail()
            } catch GatehouseClientError.rateLimited {
                // A mail went out moments ago; the new address gets one once the cooldown ends.
            }
            let user = try await environment.client.currentUser()
            update { $0.isLoading = false }
            onOutcome?(.saved(user))
        } catch {
            let message = environment.message(for: error)
            let asksForPassword = (error as? GatehouseClientError)?.code == .currentPasswordRequired
            update { $0.isLoading = false; $0.isPasswordRequested = $0.isPasswordRequested || asksForPassword }
            setEmail(state.email)
            update { $0.errorMessage = message }
        }
    }

    /// "Cancel".
    public func cancel() { onOutcome?(.cancelled) }
}
