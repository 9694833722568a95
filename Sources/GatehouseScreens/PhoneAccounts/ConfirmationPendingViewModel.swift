import Foundation
import GatehouseAPI
import GatehouseKit

/// "Confirm your email": the mail went out; resend it, change a wrong address, or check again.
@MainActor
public final class ConfirmationPendingViewModel: ScreenModel<ConfirmationPendingViewModel.State> {
    /// What the screen shows.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// The email address shown.
        public var email: String
        /// The explanation under the title.
        public var message: String
        /// The label of the resend action.
        public var resendTitle: String
        /// The label of the "change email" action.
        public var changeEmailTitle: String
        /// The label of the "I have confirmed it" action.
        public var checkTitle: String
        /// The label of the log-out action.
        public var logoutTitle: String
        /// True while a request is in flight: show progress and ignore repeated taps.
        public var isLoading = false
        /// A neutral notice ("Sent again to …", "… is not confirmed yet").
        public var infoMessage: String?
        /// The server's (localized) message for the last failed action; cleared by the next edit.
        public var errorMessage: String?
    }

    /// Where the user goes from here.
    public enum Outcome: Equatable, Sendable {
        /// The address is confirmed: the user as they now are.
        case confirmed(PhoneUser)
        /// Open the change-email prompt for this address.
        case changeEmail(current: String)
        /// Logged out: back to the start.
        case loggedOut
    }

    /// Called when the user leaves this screen; the coordinator navigates.
    public var onOutcome: ((Outcome) -> Void)?
    private let environment: PhoneAccountsEnvironment

    /// Creates the screen's model.
    /// - Parameter mailSent: whether a confirmation mail just went out (after login or sign-up),
    ///   or the screen was reached without one (a relaunch).
    public init(environment: PhoneAccountsEnvironment, user: PhoneUser, mailSent: Bool = true) {
        self.environment = environment
        let l = environment.localizer
        let email = user.email ?? ""
        super.init(state: State(title: l("pending.title"), email: email, message: l(mailSent ? "pending.sent" : "pending.notSent", email), resendTitle: l("pending.resend"),
                                changeEmailTitle: l("pending.change"), checkTitle: l("pending.check"), logoutTitle: l("pending.logout")))
    }

    /// "Send the mail again".
    public func resend() async {
        update { $0.isLoading = true; $0.infoMessage = nil; $0.errorMessage = nil }
        do {
            try await environment.client.sendConfirmationEmail()
            update { $0.isLoading = false; $0.infoMessage = environment.localizer("pending.resent", $0.email) }
        } catch GatehouseClientError.sessionExpired {
            update { $0.isLoading = false }
            onOutcome?(.loggedOut)
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
        }
    }

    /// "Wrong email? Change it".
    public func changeEmail() { onOutcome?(.changeEmail(current: state.email)) }

    /// "I have confirmed it": reads the account again.
    public func checkConfirmation() async {
        update { $0.isLoading = true; $0.infoMessage = nil; $0.errorMessage = nil }
        do {
            let user = try await environment.client.currentUser()
            update { $0.isLoading = false }
            if user.isConfirmed {
                onOutcome?(.confirmed(user))
            } else {
                update { $0.email = user.email ?? ""; $0.infoMessage = environment.localizer("pending.stillUnconfirmed", $0.email) }
            }
        } catch GatehouseClientError.sessionExpired {
            update { $0.isLoading = false }
            onOutcome?(.loggedOut)
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
        }
    }

    /// The address was changed from the prompt: show the new one.
    public func emailChanged(to user: PhoneUser) {
        let email = user.email ?? ""
        update { $0.email = email; $0.message = environment.localizer("pending.sent", email); $0.infoMessage = nil; $0.errorMessage = nil }
    }

    /// "Log out".
    public func logout() async {
        await environment.client.logout()
        onOutcome?(.loggedOut)
    }
}
