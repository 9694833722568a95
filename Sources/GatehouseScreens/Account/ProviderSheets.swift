import Foundation
import GatehouseAPI
import GatehouseKit

/// The providers' sheets a screen opens (the login's buttons, linking one, confirming a change with one's own): the
/// providers the server takes, with their client ids, and one new nonce per attempt, kept until its sheet answers.
/// What a sheet gave is only taken with the nonce it was opened with.
@MainActor
final class ProviderSheets {
    /// The providers the server takes, in its order (empty until set).
    private(set) var providers: [SignInProvider] = []
    private var nonces: [IdentityProviderName: SignInNonce] = [:]

    func set(_ providers: [SignInProvider]) { self.providers = providers }

    /// A new nonce for an attempt with `provider`, and what to open its sheet with: for Apple the nonce's SHA-256
    /// (Apple signs what it is given), for Google the nonce itself; the client id the server takes.
    func request(for provider: IdentityProviderName) -> ProviderSignInViewModel.SheetRequest {
        let nonce = SignInNonce()
        nonces[provider] = nonce
        return ProviderSignInViewModel.SheetRequest(provider: provider, nonce: provider == .apple ? nonce.forApple : nonce.raw,
                                                    clientID: providers.first { $0.name == provider }?.clientIds.first)
    }

    /// The nonce the sheet of `provider` was opened with, spent: nil when none is open.
    func take(_ provider: IdentityProviderName) -> SignInNonce? { nonces.removeValue(forKey: provider) }

    /// A fresh sign-in with `provider`, as a step-up proves a change with it: nil when no sheet of it is open.
    func reauthentication(_ provider: IdentityProviderName, idToken: String) -> IdentityReauthentication? {
        take(provider).map { IdentityReauthentication(provider: provider, idToken: idToken, nonce: $0.raw) }
    }

    /// "Confirm with Apple", one per provider among `linked` that the server takes (a step-up signs in with one's own).
    func confirmButtons(linked: Set<IdentityProviderName>, _ localizer: Localizer) -> [ProviderSignInViewModel.ProviderButton] {
        providers.filter { linked.contains($0.name) }.map {
            ProviderSignInViewModel.ProviderButton(provider: $0.name, title: localizer("identities.confirmWith", localizer("identity.name.\($0.name.rawValue)")))
        }
    }
}
