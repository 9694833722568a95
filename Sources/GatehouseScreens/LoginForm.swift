import Foundation

/// The state of a login form (the phone-accounts and the messenger login screens): a login, a
/// password, and "Log in", usable once both are typed and nothing is in flight.
protocol LoginFormState: Equatable {
    /// The login typed.
    var login: String { get set }
    /// The password as typed.
    var password: String { get set }
    /// Whether "Log in" can be used.
    var isSubmitEnabled: Bool { get set }
    /// True while a request is in flight.
    var isLoading: Bool { get set }
    /// The message for the last failed action; cleared by the next edit.
    var errorMessage: String? { get set }
}

extension LoginViewModel.State: LoginFormState {}
extension MessengerLoginViewModel.State: LoginFormState {}

extension ScreenModel where State: LoginFormState {
    /// Sets the login as the user types.
    func editLogin(_ text: String) {
        update { $0.login = text; $0.errorMessage = nil }
        refreshLoginEnabled()
    }

    /// Sets the password as the user types.
    func editPassword(_ text: String) {
        update { $0.password = text; $0.errorMessage = nil }
        refreshLoginEnabled()
    }

    /// "Log in" works with a login (not only spaces) and a password typed, and nothing in flight.
    func refreshLoginEnabled() {
        update { $0.isSubmitEnabled = !$0.login.trimmingCharacters(in: .whitespaces).isEmpty && !$0.password.isEmpty && !$0.isLoading }
    }
}
