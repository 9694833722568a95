import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehouseKit
import GatehouseScreens
import GatehouseTestSupport
import Testing

/// Sign in with Apple and Google through the SDK (docs/social-login.md): `AccountsClient`'s calls, the login screen's
/// provider buttons and link step, and the linked identities screen, against a real server over loopback pointed at a
/// stand-in provider that signs tokens as Apple and Google do. What the app's sheet would give is what the stand-in
/// signs for the nonce the view model asked the sheet to carry.
@Suite("Sign in with Apple and Google through the SDK and the view models")
@MainActor
struct ProviderSignInScreensTests {
    static func withProviders(_ body: (LiveServer, IdentityProviderStandIn) async throws -> Void) async throws {
        try await IdentityProviderStandIn.run { provider in
            try await withLiveServer(configure: { provider.configure(&$0) }) { server in
                provider.now = { [clock = server.clock] in clock.now }
                try await body(server, provider)
            }
        }
    }

    /// The raw nonce of a sheet request: Apple's sheet is given its SHA-256, which a token carries as given.
    static func appleToken(_ provider: IdentityProviderStandIn, _ server: LiveServer, sheet: ProviderSignInViewModel.SheetRequest, sub: String,
                           email: String?) throws -> String {
        var claims = IdentityProviderStandIn.apple(now: server.clock.now, sub: sub, email: email, nonce: "unused")
        claims.nonce = sheet.nonce
        return try provider.token(claims)
    }

    static func environment(_ server: LiveServer, language: String = "en") -> MessengerEnvironment {
        MessengerEnvironment(client: server.accountsClient(language: language), localizer: Localizer(language: language),
                             now: { [clock = server.clock] in clock.now }, tagCheckDelay: 0, device: "tests", stores: .temporary(),
                             preferences: InMemoryPreferences())
    }

    @Test("AccountsClient: the providers listed; a sign-in with Apple's token and the nonce it carries stores the session; Google's as well; a second sign-in finds the account; an address that is an account's answers the link offer, which a wrong password does not take up; an account made by Apple (no password) links and unlinks Google with a fresh sign-in of its own, and is deleted with a fresh Apple sign-in, its token revoked at Apple")
    func clientCalls() async throws {
        try await Self.withProviders { server, provider in
            let client = server.accountsClient()
            #expect(try await client.signInProviders().map(\.name) == [.apple, .google])

            let nonce = SignInNonce()
            #expect(nonce.forApple.count == 64 && nonce.forApple != nonce.raw)
            var claims = IdentityProviderStandIn.apple(now: server.clock.now, sub: "sdk.1", email: "sdk@example.com", nonce: nonce.raw)
            #expect(claims.nonce == nonce.forApple, "what the sheet was given is what Apple signs")
            claims.jti = UUID().uuidString
            guard case .signedIn(let session) = try await client.signIn(with: .apple, idToken: try provider.token(claims), nonce: nonce,
                                                                        authorizationCode: provider.code(for: IdentityProviderStandIn.appleClient),
                                                                        givenName: "Sam", familyName: "Dee") else {
                Issue.record("signed in"); return
            }
            #expect(client.session?.token == session.token && session.account.firstName == "Sam" && session.account.emailConfirmed)
            #expect(try await client.identities().map(\.provider) == [.apple])

            // Google, for the same person's address: it is the Apple account's now, so the offer comes; no password to link with.
            let googleNonce = SignInNonce()
            let google = try provider.token(IdentityProviderStandIn.google(now: server.clock.now, sub: "g-sdk", email: "sdk@example.com", nonce: googleNonce.raw))
            guard case .linkRequired(let offer) = try await server.accountsClient().signIn(with: .google, idToken: google, nonce: googleNonce) else {
                Issue.record("the address is an account's: an offer"); return
            }
            #expect(offer.email == "sdk@example.com" && offer.provider == .google)
            await #expect(throws: GatehouseClientError.self) { try await server.accountsClient().linkIdentity(offer, password: "anything-1") }

            // The Apple account has no password: it links Google with a fresh Apple sign-in, then unlinks it the same way.
            let reauthNonce = SignInNonce()
            let reauth = IdentityReauthentication(provider: .apple, idToken: try provider.token(IdentityProviderStandIn.apple(
                now: server.clock.now, sub: "sdk.1", email: "sdk@example.com", nonce: reauthNonce.raw)), nonce: reauthNonce.raw)
            let addNonce = SignInNonce()
            let added = try await client.addIdentity(.google, idToken: try provider.token(IdentityProviderStandIn.google(
                now: server.clock.now, sub: "g-sdk", email: "sdk@example.com", nonce: addNonce.raw)), nonce: addNonce, stepUp: .reauthentication(reauth))
            #expect(Set(try await client.identities().map(\.provider)) == [.apple, .google])
            let again = SignInNonce()
            let reauthAgain = IdentityReauthentication(provider: .google, idToken: try provider.token(IdentityProviderStandIn.google(
                now: server.clock.now, sub: "g-sdk", email: "sdk@example.com", nonce: again.raw)), nonce: again.raw)
            try await client.removeIdentity(id: added.id, stepUp: .reauthentication(reauthAgain))
            #expect(try await client.identities().map(\.provider) == [.apple])

            // Deleted with a fresh Apple sign-in; its refresh token goes to Apple's revoke endpoint.
            let last = SignInNonce()
            let deletion = try await client.deleteAccount(reauthentication: IdentityReauthentication(provider: .apple, idToken: try provider.token(
                IdentityProviderStandIn.apple(now: server.clock.now, sub: "sdk.1", email: "sdk@example.com", nonce: last.raw)), nonce: last.raw))
            #expect(deletion.erasureAt > server.clock.now && client.session == nil)
            #expect(await eventually { provider.revoked.count == 1 }, "revoked at Apple through the outbox")
        }
    }

