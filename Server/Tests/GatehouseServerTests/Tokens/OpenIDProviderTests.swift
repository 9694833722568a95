import Crypto
import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import GatehouseServer
import GatehouseTestSupport
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// The OpenID Connect provider at the wire (docs/oidc.md, "The provider"), on both engines: the authorization code
/// flow with PKCE through the sign-in page's forms, the token endpoint's rules (PKCE, redirect URI, a code used twice),
/// `userinfo`, refresh, introspection, revocation, `client_credentials` and logout. A real client and a browser drive
/// it in `OpenIDBrowserTests`.
@Suite("OpenID Connect provider")
struct OpenIDProviderTests {
    static let password = "secret-91!"
    static let redirect = "https://shop.example/callback"

    /// A browser of one person: its cookies, kept between requests.
    final class Browser: @unchecked Sendable {
        let app: TestHarness
        var cookies: [String: String] = [:]

        init(_ app: TestHarness) { self.app = app }

        var cookieHeader: HTTPFields { cookies.isEmpty ? [:] : [.cookie: cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")] }

        func keep(_ response: TestResponse) {
            for value in response.headers[values: .setCookie] {
                let pair = value.split(separator: ";")[0].split(separator: "=", maxSplits: 1).map(String.init)
                guard pair.count == 2 else { continue }
                if pair[1].isEmpty { cookies[pair[0]] = nil } else { cookies[pair[0]] = pair[1] }
            }
        }

        func get(_ path: String) async throws -> TestResponse {
            let response = try await app.get(path, headers: cookieHeader)
            keep(response)
            return response
        }

        func post(_ path: String, _ fields: [(String, String)]) async throws -> TestResponse {
            let response = try await app.postForm(path, fields, headers: cookieHeader)
            keep(response)
            return response
        }

        /// The hidden fields of the page's first form, and `extra`, posted back.
        func submit(_ page: TestResponse, _ extra: [(String, String)], to path: String = ServerPages.OpenID.authorizeForm.path) async throws -> TestResponse {
            try await post(path, OpenIDProviderTests.hiddenFields(page.text) + extra)
        }
    }

    static func hiddenFields(_ html: String) -> [(String, String)] {
        let form = html.range(of: "<form").map { String(html[$0.lowerBound...]) } ?? html
        let end = form.range(of: "</form>").map { String(form[..<$0.lowerBound]) } ?? form
        return end.components(separatedBy: "<input type=\"hidden\" name=\"").dropFirst().compactMap { part in
            let pieces = part.components(separatedBy: "\" value=\"")
            guard pieces.count >= 2, let value = pieces[1].components(separatedBy: "\">").first else { return nil }
            return (pieces[0], unescape(value))
        }
    }

    static func unescape(_ text: String) -> String {
        text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'").replacingOccurrences(of: "&lt;", with: "<")
            .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
    }

    static func query(_ pairs: [(String, String)]) -> String { FormURLEncoding.encode(pairs) }

    static func parameters(of location: String?) -> [String: String] {
        var found: [String: String] = [:]
        for item in URLComponents(string: location ?? "")?.queryItems ?? [] { found[item.name] = item.value ?? "" }
        return found
    }

    /// A PKCE pair (RFC 7636): a verifier and its S256 challenge.
    static func pkce() -> (verifier: String, challenge: String) {
        let verifier = Secrets.systemToken() + "-x"
        return (verifier, OpenIDProvider.challenge(of: verifier))
    }

    static func authorization(_ client: String, challenge: String, scope: String = "openid profile email", state: String = "st-1", nonce: String = "n-0S6",
                              redirect: String = redirect, extra: [(String, String)] = []) -> String {
        ServerPages.OpenID.authorize.path + "?" + query([("response_type", "code"), ("client_id", client), ("redirect_uri", redirect), ("scope", scope),
                                                         ("state", state), ("nonce", nonce), ("code_challenge", challenge),
                                                         ("code_challenge_method", "S256")] + extra)
    }

    static func register(_ app: TestHarness, confidential: Bool = true, firstParty: Bool = false,
                         scopes: [String] = ["openid", "profile", "email", "phone", "offline_access"]) async throws -> (OpenIDClient, String?) {
        try await app.services.openID.register(.init(name: "Shop", redirectURIs: [redirect], postLogoutRedirectURIs: ["https://shop.example/bye"],
                                                     confidential: confidential, scopes: scopes, firstParty: firstParty), by: .system("test"))
    }

    /// Signs `identifier` in on the page and allows the client: the redirect to the client (a 303).
    static func signIn(_ browser: Browser, client: String, challenge: String, identifier: String = "ann@example.com", allow: Bool = true) async throws -> TestResponse {
        let page = try await browser.get(authorization(client, challenge: challenge))
        #expect(page.status == .ok, "\(page.text)")
        var next = try await browser.submit(page, [("identifier", identifier), ("password", password)])
        if next.status == .ok, next.text.contains("name=\"decision\"") {
            next = try await browser.submit(next, [("decision", allow ? "allow" : "deny")])
        }
        #expect(next.status == .seeOther, "\(next.status) \(next.text)")
        return next
    }

    static func exchange(_ app: TestHarness, client: OpenIDClient, secret: String?, code: String, verifier: String?, redirect: String = redirect) async throws -> TestResponse {
        var fields = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect), ("client_id", client.id)]
        if let verifier { fields.append(("code_verifier", verifier)) }
        if let secret { fields.append(("client_secret", secret)) }
        return try await app.postForm(ServerPages.OpenID.token.path, fields)
    }

