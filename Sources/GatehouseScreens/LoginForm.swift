import Foundation

/// The one state of a login form (the phone-first app's login screen is this; the messenger's and the wallet's
/// has it, with their register button, notice and second step): a login, a password, and "Log in", usable once both
/// are typed and nothing is in flight.
public struct LoginForm: Equatable, Sendable {
    /// The screen's title.
    public var title: String
    /// The login field's label.
    public var loginLabel: String
    /// The password field's label.
    public var passwordLabel: String
    /// The login typed (a phone in any format, an email, a login or a tag, as the screen takes).
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
    /// Whether "Log in" can be used: both fields filled and nothing in flight.
    public var isSubmitEnabled = false
    /// True while a request is in flight: show progress and ignore repeated taps.
    public var isLoading = false
    /// The server's (localized) message for the last failed action; cleared by the next edit.
    public var errorMessage: String?

    /// A form with its title and labels, nothing typed.
    public init(title: String, loginLabel: String, passwordLabel: String, submitTitle: String, forgotTitle: String) {
        self.title = title
        self.loginLabel = loginLabel
        self.passwordLabel = passwordLabel
        self.submitTitle = submitTitle
        self.forgotTitle = forgotTitle
    }
}

/// A screen's state that holds a login form.
protocol LoginFormState: Equatable {
    var form: LoginForm { get set }
}

extension LoginForm: LoginFormState {
    var form: LoginForm {
        get { self }
        set { self = newValue }
    }
}

extension ScreenModel where State: LoginFormState {
    /// Sets the login as the user types.
    func editLogin(_ text: String) {
        update { $0.form.login = text; $0.form.errorMessage = nil }
        refreshLoginEnabled()
    }

    /// Sets the password as the user types.
    func editPassword(_ text: String) {
        update { $0.form.password = text; $0.form.errorMessage = nil }
        refreshLoginEnabled()
    }

    /// "Log in" works with a login (not only spaces) and a password typed, and nothing in flight.
    func refreshLoginEnabled() {
        update { $0.form.isSubmitEnabled = !$0.form.login.trimmingCharacters(in: .whitespaces).isEmpty && !$0.form.password.isEmpty && !$0.form.isLoading }
    }
}
