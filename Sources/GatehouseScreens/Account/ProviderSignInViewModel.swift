import Foundation
import GatehouseAPI
import GatehouseKit

/// The "Continue with Apple" and "Continue with Google" part of a login screen (docs/social-login.md), and what follows
/// the provider's sheet. A login screen owns one and draws its ``State``: a button per provider the server takes
/// (none until ``load()`` has asked, none when the operator configured none), and, when the provider's address is an
/// account's already, the password (and code) that link the two — never the address alone.
///
/// The app runs the sheet itself (AuthenticationServices, Google Sign-In): ``sheetRequest(for:)`` gives what to open
/// it with (the nonce and the client id), ``complete(_:idToken:authorizationCode:givenName:familyName:)`` takes what
/// it gave, ``sheetFailed(_:cancelled:)`` says it gave nothing.
@MainActor
public final class ProviderSignInViewModel: ScreenModel<ProviderSignInViewModel.State> {
    /// What the screen draws of the providers.
    public struct State: Equatable, Sendable {
        /// One button per provider, in the server's order.
        public var buttons: [ProviderButton] = []
        /// Whether ``load()`` has asked the server (the buttons are final then).
        public var hasLoaded = false
        /// The link step, while it is asked for: draw it in place of the login form.
        public var link: LinkStep?
        /// A call is in flight: keep the buttons off.
        public var isLoading = false
        /// Why the last attempt failed, in the person's language; cleared by the next.
        public var errorMessage: String?
    }

    /// A provider's button.
    public struct ProviderButton: Equatable, Sendable {
        /// Which provider the button opens.
        public var provider: IdentityProviderName
        /// "Continue with Apple".
        public var title: String
    }

    /// What to open the provider's sheet with.
    public struct SheetRequest: Equatable, Sendable {
        /// The provider whose sheet to open.
        public var provider: IdentityProviderName
        /// For `ASAuthorizationAppleIDRequest.nonce` (the SHA-256 of this attempt's nonce, hex), or Google Sign-In's
        /// `nonce` (the nonce itself).
        public var nonce: String
        /// The client id the server takes for this provider (Google Sign-In's `clientID`; Apple's is the bundle id).
        public var clientID: String?
    }

    /// The account's password (and, when it has a second factor, its code), to link the provider's identity to it.
    public struct LinkStep: Equatable, Sendable {
        /// "An account with ann@example.com exists. Enter its password to sign in to it with Apple from now on."
        public var message: String
        /// The password field's label.
        public var passwordLabel: String
        /// The password as typed; drawn masked.
        public var password = ""
        /// The password field's content type.
        public let passwordContentType = TextContentType.password
        /// Shown once the server asked for the second factor.
        public var needsCode = false
        /// The code field's label (the authenticator app's code).
        public var codeLabel: String
        /// The code as typed.
        public var code = ""
        /// The code field's content type (a one-time code).
        public let codeContentType = TextContentType.oneTimeCode
        /// "Link and sign in".
        public var submitTitle: String
        /// "Cancel".
        public var cancelTitle: String
        /// Whether "Link and sign in" works now.
        public var isSubmitEnabled = false
    }

    /// Where a provider's sign-in leads.
    public enum Outcome: Equatable, Sendable {
        /// Signed in (the session is stored).
        case authenticated(Account)
        /// The account asks for its second factor: the login screen's own second step finishes it.
        case secondFactorRequired(SecondFactorChallenge)
    }

    /// Called with the outcome; the login screen acts on it.
    public var onOutcome: ((Outcome) -> Void)?
    private let client: AccountsClient
    private let localizer: Localizer
    private let device: String?
    private let sheets = ProviderSheets()
    private var offer: IdentityLinkOffer?

    /// The part of a login screen on `client`, in `localizer`'s words; `device` labels the sessions it opens.
    public init(client: AccountsClient, localizer: Localizer, device: String?) {
        self.client = client
        self.localizer = localizer
        self.device = device
        super.init(state: State())
    }

    /// Asks the server which providers it takes; a server that cannot be asked shows none (the password form works
    /// without them).
    public func load() async {
        guard let providers = try? await client.signInProviders() else {
            update { $0.hasLoaded = true }
            return
        }
        sheets.set(providers)
        update { state in
            state.buttons = providers.map { ProviderButton(provider: $0.name, title: localizer("identity.continue.\($0.name.rawValue)")) }
            state.hasLoaded = true
        }
    }

