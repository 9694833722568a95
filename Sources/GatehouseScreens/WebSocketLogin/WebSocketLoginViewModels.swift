import Foundation
import GatehouseAPI
import GatehouseKit

/// What the WebSocket-login screens need.
public struct WebSocketLoginEnvironment: Sendable {
    /// The gateway client.
    public var client: CustomerGatewayClient
    /// The strings.
    public var localizer: Localizer
    /// The same server's `/v1` client, for "Continue with Apple" and "Continue with Google" (docs/social-login.md):
    /// the gateway's protocol signs in by password only, and a provider's session is an ordinary Gatehouse session,
    /// as the gateway's token is. Without it the login screen has no providers' buttons.
    public var accounts: AccountsClient?

    /// Creates an environment.
    public init(client: CustomerGatewayClient, localizer: Localizer = .device, accounts: AccountsClient? = nil) {
        self.client = client
        self.localizer = localizer
        self.accounts = accounts
    }

    /// The expiry as the app screen shows it: `2015-07-15 11:14:30 UTC`.
    func display(_ date: Date) -> String {
        WireDates.iso8601String(from: date).replacingOccurrences(of: "T", with: " ").replacingOccurrences(of: "Z", with: " UTC")
    }
}

/// The spec's login screen: an email field validated as you type, a masked password field, an
/// error output showing the gateway's `error_description`, and the "Login" button; with the environment's `/v1`
/// client, the buttons of the providers the server takes (``providers``).
@MainActor
public final class WebSocketLoginViewModel: ScreenModel<WebSocketLoginViewModel.State> {
    /// What the login screen shows.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// The email field's label.
        public var emailLabel: String
        /// The password field's label.
        public var passwordLabel: String
        /// The email typed.
        public var email = ""
        /// The password typed; drawn masked.
        public var password = ""
        /// The email field's content type.
        public let emailContentType = TextContentType.emailAddress
        /// The password field's content type (secure entry).
        public let passwordContentType = TextContentType.password
        /// Shown under the email field while it is not an email address.
        public var emailError: String?
        /// The "Login" button's title.
        public var submitTitle: String
        /// Whether "Login" can be used: a valid email, a password, nothing in flight.
        public var isSubmitEnabled = false
        /// True while the login is in flight.
        public var isLoading = false
        /// The error output field: the gateway's `error_description`, or a connection problem.
        public var errorOutput: String?
    }

    /// Where the user goes from here.
    public enum Outcome: Equatable, Sendable {
        /// Logged in: show the app screen for this session.
        case loggedIn(GatehouseSession)
    }

    /// Called when the user leaves this screen; the coordinator navigates.
    public var onOutcome: ((Outcome) -> Void)?
    /// "Continue with Apple" and "Continue with Google" when the environment has a `/v1` client (the buttons appear
    /// once ``ProviderSignInViewModel/load()`` has heard which the server takes; the flow asks on showing the screen).
    /// The session a provider opens is kept where the gateway's token is, so the next launch opens the app screen.
    /// This app has no second step: an account with the authenticator app on is told so, as the gateway tells it.
    public let providers: ProviderSignInViewModel?
    private let environment: WebSocketLoginEnvironment

    /// Creates the screen's model.
    public init(environment: WebSocketLoginEnvironment) {
        self.environment = environment
        let l = environment.localizer
        providers = environment.accounts.map { ProviderSignInViewModel(client: $0, localizer: l, device: nil) }
        super.init(state: State(title: l("wslogin.title"), emailLabel: l("wslogin.email"), passwordLabel: l("wslogin.password"), submitTitle: l("wslogin.submit")))
        providers?.onOutcome = { [weak self] outcome in self?.providerSignedIn(outcome) }
    }

    private func providerSignedIn(_ outcome: ProviderSignInViewModel.Outcome) {
        switch outcome {
        case .authenticated:
            guard let session = environment.accounts?.session else { return }
            // The gateway client's store is where launch looks (the app may have given both clients one store).
            try? environment.client.sessionStore.save(session)
            onOutcome?(.loggedIn(session))
        case .secondFactorRequired:
            update { $0.errorOutput = environment.localizer("wslogin.secondFactor") }
        }
    }

    /// Sets the email as the user types, validating it.
    public func setEmail(_ text: String) {
        let valid = InputRules.isEmail(text)
        update {
            $0.email = text
            $0.emailError = text.isEmpty || valid ? nil : environment.localizer("wslogin.emailInvalid")
            $0.errorOutput = nil
        }
        refresh()
    }

    /// Sets the password as the user types.
    public func setPassword(_ text: String) {
        update { $0.password = text; $0.errorOutput = nil }
        refresh()
    }

    private func refresh() {
        update { $0.isSubmitEnabled = InputRules.isEmail($0.email) && !$0.password.isEmpty && !$0.isLoading }
    }

    /// "Login".
    public func submit() async {
        guard state.isSubmitEnabled else { return }
        update { $0.isLoading = true; $0.isSubmitEnabled = false; $0.errorOutput = nil }
        do {
            let session = try await environment.client.login(email: state.email.trimmingCharacters(in: .whitespaces), password: state.password)
            update { $0.isLoading = false; $0.password = "" }
            refresh()
            onOutcome?(.loggedIn(session))
        } catch let error as CustomerGatewayError {
            update { $0.isLoading = false; $0.errorOutput = error.errorDescription }
            refresh()
        } catch {
            update { $0.isLoading = false; $0.errorOutput = error.localizedDescription }
            refresh()
        }
    }
}

