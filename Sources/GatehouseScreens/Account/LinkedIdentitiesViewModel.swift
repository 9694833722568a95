import Foundation
import GatehouseAPI
import GatehouseKit

/// "Sign-in with Apple and Google" in an app's profile (docs/social-login.md): the identities linked to the account,
/// each with "Unlink", and "Link Apple" / "Link Google" for the providers the server takes that are not linked yet.
/// Both are changes to how the account signs in, so both ask for a proof: the password, or — for an account a provider
/// made, which has none — a fresh sign-in with one of its own identities ("Confirm with Apple", good for one change).
/// The server refuses to unlink the last way in, with its reason shown.
///
/// To link one, the app runs the provider's sheet with ``sheetRequest(for:)``'s nonce and hands its token to
/// ``completeAdd(_:idToken:authorizationCode:)``; to confirm with one, the same with ``completeConfirmation(_:idToken:)``.
@MainActor
public final class LinkedIdentitiesViewModel: ScreenModel<LinkedIdentitiesViewModel.State> {
    /// What the screen draws.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// The linked identities, oldest first.
        public var rows: [Row] = []
        /// Shown when there are none.
        public var emptyMessage: String
        /// "Link Apple", "Link Google": the providers the server takes that are not linked.
        public var addButtons: [ProviderSignInViewModel.ProviderButton] = []
        /// "Confirm with Apple": a fresh sign-in with an identity of the account's own, in place of the password.
        public var confirmButtons: [ProviderSignInViewModel.ProviderButton] = []
        /// The provider a fresh sign-in confirmed the next change with, until that change is made.
        public var confirmedWith: IdentityProviderName?
        /// The password field every change asks for (unless confirmed with a provider).
        public var passwordLabel: String
        /// The password as typed; drawn masked.
        public var password = ""
        /// The password field's content type.
        public let passwordContentType = TextContentType.password
        /// The label of each row's button.
        public var removeTitle: String
        /// Whether the changes can be asked for now (a password typed or a confirmation held, nothing in flight).
        public var isChangeEnabled = false
        /// A call is in flight.
        public var isLoading = false
        /// What the last change did.
        public var infoMessage: String?
        /// Why the last action failed, in the person's language.
        public var errorMessage: String?
    }

    /// A linked identity.
    public struct Row: Equatable, Sendable {
        /// The identity's id (what "Unlink" takes).
        public var id: UUID
        /// Its provider.
        public var provider: IdentityProviderName
        /// "Apple, linked 30 Nov 2026".
        public var title: String
        /// The address the provider gave, if any (Apple's may be a relay address).
        public var email: String?
    }

    private let client: AccountsClient
    private let localizer: Localizer
    private let sheets = ProviderSheets()
    private var confirmation: IdentityReauthentication?

    /// The screen on `client` (signed in), in `localizer`'s words.
    public init(client: AccountsClient, localizer: Localizer) {
        self.client = client
        self.localizer = localizer
        super.init(state: State(title: localizer("identities.title"), emptyMessage: localizer("identities.empty"),
                                passwordLabel: localizer("identities.password"), removeTitle: localizer("identities.remove")))
    }

    /// Reads the linked identities and the providers the server takes.
    public func load() async {
        update { $0.isLoading = true }
        do {
            async let linked = client.identities()
            async let offered = client.signInProviders()
            let (identities, providers) = try await (linked, offered)
            sheets.set(providers)
            show(identities)
        } catch {
            update { $0.isLoading = false; $0.errorMessage = localizer.message(for: error) }
        }
        refreshEnabled()
    }

    /// The password as typed.
    public func setPassword(_ text: String) {
        update { $0.password = text; $0.errorMessage = nil }
        refreshEnabled()
    }

    /// The proof of the next change: the confirmation held (spent by it), else the password typed.
    private func stepUp() -> AccountsClient.IdentityStepUp {
        defer { confirmation = nil; update { $0.confirmedWith = nil } }
        return confirmation.map { .reauthentication($0) } ?? .password(state.password)
    }

    /// "Unlink" on a row: the password, or the confirmation held, proves the change.
    public func remove(_ id: UUID) async {
        guard state.isChangeEnabled, let row = state.rows.first(where: { $0.id == id }) else { return }
        update { $0.isLoading = true; $0.errorMessage = nil; $0.infoMessage = nil }
        do {
            try await client.removeIdentity(id: id, stepUp: stepUp())
            update { $0.password = ""; $0.infoMessage = localizer("identities.removed", localizer("identity.name.\(row.provider.rawValue)")) }
            show(try await client.identities())
        } catch {
            update { $0.isLoading = false; $0.errorMessage = localizer.message(for: error) }
        }
        refreshEnabled()
    }

    /// What to open the provider's sheet with, to link it or to confirm with it (a new nonce for this attempt).
    public func sheetRequest(for provider: IdentityProviderName) -> ProviderSignInViewModel.SheetRequest {
        sheets.request(for: provider)
    }

    /// What the sheet of "Confirm with …" gave: held as the proof of the next change, in place of the password.
    public func completeConfirmation(_ provider: IdentityProviderName, idToken: String) {
        guard let reauthentication = sheets.reauthentication(provider, idToken: idToken) else { return }
        confirmation = reauthentication
        update {
            $0.confirmedWith = provider
            $0.errorMessage = nil
            $0.infoMessage = localizer("identities.confirmed", localizer("identity.name.\(provider.rawValue)"))
        }
        refreshEnabled()
    }

    /// What the sheet gave: links the identity, the password (or the confirmation held) proving the change.
    public func completeAdd(_ provider: IdentityProviderName, idToken: String, authorizationCode: String? = nil) async {
        guard state.isChangeEnabled, let nonce = sheets.take(provider) else { return }
        update { $0.isLoading = true; $0.errorMessage = nil; $0.infoMessage = nil }
        do {
            _ = try await client.addIdentity(provider, idToken: idToken, nonce: nonce, authorizationCode: authorizationCode, stepUp: stepUp())
            update { $0.password = ""; $0.infoMessage = localizer("identities.added", localizer("identity.name.\(provider.rawValue)")) }
            show(try await client.identities())
        } catch {
            update { $0.isLoading = false; $0.errorMessage = localizer.message(for: error) }
        }
        refreshEnabled()
    }

    private func show(_ identities: [LinkedIdentity]) {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: localizer.language)
        formatter.dateStyle = .medium
        formatter.timeStyle = .none
        let linked = Set(identities.map(\.provider))
        update { state in
            state.isLoading = false
            state.rows = identities.map {
                Row(id: $0.id, provider: $0.provider,
                    title: localizer("identities.linkedOn", localizer("identity.name.\($0.provider.rawValue)"), formatter.string(from: $0.createdAt)),
                    email: $0.email)
            }
            state.confirmButtons = sheets.confirmButtons(linked: linked, localizer)
            state.addButtons = sheets.providers.filter { !linked.contains($0.name) }.map {
                ProviderSignInViewModel.ProviderButton(provider: $0.name, title: localizer("identities.add", localizer("identity.name.\($0.name.rawValue)")))
            }
        }
    }

    private func refreshEnabled() {
        update { $0.isChangeEnabled = (!$0.password.isEmpty || $0.confirmedWith != nil) && !$0.isLoading }
    }
}
