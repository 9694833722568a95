import Foundation
import GatehouseKit

/// Login with a phone (any format), login or email and a password; afterwards the account's
/// category decides the next screen.
@MainActor
public final class LoginViewModel: ScreenModel<LoginViewModel.State> {
    /// What the login screen shows: the login form.
    public typealias State = LoginForm

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
