import Foundation
import GatehouseAPI
import GatehouseKit

/// The messenger's login screen: a login (an email or a tag) and a password, with "Forgot
/// password", "Register" and "Log in". A wrong password shows the server's message and the
/// user stays; a right one stores the token and goes into the messenger.
@MainActor
public final class MessengerLoginViewModel: ScreenModel<MessengerLoginViewModel.State> {
    /// What the login screen shows.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// The login field's label.
        public var loginLabel: String
        /// The password field's label.
        public var passwordLabel: String
        /// The login typed: an email or a tag (with or without `@`).
        public var login = ""
        /// The password as typed; drawn masked.
        public var password = ""
        /// The login field's content type.
        public let loginContentType = TextContentType.username
        /// The password field's content type (secure entry, offered from the keychain).
        public let passwordContentType = TextContentType.password
        /// The label of "Log in".
        public var submitTitle: String
        /// The label of "Forgot password".
        public var forgotTitle: String
        /// The label of "Register".
        public var registerTitle: String
        /// Whether "Log in" can be used: both fields filled and nothing in flight.
        public var isSubmitEnabled = false
        /// True while a request is in flight: show progress and ignore repeated taps.
        public var isLoading = false
        /// The server's (localized) message for the last failed action; cleared by the next edit.
        public var errorMessage: String?
        /// A neutral notice, e.g. that the password was just changed.
        public var infoMessage: String?
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
    private let environment: MessengerEnvironment

    /// Creates the screen's model.
    /// - Parameters:
    ///   - login: pre-fills the login field (e.g. the email a password was just reset for).
    ///   - notice: a neutral notice to show, e.g. "Your password has been changed".
    public init(environment: MessengerEnvironment, login: String = "", notice: String? = nil) {
        self.environment = environment
        let l = environment.localizer
        super.init(state: State(title: l("messenger.login.title"), loginLabel: l("messenger.login.login"), passwordLabel: l("messenger.login.password"),
                                submitTitle: l("messenger.login.submit"), forgotTitle: l("messenger.login.forgot"),
                                registerTitle: l("messenger.login.register"), infoMessage: notice))
        if !login.isEmpty { update { $0.login = login } }
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

    /// "Log in".
    public func submit() async {
        guard state.isSubmitEnabled else { return }
        update { $0.isLoading = true; $0.isSubmitEnabled = false; $0.errorMessage = nil; $0.infoMessage = nil }
        do {
            let session = try await environment.client.login(identifier: identifier, password: state.password, device: environment.device)
            update { $0.isLoading = false; $0.password = "" }
            refreshLoginEnabled()
            onOutcome?(.authenticated(session.account))
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
            refreshLoginEnabled()
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
