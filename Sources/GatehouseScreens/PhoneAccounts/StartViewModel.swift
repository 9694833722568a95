import Foundation

/// The first screen: "Register" and "Log in".
@MainActor
public final class StartViewModel: ScreenModel<StartViewModel.State> {
    /// What the start screen shows.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// The label of "Register".
        public var registerTitle: String
        /// The label of "Log in".
        public var loginTitle: String
        /// A notice from where the user came from (the account was just deleted), or nil.
        public var notice: String?
    }

    /// Where the user goes from here.
    public enum Outcome: Equatable, Sendable {
        /// "Register".
        case register
        /// "Log in".
        case login
    }

    /// Called when the user picks an action; the coordinator navigates.
    public var onOutcome: ((Outcome) -> Void)?

    /// Creates the screen's model.
    public init(environment: PhoneAccountsEnvironment, notice: String? = nil) {
        let l = environment.localizer
        super.init(state: State(title: l("start.title"), registerTitle: l("start.register"), loginTitle: l("start.login"), notice: notice))
    }

    /// "Register".
    public func register() { onOutcome?(.register) }
    /// "Log in".
    public func login() { onOutcome?(.login) }
}
