import Foundation
import GatehouseAPI
import GatehouseKit

/// "Choose your tag": the messenger's step for an account that has none — one a provider made (Sign in with Apple or
/// Google asks for no tag, and the messenger's people find each other by it). The tag is checked as it is typed, like
/// registration's; "Continue" saves it and enters the messenger; "Sign out" ends the session and goes back to login.
/// The messenger shows it whenever it is entered with such an account, so an app closed on this screen opens on it.
@MainActor
public final class ChooseTagViewModel: ScreenModel<ChooseTagViewModel.State> {
    /// What the screen draws.
    public struct State: Equatable, Sendable {
        /// "Choose your tag".
        public var title: String
        /// Why it is asked: people find you by it.
        public var message: String
        /// The tag field's label.
        public var tagLabel: String
        /// The tag field's content type.
        public let tagContentType = TextContentType.username
        /// The tag as typed.
        public var tag = ""
        /// Whether the tag typed can be had.
        public var tagStatus: TagStatus = .empty
        /// The line under the field: the rule it breaks, "Checking…", free or taken.
        public var tagMessage: String?
        /// "Continue".
        public var continueTitle: String
        /// "Sign out".
        public var signOutTitle: String
        /// Whether "Continue" works now: a free tag, nothing in flight.
        public var isContinueEnabled = false
        /// A call is in flight.
        public var isLoading = false
        /// Why the last attempt failed, in the person's language.
        public var errorMessage: String?
    }

    /// Where the screen leads.
    public enum Outcome: Equatable, Sendable {
        /// The tag is saved: the account as it is now.
        case chosen(Account)
        /// The person signed out instead.
        case signedOut
    }

    /// Called with the outcome; the flow acts on it.
    public var onOutcome: ((Outcome) -> Void)?
    private let environment: MessengerEnvironment
    private let tagCheck: TagCheck

    /// The screen for `account` (its names are kept; only the tag is asked).
    public init(environment: MessengerEnvironment, account: Account) {
        self.environment = environment
        self.tagCheck = TagCheck(environment: environment)
        let l = environment.localizer
        let name = [account.firstName, account.lastName].compactMap { $0 }.joined(separator: " ")
        super.init(state: State(title: l("messenger.chooseTag.title"),
                                message: name.isEmpty ? l("messenger.chooseTag.message") : l("messenger.chooseTag.messageNamed", name),
                                tagLabel: l("messenger.registration.tag"), continueTitle: l("messenger.registration.continue"),
                                signOutTitle: l("messenger.chooseTag.signOut")))
    }

    private var canonicalTag: String { TagRule.canonical(state.tag) }

    /// The tag as typed: checked against the rule at once and with the server after a pause.
    public func setTag(_ text: String) {
        update { $0.tag = text; $0.errorMessage = nil }
        tagCheck.schedule(canonicalTag, current: { [weak self] in self?.canonicalTag }) { [weak self] status, message in
            self?.update { $0.tagStatus = status; $0.tagMessage = message }
            self?.revalidate()
        }
        revalidate()
    }

    /// Waits for the tag check in flight (a terminal or a test that wants the answer before drawing).
    public func settleTagCheck() async { await tagCheck.settle() }

    /// "Continue": saves the tag; a tag taken meanwhile is said under the field.
    public func submit() async {
        guard state.isContinueEnabled else { return }
        update { $0.isLoading = true; $0.errorMessage = nil }
        revalidate()
        do {
            let account = try await environment.client.updateProfile(ProfileUpdate(tag: .some(canonicalTag)))
            update { $0.isLoading = false }
            onOutcome?(.chosen(account))
        } catch let error as GatehouseClientError where error.code == .tagTaken || error.code == .invalidTag {
            update { $0.isLoading = false; $0.tagStatus = error.code == .tagTaken ? .taken : .invalid; $0.tagMessage = error.message }
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
        }
        revalidate()
    }

    /// "Sign out": the session ends (on the server when it can be reached) and the flow goes back to login.
    public func signOut() async {
        tagCheck.cancel()
        try? await environment.client.logout()
        onOutcome?(.signedOut)
    }

    private func revalidate() {
        update { $0.isContinueEnabled = $0.tagStatus == .available && !$0.isLoading }
    }
}
