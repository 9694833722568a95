import Crypto
import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import GatehouseServer
import GatehouseTestSupport
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import SQLKit
import Testing
import _CryptoExtras

/// Sign in with Apple and Google over `/v1` (docs/social-login.md), against a stand-in provider: a real HTTP server
/// that publishes its RSA keys as a JWKS document with `Cache-Control: max-age`, as Apple (`/auth/keys`) and Google
/// (`/oauth2/v3/certs`) do, and tokens shaped and signed as theirs are (RS256 by `kid`; Apple's nonce hashed, its
/// booleans strings).
@Suite("Sign in with Apple and Google")
struct SocialSignInTests {
    static let appleClient = IdentityProviderStandIn.appleClient
    static let googleClient = IdentityProviderStandIn.googleClient
    static let nonce = "n-0S6_WzA2Mj-raw"

    static func apple(_ app: TestHarness, sub: String = "001234.abcdef.0042", email: String? = "ann@example.com", verified: Bool = true,
                      nonce: String = nonce) -> IdentityClaims {
        IdentityProviderStandIn.apple(now: app.clock.now, sub: sub, email: email, verified: verified, nonce: nonce)
    }

    static func google(_ app: TestHarness, sub: String = "110248495921238986420", email: String? = "ann@example.com", verified: Bool = true) -> IdentityClaims {
        IdentityProviderStandIn.google(now: app.clock.now, sub: sub, email: email, verified: verified, nonce: nonce)
    }

    /// A server with both providers on, pointed at `provider`.
    static func withProviders(_ engine: TestEngine, secondFactor: Bool = true, _ body: @Sendable (TestHarness, IdentityProviderStandIn) async throws -> Void) async throws {
        try await IdentityProviderStandIn.run { provider in
            try await withApp(engine, configure: {
                provider.configure(&$0)
                $0.identityProviders.secondFactor = secondFactor
            }) { app in
                provider.now = { [clock = app.clock] in clock.now }
                try await body(app, provider)
            }
        }
    }

    static func signIn(_ app: TestHarness, _ path: String, _ token: String, nonce: String = nonce, code: String? = nil, given: String? = nil,
                       family: String? = nil) async throws -> TestResponse {
        try await app.v1.post(path, IdentitySignIn(idToken: token, nonce: nonce, authorizationCode: code, givenName: given, familyName: family))
    }