/// The spec's app screen: an information field with the success and the token's expiry.
@MainActor
public final class WebSocketAppViewModel: ScreenModel<WebSocketAppViewModel.State> {
    /// What the app screen shows.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// The information field: success and `api_token_expiration_date`.
        public var information: String
        /// The token's expiry.
        public var expiresAt: Date
        /// The log-out action's label.
        public var logoutTitle: String
    }

    /// Where the user goes from here.
    public enum Outcome: Equatable, Sendable {
        /// Logged out: back to the login.
        case loggedOut
    }

    /// Called when the user leaves this screen; the coordinator navigates.
    public var onOutcome: ((Outcome) -> Void)?
    private let environment: WebSocketLoginEnvironment

    /// Creates the screen's model.
    public init(environment: WebSocketLoginEnvironment, session: GatehouseSession) {
        self.environment = environment
        let l = environment.localizer
        super.init(state: State(title: l("wsapp.title"), information: l("wsapp.success", environment.display(session.expiresAt)),
                                expiresAt: session.expiresAt, logoutTitle: l("wsapp.logout")))
    }

    /// Forgets the token (and a provider's session the `/v1` client keeps) and returns to the login screen.
    public func logout() async {
        await environment.client.forgetSession()
        try? environment.accounts?.sessionStore.clear()
        onOutcome?(.loggedOut)
    }
}

/// The two-screen app of `docs/websocket-login.md`: on launch a stored token whose expiry is
/// still in the future opens the app screen; otherwise the login screen.
@MainActor
public final class WebSocketLoginFlow: ScreenModel<WebSocketLoginFlow.State> {
    /// A screen and its view model.
    public enum Screen: Equatable {
        /// Shows ``WebSocketLoginViewModel``.
        case login(WebSocketLoginViewModel)
        /// Shows ``WebSocketAppViewModel``.
        case app(WebSocketAppViewModel)

        /// Two screens are equal when they show the same view model.
        public static func == (a: Screen, b: Screen) -> Bool {
            switch (a, b) {
            case let (.login(x), .login(y)): x === y
            case let (.app(x), .app(y)): x === y
            default: false
            }
        }
    }

    /// What is on screen.
    public struct State: Equatable {
        /// The screen on display.
        public var screen: Screen
    }

    /// The client and strings shared by both screens.
    public let environment: WebSocketLoginEnvironment

    /// Creates the flow on the login screen; call ``launch()`` to honour a stored token.
    public init(environment: WebSocketLoginEnvironment) {
        self.environment = environment
        let login = WebSocketLoginViewModel(environment: environment)
        super.init(state: State(screen: .login(login)))
        wire(login)
    }

    /// Shows the app screen for a stored, unexpired token, else the login screen.
    public func launch() {
        if let session = environment.client.restoreSession() { showApp(session) } else { showLogin() }
    }

    private func wire(_ login: WebSocketLoginViewModel) {
        login.onOutcome = { [unowned self] outcome in
            if case .loggedIn(let session) = outcome { showApp(session) }
        }
    }

    private func showLogin() {
        let login = WebSocketLoginViewModel(environment: environment)
        wire(login)
        update { $0.screen = .login(login) }
        // The providers' buttons, once the server has said which it takes.
        if let providers = login.providers { Task { await providers.load() } }
    }

    private func showApp(_ session: GatehouseSession) {
        let app = WebSocketAppViewModel(environment: environment, session: session)
        app.onOutcome = { [unowned self] _ in showLogin() }
        update { $0.screen = .app(app) }
    }
}
