import Crypto
import Foundation
import GatehouseFoundation
import GatehousePlatform

/// A refusal of the provider as OAuth 2.0 writes it (RFC 6749 §5.2, §4.1.2.1): its `error` code, a sentence for the
/// developer, and the HTTP status of the token endpoint's answer.
package struct OAuthError: Error, Sendable, Equatable {
    package var code: String
    package var description: String
    package var status: Int

    package init(_ code: String, _ description: String, status: Int = 400) {
        self.code = code
        self.description = description
        self.status = status
    }

    package static func invalidRequest(_ why: String) -> OAuthError { OAuthError("invalid_request", why) }
    package static func invalidGrant(_ why: String) -> OAuthError { OAuthError("invalid_grant", why) }
    package static let invalidClient = OAuthError("invalid_client", "The client is unknown, disabled, or its credentials are wrong.", status: 401)
}

/// What the token endpoint answers (RFC 6749 §5.1, OpenID Connect Core §3.1.3.3).
package struct TokenSet: Sendable {
    package var accessToken: String
    package var expiresIn: Int
    package var refreshToken: String?
    package var idToken: String?
    package var scope: String
}

/// The claims of an ID token (OpenID Connect Core §2): a statement to its client of who signed in, when and how.
package struct IDClaims: Codable, Sendable, Equatable {
    package var iss: String
    package var sub: String
    package var aud: String
    package var exp: Int64
    package var iat: Int64
    package var authTime: Int64
    package var nonce: String?
    package var amr: [String]
    package var acr: String
    package var sid: String
    package var azp: String

    private enum Claim: String, CodingKey {
        case iss, sub, aud, exp, iat, authTime = "auth_time", nonce, amr, acr, sid, azp
    }

    package init(iss: String, sub: String, aud: String, exp: Int64, iat: Int64, authTime: Int64, nonce: String?, amr: [String], acr: String,
                 sid: String, azp: String) {
        (self.iss, self.sub, self.aud, self.exp, self.iat, self.authTime) = (iss, sub, aud, exp, iat, authTime)
        (self.nonce, self.amr, self.acr, self.sid, self.azp) = (nonce, amr, acr, sid, azp)
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Claim.self)
        self.init(iss: try c.decode(String.self, forKey: .iss), sub: try c.decode(String.self, forKey: .sub), aud: try c.decode(String.self, forKey: .aud),
                  exp: try c.decode(Int64.self, forKey: .exp), iat: try c.decode(Int64.self, forKey: .iat),
                  authTime: try c.decode(Int64.self, forKey: .authTime), nonce: try c.decodeIfPresent(String.self, forKey: .nonce),
                  amr: try c.decode([String].self, forKey: .amr), acr: try c.decode(String.self, forKey: .acr), sid: try c.decode(String.self, forKey: .sid),
                  azp: try c.decode(String.self, forKey: .azp))
    }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Claim.self)
        try c.encode(iss, forKey: .iss)
        try c.encode(sub, forKey: .sub)
        try c.encode(aud, forKey: .aud)
        try c.encode(exp, forKey: .exp)
        try c.encode(iat, forKey: .iat)
        try c.encode(authTime, forKey: .authTime)
        try c.encodeIfPresent(nonce, forKey: .nonce)
        try c.encode(amr, forKey: .amr)
        try c.encode(acr, forKey: .acr)
        try c.encode(sid, forKey: .sid)
        try c.encode(azp, forKey: .azp)
    }
}

