import Foundation
import GatehouseAPI
import GatehouseKit

/// The messenger's launch screen: a stored, unexpired token goes straight into the messenger
/// once `GET /v1/me` accepts it; no token, an expired one, or one the server refuses (401)
/// goes to the login screen. Without a network, the account signed in last goes into the
/// messenger with what the device saved (offline); only with nothing saved does the screen say
/// so and offer to try again.
@MainActor
public final class SplashViewModel: ScreenModel<SplashViewModel.State> {
    /// What the splash screen shows.
    public struct State: Equatable, Sendable {
        /// The app's name.
        public var title: String
        /// "Checking your session…" while the token is being checked.
        public var progressMessage: String?
        /// True while the token is being checked: show progress.
        public var isLoading = false
        /// Why the check could not be made (no network, server failure).
        public var errorMessage: String?
        /// The label of "Try again".
        public var retryTitle: String
        /// Whether "Try again" can be used (the check failed for a reason other than the token).
        public var isRetryEnabled = false
    }

    /// Where the user goes from here.
    public enum Outcome: Equatable, Sendable {
        /// The token is good: into the messenger with this account.
        case authenticated(Account)
        /// No network, but the device has the messenger of the account signed in last: into it, offline.
        case offline(Account)
        /// No usable token: the login screen.
        case login
    }

    /// Called when the user leaves this screen; the coordinator navigates.
    public var onOutcome: ((Outcome) -> Void)?
    private let environment: MessengerEnvironment

    /// Creates the screen's model.
    public init(environment: MessengerEnvironment) {
        self.environment = environment
        let l = environment.localizer
        super.init(state: State(title: l("messenger.splash.title"), retryTitle: l("messenger.splash.retry")))
    }

    /// Checks the stored token (call when the screen appears).
    public func start() async {
        guard !state.isLoading else { return }
        // An expired token is forgotten here without a round trip.
        guard environment.client.restoreSession() != nil else {
            onOutcome?(.login)
            return
        }
        update {
            $0.isLoading = true
            $0.isRetryEnabled = false
            $0.errorMessage = nil
            $0.progressMessage = environment.localizer("messenger.splash.checking")
        }
        do {
            let account = try await environment.client.me()
            update { $0.isLoading = false; $0.progressMessage = nil }
            onOutcome?(.authenticated(account))
        } catch GatehouseClientError.sessionExpired {
            // The client has already forgotten the refused token.
            update { $0.isLoading = false; $0.progressMessage = nil }
            onOutcome?(.login)
        } catch GatehouseClientError.notLoggedIn {
            update { $0.isLoading = false; $0.progressMessage = nil }
            onOutcome?(.login)
        } catch {
            if case GatehouseClientError.transport = error, let account = environment.stores.openLast()?.account {
                update { $0.isLoading = false; $0.progressMessage = nil }
                onOutcome?(.offline(account))
                return
            }
            update {
                $0.isLoading = false
                $0.progressMessage = nil
                $0.errorMessage = environment.message(for: error)
                $0.isRetryEnabled = true
            }
        }
    }

    /// "Try again".
    public func retry() async {
        guard state.isRetryEnabled else { return }
        await start()
    }
}