    @Test("the login screen shows a button per provider the server takes; Apple's sheet gets the nonce's hash and its token signs in; an address that is an account's shows the link step, whose password (and then the app's code) link and sign in; in Russian too")
    func loginScreen() async throws {
        try await Self.withProviders { server, provider in
            try await server.makeV1Account(email: "ivan@example.com", tag: "ivan")
            let login = MessengerLoginViewModel(environment: Self.environment(server))
            var outcome: MessengerLoginViewModel.Outcome?
            login.onOutcome = { outcome = $0 }
            #expect(login.providers.state.buttons.isEmpty, "none before the server said")
            await login.providers.load()
            #expect(login.providers.state.buttons.map(\.title) == ["Continue with Apple", "Continue with Google"])

            // A new person: Apple's sheet, then in.
            let sheet = login.providers.sheetRequest(for: .apple)
            #expect(sheet.nonce.count == 64 && sheet.clientID == IdentityProviderStandIn.appleClient)
            await login.providers.complete(.apple, idToken: try Self.appleToken(provider, server, sheet: sheet, sub: "new.1", email: "new@example.com"),
                                           givenName: "Nell", familyName: "Ode")
            guard case .authenticated(let account)? = outcome else { Issue.record("in: \(login.providers.state)"); return }
            #expect(account.firstName == "Nell" && account.email == "new@example.com")

            // Ivan's address: the link step, in Russian.
            let ru = MessengerLoginViewModel(environment: Self.environment(server, language: "ru"))
            var ruOutcome: MessengerLoginViewModel.Outcome?
            ru.onOutcome = { ruOutcome = $0 }
            await ru.providers.load()
            #expect(ru.providers.state.buttons.map(\.title) == ["Продолжить с Apple", "Продолжить с Google"])
            let ivanSheet = ru.providers.sheetRequest(for: .apple)
            await ru.providers.complete(.apple, idToken: try Self.appleToken(provider, server, sheet: ivanSheet, sub: "ivan.apple", email: "ivan@example.com"))
            let link = try #require(ru.providers.state.link, "the link step: \(ru.providers.state)")
            #expect(link.message == "Учётная запись с адресом ivan@example.com уже есть. Введите её пароль, чтобы дальше входить в неё через Apple.")
            #expect(!link.isSubmitEnabled && ruOutcome == nil)
            ru.providers.setLinkPassword("wrong-42!")
            await ru.providers.submitLink()
            #expect(ru.providers.state.errorMessage != nil && ru.providers.state.link != nil && ruOutcome == nil)
            ru.providers.setLinkPassword("Secret-42!")
            await ru.providers.submitLink()
            guard case .authenticated(let ivan)? = ruOutcome else { Issue.record("linked and in: \(ru.providers.state)"); return }
            #expect(ivan.tag == "ivan" && ru.providers.state.link == nil)

            // Next time Apple alone signs Ivan in.
            let next = MessengerLoginViewModel(environment: Self.environment(server))
            var nextOutcome: MessengerLoginViewModel.Outcome?
            next.onOutcome = { nextOutcome = $0 }
            await next.providers.load()
            let nextSheet = next.providers.sheetRequest(for: .apple)
            await next.providers.complete(.apple, idToken: try Self.appleToken(provider, server, sheet: nextSheet, sub: "ivan.apple", email: "ivan@example.com"))
            guard case .authenticated(let again)? = nextOutcome else { Issue.record("in by Apple: \(next.providers.state)"); return }
            #expect(again.id == ivan.id)
            // A sheet that was cancelled says nothing; one that failed says so.
            _ = next.providers.sheetRequest(for: .google)
            next.providers.sheetFailed(.google, cancelled: true)
            #expect(next.providers.state.errorMessage == nil)
            _ = next.providers.sheetRequest(for: .google)
            next.providers.sheetFailed(.google, cancelled: false)
            #expect(next.providers.state.errorMessage == "Sign-in with Google did not finish. Try again.")
        }
    }

