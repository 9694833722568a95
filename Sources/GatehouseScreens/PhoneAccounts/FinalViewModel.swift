import Foundation
import GatehouseAPI
import GatehouseKit

/// The final screen: the account, its confirmation state, and "Log out".
@MainActor
public final class FinalViewModel: ScreenModel<FinalViewModel.State> {
    /// One labelled line of the account card.
    public struct Row: Equatable, Sendable {
        /// The row's label.
        public var label: String
        /// The phone or email typed.
        public var value: String
        /// Creates a row.
        public init(label: String, value: String) {
            self.label = label
            self.value = value
        }
    }

    /// What the screen shows.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// The account, one labelled line each.
        public var rows: [Row]
        /// The spec's `isConfirmed`.
        public var isEmailConfirmed: Bool
        /// "Email confirmed", "Email not confirmed" or "No email".
        public var confirmationText: String
        /// The label of the log-out action.
        public var logoutTitle: String
        /// The label of "Delete account".
        public var deleteAccountTitle: String = ""
        /// The label of "Change email" (a confirmed address too: the server then asks for the password).
        public var changeEmailTitle: String = ""
        /// The account's email as the server shows it (the prompt starts from it), or nil.
        public var email: String?
        /// True while a request is in flight: show progress and ignore repeated taps.
        public var isLoading = false
        /// The server's (localized) message for the last failed action; cleared by the next edit.
        public var errorMessage: String?
    }

    /// Where the user goes from here; the coordinator acts on it.
    public enum Outcome: Equatable, Sendable {
        /// Logged out: back to the start.
        case loggedOut
        /// "Change email": the coordinator shows the email prompt with the current address.
        case changeEmail(current: String)
        /// "Delete account": its own screen (the password and a confirmation).
        case deleteAccount
    }

    /// Called when the user leaves this screen; the coordinator navigates.
    public var onOutcome: ((Outcome) -> Void)?
    private let environment: PhoneAccountsEnvironment

    /// Creates the screen's model.
    public init(environment: PhoneAccountsEnvironment, user: PhoneUser) {
        self.environment = environment
        super.init(state: Self.makeState(user, environment.localizer))
    }

    static func makeState(_ user: PhoneUser, _ l: Localizer) -> State {
        let name = [user.firstName, user.lastName].compactMap { $0 }.joined(separator: " ")
        var rows = [Row(label: l("final.name"), value: name), Row(label: l("final.login"), value: user.login)]
        if let phone = user.phone { rows.append(Row(label: l("final.phone"), value: phone)) }
        rows.append(Row(label: l("final.email"), value: user.email ?? "—"))
        let confirmation = user.email == nil ? l("final.noEmail") : (user.isConfirmed ? l("final.confirmed") : l("final.unconfirmed"))
        return State(title: l("final.title"), rows: rows, isEmailConfirmed: user.isConfirmed, confirmationText: confirmation,
                     logoutTitle: l("final.logout"), deleteAccountTitle: l("account.delete.item"), changeEmailTitle: l("final.changeEmail"),
                     email: user.email)
    }

    /// Reads the account again.
    public func refresh() async {
        update { $0.isLoading = true; $0.errorMessage = nil }
        do {
            let user = try await environment.client.currentUser()
            update { $0 = Self.makeState(user, environment.localizer) }
        } catch GatehouseClientError.sessionExpired {
            onOutcome?(.loggedOut)
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
        }
    }

    /// "Change email".
    public func changeEmail() { onOutcome?(.changeEmail(current: state.email ?? "")) }

    /// "Delete account".
    public func deleteAccount() { onOutcome?(.deleteAccount) }

    /// "Log out".
    public func logout() async {
        update { $0.isLoading = true }
        await environment.client.logout()
        update { $0.isLoading = false }
        onOutcome?(.loggedOut)
    }
}