    /// A new nonce for this attempt, kept until the sheet answers, and what to open the sheet with.
    public func sheetRequest(for provider: IdentityProviderName) -> SheetRequest {
        update { $0.errorMessage = nil }
        return sheets.request(for: provider)
    }

    /// The sheet gave nothing: cancelled by the person (nothing to say) or failed (said).
    public func sheetFailed(_ provider: IdentityProviderName, cancelled: Bool) {
        _ = sheets.take(provider)
        guard !cancelled else { return }
        update { $0.errorMessage = localizer("identity.failed", localizer("identity.name.\(provider.rawValue)")) }
    }

    /// What the sheet gave: the identity token, and for Apple its authorization code and, the first time only, the
    /// person's name.
    public func complete(_ provider: IdentityProviderName, idToken: String, authorizationCode: String? = nil, givenName: String? = nil,
                         familyName: String? = nil) async {
        guard !state.isLoading, let nonce = sheets.take(provider) else { return }
        update { $0.isLoading = true; $0.errorMessage = nil }
        do {
            let step = try await client.signIn(with: provider, idToken: idToken, nonce: nonce, authorizationCode: authorizationCode,
                                               givenName: givenName, familyName: familyName, device: device)
            update { $0.isLoading = false }
            switch step {
            case .signedIn(let session): onOutcome?(.authenticated(session.account))
            case .secondFactorRequired(let challenge): onOutcome?(.secondFactorRequired(challenge))
            case .linkRequired(let offer):
                self.offer = offer
                let name = localizer("identity.name.\(offer.provider.rawValue)")
                update {
                    $0.link = LinkStep(message: localizer("identity.link.message", offer.email, name), passwordLabel: localizer("identity.link.password"),
                                       codeLabel: localizer("identity.link.code"), submitTitle: localizer("identity.link.submit"),
                                       cancelTitle: localizer("identity.link.cancel"))
                }
            }
        } catch {
            update { $0.isLoading = false; $0.errorMessage = localizer.message(for: error) }
        }
    }

    /// The link step's password as typed.
    public func setLinkPassword(_ text: String) {
        update { $0.link?.password = text; $0.errorMessage = nil }
        refreshLinkEnabled()
    }

    /// The link step's code as typed.
    public func setLinkCode(_ text: String) {
        update { $0.link?.code = text; $0.errorMessage = nil }
        refreshLinkEnabled()
    }

    /// "Link and sign in": the password (and code) take up the offer; the session is stored.
    public func submitLink() async {
        guard let offer, let link = state.link, link.isSubmitEnabled else { return }
        update { $0.isLoading = true; $0.link?.isSubmitEnabled = false; $0.errorMessage = nil }
        do {
            let code = link.code.trimmingCharacters(in: .whitespaces)
            let session = try await client.linkIdentity(offer, password: link.password, code: link.needsCode && !code.isEmpty ? code : nil, device: device)
            self.offer = nil
            update { $0.isLoading = false; $0.link = nil }
            onOutcome?(.authenticated(session.account))
        } catch let error as GatehouseClientError where error.code == .secondFactorRequired {
            update { $0.isLoading = false; $0.link?.needsCode = true; $0.errorMessage = localizer("identity.link.needsCode") }
            refreshLinkEnabled()
        } catch let error as GatehouseClientError where error.code == .identityLinkInvalid {
            // Expired or used: the provider's sheet again.
            self.offer = nil
            update { $0.isLoading = false; $0.link = nil; $0.errorMessage = localizer.message(for: error) }
        } catch {
            update { $0.isLoading = false; $0.link?.code = ""; $0.errorMessage = localizer.message(for: error) }
            refreshLinkEnabled()
        }
    }

    /// "Cancel": back to the login form; the offer is dropped.
    public func cancelLink() {
        offer = nil
        update { $0.link = nil; $0.errorMessage = nil }
    }

    private func refreshLinkEnabled() {
        update {
            guard let link = $0.link else { return }
            let code = link.code.filter { !$0.isWhitespace && $0 != "-" }
            $0.link?.isSubmitEnabled = !link.password.isEmpty && (!link.needsCode || code.count >= 6) && !$0.isLoading
        }
    }
}