/// The OpenID Connect provider (docs/oidc.md, "The provider"): registered clients, authorization codes bound to a
/// client, a redirect URI and a PKCE challenge, consents, and the tokens a code, a refresh token or a client's own
/// credentials are exchanged for. A code's exchange opens a session of its own for the client (the person sees it
/// among their sessions, and every way a session ends ends it), with the client and its scope beside it
/// (`oidc_grants`); its access tokens are for the client (`aud`), its refresh tokens rotate as `/v1`'s do.
package struct OpenIDProvider: Sendable {
    package struct Settings: Sendable {
        package var issuer: String
        /// How long a code may wait for its exchange.
        package var codeLifetime: TimeInterval = 60
        /// How long an ID token is good for.
        package var idTokenLifetime: TimeInterval = 600

        package init(issuer: String) {
            self.issuer = issuer
        }
    }

    /// The scopes a person's sign-in may carry: what they mean is in the consent page's words and `userinfo`'s claims.
    package static let personScopes = ["openid", "profile", "email", "phone", "offline_access"]
    package static let clientPrefix = "ghc_"
    package static let secretPrefix = "ghcs_"
    private static let codePrefix = "ghac_"

    package let database: DatabaseProvider
    package let clock: GatehouseClock
    package let random: GatehouseRandom
    package let sessions: SessionService
    package let tokens: TokensModule
    package let audit: AuditLog
    package let rateLimiter: RateLimiter
    package let limits: GatehouseConfiguration.Limits
    package let settings: Settings
    package var store: OpenIDStore { OpenIDStore(database: database) }

    package init(database: DatabaseProvider, clock: GatehouseClock, random: GatehouseRandom, sessions: SessionService, tokens: TokensModule,
                 audit: AuditLog, rateLimiter: RateLimiter, limits: GatehouseConfiguration.Limits, settings: Settings) {
        self.database = database
        self.clock = clock
        self.random = random
        self.sessions = sessions
        self.tokens = tokens
        self.audit = audit
        self.rateLimiter = rateLimiter
        self.limits = limits
        self.settings = settings
    }

    // MARK: Clients

    /// A client that cannot be registered as asked, and why.
    package struct ClientRefused: Error, CustomStringConvertible {
        package var description: String
        init(_ description: String) { self.description = description }
    }

    /// What registering a client takes.
    package struct NewClient: Sendable {
        package var name: String
        package var redirectURIs: [String]
        package var postLogoutRedirectURIs: [String] = []
        package var confidential: Bool
        package var scopes: [String]
        package var firstParty = false

        package init(name: String, redirectURIs: [String], postLogoutRedirectURIs: [String] = [], confidential: Bool, scopes: [String], firstParty: Bool = false) {
            self.name = name
            self.redirectURIs = redirectURIs
            self.postLogoutRedirectURIs = postLogoutRedirectURIs
            self.confidential = confidential
            self.scopes = scopes
            self.firstParty = firstParty
        }
    }

    /// Registers a client: it and, for a confidential client, its secret (shown this once). Every URI is checked
    /// (docs/oidc.md, "Clients"): absolute, no fragment, `https` or a loopback `http`, or a private-use scheme of a
    /// phone app (a public client's).
    package func register(_ new: NewClient, by actor: AuditActor) async throws -> (client: OpenIDClient, secret: String?) {
        let name = new.name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty, name.count <= 100, !InputText.hasNUL(name) else { throw ClientRefused("A client's name is 1 to 100 characters.") }
        guard !new.redirectURIs.isEmpty, new.redirectURIs.count <= 20, new.postLogoutRedirectURIs.count <= 20 else {
            throw ClientRefused("A client has 1 to 20 redirect URIs (and at most 20 post-logout redirect URIs).")
        }
        for uri in new.redirectURIs + new.postLogoutRedirectURIs {
            if let why = Self.unacceptable(uri, confidential: new.confidential) { throw ClientRefused("\(uri): \(why)") }
        }
        var scopes: [String] = []
        for scope in new.scopes where !scopes.contains(scope) {
            guard Self.isScopeToken(scope) else { throw ClientRefused("\"\(scope)\" is not a scope (RFC 6749 §3.3).") }
            scopes.append(scope)
        }
        let secret = new.confidential ? Self.secretPrefix + random.token() : nil
        let client = OpenIDClient(id: Self.clientPrefix + String(random.token().prefix(22)), name: name, redirectURIs: new.redirectURIs,
                                  postLogoutRedirectURIs: new.postLogoutRedirectURIs, secretHash: secret.map(Secrets.sha256Hex), scopes: scopes,
                                  firstParty: new.firstParty, createdAt: clock.now())
        try await store.insert(client)
        try await audit.record(AuditEvent(.oidcClientCreated, by: actor, account: nil, detail: ["client": client.id, "name": name,
                                                                                    "kind": new.confidential ? "confidential" : "public"]))
        return (client, secret)
    }

    /// Why a redirect URI cannot be registered, or nil when it can.
    package static func unacceptable(_ uri: String, confidential: Bool) -> String? {
        guard uri.utf8.count <= 2_000, !uri.contains(where: { $0.isWhitespace }), let parts = URLComponents(string: uri), let scheme = parts.scheme?.lowercased()
        else { return "not an absolute URI" }
        guard parts.fragment == nil else { return "a redirect URI has no fragment (RFC 6749 §3.1.2)" }
        switch scheme {
        case "https":
            return (parts.host ?? "").isEmpty ? "no host" : nil
        case "http":
            return ["127.0.0.1", "localhost", "[::1]", "::1"].contains(parts.host ?? "") ? nil : "http only for a loopback address (RFC 8252 §7.3); use https"
        default:
            // A phone app's own scheme, reverse DNS (RFC 8252 §7.1): only a public client has one.
            return !confidential && scheme.contains(".") ? nil : "https, a loopback http, or a public client's reverse-DNS scheme (RFC 8252 §7.1)"
        }
    }

    static func isScopeToken(_ scope: String) -> Bool {
        !scope.isEmpty && scope.utf8.count <= 100 && scope.utf8.allSatisfy { $0 == 0x21 || (0x23...0x5B).contains($0) || (0x5D...0x7E).contains($0) }
    }

    package func clients() async throws -> [OpenIDClient] { try await store.clients() }

    /// An enabled client by its id.
    package func client(_ id: String) async throws -> OpenIDClient? {
        guard id.hasPrefix(Self.clientPrefix), id.utf8.count <= 64, let client = try await store.client(id), client.disabledAt == nil else { return nil }
        return client
    }

    package func disable(_ id: String, by actor: AuditActor) async throws -> Bool {
        guard try await store.disable(id, at: clock.now()) else { return false }
        try await audit.record(AuditEvent(.oidcClientDisabled, by: actor, account: nil, detail: ["client": id]))
        return true
    }

    /// A new secret for a confidential client (the old one stops at once); nil for an unknown or public client.
    package func rotateSecret(_ id: String, by actor: AuditActor) async throws -> String? {
        let secret = Self.secretPrefix + random.token()
        guard try await store.setSecret(id, hash: Secrets.sha256Hex(secret)) else { return nil }
        try await audit.record(AuditEvent(.oidcClientSecretRotated, by: actor, account: nil, detail: ["client": id]))
        return secret
    }

    /// The client a token-endpoint call is from: a public client by its id alone, a confidential one by its id and
    /// secret. Every attempt takes a slot of the client's and of the address's failure budget first (as a login does)
    /// and gives it back when it succeeds, so a secret cannot be guessed faster than a password.
    package func authenticate(clientID: String, secret: String?, ip: String?) async throws -> OpenIDClient {
        let budgets = [(name: "oidc-client", key: String(clientID.prefix(64))), (name: "oidc-client-ip", key: ip ?? "unknown")]
        try await rateLimiter.hit(budgets[1].name, key: budgets[1].key, limit: limits.loginFailuresPerIP, window: limits.loginFailureWindow)
        do {
            try await rateLimiter.hit(budgets[0].name, key: budgets[0].key, limit: limits.loginFailuresPerAccount, window: limits.loginFailureWindow)
        } catch {
            try? await rateLimiter.release(budgets[1].name, key: budgets[1].key, window: limits.loginFailureWindow)
            throw error
        }
        guard let client = try await client(clientID) else { throw OAuthError.invalidClient }
        switch (client.secretHash, secret) {
        case (nil, nil): break
        case (let hash?, let secret?) where Secrets.constantTimeEquals(Secrets.sha256Hex(secret), hash): break
        default: throw OAuthError.invalidClient
        }
        try? await rateLimiter.release(budgets, window: limits.loginFailureWindow)
        return client
    }

    // MARK: Authorization

    /// The scopes of an authorization request, each one the client may ask for (`openid` among them, and only a
    /// person's scopes: a service's own are for `client_credentials`).
    package func scopes(_ requested: String?, of client: OpenIDClient) throws -> [String] {
        let asked = Self.scopeList(requested)
        guard asked.contains("openid") else { throw OAuthError("invalid_scope", "An authorization request asks for the \"openid\" scope.") }
        for scope in asked where !client.scopes.contains(scope) || !Self.personScopes.contains(scope) {
            throw OAuthError("invalid_scope", "This client may not ask for \"\(scope)\".")
        }
        return asked
    }

    static func scopeList(_ text: String?) -> [String] {
        var list: [String] = []
        for scope in (text ?? "").split(separator: " ").map(String.init) where !list.contains(scope) { list.append(scope) }
        return list
    }

    /// Whether the person must be asked before `client` gets `scopes`: a third-party client, asking for more than
    /// they gave it before.
    package func needsConsent(account: UUID, client: OpenIDClient, scopes: [String]) async throws -> Bool {
        guard !client.firstParty else { return false }
        let given = try await store.consent(account: account, client: client.id)
        return !scopes.allSatisfy(given.contains)
    }

    package func consent(account: UUID, client: OpenIDClient, scopes: [String], origin: AuditOrigin) async throws {
        let given = try await store.consent(account: account, client: client.id)
        try await store.saveConsent(account: account, client: client.id, scope: given + scopes.filter { !given.contains($0) }, at: clock.now())
        try await audit.record(AuditEvent(.oidcConsentGranted, by: .account(account), account: account, origin: origin,
                                          detail: ["client": client.id, "name": client.name, "scope": scopes.joined(separator: " ")]))
    }

    /// A code for the browser to carry back to `redirectURI`: 256 random bits, kept as its SHA-256, for
    /// `codeLifetime`, bound to everything its exchange must show again.
    package func issueCode(client: OpenIDClient, session: AuthenticatedSession, authTime: Date, redirectURI: String, challenge: String,
                           nonce: String?, scopes: [String]) async throws -> String {
        let code = Self.codePrefix + random.token()
        let now = clock.now()
        try await store.insertCode(hash: Secrets.sha256Hex(code), AuthorizationCodeRow(
            clientID: client.id, accountID: session.accountID, redirectURI: redirectURI, codeChallenge: challenge, nonce: nonce,
            scope: scopes.joined(separator: " "), methods: session.methods, authTime: authTime, expiresAt: now.addingTimeInterval(settings.codeLifetime)),
            at: now)
        return code
    }

    // MARK: The token endpoint

    /// A code exchanged (RFC 6749 §4.1.3, RFC 7636 §4.6): the code must be this client's, for this redirect URI,
    /// unexpired, unused, and the verifier's SHA-256 its challenge. Its first exchange (right or wrong) uses it; a
    /// second ends the session the first one opened (RFC 6749 §4.1.2) and is audited.
    package func exchange(code: String, client: OpenIDClient, redirectURI: String?, verifier: String?, origin: RequestOrigin) async throws -> TokenSet {
        let invalid = OAuthError.invalidGrant("The code is unknown, expired, used, or not this client's.")
        guard code.hasPrefix(Self.codePrefix), code.utf8.count <= 100 else { throw invalid }
        guard let verifier, Self.isVerifier(verifier) else {
            throw OAuthError.invalidRequest("code_verifier is required: 43 to 128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636 §4.1).")
        }
        let hash = Secrets.sha256Hex(code)
        let now = clock.now()
        enum Outcome: Sendable { case refused(OAuthError), reused(AuthorizationCodeRow), granted(AuthorizationCodeRow, IssuedSession, String) }
        let outcome: Outcome = try await database.db.withTransaction { tx in
            guard let row = try await store.code(hash: hash, postgres: tx.isPostgres, on: tx), row.clientID == client.id else { return .refused(invalid) }
            guard try await store.useCode(hash: hash, at: now, on: tx) else { return .reused(row) }
            guard row.expiresAt > now else { return .refused(invalid) }
            guard redirectURI == row.redirectURI else { return .refused(.invalidGrant("redirect_uri is not the one the code was issued for.")) }
            guard Self.challenge(of: verifier) == row.codeChallenge else { return .refused(.invalidGrant("code_verifier does not match the code_challenge.")) }
            let session: IssuedSession
            do {
                session = try await sessions.create(accountID: row.accountID, methods: row.methods, device: "\(client.name) (OpenID Connect)", ip: origin.ip,
                                                     secondFactorChecked: AuthMethod.contextClass(row.methods) == "2", on: tx)
            } catch let error as GatehouseError {
                return .refused(.invalidGrant(error.message.render(.en)))
            }
            try await store.insertGrant(OpenIDGrant(sessionID: session.id, clientID: client.id, scope: row.scope, authTime: row.authTime), on: tx)
            try await store.setGrantSession(codeHash: hash, session: session.id, on: tx)
            let refresh = try await tokens.refresh.issue(session: session.id, sessionExpiresAt: session.expiresAt, on: tx)
            return .granted(row, session, refresh)
        }
        switch outcome {
        case .refused(let error):
            throw error
        case .reused(let row):
            if let grant = row.grantSessionID { try await sessions.revoke(sessionID: grant) }
            try await audit.record(AuditEvent(.authorizationCodeReused, by: .anonymous, account: row.accountID, origin: origin.audit,
                                              detail: ["client": client.id, "session": row.grantSessionID?.uuidString.lowercased() ?? "none"]))
            throw invalid
        case .granted(let row, let issued, let refresh):
            let session = AuthenticatedSession(id: issued.id, accountID: issued.accountID, expiresAt: issued.expiresAt, methods: issued.methods)
            let (access, expiresAt) = try await tokens.access.issue(for: session, client: client.id, scope: row.scope)
            let scopes = Self.scopeList(row.scope)
            let idToken = scopes.contains("openid") ? try await idToken(session: session, client: client, authTime: row.authTime, nonce: row.nonce) : nil
            return TokenSet(accessToken: access, expiresIn: max(1, Int(expiresAt.timeIntervalSince(clock.now()).rounded(.down))), refreshToken: refresh,
                            idToken: idToken, scope: row.scope)
        }
    }

    /// A refresh token of this client's session exchanged for the next access and refresh tokens (rotation and
    /// reuse as on `/v1`).
    package func refresh(_ token: String, client: OpenIDClient, origin: RequestOrigin) async throws -> TokenSet {
        let renewed: RefreshTokens.Renewed
        do {
            renewed = try await tokens.refresh.exchange(token, client: client.id, origin: origin.audit)
        } catch let error as GatehouseError where error.code == .refreshTokenInvalid {
            throw OAuthError.invalidGrant("The refresh token is unknown, used, expired, not this client's, or its session has ended.")
        }
        let scope = renewed.scope ?? ""
        let (access, expiresAt) = try await tokens.access.issue(for: renewed.session, client: client.id, scope: scope)
        return TokenSet(accessToken: access, expiresIn: max(1, Int(expiresAt.timeIntervalSince(clock.now()).rounded(.down))),
                        refreshToken: renewed.refreshToken, idToken: nil, scope: scope)
    }

    /// A confidential client's own token (RFC 6749 §4.4): of no person, with the scopes it asked for among those it
    /// was registered with (all of them when it asked for none).
    package func serviceToken(client: OpenIDClient, scope: String?) async throws -> TokenSet {
        guard client.isConfidential else { throw OAuthError("unauthorized_client", "Only a confidential client has tokens of its own.") }
        let asked = Self.scopeList(scope)
        let serviceScopes = client.scopes.filter { !Self.personScopes.contains($0) }
        for scope in asked where !serviceScopes.contains(scope) { throw OAuthError("invalid_scope", "This client may not ask for \"\(scope)\".") }
        let granted = (asked.isEmpty ? serviceScopes : asked).joined(separator: " ")
        let (access, expiresAt) = try await tokens.access.issue(forService: client.id, scope: granted)
        return TokenSet(accessToken: access, expiresIn: max(1, Int(expiresAt.timeIntervalSince(clock.now()).rounded(.down))), refreshToken: nil,
                        idToken: nil, scope: granted)
    }

    static func isVerifier(_ text: String) -> Bool {
        (43...128).contains(text.utf8.count)
            && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || [0x2D, 0x2E, 0x5F, 0x7E].contains($0) }
    }

    /// `BASE64URL(SHA256(verifier))` (RFC 7636 §4.2, `S256`).
    package static func challenge(of verifier: String) -> String { JWS.base64URL(Data(SHA256.hash(data: Data(verifier.utf8)))) }

    /// Whether a `code_challenge` can be an S256 one: 43 base64url characters.
    package static func isChallenge(_ text: String) -> Bool {
        text.utf8.count == 43 && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2D || $0 == 0x5F }
    }

    // MARK: ID tokens

    package static let idTokenType = "JWT"

    func idToken(session: AuthenticatedSession, client: OpenIDClient, authTime: Date, nonce: String?) async throws -> String {
        let now = clock.now()
        let claims = IDClaims(iss: settings.issuer, sub: session.accountID.uuidString.lowercased(), aud: client.id,
                              exp: AccessTokens.seconds(now.addingTimeInterval(settings.idTokenLifetime)), iat: AccessTokens.seconds(now),
                              authTime: AccessTokens.seconds(authTime), nonce: nonce, amr: session.methods.map(\.rawValue),
                              acr: AuthMethod.contextClass(session.methods), sid: session.id.uuidString.lowercased(), azp: client.id)
        let (id, key) = try await tokens.keys.signer()
        return try JWS.sign(payload: Array(try OrderedJSONEncoder.encode(claims).utf8), type: Self.idTokenType, keyID: id, key: key)
    }

    /// The claims of an ID token this provider signed, expired or not (an `id_token_hint` may be: OpenID Connect
    /// RP-Initiated Logout §2); nil for anything else.
    package func idTokenHint(_ token: String) async throws -> IDClaims? {
        guard token.utf8.count <= 8_192, let id = JWS.keyID(of: token), let key = try await tokens.keys.verifier(id),
              let payload = try? JWS.verify(token, type: Self.idTokenType, keys: { $0 == id ? key : nil }),
              let claims = try? JSONDecoder().decode(IDClaims.self, from: Data(payload)), claims.iss == settings.issuer
        else { return nil }
        return claims
    }

    // MARK: What a client may ask about its tokens

    /// What `token` is, for the client asking (RFC 7662 §2.2): nil (`active: false`) unless it is live and was
    /// issued to this client.
    package func introspect(_ token: String, client: OpenIDClient) async throws -> [String: JSONValue]? {
        if AccessTokens.isSigned(token) {
            guard let claims = try await tokens.access.verify(token, anyAudience: true), claims.clientID == client.id else { return nil }
            if let sid = claims.sid.flatMap(UUID.init(uuidString:)), try await sessions.authenticate(sessionID: sid) == nil { return nil }
            var answer: [String: JSONValue] = [
                "active": .bool(true), "token_type": .string("Bearer"), "client_id": .string(claims.clientID), "sub": .string(claims.sub),
                "aud": .string(claims.aud), "iss": .string(claims.iss), "exp": .integer(claims.exp), "iat": .integer(claims.iat), "jti": .string(claims.jti),
            ]
            if let scope = claims.scope { answer["scope"] = .string(scope) }
            if let sid = claims.sid { answer["sid"] = .string(sid) }
            return answer
        }
        guard let row = try await tokens.refresh.find(token), row.clientID == client.id else { return nil }
        return ["active": .bool(true), "token_type": .string("refresh_token"), "client_id": .string(client.id),
                "sub": .string(row.accountID.uuidString.lowercased()), "scope": .string(row.scope ?? ""), "iss": .string(settings.issuer),
                "exp": .integer(AccessTokens.seconds(row.expiresAt)), "sid": .string(row.sessionID.uuidString.lowercased())]
    }

    /// Revokes `token` if it is this client's (RFC 7009 §2.1): a refresh token or an access token ends its session,
    /// and with it every token of the grant. Anything else changes nothing (and is answered alike).
    package func revoke(_ token: String, client: OpenIDClient) async throws {
        if AccessTokens.isSigned(token) {
            guard let claims = try await tokens.access.verify(token, anyAudience: true), claims.clientID == client.id,
                  let sid = claims.sid.flatMap(UUID.init(uuidString:)) else { return }
            try await sessions.revoke(sessionID: sid)
        } else if let row = try await tokens.refresh.find(token), row.clientID == client.id {
            try await sessions.revoke(sessionID: row.sessionID)
        }
    }

    /// The person an access token speaks for, and the scopes it carries, for `userinfo`: a live token of ours (for
    /// a client or for `/v1`) whose session lives; nil otherwise. A `/v1` token carries every scope.
    package func person(of token: String) async throws -> (account: AccountSnapshot, scopes: [String])? {
        guard AccessTokens.isSigned(token), let claims = try await tokens.access.verify(token, anyAudience: true),
              let sid = claims.sid.flatMap(UUID.init(uuidString:)), let found = try await sessions.authenticate(sessionID: sid),
              found.account.id.uuidString.lowercased() == claims.sub
        else { return nil }
        return (found.account, claims.scope.map { Self.scopeList($0) } ?? Self.personScopes)
    }

    /// Ends the session of a client's grant (RP-initiated logout): only when it is this client's.
    package func endGrant(session: UUID, client: String) async throws {
        guard let grant = try await store.grant(session: session), grant.clientID == client else { return }
        try await sessions.revoke(sessionID: session)
    }

    package func purgeExpired() async throws {
        try await store.purgeCodes(before: clock.now())
    }
}
