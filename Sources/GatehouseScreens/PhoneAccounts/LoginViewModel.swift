import Foundation
import GatehouseKit

/// Login with a phone (any format), login or email and a password; afterwards the account's
/// category decides the next screen.
@MainActor
public final class LoginViewModel: ScreenModel<LoginViewModel.State> {
    /// What the login screen shows.
    public struct State: Equatable, Sendable {
        public var title: String
        public var loginLabel: String
        public var passwordLabel: String
        public var login = ""
        public var password = ""
        public let loginContentType = TextContentType.username
        public let passwordContentType = TextContentType.password
        public var submitTitle: String
        public var forgotTitle: String
        public var isSubmitEnabled = false
        public var isLoading = false
        public var errorMessage: String?
    }

    /// Where the user goes from here.
    public enum Outcome: Equatable, Sendable {
        case loggedIn(AccountDestination)
        case restorePassword
        case back
    }

    public var onOutcome: ((Outcome) -> Void)?
    private let environment: PhoneAccountsEnvironment

    public init(environment: PhoneAccountsEnvironment, login: String = "") {
        self.environment = environment
        let l = environment.localizer
        super.init(state: State(title: l("login.title"), loginLabel: l("login.login"), passwordLabel: l("login.password"),
                                submitTitle: l("login.submit"), forgotTitle: l("login.forgot")))
        if !login.isEmpty { setLogin(login) }
    }

    public func setLogin(_ text: String) {
        update { $0.login = text; $0.errorMessage = nil }
        refreshEnabled()
    }

    public func setPassword(_ text: String) {
        update { $0.password = text; $0.errorMessage = nil }
        refreshEnabled()
    }

    private func refreshEnabled() {
        update { $0.isSubmitEnabled = !$0.login.trimmingCharacters(in: .whitespaces).isEmpty && !$0.password.isEmpty && !$0.isLoading }
    }

    /// "Log in".
    public func submit() async {
        guard state.isSubmitEnabled else { return }
        update { $0.isLoading = true; $0.isSubmitEnabled = false; $0.errorMessage = nil }
        do {
            try await environment.client.login(login: state.login.trimmingCharacters(in: .whitespaces), password: state.password)
            let destination = try await environment.destinationAfterLogin(sendConfirmation: true)
            update { $0.isLoading = false; $0.password = "" }
            refreshEnabled()
            onOutcome?(.loggedIn(destination))
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
            refreshEnabled()
        }
    }

    /// "Forgot password?".
    public func forgotPassword() { onOutcome?(.restorePassword) }
    /// Back to the start screen.
    public func back() { onOutcome?(.back) }
}