    @Test("a first sign-in with Apple makes an account (the names the app got once, the verified address confirmed, no password); the next finds it by sub, not by address; a token signs in once; forged, foreign, stale and replayed tokens are refused with their reason; Google's the same with its names; the providers are listed", .tags(.engine), arguments: TestEngine.all)
    func signInAndRefusals(engine: TestEngine) async throws {
        try await Self.withProviders(engine) { app, provider in
            let listed = try await app.v1.get(V1.Identities.providers.path).decoded(as: SignInProviders.self)
            #expect(listed == SignInProviders(providers: [SignInProvider(name: .apple, clientIds: [Self.appleClient]),
                                                          SignInProvider(name: .google, clientIds: [Self.googleClient])]))

            let first = try await Self.signIn(app, V1.Identities.apple.path, try provider.token(Self.apple(app)), given: "Ann", family: "Lee")
            #expect(first.status == .created, "\(first.text)")
            let session = try first.decoded(as: AuthSession.self)
            #expect(session.account.email == "ann@example.com" && session.account.emailConfirmed && session.account.firstName == "Ann" && session.account.lastName == "Lee")
            let identities = try await app.v1.get(V1.Identities.list.path, token: session.token).decoded(as: LinkedIdentityList.self).identities
            #expect(identities.map(\.provider) == [.apple] && identities.first?.email == "ann@example.com")

            // Again, with another address (Apple's relay): the same account, found by sub; the token once only.
            var relay = Self.apple(app, email: "x7f2@privaterelay.appleid.com")
            relay.is_private_email = "true"
            let token = try provider.token(relay)
            let again = try await Self.signIn(app, V1.Identities.apple.path, token)
            #expect(again.status == .created, "\(again.text)")
            #expect(try again.decoded(as: AuthSession.self).account.id == session.account.id)
            let replay = try expectProblem(try await Self.signIn(app, V1.Identities.apple.path, token), .badRequest, .identityTokenInvalid)
            #expect(replay.detail.contains("used before") && replay.field == "idToken", "\(replay.detail)")

            // Refusals, each with its reason; none signs in.
            var foreign = Self.apple(app)
            foreign.aud = "com.example.game"
            var issuer = Self.apple(app)
            issuer.iss = "https://accounts.google.com"
            var stale = Self.apple(app)
            stale.exp = Int(app.clock.now.timeIntervalSince1970) - 120
            let stranger = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            let good = try provider.token(Self.apple(app)).split(separator: ".").map(String.init)
            let none = Base64URL.encode(Array(#"{"alg":"none","kid":"key-1"}"#.utf8)) + "." + good[1] + "."
            for (token, nonce, reason) in [(try provider.token(foreign), Self.nonce, "audience"), (try provider.token(issuer), Self.nonce, "issuer"),
                                           (try provider.token(stale), Self.nonce, "expired"), (try provider.token(Self.apple(app)), "another nonce", "nonce"),
                                           (try provider.token(Self.apple(app), key: stranger), Self.nonce, "signature: signature"),
                                           (none, Self.nonce, "signature: algorithm"), ("not a token", Self.nonce, "malformed")] {
                let refused = try expectProblem(try await Self.signIn(app, V1.Identities.apple.path, token, nonce: nonce), .badRequest, .identityTokenInvalid)
                #expect(refused.detail.contains("(\(reason))"), "\(reason): \(refused.detail)")
            }
            // Apple's token is not Google's.
            try expectProblem(try await Self.signIn(app, V1.Identities.google.path, try provider.token(Self.apple(app))), .badRequest, .identityTokenInvalid)
            let refusals = try await app.services.audit.events(AuditLog.Query(kinds: [.identitySignInRefused]))
            #expect(refusals.map(\.count).reduce(0, +) == 8, "\(refusals.map(\.detail))")

            // Google: a new identity of another person, its names from the token.
            let google = try await Self.signIn(app, V1.Identities.google.path, try provider.token(Self.google(app, email: "bo@example.com")))
            #expect(google.status == .created, "\(google.text)")
            let bo = try google.decoded(as: AuthSession.self).account
            #expect(bo.id != session.account.id && bo.firstName == "Ann" && bo.lastName == "Lee" && bo.email == "bo@example.com")
            let events = try await app.services.audit.events(AuditLog.Query(kinds: [.accountCreated, .loginSucceeded]))
            #expect(events.filter { $0.kind == "account.created" }.map { $0.detail["with"] } == ["google", "apple"])
            #expect(events.filter { $0.kind == "account.created" }.map { $0.detail["realUserStatus"] } == [nil, "likelyReal"], "Apple's judgement, kept")
            #expect(events.filter { $0.kind == "login.succeeded" && $0.detail["with"] == "apple" }.count == 2)
            // Each provider's key set was fetched once: kept by its max-age.
            #expect(provider.fetches == 2, "fetches: \(provider.fetches)")
            // The provider rotates its keys: a token of the new key, a minute after the last fetch, fetches the set
            // again once and signs in.
            try provider.rotate("key-2")
            app.clock.advance(by: 61)
            let rotated = try await Self.signIn(app, V1.Identities.apple.path, try provider.token(Self.apple(app)))
            #expect(rotated.status == .created, "\(rotated.text)")
            #expect(provider.fetches == 3, "fetches: \(provider.fetches)")
        }
    }

    @Test("pre-account hijacking: an attacker who registered the victim's address first (unconfirmed) loses it when the victim signs in with Apple, and keeps no way into the victim's account; an address the provider did not verify is never taken", arguments: TestEngine.once)
    func preAccountHijacking(engine: TestEngine) async throws {
        try await Self.withProviders(engine) { app, provider in
            // The attacker: an account with a password and the victim's address, never confirmed, and a live session.
            try await app.registerPhoneAccount(phone: "+79120000001", password: "attacker-91!", email: "victim@example.com")
            let attacker = try await app.v1.login("+79120000001", "attacker-91!")
            #expect(attacker.account.email == "victim@example.com" && !attacker.account.emailConfirmed)

            // The victim signs in with Apple, whose address Apple verified.
            let victim = try await Self.signIn(app, V1.Identities.apple.path, try provider.token(Self.apple(app, sub: "victim.0001", email: "victim@example.com")))
            #expect(victim.status == .created, "\(victim.text)")
            let victimAccount = try victim.decoded(as: AuthSession.self).account
            #expect(victimAccount.id != attacker.account.id, "a new account: never merged into the one that claimed the address")
            #expect(victimAccount.email == "victim@example.com" && victimAccount.emailConfirmed)
            // The attacker's account lost the claim; its password opens only its own account.
            #expect(try await app.v1.me(attacker.token).email == nil)
            try expectProblem(try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "victim@example.com", password: "attacker-91!")),
                              .badRequest, .invalidCredentials)
            #expect(try await app.v1.login("+79120000001", "attacker-91!").account.id == attacker.account.id)

            // A provider's unverified address is only information: the account is made without it.
            let unverified = try await Self.signIn(app, V1.Identities.google.path,
                                                   try provider.token(Self.google(app, sub: "g-unverified", email: "victim@example.com", verified: false)))
            #expect(unverified.status == .created, "\(unverified.text)")
            let other = try unverified.decoded(as: AuthSession.self).account
            #expect(other.id != victimAccount.id && other.email == nil)
        }
    }

    @Test("a provider's verified address that is an account's confirmed one: no account is made and none joined (identity_link_required with a single-use offer that expires); the password and the second factor link it, other sessions end, the owner is told; then the provider signs in, after its second step", arguments: TestEngine.once)
    func linkingNeedsProof(engine: TestEngine) async throws {
        try await Self.withProviders(engine) { app, provider in
            let (ownerToken, uri, _) = try await SecondFactorTests.accountWithTOTP(app, email: "fpi@bk.ru")
            let refused = try expectProblem(try await Self.signIn(app, V1.Identities.apple.path, try provider.token(Self.apple(app, sub: "owner.1", email: "fpi@bk.ru"))),
                                            .conflict, .identityLinkRequired)
            let offer = try #require(refused.identityLink)
            #expect(offer.provider == .apple && offer.email == "fpi@bk.ru")
            let accounts = try await app.services.database.db.raw("SELECT COUNT(*) AS n FROM accounts").first()?.decode(column: "n", as: Int.self)
            #expect(accounts == 1, "no account made")
            // An offer lives GATEHOUSE_IDENTITY_LINK_SECONDS (600): past it, even the password takes nothing up.
            app.clock.advance(by: 601)
            try expectProblem(try await app.v1.post(V1.Identities.link.path, IdentityLinkRequest(linkToken: offer.linkToken, currentPassword: SecondFactorTests.password)),
                              .badRequest, .identityLinkInvalid)
            let renewed = try expectProblem(try await Self.signIn(app, V1.Identities.apple.path, try provider.token(Self.apple(app, sub: "owner.1", email: "fpi@bk.ru"))),
                                            .conflict, .identityLinkRequired)
            let fresh = try #require(renewed.identityLink)

            // By the address alone: nothing. A wrong password, or the password without the second factor: no link.
            try expectProblem(try await app.v1.post(V1.Identities.link.path, IdentityLinkRequest(linkToken: fresh.linkToken, currentPassword: "wrong-91!")),
                              .badRequest, .invalidCredentials)
            try expectProblem(try await app.v1.post(V1.Identities.link.path, IdentityLinkRequest(linkToken: fresh.linkToken, currentPassword: SecondFactorTests.password)),
                              .forbidden, .secondFactorRequired)
            try expectProblem(try await app.v1.post(V1.Identities.link.path, IdentityLinkRequest(linkToken: "made-up", currentPassword: SecondFactorTests.password)),
                              .badRequest, .identityLinkInvalid)
            app.clock.advance(by: 31)
            let code = try await SecondFactorTests.appCode(uri, at: app.clock.now)
            let linked = try await app.v1.post(V1.Identities.link.path, IdentityLinkRequest(linkToken: fresh.linkToken, currentPassword: SecondFactorTests.password, code: code))
            #expect(linked.status == .created, "\(linked.text)")
            let session = try linked.decoded(as: AuthSession.self)
            #expect(try await app.v1.get(V1.Accounts.me.path, token: ownerToken).status == .unauthorized, "the other sessions ended")
            #expect(try await app.outbox(to: "fpi@bk.ru").contains { $0.body.contains("Apple") }, "the owner is told")
            // The offer is single-use.
            app.clock.advance(by: 31)
            try expectProblem(try await app.v1.post(V1.Identities.link.path, IdentityLinkRequest(linkToken: fresh.linkToken, currentPassword: SecondFactorTests.password,
                                                                                                     code: try await SecondFactorTests.appCode(uri, at: app.clock.now))),
                              .badRequest, .identityLinkInvalid)

            // Now Apple signs in to this account — after the second step, which the account asks for. The code Apple gave
            // is exchanged all the same: its refresh token is kept for the revocation.
            let step = try expectProblem(try await Self.signIn(app, V1.Identities.apple.path, try provider.token(Self.apple(app, sub: "owner.1", email: "fpi@bk.ru")),
                                                               code: provider.code(for: Self.appleClient)),
                                         .forbidden, .secondFactorRequired)
            let kept = try await app.services.database.db.raw("SELECT refresh_token_sealed FROM account_identities WHERE subject = 'owner.1'").first()
            #expect(try kept?.decode(column: "refresh_token_sealed", as: String?.self) != nil, "the exchanged token is kept")
            let challenge = try #require(step.secondFactor)
            app.clock.advance(by: 31)
            let finished = try await app.v1.post(V1.SecondFactors.complete.path,
                                                 SecondFactorLogin(challenge: challenge.challenge, code: try await SecondFactorTests.appCode(uri, at: app.clock.now)))
            #expect(finished.status == .created, "\(finished.text)")
            #expect(try finished.decoded(as: AuthSession.self).account.id == session.account.id)
            let events = try await app.services.audit.events(AuditLog.Query(kinds: [.identityLinked, .loginSucceeded]))
            #expect(events.contains { $0.kind == "identity.linked" && $0.detail["provider"] == "apple" })
            #expect(events.contains { $0.kind == "login.succeeded" && $0.detail["with"] == "apple + totp" }, "\(events.map(\.detail))")
        }
    }

    @Test("my identities: a signed-in account links Google with a step-up (a session alone, or a wrong password, cannot) and unlinks it; an account made by Apple has no password and steps up with a fresh sign-in of its own identity (never another account's, each token once); its last way in cannot be removed; an identity of another account is taken; a locked account's provider sign-in is refused", arguments: TestEngine.once)
    func identitiesOfMine(engine: TestEngine) async throws {
        try await Self.withProviders(engine) { app, provider in
            let ann = try await app.v1.signedUp(email: "ann@example.com")
            let google = try provider.token(Self.google(app, sub: "g-ann", email: "ann@example.com"))
            try expectProblem(try await app.v1.post(V1.Identities.add.path, IdentityAddition(provider: .google, idToken: google, nonce: Self.nonce),
                                                    token: ann.token), .badRequest, .currentPasswordRequired)
            try expectProblem(try await app.v1.post(V1.Identities.add.path, IdentityAddition(provider: .google, idToken: google, nonce: Self.nonce, currentPassword: "wrong-91!"),
                                                    token: ann.token), .badRequest, .invalidCredentials)
            let added = try await app.v1.post(V1.Identities.add.path, IdentityAddition(provider: .google, idToken: google, nonce: Self.nonce, currentPassword: "secret-91!"),
                                              token: ann.token)
            #expect(added.status == .created, "\(added.text)")
            let identity = try added.decoded(as: LinkedIdentity.self)
            let byGoogle = try await Self.signIn(app, V1.Identities.google.path, try provider.token(Self.google(app, sub: "g-ann", email: "ann@example.com")))
            #expect(try byGoogle.decoded(as: AuthSession.self).account.id == ann.account.id, "\(byGoogle.text)")

            // Bo, made by Apple with no password: Ann cannot take Bo's identity; Bo cannot remove Bo's only way in.
            let bo = try await Self.signIn(app, V1.Identities.apple.path, try provider.token(Self.apple(app, sub: "bo.apple", email: nil)))
            let boSession = try bo.decoded(as: AuthSession.self)
            try expectProblem(try await app.v1.post(V1.Identities.add.path, IdentityAddition(provider: .apple, idToken: try provider.token(Self.apple(app, sub: "bo.apple", email: nil)),
                                                                                                 nonce: Self.nonce, currentPassword: "secret-91!"), token: ann.token),
                              .conflict, .identityTaken)
            let boIdentity = try #require(try await app.v1.get(V1.Identities.list.path, token: boSession.token).decoded(as: LinkedIdentityList.self).identities.first)
            let boPath = V1Client.path(V1.Identities.remove.path, ["id": boIdentity.id.uuidString])
            let boRow = try await app.services.database.db.raw("SELECT password_hash FROM accounts WHERE id = \(bind: boSession.account.id)").first()
            #expect(try boRow?.decode(column: "password_hash", as: String.self) == "!", "made by Apple: no password")
            // Bo has no password: a fresh sign-in with Apple stands for it. Apple is Bo's only way in: not removable.
            try expectProblem(try await app.v1.send(.delete, boPath, body: try V1Client.encode(IdentityRemoval(currentPassword: "anything-1")), contentType: "application/json",
                                                    token: boSession.token), .badRequest, .invalidCredentials)
            let lastWay = IdentityRemoval(reauthentication: IdentityReauthentication(provider: .apple, idToken: try provider.token(Self.apple(app, sub: "bo.apple", email: nil)),
                                                                                      nonce: Self.nonce))
            try expectProblem(try await app.v1.send(.delete, boPath, body: try V1Client.encode(lastWay), contentType: "application/json", token: boSession.token),
                              .unprocessableContent, .lastWayIn)
            // Another account's identity does not reauthenticate Bo.
            let annGoogle = IdentityReauthentication(provider: .google, idToken: try provider.token(Self.google(app, sub: "g-ann", email: "ann@example.com")), nonce: Self.nonce)
            try expectProblem(try await app.v1.send(.delete, boPath, body: try V1Client.encode(IdentityRemoval(reauthentication: annGoogle)), contentType: "application/json",
                                                    token: boSession.token), .badRequest, .identityTokenInvalid)
            // Bo adds Google with Apple's reauthentication, then removes Apple with Google's.
            let boGoogle = try await app.v1.post(V1.Identities.add.path, IdentityAddition(
                provider: .google, idToken: try provider.token(Self.google(app, sub: "g-bo", email: nil)), nonce: Self.nonce,
                reauthentication: IdentityReauthentication(provider: .apple, idToken: try provider.token(Self.apple(app, sub: "bo.apple", email: nil)), nonce: Self.nonce)),
                token: boSession.token)
            #expect(boGoogle.status == .created, "\(boGoogle.text)")
            let byGoogleReauth = IdentityReauthentication(provider: .google, idToken: try provider.token(Self.google(app, sub: "g-bo", email: nil)), nonce: Self.nonce)
            let unlinked = try await app.v1.send(.delete, boPath, body: try V1Client.encode(IdentityRemoval(reauthentication: byGoogleReauth)), contentType: "application/json",
                                                 token: boSession.token)
            #expect(unlinked.status == .noContent, "\(unlinked.text)")
            // Its token was spent by that step-up.
            let googlePath = V1Client.path(V1.Identities.remove.path, ["id": try boGoogle.decoded(as: LinkedIdentity.self).id.uuidString])
            try expectProblem(try await app.v1.send(.delete, googlePath, body: try V1Client.encode(IdentityRemoval(reauthentication: byGoogleReauth)),
                                                    contentType: "application/json", token: boSession.token), .badRequest, .identityTokenInvalid)

            // Ann unlinks Google (she keeps her password); another account's identity id is 404.
            try expectProblem(try await app.v1.send(.delete, googlePath, body: ByteBuffer(string: #"{"currentPassword":"secret-91!"}"#), contentType: "application/json", token: ann.token), .notFound, .identityNotFound)
            let annPath = V1Client.path(V1.Identities.remove.path, ["id": identity.id.uuidString])
            let removed = try await app.v1.send(.delete, annPath, body: ByteBuffer(string: #"{"currentPassword":"secret-91!"}"#), contentType: "application/json", token: ann.token)
            #expect(removed.status == .noContent, "\(removed.text)")
            #expect(try await app.v1.get(V1.Identities.list.path, token: ann.token).decoded(as: LinkedIdentityList.self).identities.isEmpty)

            // Locked: Bo's provider sign-in (Google's now) is refused as a password's would be, and makes no account.
            _ = try await app.services.locks.lock(boSession.account.id, reason: "test", by: .system(nil), origin: AuditOrigin())
            try expectProblem(try await Self.signIn(app, V1.Identities.google.path, try provider.token(Self.google(app, sub: "g-bo", email: nil))),
                              .forbidden, .accountLocked)
            // Apple's identity, unlinked, is nobody's: it would make a new account.
            let fresh = try await Self.signIn(app, V1.Identities.apple.path, try provider.token(Self.apple(app, sub: "bo.apple", email: nil)))
            #expect(try fresh.decoded(as: AuthSession.self).account.id != boSession.account.id)
        }
    }

    /// The revocations in the outbox: their status and attempts.
    static func revocations(_ app: TestHarness) async throws -> [(status: String, attempts: Int)] {
        try await app.services.database.db.raw("SELECT status, attempts FROM outbox_messages WHERE kind = 'revocation'").all().map {
            (try $0.decode(column: "status", as: String.self), try $0.decode(column: "attempts", as: Int.self))
        }
    }

    @Test("Apple's authorization code is exchanged with a client secret Apple's endpoint verifies (the team's key, its claims); the refresh token is kept sealed; an account with no password is deleted on a fresh sign-in with Apple, and its token is revoked at Apple through the outbox — Apple away for a while, then back: revoked once", .tags(.engine), arguments: TestEngine.all)
    func codeExchangeAndRevocation(engine: TestEngine) async throws {
        try await Self.withProviders(engine) { app, provider in
            let signedIn = try await Self.signIn(app, V1.Identities.apple.path, try provider.token(Self.apple(app, sub: "rev.1", email: "rev@example.com")),
                                                 code: provider.code(for: Self.appleClient), given: "Rev", family: "One")
            #expect(signedIn.status == .created, "\(signedIn.text)")
            let session = try signedIn.decoded(as: AuthSession.self)
            let refresh = try #require(provider.issuedRefreshTokens.first, "the code was exchanged")
            let row = try await app.services.database.db.raw("SELECT refresh_token_sealed, audience FROM account_identities").first()
            let sealed = try #require(try row?.decode(column: "refresh_token_sealed", as: String?.self))
            let audience = try row?.decode(column: "audience", as: String.self)
            #expect(!sealed.contains(refresh) && audience == Self.appleClient, "sealed, with its client id")
            let login = try await app.services.audit.events(AuditLog.Query(kinds: [.loginSucceeded]))
            #expect(login.first?.detail["refreshToken"] == "kept", "\(login.map(\.detail))")
            // A code Apple refuses (used before) does not stop the sign-in; the audit trail says why.
            let second = try await Self.signIn(app, V1.Identities.apple.path, try provider.token(Self.apple(app, sub: "rev.1", email: "rev@example.com")),
                                               code: "c-made-up")
            #expect(second.status == .created, "\(second.text)")
            let noted = try await app.services.audit.events(AuditLog.Query(kinds: [.loginSucceeded]))
            #expect(noted.first?.detail["refreshToken"] == "refused: HTTP 400 invalid_grant", "\(noted.map(\.detail))")

            // The account has no password: a fresh Apple sign-in proves the person to delete it. Apple is away.
            provider.away = true
            let reauth = IdentityReauthentication(provider: .apple, idToken: try provider.token(Self.apple(app, sub: "rev.1", email: "rev@example.com")), nonce: Self.nonce)
            let deleted = try await app.v1.send(.delete, V1.Accounts.deleteMe.path, body: try V1Client.encode(AccountDeletionRequest(reauthentication: reauth)),
                                                contentType: "application/json", token: session.token)
            #expect(deleted.status == .accepted, "\(deleted.text)")
            #expect(try await app.services.database.db.raw("SELECT refresh_token_sealed FROM account_identities").first()?
                .decode(column: "refresh_token_sealed", as: String?.self) == nil, "taken out of the row into the outbox")
            #expect(try await eventually { try await Self.revocations(app).first?.attempts ?? 0 >= 1 })
            app.clock.advance(by: 120)
            #expect(try await eventually { try await Self.revocations(app).first?.attempts ?? 0 >= 2 })
            let pending = try await Self.revocations(app).first?.status
            #expect(provider.revoked.isEmpty && pending == "pending")
            // Apple is back.
            provider.away = false
            app.clock.advance(by: 600)
            #expect(try await eventually { try await Self.revocations(app).first?.status == "sent" })
            #expect(provider.revoked == [refresh], "revoked once, the token the code gave")
            #expect(provider.revokeAttempts >= 3)
            #expect(provider.refusedSecrets.isEmpty, "every client secret held")
        }
    }

    @Test("Apple's notifications, signed as Apple signs them: consent-revoked ends the link and the account's sessions, once (its replay does nothing); email-disabled is noted and an older email-enabled changes nothing; one signed by another key, or issued more than a day ago, is refused; an unknown sub is ignored", arguments: TestEngine.once)
    func appleNotifications(engine: TestEngine) async throws {
        try await Self.withProviders(engine) { app, provider in
            let session = try await Self.signIn(app, V1.Identities.apple.path, try provider.token(Self.apple(app, sub: "note.1", email: "note@example.com")))
                .decoded(as: AuthSession.self)
            _ = try await Self.signIn(app, V1.Identities.apple.path, try provider.token(Self.apple(app, sub: "note.2", email: "note2@example.com")))
            func post(_ payload: String) async throws -> TestResponse {
                try await app.v1.post(V1.Identities.appleNotifications.path, AppleServerNotification(payload: payload))
            }
            func outcome(_ payload: String) async throws -> String? {
                let response = try await post(payload)
                #expect(response.status == .ok, "\(response.text)")
                return try response.decoded(as: AppleNotificationReceipt.self).outcome
            }
            let now = app.clock.now
            #expect(try await outcome(try provider.notification("email-disabled", sub: "note.2", at: now)) == "noted")
            #expect(try await outcome(try provider.notification("email-enabled", sub: "note.2", at: now.addingTimeInterval(-60))) == "ignored", "older")
            let forwarding = try await app.services.database.db.raw("SELECT email_forwarding FROM account_identities WHERE subject = 'note.2'").first()
            #expect(try forwarding?.decode(column: "email_forwarding", as: Bool.self) == false)
            #expect(try await outcome(try provider.notification("consent-revoked", sub: "nobody", at: now)) == "ignored")

            let stranger = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            try expectProblem(try await post(try provider.notification("consent-revoked", sub: "note.1", at: now, key: stranger)), .badRequest, .identityTokenInvalid)
            try expectProblem(try await post(try provider.notification("consent-revoked", sub: "note.1", at: now, iat: now.addingTimeInterval(-2 * 86_400))),
                              .badRequest, .identityTokenInvalid)

            let revoked = try provider.notification("consent-revoked", sub: "note.1", at: now)
            #expect(try await outcome(revoked) == "unlinked")
            #expect(try await app.v1.get(V1.Accounts.me.path, token: session.token).status == .unauthorized, "its sessions ended")
            #expect(try await outcome(revoked) == "ignored", "a replay does nothing more")
            let unlinked = try await app.services.audit.events(AuditLog.Query(kinds: [.identityUnlinked]))
            #expect(unlinked.count == 1 && unlinked.first?.detail["reason"] == "apple: consent-revoked")
            // The account stays, its address confirmed: Apple's next sign-in is offered for linking to it again, with its proof.
            let again = try await Self.signIn(app, V1.Identities.apple.path, try provider.token(Self.apple(app, sub: "note.1", email: "note@example.com")))
            try expectProblem(again, .conflict, .identityLinkRequired)
        }
    }

    @Test("configuration: the providers are off unless their client ids are set; Apple's team, key id and key file go together and the key file must be a PEM key; the skew, key-set ages, refetch interval, offer lifetime and second factor are read; bad values name their variable")
    func configuration() throws {
        #expect(try GatehouseConfiguration.fromEnvironment([:]).identityProviders.apple.clientIDs.isEmpty)
        let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("AuthKey-\(UUID().uuidString).p8")
        try P256.Signing.PrivateKey().pemRepresentation.write(to: keyFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: keyFile) }
        let read = try GatehouseConfiguration.fromEnvironment([
            "GATEHOUSE_APPLE_CLIENT_IDS": "com.example.shop, com.example.shop.web", "GATEHOUSE_APPLE_TEAM_ID": "TEAM123456",
            "GATEHOUSE_APPLE_KEY_ID": "SIWA123456", "GATEHOUSE_APPLE_KEY_FILE": keyFile.path, "GATEHOUSE_APPLE_URL": "http://127.0.0.1:9/",
            "GATEHOUSE_GOOGLE_CLIENT_IDS": "1234-abc.apps.googleusercontent.com", "GATEHOUSE_IDENTITY_TOKEN_SKEW_SECONDS": "30",
            "GATEHOUSE_IDENTITY_KEYS_MIN_AGE_SECONDS": "120", "GATEHOUSE_IDENTITY_KEYS_MAX_AGE_SECONDS": "7200",
            "GATEHOUSE_IDENTITY_KEYS_REFETCH_SECONDS": "300", "GATEHOUSE_IDENTITY_LINK_SECONDS": "900", "GATEHOUSE_IDENTITY_SECOND_FACTOR": "false",
        ]).identityProviders
        #expect(read.apple.clientIDs == ["com.example.shop", "com.example.shop.web"] && read.apple.url == "http://127.0.0.1:9")
        #expect(read.apple.teamID == "TEAM123456" && read.apple.keyID == "SIWA123456" && read.apple.privateKeyPEM?.contains("BEGIN PRIVATE KEY") == true)
        #expect(read.google.clientIDs == ["1234-abc.apps.googleusercontent.com"] && read.skew == 30 && read.keysLeastAge == 120 && read.keysMostAge == 7200)
        #expect(read.keysRefetchInterval == 300 && read.linkTTL == 900 && !read.secondFactor)
        for (name, value) in [("GATEHOUSE_APPLE_TEAM_ID", "TEAM123456"), ("GATEHOUSE_APPLE_KEY_FILE", "/nonexistent/AuthKey.p8"),
                              ("GATEHOUSE_APPLE_URL", "appleid.apple.com"), ("GATEHOUSE_GOOGLE_KEYS_URL", "ftp://example.com/certs"),
                              ("GATEHOUSE_IDENTITY_TOKEN_SKEW_SECONDS", "3600"), ("GATEHOUSE_IDENTITY_LINK_SECONDS", "5"),
                              ("GATEHOUSE_IDENTITY_SECOND_FACTOR", "maybe")] {
            #expect(throws: ConfigurationError.self, "\(name)=\(value)") { try GatehouseConfiguration.fromEnvironment([name: value]) }
        }
    }

    @Test("a provider the operator did not configure answers 404 identity_provider_off and is not listed", arguments: TestEngine.once)
    func providerOff(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            try expectProblem(try await app.v1.post(V1.Identities.apple.path, IdentitySignIn(idToken: "x.y.z", nonce: "n")), .notFound, .identityProviderOff)
            #expect(try await app.v1.get(V1.Identities.providers.path).decoded(as: SignInProviders.self).providers.isEmpty)
        }
    }
}