    static func json(_ response: TestResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any], "\(response.status) \(response.text)")
    }

    /// The `error` of an OAuth refusal.
    static func oauthError(_ response: TestResponse) -> String? {
        (try? JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])?["error"] as? String
    }

    static func claims(of jwt: String) throws -> (header: [String: Any], claims: [String: Any]) {
        let parts = jwt.split(separator: ".").map(String.init)
        let header = try #require(Base64URL.decode(parts[0]).flatMap { try? JSONSerialization.jsonObject(with: Data($0)) as? [String: Any] })
        let claims = try #require(Base64URL.decode(parts[1]).flatMap { try? JSONSerialization.jsonObject(with: Data($0)) as? [String: Any] })
        return (header, claims)
    }

    @Test("the code flow through the pages: sign-in, consent, a code with state and iss; the exchange answers an ID token (nonce, auth_time, amr, typ JWT, aud the client), an access token userinfo takes, a refresh token that rotates; introspection and revocation speak of this client's tokens only", .tags(.engine), arguments: TestEngine.all)
    func codeFlow(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            try await app.registerPhoneAccount(email: "ann@example.com", confirmingEmail: true)
            let (client, secret) = try await Self.register(app)
            let (other, otherSecret) = try await Self.register(app)
            let (verifier, challenge) = Self.pkce()
            let browser = Browser(app)

            // MUT
            let redirected = try await Self.signIn(browser, client: client.id, challenge: challenge)
            let answer = Self.parameters(of: redirected.headers[.location])
            let exchanged = try await Self.exchange(app, client: client, secret: secret, code: answer["code"] ?? "", verifier: verifier)
            let tokens = try Self.json(exchanged)
            let access = try #require(tokens["access_token"] as? String)
            let refresh = try #require(tokens["refresh_token"] as? String)
            let idToken = try Self.claims(of: try #require(tokens["id_token"] as? String))
            let info = try await app.get(ServerPages.OpenID.userinfo.path, token: access)
            let renewed = try Self.json(try await app.postForm(ServerPages.OpenID.token.path, [("grant_type", "refresh_token"), ("refresh_token", refresh),
                                                                                                ("client_id", client.id), ("client_secret", secret!)]))
            let otherRefresh = try await app.postForm(ServerPages.OpenID.token.path, [("grant_type", "refresh_token"), ("refresh_token", renewed["refresh_token"] as? String ?? ""),
                                                                                       ("client_id", other.id), ("client_secret", otherSecret!)])
            let basic = "Basic " + Data("\(client.id):\(secret!)".utf8).base64EncodedString()
            let introspected = try Self.json(try await app.postForm(ServerPages.OpenID.introspect.path, [("token", access)], headers: [.authorization: basic]))
            let byOther = try Self.json(try await app.postForm(ServerPages.OpenID.introspect.path, [("token", access), ("client_id", other.id),
                                                                                                   ("client_secret", otherSecret!)]))
            let revoked = try await app.postForm(ServerPages.OpenID.revoke.path, [("token", renewed["refresh_token"] as? String ?? "")], headers: [.authorization: basic])
            let afterRevoke = try await app.get(ServerPages.OpenID.userinfo.path, token: renewed["access_token"] as? String)
            let v1WithClientToken = try await app.v1.get(V1.Accounts.me.path, token: access)

            // validate
            #expect(redirected.status == .seeOther)
            #expect(redirected.headers[.location]?.hasPrefix(Self.redirect + "?code=ghac_") == true, "\(redirected.headers[.location] ?? "")")
            #expect(answer["state"] == "st-1" && answer["iss"] == app.configuration.publicURL)
            #expect(exchanged.status == .ok && exchanged.headers[.cacheControl] == "no-store", "\(exchanged.text)")
            #expect(tokens["token_type"] as? String == "Bearer" && tokens["scope"] as? String == "openid profile email")
            #expect(idToken.header["typ"] as? String == "JWT" && idToken.header["alg"] as? String == "ES256")
            #expect(idToken.claims["aud"] as? String == client.id && idToken.claims["azp"] as? String == client.id)
            #expect(idToken.claims["nonce"] as? String == "n-0S6" && idToken.claims["iss"] as? String == app.configuration.publicURL)
            #expect(idToken.claims["amr"] as? [String] == ["pwd"] && idToken.claims["auth_time"] as? Int != nil)
            let accessClaims = try Self.claims(of: access)
            #expect(accessClaims.header["typ"] as? String == "at+jwt" && accessClaims.claims["aud"] as? String == client.id)
            #expect(accessClaims.claims["scope"] as? String == "openid profile email")
            #expect(info.status == .ok, "\(info.text)")
            let person = try Self.json(info)
            #expect(person["sub"] as? String == idToken.claims["sub"] as? String && person["email"] as? String == "ann@example.com")
            #expect(person["email_verified"] as? Bool == true && person["phone_number"] == nil, "phone was not asked for")
            #expect((renewed["refresh_token"] as? String)?.hasPrefix("ghr_") == true && renewed["refresh_token"] as? String != refresh)
            #expect(otherRefresh.status == .badRequest && Self.oauthError(otherRefresh) == "invalid_grant")
            #expect(introspected["active"] as? Bool == true && introspected["client_id"] as? String == client.id && introspected["sub"] as? String == person["sub"] as? String)
            #expect(byOther["active"] as? Bool == false && byOther.count == 1, "another client learns nothing: \(byOther)")
            #expect(revoked.status == .ok)
            #expect(afterRevoke.status == .unauthorized && afterRevoke.headers[.wwwAuthenticate]?.contains("invalid_token") == true)
            #expect(v1WithClientToken.status == .unauthorized, "a client's token is not a /v1 token")
        }
    }

    @Test("PKCE and redirect URIs: an unknown client or a redirect URI one character off is a page and never a redirect; plain, a missing challenge or another response type go back as errors with state and iss; a missing or wrong verifier, another redirect URI or a late code are invalid_grant; a code used twice ends what its first use opened", .tags(.engine), arguments: TestEngine.all)
    func refusals(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            try await app.registerPhoneAccount(email: "ann@example.com", confirmingEmail: true)
            let (client, secret) = try await Self.register(app, firstParty: true)
            let (verifier, challenge) = Self.pkce()
            let browser = Browser(app)
            _ = try await Self.signIn(browser, client: client.id, challenge: challenge)
            func code(_ challenge: String = challenge) async throws -> String {
                let response = try await browser.get(Self.authorization(client.id, challenge: challenge))
                return try #require(Self.parameters(of: response.headers[.location])["code"], "\(response.status) \(response.text)")
            }

            // MUT + validate: the authorization endpoint
            for bad in [Self.authorization("ghc_unknown", challenge: challenge), Self.authorization(client.id, challenge: challenge, redirect: Self.redirect + "/"),
                        Self.authorization(client.id, challenge: challenge, redirect: "https://shop.example/callbacK")] {
                let page = try await browser.get(bad)
                #expect(page.status == .badRequest && page.headers[.location] == nil, "\(bad): \(page.status)")
                #expect(page.headers[.contentSecurityPolicy]?.contains("frame-ancestors 'none'") == true)
            }
            let plain = try await browser.get(Self.authorization(client.id, challenge: challenge).replacingOccurrences(of: "S256", with: "plain"))
            let missing = try await browser.get(Self.authorization(client.id, challenge: "").replacingOccurrences(of: "code_challenge=&", with: ""))
            let implicit = try await browser.get(Self.authorization(client.id, challenge: challenge).replacingOccurrences(of: "response_type=code", with: "response_type=token"))
            let noneSignedOut = try await Browser(app).get(Self.authorization(client.id, challenge: challenge, extra: [("prompt", "none")]))
            for (response, error) in [(plain, "invalid_request"), (missing, "invalid_request"), (implicit, "unsupported_response_type"), (noneSignedOut, "login_required")] {
                let answer = Self.parameters(of: response.headers[.location])
                #expect(response.status == .seeOther && answer["error"] == error && answer["state"] == "st-1" && answer["iss"] == app.configuration.publicURL,
                        "\(response.headers[.location] ?? response.text)")
                #expect(answer["code"] == nil)
            }

            // the token endpoint
            let noVerifier = try await Self.exchange(app, client: client, secret: secret, code: try await code(), verifier: nil)
            let wrongVerifier = try await Self.exchange(app, client: client, secret: secret, code: try await code(), verifier: Self.pkce().verifier)
            let otherRedirect = try await Self.exchange(app, client: client, secret: secret, code: try await code(), verifier: verifier, redirect: "https://shop.example/other")
            let late = try await code()
            app.clock.advance(by: app.configuration.tokens.authorizationCodeTTL + 1)
            let tooLate = try await Self.exchange(app, client: client, secret: secret, code: late, verifier: verifier)
            let wrongSecret = try await Self.exchange(app, client: client, secret: secret! + "x", code: try await code(), verifier: verifier)
            #expect(noVerifier.status == .badRequest && Self.oauthError(noVerifier) == "invalid_request")
            for response in [wrongVerifier, otherRedirect, tooLate] {
                #expect(response.status == .badRequest && Self.oauthError(response) == "invalid_grant", "\(response.text)")
            }
            #expect(wrongSecret.status == .unauthorized && Self.oauthError(wrongSecret) == "invalid_client")

            // a code used twice
            let twice = try await code()
            let first = try Self.json(try await Self.exchange(app, client: client, secret: secret, code: twice, verifier: verifier))
            let second = try await Self.exchange(app, client: client, secret: secret, code: twice, verifier: verifier)
            let access = try #require(first["access_token"] as? String)
            #expect(second.status == .badRequest && Self.oauthError(second) == "invalid_grant")
            #expect(try await app.get(ServerPages.OpenID.userinfo.path, token: access).status == .unauthorized, "the first use's tokens are revoked")
            let refreshed = try await app.postForm(ServerPages.OpenID.token.path, [("grant_type", "refresh_token"), ("refresh_token", first["refresh_token"] as? String ?? ""),
                                                                                    ("client_id", client.id), ("client_secret", secret!)])
            #expect(refreshed.status == .badRequest)
            let events = try await app.services.audit.events(AuditLog.Query(kinds: [.authorizationCodeReused]))
            #expect(events.count == 1)
        }
    }

    @Test("client_credentials: a confidential client's own token (sub the client, no sid, its own scopes) that /v1 and userinfo refuse; a public client has none; a secret guessed over and over is throttled")
    func serviceTokens() async throws {
        try await withApp(.sqlite, configure: { $0.limits.loginFailuresPerAccount = 3 }) { app in
            let (client, secret) = try await Self.register(app, scopes: ["openid", "bookings:read", "bookings:write"])
            let (publicClient, _) = try await Self.register(app, confidential: false)
            let granted = try Self.json(try await app.postForm(ServerPages.OpenID.token.path, [("grant_type", "client_credentials"), ("scope", "bookings:read"),
                                                                                                 ("client_id", client.id), ("client_secret", secret!)]))
            let token = try #require(granted["access_token"] as? String)
            let claims = try Self.claims(of: token).claims
            let wider = try await app.postForm(ServerPages.OpenID.token.path, [("grant_type", "client_credentials"), ("scope", "openid"),
                                                                                ("client_id", client.id), ("client_secret", secret!)])
            let ofPublic = try await app.postForm(ServerPages.OpenID.token.path, [("grant_type", "client_credentials"), ("client_id", publicClient.id)])
            var guesses: [HTTPResponse.Status] = []
            for _ in 0..<4 {
                guesses.append(try await app.postForm(ServerPages.OpenID.token.path, [("grant_type", "client_credentials"), ("client_id", client.id),
                                                                                        ("client_secret", "ghcs_guess")]).status)
            }
            let rightAfter = try await app.postForm(ServerPages.OpenID.token.path, [("grant_type", "client_credentials"), ("client_id", client.id), ("client_secret", secret!)])

            #expect(claims["sub"] as? String == client.id && claims["sid"] == nil && claims["amr"] == nil && claims["scope"] as? String == "bookings:read")
            #expect(claims["aud"] as? String == app.configuration.publicURL, "a service's token is for the team's services")
            #expect(try await app.v1.get(V1.Accounts.me.path, token: token).status == .unauthorized)
            #expect(try await app.get(ServerPages.OpenID.userinfo.path, token: token).status == .unauthorized)
            #expect(wider.status == .badRequest && Self.oauthError(wider) == "invalid_scope")
            #expect(ofPublic.status == .badRequest && Self.oauthError(ofPublic) == "unauthorized_client")
            #expect(guesses == [.unauthorized, .unauthorized, .unauthorized, .tooManyRequests], "\(guesses)")
            #expect(rightAfter.status == .tooManyRequests, "the budget holds for the right secret too until the window passes")
        }
    }

    @Test("logout: with an ID token the provider signed and a registered post-logout URI the client's session and the browser's sign-in end and the browser goes back with state; an unregistered URI is a page; without a hint the person is asked")
    func logout() async throws {
        try await withApp(.sqlite) { app in
            try await app.registerPhoneAccount(email: "ann@example.com", confirmingEmail: true)
            let (client, secret) = try await Self.register(app, firstParty: true)
            let (verifier, challenge) = Self.pkce()
            let browser = Browser(app)
            let code = Self.parameters(of: try await Self.signIn(browser, client: client.id, challenge: challenge).headers[.location])["code"] ?? ""
            let tokens = try Self.json(try await Self.exchange(app, client: client, secret: secret, code: code, verifier: verifier))
            let idToken = try #require(tokens["id_token"] as? String)

            let unregistered = try await browser.get(ServerPages.OpenID.logout.path + "?" + Self.query([("id_token_hint", idToken),
                                                                                                         ("post_logout_redirect_uri", "https://evil.example/")]))
            let unvouched = try await browser.get(ServerPages.OpenID.logout.path)
            let loggedOut = try await browser.get(ServerPages.OpenID.logout.path + "?" + Self.query([("id_token_hint", idToken), ("state", "s2"),
                                                                                                      ("post_logout_redirect_uri", "https://shop.example/bye")]))
            let again = try await browser.get(Self.authorization(client.id, challenge: challenge))

            #expect(unregistered.status == .badRequest && unregistered.headers[.location] == nil)
            #expect(unvouched.status == .ok && unvouched.text.contains("id=\"signout\""))
            #expect(loggedOut.status == .seeOther && loggedOut.headers[.location] == "https://shop.example/bye?state=s2")
            #expect(try await app.get(ServerPages.OpenID.userinfo.path, token: tokens["access_token"] as? String).status == .unauthorized)
            #expect(again.status == .ok && again.text.contains("id=\"signin\""), "the browser is signed out too")
        }
    }

    @Test("the page's forms: a form without its CSRF token is the sign-in page again (403); a passkey answer that cannot be read, or one of no passkey, is the page again with its message, never a 500; the pages allow one script, by its hash")
    func pageForms() async throws {
        try await withApp(.sqlite) { app in
            try await app.registerPhoneAccount(email: "ann@example.com", confirmingEmail: true)
            let (client, _) = try await Self.register(app, firstParty: true)
            let browser = Browser(app)
            let page = try await browser.get(Self.authorization(client.id, challenge: Self.pkce().challenge))
            let fields = Self.hiddenFields(page.text)

            let noCSRF = try await app.postForm(ServerPages.OpenID.authorizeForm.path, fields.filter { $0.0 != "csrf" } + [("identifier", "ann@example.com"), ("password", Self.password)],
                                                headers: browser.cookieHeader)
            let garbage = try await browser.post(ServerPages.OpenID.authorizeForm.path, fields.map { $0.0 == "step" ? ("step", "passkey") : $0 } + [("passkey", "{not json")])
            let unknown = try await browser.post(ServerPages.OpenID.authorizeForm.path, fields.map { $0.0 == "step" ? ("step", "passkey") : $0 } + [("passkey", #"{"id":"AAAA","rawId":"AAAA","type":"public-key","response":{"clientDataJSON":"e30","authenticatorData":"AAAA","signature":"AAAA"}}"#)])

            #expect(noCSRF.status == .forbidden && noCSRF.text.contains("id=\"signin\""), "\(noCSRF.status)")
            for response in [garbage, unknown] {
                #expect(response.status == .unauthorized && response.text.contains("id=\"error\"") && response.text.contains("id=\"signin\""), "\(response.status) \(response.text)")
            }
            let policy = page.headers[.contentSecurityPolicy] ?? ""
            #expect(policy.contains("script-src 'sha256-") && !policy.contains("unsafe-inline") && policy.contains("form-action 'self' https://shop.example"), "\(policy)")
            #expect(page.headers[HTTPField.Name("Referrer-Policy")!] == "no-referrer" && page.headers[HTTPField.Name("X-Frame-Options")!] == "DENY")
            #expect(page.headers[values: .setCookie].contains { $0.hasPrefix("gh_oidc_csrf=") && $0.contains("HttpOnly") && $0.contains("SameSite=Lax") && $0.contains("Path=/oauth") })
        }
    }

    @Test("discovery names every endpoint under the issuer, S256 only, ES256 only, and the iss parameter; the key set is never empty")
    func discovery() async throws {
        try await withApp(.sqlite) { app in
            let document = try Self.json(try await app.get(ServerPages.OpenID.discovery.path))
            let issuer = app.configuration.publicURL
            #expect(document["issuer"] as? String == issuer)
            #expect(document["authorization_endpoint"] as? String == issuer + "/oauth/authorize" && document["jwks_uri"] as? String == issuer + "/.well-known/jwks.json")
            #expect(document["code_challenge_methods_supported"] as? [String] == ["S256"] && document["response_types_supported"] as? [String] == ["code"])
            #expect(document["id_token_signing_alg_values_supported"] as? [String] == ["ES256"])
            #expect(document["authorization_response_iss_parameter_supported"] as? Bool == true)
            let keys = try Self.json(try await app.get(ServerPages.WellKnown.keySet.path))
            #expect((keys["keys"] as? [Any])?.isEmpty == false)
        }
    }
}