    @Test("the linked identities screen lists them with the date, offers the providers not linked, links Google and unlinks it with the password; a wrong password shows the server's reason")
    func linkedIdentitiesScreen() async throws {
        try await Self.withProviders { server, provider in
            try await server.makeV1Account(email: "ivan@example.com", tag: "ivan")
            let client = server.accountsClient()
            try await client.login(identifier: "ivan", password: "Secret-42!")
            let screen = LinkedIdentitiesViewModel(client: client, localizer: Localizer(language: "en"))
            await screen.load()
            #expect(screen.state.rows.isEmpty && screen.state.emptyMessage == "No sign-in with Apple or Google is linked.")
            #expect(screen.state.addButtons.map(\.title) == ["Link Apple", "Link Google"] && !screen.state.isChangeEnabled)

            let sheet = screen.sheetRequest(for: .google)
            #expect(sheet.clientID == IdentityProviderStandIn.googleClient && sheet.nonce.count == 43)
            let token = try provider.token(IdentityProviderStandIn.google(now: server.clock.now, sub: "g-ivan", email: "ivan@example.com", nonce: sheet.nonce))
            screen.setPassword("Secret-42!")
            await screen.completeAdd(.google, idToken: token)
            #expect(screen.state.rows.map(\.provider) == [.google] && screen.state.rows.first?.title.hasPrefix("Google, linked ") == true, "\(screen.state)")
            #expect(screen.state.addButtons.map(\.title) == ["Link Apple"] && screen.state.infoMessage == "Sign-in with Google is linked.")

            screen.setPassword("wrong-42!")
            await screen.remove(try #require(screen.state.rows.first?.id))
            #expect(screen.state.rows.count == 1 && screen.state.errorMessage != nil)
            screen.setPassword("Secret-42!")
            await screen.remove(try #require(screen.state.rows.first?.id))
            #expect(screen.state.rows.isEmpty && screen.state.infoMessage == "Sign-in with Google is unlinked.")
        }
    }
}
