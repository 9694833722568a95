import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import HTTPTypes
import Hummingbird
import NIOCore

/// The OpenID Connect provider's HTTP side (docs/oidc.md, "The provider"): discovery, the authorization endpoint with
/// its sign-in, second-step and consent pages, the token endpoint, `userinfo`, revocation, introspection and
/// RP-initiated logout. The rules live in `OpenIDProvider`; this reads requests, keeps the browser's sign-in in a
/// cookie (`gh_oidc`: a session of the accounts core, `HttpOnly`, `SameSite=Lax`, `Secure` outside development,
/// for `/oauth` only) and writes OAuth's answers.
package struct OpenIDController: Sendable {
    package let provider: OpenIDProvider
    package let login: LoginService
    package let passkeys: Passkeys
    package let sessions: SessionService
    package let edge: SurfaceEdge

    package static let sessionCookie = "gh_oidc"
    package static let csrfCookie = "gh_oidc_csrf"
    typealias E = ServerPages.OpenID

    package init(provider: OpenIDProvider, login: LoginService, passkeys: Passkeys, sessions: SessionService, edge: SurfaceEdge) {
        self.provider = provider
        self.login = login
        self.passkeys = passkeys
        self.sessions = sessions
        self.edge = edge
    }

    package func addRoutes(to router: some RouterMethods<GatehouseRequestContext>) {
        router.route(E.discovery) { _, _ in discovery() }
        router.route(E.authorize) { request, context in
            let params = Self.query(request)
            return try await authorize(params, step: nil, request, context)
        }
        router.route(E.authorizeForm) { request, context in
            guard let fields = try? await PageForm.read(request, limit: 16_384).fields else {
                return message(.badRequest, "page.oidc.invalidRequest", hint: "the form could not be read", language: language(nil, request))
            }
            return try await authorize(fields, step: fields["step"], request, context)
        }
        router.route(E.token, use: token)
        router.route(E.userinfo, use: userinfo)
        router.route(E.userinfoForm, use: userinfo)
        router.route(E.revoke) { request, context in try await clientCall(request, context) { client, token in
            try await provider.revoke(token, client: client)
            return Response(status: .ok)
        } }
        router.route(E.introspect) { request, context in try await clientCall(request, context) { client, token in
            json(.ok, try await provider.introspect(token, client: client) ?? ["active": .bool(false)])
        } }
        router.route(E.logout) { request, context in
            let params = Self.query(request)
            return try await logout(params, confirmed: false, request, context)
        }
        router.route(E.logoutForm) { request, context in
            guard let fields = try? await PageForm.read(request, limit: 16_384).fields else {
                return message(.badRequest, "page.oidc.invalidRequest", hint: "the form could not be read", language: language(nil, request))
            }
            return try await logout(fields, confirmed: fields["csrf"] != nil, request, context)
        }
    }

    // MARK: Discovery

    func discovery() -> Response {
        let issuer = provider.settings.issuer
        // Member by member: one literal of thirty mixed members costs the type checker seconds.
        func strings(_ values: [String]) -> JSONValue { .array(values.map { .string($0) }) }
        var document: [String: JSONValue] = [:]
        document["issuer"] = .string(issuer)
        document["authorization_endpoint"] = .string(issuer + E.authorize.path)
        document["token_endpoint"] = .string(issuer + E.token.path)
        document["userinfo_endpoint"] = .string(issuer + E.userinfo.path)
        document["jwks_uri"] = .string(issuer + ServerPages.WellKnown.keySet.path)
        document["end_session_endpoint"] = .string(issuer + E.logout.path)
        document["revocation_endpoint"] = .string(issuer + E.revoke.path)
        document["introspection_endpoint"] = .string(issuer + E.introspect.path)
        document["response_types_supported"] = strings(["code"])
        document["response_modes_supported"] = strings(["query"])
        document["grant_types_supported"] = strings(["authorization_code", "refresh_token", "client_credentials"])
        document["subject_types_supported"] = strings(["public"])
        document["id_token_signing_alg_values_supported"] = strings(["ES256"])
        document["token_endpoint_auth_methods_supported"] = strings(["client_secret_basic", "client_secret_post", "none"])
        document["revocation_endpoint_auth_methods_supported"] = strings(["client_secret_basic", "client_secret_post"])
        document["introspection_endpoint_auth_methods_supported"] = strings(["client_secret_basic", "client_secret_post"])
        document["code_challenge_methods_supported"] = strings(["S256"])
        document["scopes_supported"] = strings(OpenIDProvider.personScopes)
        document["claims_supported"] = strings(["sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "amr", "acr", "sid", "azp", "name", "given_name",
                                                "family_name", "middle_name", "preferred_username", "locale", "updated_at", "email", "email_verified",
                                                "phone_number", "phone_number_verified"])
        document["prompt_values_supported"] = strings(["none", "login", "consent"])
        document["ui_locales_supported"] = strings(AppLanguage.allCases.map(\.rawValue))
        document["authorization_response_iss_parameter_supported"] = .bool(true)
        document["request_parameter_supported"] = .bool(false)
        document["request_uri_parameter_supported"] = .bool(false)
        document["claims_parameter_supported"] = .bool(false)
        var response = json(.ok, document)
        response.headers[.cacheControl] = "public, max-age=300"
        return response
    }

    // MARK: The authorization endpoint

    /// An authorization request as checked: the client, where to send the answer, and what was asked.
    struct AuthorizationRequest {
        var client: OpenIDClient
        var redirectURI: String
        var state: String?
        var nonce: String?
        var scopes: [String]
        var challenge: String
        var prompt: Set<String>
        var maxAge: Int?
        /// The parameters to carry through the pages' forms.
        var carried: [String: String]
    }

    enum Refusal: Error {
        /// Shown on a page: the client or its redirect URI cannot be trusted with a redirect.
        case page(String)
        /// Sent back to the client's redirect URI.
        case redirect(OAuthError)
    }

    /// The request's parameters checked in OAuth's order (RFC 6749 §4.1.2.1): the client and the redirect URI first
    /// (a bad one is a page, never a redirect), then everything else (a bad one is a redirect with an `error`).
    func check(_ params: [String: String]) async throws -> (OpenIDClient?, String?, Result<AuthorizationRequest, Refusal>) {
        guard let clientID = params["client_id"], let client = try await provider.client(clientID) else {
            return (nil, nil, .failure(.page("client_id is not a registered client")))
        }
        guard let redirectURI = params["redirect_uri"], client.redirectURIs.contains(redirectURI) else {
            return (client, nil, .failure(.page("redirect_uri is not one registered for this client")))
        }
        func refuse(_ error: OAuthError) -> (OpenIDClient?, String?, Result<AuthorizationRequest, Refusal>) { (client, redirectURI, .failure(.redirect(error))) }
        if params["request"] != nil { return refuse(OAuthError("request_not_supported", "Request objects are not supported.")) }
        if params["request_uri"] != nil { return refuse(OAuthError("request_uri_not_supported", "request_uri is not supported.")) }
        if let mode = params["response_mode"], mode != "query" { return refuse(.invalidRequest("response_mode is query (or left out).")) }
        guard params["response_type"] == "code" else {
            return refuse(OAuthError("unsupported_response_type", "response_type is code: the authorization code flow, with PKCE."))
        }
        guard params["code_challenge_method"] == "S256" else {
            return refuse(.invalidRequest("PKCE is required with code_challenge_method=S256 (plain is not accepted)."))
        }
        guard let challenge = params["code_challenge"], OpenIDProvider.isChallenge(challenge) else {
            return refuse(.invalidRequest("code_challenge is required: BASE64URL(SHA-256(code_verifier)), 43 characters."))
        }
        let scopes: [String]
        do { scopes = try provider.scopes(params["scope"], of: client) } catch let error as OAuthError { return refuse(error) }
        let prompt = Set((params["prompt"] ?? "").split(separator: " ").map(String.init))
        guard prompt.isSubset(of: ["none", "login", "consent", "select_account"]), !prompt.contains("none") || prompt.count == 1 else {
            return refuse(.invalidRequest("prompt is none, or any of login, consent, select_account."))
        }
        var maxAge: Int?
        if let text = params["max_age"] {
            guard let value = Int(text), value >= 0 else { return refuse(.invalidRequest("max_age is a whole number of seconds.")) }
            maxAge = value
        }
        if (params["state"]?.utf8.count ?? 0) > 2_048 || (params["nonce"]?.utf8.count ?? 0) > 512 {
            return refuse(.invalidRequest("state is at most 2048 bytes and nonce at most 512."))
        }
        let carried = params.filter { OpenIDAuthorizationQuery.names.contains($0.key) && !InputText.hasNUL($0.value) }
        return (client, redirectURI, .success(AuthorizationRequest(client: client, redirectURI: redirectURI, state: params["state"], nonce: params["nonce"],
                                                                   scopes: scopes, challenge: challenge, prompt: prompt, maxAge: maxAge, carried: carried)))
    }

    func authorize(_ params: [String: String], step: String?, _ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        let language = language(params["ui_locales"], request)
        let auth: AuthorizationRequest
        switch try await check(params).2 {
        case .failure(.page(let why)): return message(.badRequest, "page.oidc.invalidRequest", hint: why, language: language)
        case .failure(.redirect(let error)): return redirect(params["redirect_uri"] ?? "", error: error, state: params["state"])
        case .success(let checked): auth = checked
        }
        let (csrf, csrfCookies) = csrfToken(request)
        var page = Page(auth: auth, language: language, csrf: csrf, cookies: csrfCookies, formAction: "'self' " + Self.source(of: auth.redirectURI))
        let origin = RequestOrigin(ip: request.clientIP(context: context, trustForwardedFor: edge.trustForwardedFor), language: language,
                                   device: "Browser (OpenID Connect sign-in)", requestID: context.requestID)
        var current = try await signedIn(request)
        if let step {
            guard let sent = params["csrf"], let expected = PageForm.cookies(request)[Self.csrfCookie], Secrets.constantTimeEquals(sent, expected) else {
                return page.login(error: LocalizedText("page.oidc.formExpired").render(language), status: .forbidden)
            }
            switch step {
            case "login", "second", "passkey":
                let issued: IssuedSession
                let challenge = params["challenge"].flatMap { $0.isEmpty ? nil : String($0.prefix(200)) }
                do {
                    if step == "passkey" {
                        // The assertion the page's script posted (`OpenIDPage.script`): a passkey sign-in, or the second step's.
                        guard let text = params["passkey"], text.utf8.count <= 16_384,
                              let assertion = try? JSONDecoder().decode(PasskeyAssertion.self, from: Data(text.utf8))
                        else { throw Passkeys.invalid("the passkey's answer could not be read") }
                        issued = if let challenge {
                            try await login.completeSecondStep(challenge: challenge, code: nil, recoveryCode: nil, passkey: assertion, origin: origin)
                        } else {
                            try await passkeys.login(assertion, origin: origin)
                        }
                    } else if step == "second", let challenge {
                        let typed = SecondFactors.split(params["code"] ?? "")
                        issued = try await login.completeSecondStep(challenge: challenge, code: typed.code, recoveryCode: typed.recoveryCode, origin: origin)
                    } else {
                        issued = try await login.login(identifier: params["identifier"] ?? "", password: params["password"] ?? "", origin: origin,
                                                       secondStep: true)
                    }
                } catch let error as GatehouseError {
                    let status: HTTPResponse.Status = if case .rateLimited = error.kind { .tooManyRequests } else { .unauthorized }
                    // The password was right and a second factor is wanted; or a wrong code or passkey on a live challenge: ask again.
                    if let next = error.secondFactor?.challenge ?? ([.invalidCode, .passkeyInvalid].contains(error.code) ? challenge : nil) {
                        // A passkey is offered when the account has one (the challenge says so; the form carries it on).
                        let passkey = error.secondFactor.map { $0.methods.contains("passkey") } ?? (params["offered"] == "passkey")
                        return page.secondStep(next, passkey: passkey, error: error.secondFactor == nil ? error.message.render(language) : nil,
                                               status: error.secondFactor == nil ? status : .ok)
                    }
                    return page.login(identifier: params["identifier"], error: error.message.render(language), status: status)
                }
                // A new sign-in replaces the browser's previous one.
                if let previous = current { try await sessions.revoke(sessionID: previous.session.id) }
                page.cookies.append(cookie(Self.sessionCookie, issued.token, maxAge: max(60, Int(issued.expiresAt.timeIntervalSinceNow))))
                guard let fresh = try await sessions.authenticate(token: issued.token) else { return page.login(status: .unauthorized) }
                current = fresh
            case "consent":
                guard let current else { return page.login() }
                guard params["decision"] == "allow" else {
                    return redirect(auth.redirectURI, error: OAuthError("access_denied", "The person did not allow it."), state: auth.state, cookies: page.cookies)
                }
                try await provider.consent(account: current.account.id, client: auth.client, scopes: auth.scopes, origin: origin.audit)
            default:
                return page.login()
            }
        } else if let signed = current {
            // A fresh request: prompt=login or an older sign-in than max_age asks for a new one.
            let openedAt = try await sessions.openedAt(sessionID: signed.session.id) ?? .distantPast
            if auth.prompt.contains("login") || auth.maxAge.map({ Date().timeIntervalSince(openedAt) > TimeInterval($0) }) == true { current = nil }
        }
        guard let current else {
            if auth.prompt.contains("none") {
                return redirect(auth.redirectURI, error: OAuthError("login_required", "The person is not signed in."), state: auth.state, cookies: page.cookies)
            }
            return page.login(identifier: params["login_hint"])
        }
        if step != "consent", try await provider.needsConsent(account: current.account.id, client: auth.client, scopes: auth.scopes)
            || (auth.prompt.contains("consent") && !auth.client.firstParty) {
            if auth.prompt.contains("none") {
                return redirect(auth.redirectURI, error: OAuthError("consent_required", "The person has not allowed this client yet."), state: auth.state,
                                cookies: page.cookies)
            }
            return page.consent(current.account)
        }
        let authTime = try await sessions.openedAt(sessionID: current.session.id) ?? Date()
        let code = try await provider.issueCode(client: auth.client, session: current.session, authTime: authTime, redirectURI: auth.redirectURI,
                                                challenge: auth.challenge, nonce: auth.nonce, scopes: auth.scopes)
        return Self.redirect(to: auth.redirectURI, [("code", code), ("state", auth.state), ("iss", provider.settings.issuer)], cookies: page.cookies)
    }

    /// The pages of one authorization request: each carries the request's parameters and the CSRF token.
    struct Page {
        var auth: AuthorizationRequest
        var language: AppLanguage
        var csrf: String
        var cookies: [String]
        var formAction: String

        func text(_ key: String, _ args: String...) -> String { LocalizedText(key, args).render(language) }

        var hidden: [[String: String]] {
            auth.carried.sorted { $0.key < $1.key }.map { ["name": $0.key, "value": $0.value] } + [["name": "csrf", "value": csrf]]
        }

        func render(_ values: [String: Any], status: HTTPResponse.Status) -> Response {
            var values = values
            values["hidden"] = hidden
            return OpenIDPage.render(values, language: language, status: status, cookies: cookies, formAction: formAction)
        }

        func login(identifier: String? = nil, error: String? = nil, status: HTTPResponse.Status = .ok) -> Response {
            var values: [String: Any] = ["title": text("page.oidc.signIn"), "lead": text("page.oidc.signInTo", auth.client.name), "login": true,
                                         "identifierLabel": text("page.oidc.identifier"), "passwordLabel": text("page.oidc.password"),
                                         "button": text("page.oidc.continue"), "passkeyButton": text("page.oidc.passkey"),
                                         "passkeyError": text("page.oidc.passkeyFailed")]
            if let identifier { values["identifier"] = String(identifier.prefix(200)) }
            if let error { values["error"] = error }
            return render(values, status: status)
        }

        func secondStep(_ challenge: String, passkey: Bool, error: String?, status: HTTPResponse.Status) -> Response {
            var values: [String: Any] = ["title": text("page.oidc.secondStep"), "lead": text("page.oidc.signInTo", auth.client.name), "secondStep": challenge,
                                         "passkeyOffered": passkey,
                                         "hint": text(passkey ? "page.oidc.secondStepHintPasskey" : "page.oidc.secondStepHint"), "codeLabel": text("page.oidc.code"), "button": text("page.oidc.continue"),
                                         "passkeyButton": text("page.oidc.passkeySecond"), "passkeyError": text("page.oidc.passkeyFailed")]
            if let error { values["error"] = error }
            return render(values, status: status)
        }

        func consent(_ account: AccountSnapshot) -> Response {
            let host = URLComponents(string: auth.redirectURI)?.host ?? URLComponents(string: auth.redirectURI)?.scheme ?? ""
            let who = account.email ?? account.username.map { "@" + $0 } ?? account.phone ?? account.id.uuidString.lowercased()
            return render(["title": text("page.oidc.consent"), "lead": text("page.oidc.consentAsks", auth.client.name, host), "consent": true,
                           "scopes": auth.scopes.map { text("page.oidc.scope." + $0) }, "signedInAs": text("page.oidc.signedInAs", who),
                           "allow": text("page.oidc.allow"), "deny": text("page.oidc.deny")], status: .ok)
        }
    }

    // MARK: The token endpoint

    @Sendable func token(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        do {
            let (client, fields) = try await authenticatedClient(request, context)
            let origin = RequestOrigin(ip: request.clientIP(context: context, trustForwardedFor: edge.trustForwardedFor), language: .en,
                                       device: client.name, requestID: context.requestID)
            let tokens: TokenSet
            switch fields["grant_type"] {
            case "authorization_code":
                guard let code = fields["code"] else { throw OAuthError.invalidRequest("code is required.") }
                tokens = try await provider.exchange(code: code, client: client, redirectURI: fields["redirect_uri"], verifier: fields["code_verifier"],
                                                     origin: origin)
            case "refresh_token":
                guard let refresh = fields["refresh_token"] else { throw OAuthError.invalidRequest("refresh_token is required.") }
                tokens = try await provider.refresh(refresh, client: client, origin: origin)
            case "client_credentials":
                tokens = try await provider.serviceToken(client: client, scope: fields["scope"])
            case nil:
                throw OAuthError.invalidRequest("grant_type is required.")
            default:
                throw OAuthError("unsupported_grant_type", "grant_type is authorization_code, refresh_token or client_credentials.")
            }
            var answer: [String: JSONValue] = ["access_token": .string(tokens.accessToken), "token_type": .string("Bearer"),
                                               "expires_in": .integer(Int64(tokens.expiresIn)), "scope": .string(tokens.scope)]
            if let refresh = tokens.refreshToken { answer["refresh_token"] = .string(refresh) }
            if let id = tokens.idToken { answer["id_token"] = .string(id) }
            return json(.ok, answer)
        } catch {
            return try oauthRefusal(error, request)
        }
    }

    /// Revocation and introspection: a confidential client's call about a token (`token` required).
    func clientCall(_ request: Request, _ context: GatehouseRequestContext, _ body: (OpenIDClient, String) async throws -> Response) async throws -> Response {
        do {
            let (client, fields) = try await authenticatedClient(request, context)
            guard client.isConfidential else { throw OAuthError.invalidClient }
            guard let token = fields["token"], token.utf8.count <= 8_192 else { throw OAuthError.invalidRequest("token is required.") }
            return try await body(client, token)
        } catch {
            return try oauthRefusal(error, request)
        }
    }

    /// The form of a client's call and the client it authenticates (RFC 6749 §2.3.1: HTTP Basic, or
    /// `client_id`/`client_secret` in the form; never both; a public client by its id alone).
    func authenticatedClient(_ request: Request, _ context: GatehouseRequestContext) async throws -> (OpenIDClient, [String: String]) {
        guard let fields = try? await PageForm.read(request, limit: 16_384).fields else { throw OAuthError.invalidRequest("The form could not be read.") }
        var basic: (id: String, secret: String)?
        if let header = request.headers[.authorization], header.lowercased().hasPrefix("basic ") {
            guard let data = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
                  let text = String(data: data, encoding: .utf8), let colon = text.firstIndex(of: ":"),
                  let id = String(text[..<colon]).removingPercentEncoding, let secret = String(text[text.index(after: colon)...]).removingPercentEncoding
            else { throw OAuthError.invalidClient }
            basic = (id, secret)
        }
        if basic != nil, fields["client_secret"] != nil { throw OAuthError.invalidRequest("Authenticate one way: HTTP Basic or client_secret, not both.") }
        if let basic, let id = fields["client_id"], id != basic.id { throw OAuthError.invalidRequest("client_id is not the one authenticated.") }
        guard let id = basic?.id ?? fields["client_id"] else { throw OAuthError.invalidClient }
        let ip = request.clientIP(context: context, trustForwardedFor: edge.trustForwardedFor)
        return (try await provider.authenticate(clientID: id, secret: basic?.secret ?? fields["client_secret"], ip: ip), fields)
    }

    func oauthRefusal(_ error: any Error, _ request: Request) throws -> Response {
        if let error = error as? OAuthError {
            var response = json(HTTPResponse.Status(code: error.status), ["error": .string(error.code), "error_description": .string(error.description)])
            if error.status == 401 {
                let basic = request.headers[.authorization]?.lowercased().hasPrefix("basic ") == true
                response.headers[.wwwAuthenticate] = basic ? "Basic realm=\"gatehouse\"" : "Bearer realm=\"gatehouse\""
            }
            return response
        }
        if let error = error as? GatehouseError, case .rateLimited = error.kind {
            return json(.tooManyRequests, ["error": .string("invalid_client"), "error_description": .string("Too many failed attempts: try again later.")])
        }
        throw error
    }

    // MARK: userinfo

    @Sendable func userinfo(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        guard let token = request.bearerToken else {
            return Response(status: .unauthorized, headers: [.wwwAuthenticate: "Bearer realm=\"gatehouse\""])
        }
        guard let (account, scopes) = try await provider.person(of: token) else {
            return Response(status: .unauthorized, headers: [.wwwAuthenticate: "Bearer realm=\"gatehouse\", error=\"invalid_token\""])
        }
        guard scopes.contains("openid") else {
            return Response(status: .forbidden, headers: [.wwwAuthenticate: "Bearer realm=\"gatehouse\", error=\"insufficient_scope\", scope=\"openid\""])
        }
        var claims: [String: JSONValue] = ["sub": .string(account.id.uuidString.lowercased())]
        func put(_ name: String, _ value: String?) { if let value, !value.isEmpty { claims[name] = .string(value) } }
        if scopes.contains("profile") {
            put("name", [account.firstName, account.lastName].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " "))
            put("given_name", account.firstName)
            put("family_name", account.lastName)
            put("middle_name", account.middleName)
            put("preferred_username", account.username)
            put("locale", account.locale)
            claims["updated_at"] = .integer(Int64(account.updatedAt.timeIntervalSince1970))
        }
        if scopes.contains("email"), let email = account.email {
            claims["email"] = .string(email)
            claims["email_verified"] = .bool(account.isEmailConfirmed)
        }
        if scopes.contains("phone"), let phone = account.phone {
            claims["phone_number"] = .string(phone)
            claims["phone_number_verified"] = .bool(account.phoneVerifiedAt != nil)
        }
        return json(.ok, claims)
    }

    // MARK: Logout

    /// RP-initiated logout: with an `id_token_hint` this provider signed, the client's session and the browser's
    /// sign-in end and the browser goes to a `post_logout_redirect_uri` registered for that client; without one the
    /// person is asked first (a page that is not the client's cannot sign anybody out).
    func logout(_ params: [String: String], confirmed: Bool, _ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        let language = language(params["ui_locales"], request)
        let hint = try await params["id_token_hint"].asyncMap { try await provider.idTokenHint($0) } ?? nil
        let clientID = hint?.aud ?? params["client_id"]
        var target: String?
        if let uri = params["post_logout_redirect_uri"] {
            guard let clientID, let client = try await provider.client(clientID), client.postLogoutRedirectURIs.contains(uri) else {
                return message(.badRequest, "page.oidc.invalidRequest", hint: "post_logout_redirect_uri is not one registered for this client", language: language)
            }
            target = uri
        }
        let current = try await signedIn(request)
        let (csrf, csrfCookies) = csrfToken(request)
        if confirmed {
            guard let sent = params["csrf"], let expected = PageForm.cookies(request)[Self.csrfCookie], Secrets.constantTimeEquals(sent, expected) else {
                return message(.forbidden, "page.oidc.signOut", hint: nil, language: language, lead: LocalizedText("page.oidc.formExpired").render(language))
            }
        } else if hint == nil || (current != nil && current?.account.id.uuidString.lowercased() != hint?.sub) {
            // Nobody vouches for this request: ask.
            var hidden = params.filter { ["post_logout_redirect_uri", "state", "client_id", "id_token_hint"].contains($0.key) && !InputText.hasNUL($0.value) }
                .sorted { $0.key < $1.key }.map { ["name": $0.key, "value": $0.value] }
            hidden.append(["name": "csrf", "value": csrf])
            return OpenIDPage.render(["title": LocalizedText("page.oidc.signOut").render(language), "lead": LocalizedText("page.oidc.signOutAsk").render(language),
                                      "logout": true, "hidden": hidden, "button": LocalizedText("page.oidc.signOut").render(language)],
                                     language: language, cookies: csrfCookies, formAction: "'self'" + (target.map { " " + Self.source(of: $0) } ?? ""))
        }
        if let hint, let sid = UUID(uuidString: hint.sid) { try await provider.endGrant(session: sid, client: hint.aud) }
        if let current { try await sessions.revoke(sessionID: current.session.id) }
        let cleared = [cookie(Self.sessionCookie, "", maxAge: 0)]
        if let target { return Self.redirect(to: target, [("state", params["state"])], cookies: cleared) }
        return message(.ok, "page.oidc.signOut", hint: nil, language: language, lead: LocalizedText("page.oidc.signedOut").render(language), cookies: cleared)
    }

    // MARK: Shared

    /// The query's parameters as a form encodes them (RFC 6749 Appendix B: `+` is a space), the first of a repeated name.
    static func query(_ request: Request) -> [String: String] {
        var params: [String: String] = [:]
        for (name, value) in FormParameters.parseURLEncoded(request.uri.query ?? "") where params[name] == nil { params[name] = value }
        return params
    }

    func language(_ uiLocales: String?, _ request: Request) -> AppLanguage {
        // `ui_locales` is space-separated tags in order of preference: read as an Accept-Language of them.
        AppLanguage.negotiate(uiLocales.map { $0.split(separator: " ").prefix(10).joined(separator: ",") },
                              fallback: AppLanguage.negotiate(request.headers[.acceptLanguage], fallback: .en))
    }

    /// The browser's sign-in at the provider, from its cookie.
    func signedIn(_ request: Request) async throws -> SessionWithAccount? {
        guard let token = PageForm.cookies(request)[Self.sessionCookie], !token.isEmpty, token.count <= 100 else { return nil }
        return try await sessions.authenticate(token: token)
    }

    func cookie(_ name: String, _ value: String, maxAge: Int?) -> String {
        PageForm.cookie(name, value, path: "/oauth", sameSite: "Lax", secure: edge.secureCookies, maxAge: maxAge)
    }

    func csrfToken(_ request: Request) -> (String, [String]) {
        if let token = PageForm.cookies(request)[Self.csrfCookie], token.count == 43 { return (token, []) }
        let token = Secrets.systemToken()
        return (token, [cookie(Self.csrfCookie, token, maxAge: nil)])
    }

    func message(_ status: HTTPResponse.Status, _ titleKey: String, hint: String?, language: AppLanguage, lead: String? = nil, cookies: [String] = []) -> Response {
        var values: [String: Any] = ["title": LocalizedText(titleKey).render(language)]
        if let lead { values["lead"] = lead }
        if let hint { values["error"] = LocalizedText("page.oidc.invalidRequestHint", [hint]).render(language) }
        return OpenIDPage.render(values, language: language, status: status, cookies: cookies)
    }

    func redirect(_ uri: String, error: OAuthError, state: String?, cookies: [String] = []) -> Response {
        Self.redirect(to: uri, [("error", error.code), ("error_description", error.description), ("state", state), ("iss", provider.settings.issuer)],
                      cookies: cookies)
    }

    /// A 303 to `uri` with `pairs` added to its query (RFC 6749 §4.1.2: the redirect URI's own query kept).
    static func redirect(to uri: String, _ pairs: [(String, String?)], cookies: [String]) -> Response {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let query = pairs.compactMap { name, value in value.map { "\(name)=\($0.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" } }
            .joined(separator: "&")
        var headers: HTTPFields = [.location: query.isEmpty ? uri : uri + (uri.contains("?") ? "&" : "?") + query, HTTPField.Name("Referrer-Policy")!: "no-referrer"]
        for cookie in cookies { headers.append(HTTPField(name: .setCookie, value: cookie)) }
        return Response(status: .seeOther, headers: headers)
    }

    /// A URI's origin as a CSP source (`https://app.example:8443`), or its scheme (`com.example.app:`).
    static func source(of uri: String) -> String {
        guard let parts = URLComponents(string: uri), let scheme = parts.scheme?.lowercased() else { return "" }
        guard let host = parts.host, scheme == "https" || scheme == "http" else { return scheme + ":" }
        return "\(scheme)://\(host)" + (parts.port.map { ":\($0)" } ?? "")
    }

    func json(_ status: HTTPResponse.Status, _ value: [String: JSONValue]) -> Response {
        let body = (try? JSONValue.object(value).sortedJSON(escapingSlashes: false)) ?? Data("{}".utf8)
        return Response(status: status, headers: [.contentType: "application/json", .cacheControl: "no-store", HTTPField.Name("Pragma")!: "no-cache"],
                        body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}

extension Optional {
    fileprivate func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}
