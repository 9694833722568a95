import Foundation
import GatehouseAPI
import GatehouseKit

/// The final screen: the account, its confirmation state, and "Log out".
@MainActor
public final class FinalViewModel: ScreenModel<FinalViewModel.State> {
    /// One labelled line of the account card.
    public struct Row: Equatable, Sendable {
        public var label: String
        public var value: String
        public init(label: String, value: String) {
            self.label = label
            self.value = value
        }
    }

    /// What the screen shows.
    public struct State: Equatable, Sendable {
        public var title: String
        public var rows: [Row]
        public var isEmailConfirmed: Bool
        public var confirmationText: String
        public var logoutTitle: String
        public var isLoading = false
        public var errorMessage: String?
    }

    public enum Outcome: Equatable, Sendable { case loggedOut }

    public var onOutcome: ((Outcome) -> Void)?
    private let environment: PhoneAccountsEnvironment

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
        return State(title: l("final.title"), rows: rows, isEmailConfirmed: user.isConfirmed, confirmationText: confirmation, logoutTitle: l("final.logout"))
    }

    /// Reads the account again.
    public func refresh() async {
        do {
            let user = try await environment.client.currentUser()
            update { $0 = Self.makeState(user, environment.localizer) }
        } catch GatehouseClientError.sessionExpired {
            onOutcome?(.loggedOut)
        } catch {
            update { $0.errorMessage = environment.message(for: error) }
        }
    }

    /// "Log out".
    public func logout() async {
        update { $0.isLoading = true }
        try? await environment.client.logout()
        update { $0.isLoading = false }
        onOutcome?(.loggedOut)
    }
}
