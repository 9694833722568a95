import Foundation
import GatehouseKit

/// Login with a phone (any format), login or email and a password; afterwards the account's
/// category decides the next screen.
@MainActor
public final class LoginViewModel: ScreenModel<LoginViewModel.State> {
    /// What the login screen shows.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// The login field's label.
        public var loginLabel: String
        /// The password field's label.
        public var passwordLabel: String
        /// The login typed.
        public var login = ""
        /// The password as typed.
        public var password = ""
        /// The login field's content type.
        public let loginContentType = TextContentType.username
        /// The password field's content type (secure entry).
        public let passwordContentType = TextContentType.password
        /// The label of the main action.
        public var submitTitle: String
        /// The label of "Forgot password?".
        public var forgotTitle: String
        /// Whether the main action can be used now (the input is valid and nothing is in flight).
        public var isSubmitEnabled = false
        /// True while a request is in flight: show progress and ignore repeated taps.
        public var isLoading = false
        /// The server's (localized) message for the last failed action; cleared by the next edit.
        public var errorMessage: String?
    }

    /// Where the user goes from here.
    public enum Outcome: Equatable, Sendable {
        /// Logged in: where the account goes next.
        case loggedIn(AccountDestination)
        /// "Forgot password?", with what was typed in the login field (it pre-fills the restore screen).
        case restorePassword(login: String)
        /// Back to the previous screen.
        case back
    }

    /// Called when the user leaves this screen; the coordinator navigates.
    public var onOutcome: ((Outcome) -> Void)?
    private let environment: PhoneAccountsEnvironment

    /// Creates the screen's model.
    public init(environment: PhoneAccountsEnvironment, login: String = "") {
        self.environment = environment
        let l = environment.localizer
        super.init(state: State(title: l("login.title"), loginLabel: l("login.login"), passwordLabel: l("login.password"),
                                submitTitle: l("login.submit"), forgotTitle: l("login.forgot")))
        if !login.isEmpty { setLogin(login) }
    }

    /// Sets the login field (phone in any format, login or email) as the user types.
    public func setLogin(_ text: String) { editLogin(text) }

    /// Sets the password as the user types.
    public func setPassword(_ text: String) { editPassword(text) }

    /// "Log in".
    public func submit() async {
        guard state.isSubmitEnabled else { return }
        update { $0.isLoading = true; $0.isSubmitEnabled = false; $0.errorMessage = nil }
        do {
            try await environment.client.login(login: state.login.trimmingCharacters(in: .whitespaces), password: state.password)
            let destination = try await environment.destinationAfterLogin(sendConfirmation: true)
            update { $0.isLoading = false; $0.password = "" }
            refreshLoginEnabled()
            onOutcome?(.loggedIn(destination))
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
            refreshLoginEnabled()
        }
    }

    /// "Forgot password?".
    public func forgotPassword() { onOutcome?(.restorePassword(login: state.login.trimmingCharacters(in: .whitespaces))) }
    /// Back to the start screen.
    public func back() { onOutcome?(.back) }
}
