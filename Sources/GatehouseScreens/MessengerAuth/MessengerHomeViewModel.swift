import Foundation
import GatehouseAPI
import GatehouseKit

/// The signed-in side as far as the authorization epic goes: the account (name, tag, email) and
/// "Log out", which asks again before it logs out (the profile epic's rule) and then returns to
/// the login screen.
@MainActor
public final class MessengerHomeViewModel: ScreenModel<MessengerHomeViewModel.State> {
    /// One labelled line of the account card.
    public struct Row: Equatable, Sendable {
        /// The row's label.
        public var label: String
        /// The value shown.
        public var value: String
        /// Creates a row.
        public init(label: String, value: String) {
            self.label = label
            self.value = value
        }
    }

    /// The "Log out?" question, shown over the screen (an alert on iOS).
    public struct LogoutConfirmation: Equatable, Sendable {
        /// The question.
        public var title: String
        /// What logging out means.
        public var message: String
        /// The label of the destructive "Log out".
        public var confirmTitle: String
        /// The label of "Cancel".
        public var cancelTitle: String
    }

    /// What the screen shows.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// The account shown.
        public var account: Account
        /// The account, one labelled line each.
        public var rows: [Row]
        /// The label of "Log out".
        public var logoutTitle: String
        /// Set while the "Log out?" question is shown.
        public var logoutConfirmation: LogoutConfirmation?
        /// True while a request is in flight: show progress and ignore repeated taps.
        public var isLoading = false
        /// The message for the last failed action.
        public var errorMessage: String?
    }

    /// Where the user goes from here.
    public enum Outcome: Equatable, Sendable {
        /// Logged out (or the session ended elsewhere): back to the login screen.
        case loggedOut
    }

    /// Called when the user leaves this screen; the coordinator navigates.
    public var onOutcome: ((Outcome) -> Void)?
    private let environment: MessengerAuthEnvironment

    /// Creates the screen's model for `account`.
    public init(environment: MessengerAuthEnvironment, account: Account) {
        self.environment = environment
        super.init(state: Self.makeState(account, environment.localizer))
    }

    static func makeState(_ account: Account, _ l: Localizer) -> State {
        let name = [account.firstName, account.lastName].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " ")
        var rows = [Row(label: l("messenger.home.name"), value: name.isEmpty ? "—" : name)]
        rows.append(Row(label: l("messenger.home.tag"), value: account.tag.map { "@" + $0 } ?? "—"))
        rows.append(Row(label: l("messenger.home.email"), value: account.email ?? "—"))
        return State(title: l("messenger.home.title"), account: account, rows: rows, logoutTitle: l("messenger.home.logout"))
    }

    /// Reads the account again; a session ended elsewhere goes back to login.
    public func refresh() async {
        update { $0.isLoading = true; $0.errorMessage = nil }
        do {
            let account = try await environment.client.me()
            update { $0 = Self.makeState(account, environment.localizer) }
        } catch GatehouseClientError.sessionExpired {
            update { $0.isLoading = false }
            onOutcome?(.loggedOut)
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
        }
    }

    /// "Log out": asks first.
    public func requestLogout() {
        let l = environment.localizer
        update {
            $0.logoutConfirmation = LogoutConfirmation(title: l("messenger.home.logoutQuestion"), message: l("messenger.home.logoutMessage"),
                                                       confirmTitle: l("messenger.home.logoutConfirm"), cancelTitle: l("messenger.home.logoutCancel"))
        }
    }

    /// "Cancel" on the question: stays signed in.
    public func cancelLogout() {
        update { $0.logoutConfirmation = nil }
    }

    /// "Log out" on the question: ends the session on the server and forgets the token here,
    /// then back to login. Without a network the token is still forgotten (it dies at its expiry).
    public func confirmLogout() async {
        guard state.logoutConfirmation != nil, !state.isLoading else { return }
        update { $0.isLoading = true }
        try? await environment.client.logout()
        update { $0.isLoading = false; $0.logoutConfirmation = nil }
        onOutcome?(.loggedOut)
    }
}
