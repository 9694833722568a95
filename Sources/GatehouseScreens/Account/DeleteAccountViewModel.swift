import Foundation
import GatehouseAPI
import GatehouseKit

/// "Delete account", which every app's profile offers (Apple's App Store Review Guideline
/// 5.1.1(v)): what happens, the current password, and a destructive confirmation. On success every
/// session of the account has ended, this device's too; the screen says until when a password
/// login takes the account back, and the app returns to its sign-in (``Outcome/deleted(erasureAt:)``).
/// A refusal (money in the wallet, an app in use, a wrong password) is shown and the user stays.
///
/// Made with the app's `/v1` client (`identities:`), the screen also offers "Confirm with Apple" (or Google) for each
/// identity linked to the account, after ``load()``: an account a provider made has no password, and a fresh sign-in
/// with its own identity deletes it instead (the app runs the sheet with ``sheetRequest(for:)`` and hands its token to
/// ``confirm(with:idToken:)``).
@MainActor
public final class DeleteAccountViewModel: ScreenModel<DeleteAccountViewModel.State> {
    /// What the screen draws: every title, value and switch of its view.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// What deleting does: sessions end now, the data goes after the grace period, a password
        /// login before then keeps the account.
        public var message: String
        /// The password field's label.
        public var passwordLabel: String
        /// The password as typed; drawn masked.
        public var password = ""
        /// The password field's content type (secure entry, offered from the keychain).
        public let passwordContentType = TextContentType.password
        /// The destructive button's label.
        public var confirmTitle: String
        /// The "cancel" button's title.
        public var cancelTitle: String
        /// "Confirm with Apple": deletes with a fresh sign-in of an identity linked to the account, in place of the
        /// password (none until ``load()``, none without the app's `/v1` client).
        public var confirmButtons: [ProviderSignInViewModel.ProviderButton] = []
        /// Whether the destructive button can be used: a password typed, nothing in flight.
        public var isConfirmEnabled = false
        /// True while the request is in flight.
        public var isLoading = false
        /// The server's (localized) reason for a refusal; cleared by the next edit.
        public var errorMessage: String?
    }

    /// Where the screen leads; the flow acts on it.
    public enum Outcome: Equatable, Sendable {
        /// Deleted: the app forgets the session and returns to its sign-in, saying ``notice``.
        case deleted(erasureAt: Date, notice: String)
        /// "Cancel": back to the profile, nothing changed.
        case cancelled
    }

    /// Called with the screen's outcome (the flow sets it).
    public var onOutcome: ((Outcome) -> Void)?
    private let localizer: Localizer
    private let timeZone: TimeZone
    private let delete: @Sendable (String) async throws -> AccountDeletion
    private let messageForError: (any Error) -> String?
    private let client: AccountsClient?
    private let sheets = ProviderSheets()

    /// The screen, asking `delete` to delete the account, dates shown in `timeZone`.
    ///
    /// - Parameters:
    ///   - delete: the call (``AccountsClient/deleteAccount(currentPassword:)`` of the app's client).
    ///   - message: the app's text for a failed call.
    ///   - identities: the app's `/v1` client, for "Confirm with Apple" (and Google); nil offers the password alone.
    public init(localizer: Localizer, timeZone: TimeZone = .current, delete: @escaping @Sendable (String) async throws -> AccountDeletion,
                message: @escaping (any Error) -> String?, identities: AccountsClient? = nil) {
        self.client = identities
        self.localizer = localizer
        self.timeZone = timeZone
        self.delete = delete
        self.messageForError = message
        let l = localizer
        super.init(state: State(title: l("account.delete.title"), message: l("account.delete.message"), passwordLabel: l("account.delete.password"),
                                confirmTitle: l("account.delete.confirm"), cancelTitle: l("account.delete.cancel")))
    }

    /// The password as typed: "Delete account" works once one is there.
    public func setPassword(_ password: String) {
        update {
            $0.password = password
            $0.errorMessage = nil
            $0.isConfirmEnabled = !password.isEmpty && !$0.isLoading
        }
    }

    /// Reads the identities linked to the account and the providers the server takes, for "Confirm with …"; without
    /// them (no client, no server) the password alone is offered.
    public func load() async {
        guard let client else { return }
        guard let identities = try? await client.identities(), !identities.isEmpty, let providers = try? await client.signInProviders() else { return }
        sheets.set(providers)
        update { $0.confirmButtons = sheets.confirmButtons(linked: Set(identities.map(\.provider)), localizer) }
    }

    /// What to open the provider's sheet with, to confirm the deletion with it (a new nonce for this attempt).
    public func sheetRequest(for provider: IdentityProviderName) -> ProviderSignInViewModel.SheetRequest {
        update { $0.errorMessage = nil }
        return sheets.request(for: provider)
    }

    /// What the sheet gave: deletes the account with this fresh sign-in as the proof (Apple's token revoked after).
    public func confirm(with provider: IdentityProviderName, idToken: String) async {
        guard let client, !state.isLoading, let reauthentication = sheets.reauthentication(provider, idToken: idToken) else { return }
        await perform { try await client.deleteAccount(reauthentication: reauthentication) }
    }

    /// "Cancel": leaves without doing anything.
    public func cancel() { onOutcome?(.cancelled) }

    /// "Delete": asks the server; on success the outcome carries the date the data goes.
    public func confirm() async {
        guard state.isConfirmEnabled else { return }
        let password = state.password
        await perform { [delete] in try await delete(password) }
    }

    private func perform(_ call: @escaping () async throws -> AccountDeletion) async {
        update { $0.isLoading = true; $0.isConfirmEnabled = false; $0.errorMessage = nil }
        do {
            let deletion = try await call()
            update { $0.isLoading = false; $0.password = "" }
            onOutcome?(.deleted(erasureAt: deletion.erasureAt, notice: localizer("account.delete.done", Self.day(deletion.erasureAt, timeZone))))
        } catch {
            update { $0.isLoading = false; $0.isConfirmEnabled = !$0.password.isEmpty; $0.errorMessage = messageForError(error) }
        }
    }

    /// The day the data goes, as `dd.MM.yyyy`.
    static func day(_ date: Date, _ timeZone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let c = calendar.dateComponents([.day, .month, .year], from: date)
        return String(format: "%02d.%02d.%04d", c.day ?? 0, c.month ?? 0, c.year ?? 0)
    }
}
