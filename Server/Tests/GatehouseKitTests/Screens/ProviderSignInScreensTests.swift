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

    /// Signs in with Apple through the login screen `flow` shows (a new person: the stand-in signs for the sheet's nonce).
    static func signInWithApple(_ flow: MessengerAppFlow, _ server: LiveServer, _ provider: IdentityProviderStandIn, sub: String, email: String,
                                givenName: String? = nil) async throws {
        guard case .login(let login) = flow.state.screen else { throw LiveServerError("expected login, got \(flow.state.screen)") }
        await login.providers.load()
        let sheet = login.providers.sheetRequest(for: .apple)
        await login.providers.complete(.apple, idToken: try appleToken(provider, server, sheet: sheet, sub: sub, email: email), givenName: givenName,
                                       familyName: givenName == nil ? nil : "Ode")
    }

    @Test("the messenger asks an account Apple made for a tag before it opens: on sign-in and again on the next launch; a taken tag is refused under the field, one taken between the check and Continue too; a free one opens the messenger, whose delete screen offers Apple's confirmation; Sign out goes back to login; the wallet asks none")
    func chooseTagAfterProvider() async throws {
        try await Self.withProviders { server, provider in
            try await server.makeV1Account(email: "ivan@example.com", tag: "ivan")
            let env = Self.environment(server)
            let flow = MessengerAppFlow(environment: env)
            await flow.launch()
            try await Self.signInWithApple(flow, server, provider, sub: "nell.1", email: "nell@example.com", givenName: "Nell")
            guard case .chooseTag(let first) = flow.state.screen else { Issue.record("choose a tag, got \(flow.state.screen)"); return }
            #expect(first.state.title == "Choose your tag" && first.state.message.hasPrefix("Nell Ode, people find you") && !first.state.isContinueEnabled)

            // Closed on this screen: the next launch, with the stored session, opens on it again.
            let relaunched = MessengerAppFlow(environment: env)
            await relaunched.launch()
            guard case .chooseTag(let choose) = relaunched.state.screen else { Issue.record("choose a tag again, got \(relaunched.state.screen)"); return }

            choose.setTag("Ivan")
            await choose.settleTagCheck()
            #expect(choose.state.tagStatus == .taken && choose.state.tagMessage == "@ivan is already taken" && !choose.state.isContinueEnabled)
            await choose.submit()
            guard case .chooseTag = relaunched.state.screen else { Issue.record("a taken tag does not go on"); return }

            // Free when checked, taken before Continue: said under the field, still here.
            choose.setTag("late.tag")
            await choose.settleTagCheck()
            #expect(choose.state.tagStatus == .available && choose.state.isContinueEnabled)
            try await server.makeV1Account(email: "late@example.com", tag: "late.tag")
            await choose.submit()
            #expect(choose.state.tagStatus == .taken && !choose.state.isContinueEnabled, "\(choose.state)")
            guard case .chooseTag = relaunched.state.screen else { Issue.record("still choosing"); return }

            choose.setTag("Nell.Ode")
            await choose.settleTagCheck()
            await choose.submit()
            guard case .messenger(let main) = relaunched.state.screen else { Issue.record("the messenger, got \(relaunched.state.screen)"); return }
            #expect(main.repository.account.tag == "nell.ode" && main.profile.state.tag == "@nell.ode")
            #expect(try await env.client.me().tag == "nell.ode")
            // The account has no password: the messenger's own delete screen offers Apple's confirmation.
            main.profile.open(.deleteAccount)
            let deletion = try #require(main.top?.model as? DeleteAccountViewModel, "the delete screen on top")
            #expect(await eventually { await MainActor.run { deletion.state.confirmButtons.map(\.title) } == ["Confirm with Apple"] }, "\(deletion.state)")

            // Another new person signs out instead: login, the session gone.
            let other = Self.environment(server)
            let otherFlow = MessengerAppFlow(environment: other)
            await otherFlow.launch()
            try await Self.signInWithApple(otherFlow, server, provider, sub: "olga.1", email: "olga@example.com")
            guard case .chooseTag(let olga) = otherFlow.state.screen else { Issue.record("choose a tag, got \(otherFlow.state.screen)"); return }
            #expect(olga.state.message == "People find you in the messenger by your tag. Choose one to go on.")
            await olga.signOut()
            guard case .login = otherFlow.state.screen else { Issue.record("login after signing out, got \(otherFlow.state.screen)"); return }
            #expect(other.client.session == nil)

            // The wallet finds people by phone or email as well: an account Apple made goes straight in.
            let walletEnv = WalletEnvironment(accounts: Self.environment(server))
            let wallet = WalletFlow(environment: walletEnv)
            await wallet.launch()
            guard case .login(let walletLogin) = wallet.state.screen else { Issue.record("the wallet's login"); return }
            await walletLogin.providers.load()
            let sheet = walletLogin.providers.sheetRequest(for: .apple)
            await walletLogin.providers.complete(.apple, idToken: try Self.appleToken(provider, server, sheet: sheet, sub: "walt.1", email: "walt@example.com"))
            guard case .home = wallet.state.screen else { Issue.record("the wallet's home, got \(wallet.state.screen)"); return }
        }
    }

    @Test("the WebSocket login app offers the providers when given the server's /v1 client (none without it): Apple's sign-in opens the app screen, and the next launch too, from the gateway client's store; an account with the authenticator app on is told this app has no step for it, and stays on login")
    func webSocketLoginApp() async throws {
        try await Self.withProviders { server, provider in
            @MainActor func flow(_ store: any SessionStore, accounts: AccountsClient?) -> WebSocketLoginFlow {
                let gateway = CustomerGatewayClient(url: CustomerGatewayClient.gatewayURL(for: server.baseURL), sessionStore: store,
                                                    now: { [clock = server.clock] in clock.now })
                return WebSocketLoginFlow(environment: WebSocketLoginEnvironment(client: gateway, localizer: Localizer(language: "en"), accounts: accounts))
            }
            @MainActor func signIn(_ flow: WebSocketLoginFlow, sub: String, email: String) async throws -> WebSocketLoginViewModel {
                guard case .login(let login) = flow.state.screen, let providers = login.providers else { throw LiveServerError("login with providers") }
                await providers.load()
                #expect(providers.state.buttons.map(\.title) == ["Continue with Apple", "Continue with Google"])
                let sheet = providers.sheetRequest(for: .apple)
                await providers.complete(.apple, idToken: try Self.appleToken(provider, server, sheet: sheet, sub: sub, email: email))
                return login
            }

            let plain = flow(InMemorySessionStore(), accounts: nil)
            plain.launch()
            guard case .login(let plainLogin) = plain.state.screen else { Issue.record("login"); return }
            #expect(plainLogin.providers == nil)

            let store = InMemorySessionStore()
            let accounts = server.accountsClient()
            let app = flow(store, accounts: accounts)
            app.launch()
            _ = try await signIn(app, sub: "ws.1", email: "ws@example.com")
            guard case .app(let screen) = app.state.screen else { Issue.record("the app screen, got \(app.state.screen)"); return }
            let stored = try #require(try store.load())
            #expect(stored == accounts.session && screen.state.expiresAt == stored.expiresAt)
            #expect(try await server.accountsClient(store: InMemorySessionStore(stored)).me().email == "ws@example.com", "an ordinary session")
            let relaunched = flow(store, accounts: server.accountsClient())
            relaunched.launch()
            guard case .app = relaunched.state.screen else { Issue.record("the app screen on the next launch, got \(relaunched.state.screen)"); return }

            // Ivan links Apple, then turns the authenticator app on: this app cannot ask for the code.
            try await server.makeV1Account(email: "ivan@example.com", tag: "ivan")
            let ivan = server.accountsClient()
            try await ivan.login(identifier: "ivan", password: "Secret-42!")
            let nonce = SignInNonce()
            _ = try await ivan.addIdentity(.apple, idToken: try provider.token(IdentityProviderStandIn.apple(now: server.clock.now, sub: "ivan.apple",
                                                                                                           email: "ivan@example.com", nonce: nonce.raw)),
                                           nonce: nonce, stepUp: .password("Secret-42!"))
            let enrolment = try await ivan.enrolTOTP(currentPassword: "Secret-42!")
            _ = try await ivan.confirmTOTP(code: TwoStepLoginScreensTests.appCode(enrolment.secret, server))
            let twoStep = flow(InMemorySessionStore(), accounts: server.accountsClient())
            twoStep.launch()
            let login = try await signIn(twoStep, sub: "ivan.apple", email: "ivan@example.com")
            #expect(login.state.errorOutput == "This account asks for the code from an authenticator app, which this app has no step for. Sign in to it in an app that asks for the code.")
            guard case .login = twoStep.state.screen else { Issue.record("stays on login, got \(twoStep.state.screen)"); return }
        }
    }

    @Test("an account Apple made has no password: the linked identities screen confirms with Apple (good for one change) to link Google and to unlink it, and the delete screen deletes it with a fresh Apple sign-in, its Apple token revoked; without the app's /v1 client the delete screen offers the password alone")
    func confirmWithProvider() async throws {
        try await Self.withProviders { server, provider in
            let client = server.accountsClient()
            let nonce = SignInNonce()
            guard case .signedIn = try await client.signIn(with: .apple, idToken: try provider.token(IdentityProviderStandIn.apple(
                now: server.clock.now, sub: "solo.1", email: "solo@example.com", nonce: nonce.raw)), nonce: nonce,
                authorizationCode: provider.code(for: IdentityProviderStandIn.appleClient)) else { Issue.record("signed in"); return }
            @MainActor func confirm(_ screen: LinkedIdentitiesViewModel) throws {
                let sheet = screen.sheetRequest(for: .apple)
                screen.completeConfirmation(.apple, idToken: try Self.appleToken(provider, server, sheet: sheet, sub: "solo.1", email: "solo@example.com"))
            }

            let screen = LinkedIdentitiesViewModel(client: client, localizer: Localizer(language: "en"))
            await screen.load()
            #expect(screen.state.rows.map(\.provider) == [.apple] && screen.state.confirmButtons.map(\.title) == ["Confirm with Apple"])
            #expect(!screen.state.isChangeEnabled, "no password, nothing confirmed")
            try confirm(screen)
            #expect(screen.state.confirmedWith == .apple && screen.state.isChangeEnabled && screen.state.infoMessage == "Confirmed with Apple: make the change now.")
            let google = screen.sheetRequest(for: .google)
            await screen.completeAdd(.google, idToken: try provider.token(IdentityProviderStandIn.google(now: server.clock.now, sub: "g-solo",
                                                                                                          email: "solo@example.com", nonce: google.nonce)))
            #expect(Set(screen.state.rows.map(\.provider)) == [.apple, .google] && screen.state.errorMessage == nil, "\(screen.state)")
            #expect(screen.state.confirmedWith == nil && !screen.state.isChangeEnabled, "a confirmation is good for one change")
            let googleRow = try #require(screen.state.rows.first { $0.provider == .google })
            await screen.remove(googleRow.id)
            #expect(screen.state.rows.count == 2, "not without a new confirmation")
            try confirm(screen)
            await screen.remove(googleRow.id)
            #expect(screen.state.rows.map(\.provider) == [.apple] && screen.state.infoMessage == "Sign-in with Google is unlinked.")

            let passwordOnly = DeleteAccountViewModel(localizer: Localizer(language: "en"), delete: { _ in throw CancellationError() }, message: { _ in nil })
            await passwordOnly.load()
            #expect(passwordOnly.state.confirmButtons.isEmpty)

            let delete = DeleteAccountViewModel(localizer: Localizer(language: "en"), delete: { try await client.deleteAccount(currentPassword: $0) },
                                                message: { _ in nil }, identities: client)
            var outcome: DeleteAccountViewModel.Outcome?
            delete.onOutcome = { outcome = $0 }
            await delete.load()
            #expect(delete.state.confirmButtons.map(\.title) == ["Confirm with Apple"])
            let sheet = delete.sheetRequest(for: .apple)
            await delete.confirm(with: .apple, idToken: try Self.appleToken(provider, server, sheet: sheet, sub: "solo.1", email: "solo@example.com"))
            guard case .deleted(let erasureAt, _)? = outcome else { Issue.record("deleted: \(delete.state)"); return }
            #expect(erasureAt > server.clock.now && client.session == nil)
            #expect(await eventually { provider.revoked.count == 1 }, "revoked at Apple through the outbox")
        }
    }
}
