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

/// Signed access tokens and rotating refresh tokens on `/v1` (docs/oidc.md, "The tokens"), checked at the wire and
/// by a verifier nobody here wrote (PyJWT) reading the key set as a team's backend does.
@Suite("Signed access tokens and refresh tokens")
struct SignedTokensTests {
    static let password = "secret-91!"

    /// The token's claims and header, as PyJWT verifies them against the key set (`refused <error>` when it does not).
    /// The signature, algorithm, audience and issuer are PyJWT's to check; the times are checked against the server's
    /// clock (the tests' clock is not the machine's), as PyJWT would with it.
    static func verifiedByPyJWT(_ app: TestHarness, _ tokens: [String], audience: String? = nil) async throws -> [String] {
        let keySet = try await app.get(ServerPages.WellKnown.keySet.path)
        let output = try await PythonCheck.run("""
            import json, sys, jwt
            keys = {k["kid"]: jwt.PyJWK(k) for k in json.load(open(sys.argv[1]))["keys"]}
            audience, issuer, now = open(sys.argv[2]).read(), open(sys.argv[3]).read(), int(open(sys.argv[4]).read())
            for path in sys.argv[5:]:
                token = open(path).read()
                try:
                    header = jwt.get_unverified_header(token)
                    claims = jwt.decode(token, keys[header["kid"]].key, algorithms=["ES256"], audience=audience, issuer=issuer,
                                        options={"require": ["exp", "iat", "sub", "aud", "iss"], "verify_exp": False, "verify_iat": False,
                                                 "verify_nbf": False})
                    if claims["exp"] <= now:
                        raise jwt.ExpiredSignatureError()
                    print(json.dumps({"typ": header["typ"], **claims}, sort_keys=True))
                except (jwt.InvalidTokenError, KeyError) as error:
                    print("refused", type(error).__name__)
            """, files: [String(buffer: keySet.body), audience ?? app.configuration.publicURL, app.configuration.publicURL,
                         String(Int(app.clock.now.timeIntervalSince1970))] + tokens)
        return output.split(separator: "\n").map(String.init)
    }

    static func claims(_ line: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
    }

    @Test("the token settings are read, have safe defaults, and a value out of range is refused by name")
    func settings() throws {
        let defaults = try GatehouseConfiguration.fromEnvironment([:]).tokens
        #expect(defaults.accessTokenTTL == 600 && defaults.refreshTokenTTL == 2_592_000 && defaults.refreshReuseInterval == 10)
        #expect(defaults.signingKeyLifetime == 90 * 86_400 && defaults.audience == nil)
        let set = try GatehouseConfiguration.fromEnvironment(["GATEHOUSE_ACCESS_TOKEN_TTL_SECONDS": "300", "GATEHOUSE_ACCESS_TOKEN_AUDIENCE": "https://api.shop.example",
                                                              "GATEHOUSE_SIGNING_KEY_ROTATE_DAYS": "30"]).tokens
        #expect(set.accessTokenTTL == 300 && set.audience == "https://api.shop.example" && set.signingKeyLifetime == 30 * 86_400)
        for (name, value) in [("GATEHOUSE_ACCESS_TOKEN_TTL_SECONDS", "59"), ("GATEHOUSE_ACCESS_TOKEN_TTL_SECONDS", "3601"),
                              ("GATEHOUSE_REFRESH_REUSE_INTERVAL_SECONDS", "121"), ("GATEHOUSE_SIGNING_KEY_ROTATE_DAYS", "0")] {
            #expect(throws: ConfigurationError.self, "\(name)=\(value)") { try GatehouseConfiguration.fromEnvironment([name: value]) }
        }
    }

    @Test("a login asking for signed tokens answers a JWT and a refresh token: /v1 takes the JWT, PyJWT verifies it (typ at+jwt, sub, sid, amr pwd, acr 1); a changed one, alg none and an ID-token type are 401", .tags(.engine), arguments: TestEngine.all)
    func signedLogin(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            try await app.registerPhoneAccount(email: "ann@example.com", confirmingEmail: true)

            // MUT
            let response = try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "ann@example.com", password: Self.password, tokens: .signed))
            let session = try response.decoded(as: AuthSession.self)
            let me = try await app.v1.get(V1.Accounts.me.path, token: session.token)
            let parts = session.token.split(separator: ".").map(String.init)
            let changed = parts[0] + "." + Base64URL.encode(Array(#"{"sub":"someone-else"}"#.utf8)) + "." + parts[2]
            let none = Base64URL.encode(Array(#"{"alg":"none","typ":"at+jwt"}"#.utf8)) + "." + parts[1] + "."
            let (id, key) = try await app.services.tokens.keys.signer()
            let idType = try JWS.sign(payload: Base64URL.decode(parts[1])!, type: "JWT", keyID: id, key: key)
            let verified = try await Self.verifiedByPyJWT(app, [session.token, changed])

            // validate
            #expect(response.status == .created, "\(response.text)")
            #expect(parts.count == 3 && session.refreshToken?.hasPrefix("ghr_") == true)
            #expect(me.status == .ok, "\(me.text)")
            let claims = try Self.claims(verified[0])
            #expect(claims["typ"] as? String == "at+jwt")
            #expect(claims["sub"] as? String == session.account.id.uuidString.lowercased())
            #expect(claims["sid"] as? String == session.sessionId.uuidString.lowercased())
            #expect(claims["amr"] as? [String] == ["pwd"] && claims["acr"] as? String == "1")
            #expect(claims["client_id"] as? String == "gatehouse")
            let lifetime = (claims["exp"] as? Int ?? 0) - (claims["iat"] as? Int ?? 0)
            #expect(lifetime == Int(app.configuration.tokens.accessTokenTTL))
            #expect(verified[1] == "refused InvalidSignatureError")
            for bad in [changed, none, idType] {
                try expectProblem(try await app.v1.get(V1.Accounts.me.path, token: bad), .unauthorized, .unauthorized)
            }
            // The default is the session's own token, as every client of the specs expects.
            let plain = try await app.v1.login("ann@example.com", Self.password)
            #expect(plain.refreshToken == nil && !plain.token.contains("."))
        }
    }

    @Test("refresh rotation: each refresh answers new tokens; the old one again within the reuse interval answers too (a race); later it ends the session, refuses every token of it and is audited", .tags(.engine), arguments: TestEngine.all)
    func rotation(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            try await app.registerPhoneAccount(email: "ann@example.com", confirmingEmail: true)
            let first = try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "ann@example.com", password: Self.password, tokens: .signed))
                .decoded(as: AuthSession.self)
            let refresh: (String) async throws -> TestResponse = { token in try await app.v1.post(V1.Sessions.refresh.path, RefreshRequest(refreshToken: token)) }

            // MUT: a refresh, the same token again at once (racing), then again after the interval
            let second = try await refresh(try #require(first.refreshToken))
            let racing = try await refresh(try #require(first.refreshToken))
            let renewed = try second.decoded(as: AuthSession.self)
            let third = try await refresh(try #require(renewed.refreshToken))
            app.clock.advance(by: app.configuration.tokens.refreshReuseInterval + 1)
            let stolen = try await refresh(try #require(first.refreshToken))
            let afterTheft = try await refresh(try #require(try third.decoded(as: AuthSession.self).refreshToken))
            let me = try await app.v1.get(V1.Accounts.me.path, token: try third.decoded(as: AuthSession.self).token)
            let audited = try await app.services.audit.events(AuditLog.Query(kinds: [.refreshTokenReused]))

            // validate
            #expect(second.status == .ok && racing.status == .ok && third.status == .ok, "\(second.text) \(racing.text) \(third.text)")
            #expect(renewed.sessionId == first.sessionId && renewed.token != first.token && renewed.refreshToken != first.refreshToken)
            try expectProblem(stolen, .badRequest, .refreshTokenInvalid)
            try expectProblem(afterTheft, .badRequest, .refreshTokenInvalid)
            try expectProblem(me, .unauthorized, .unauthorized)
            #expect(audited.count == 1 && audited.first?.detail["session"] == first.sessionId.uuidString.lowercased())
        }
    }

    @Test("ending the session (logout, an operator's lock) stops its refresh token at once and its access token on /v1 at once; an offline verifier takes the access token until it expires", .tags(.engine), arguments: TestEngine.all)
    func revocation(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            try await app.registerPhoneAccount(email: "ann@example.com", confirmingEmail: true)
            let login: () async throws -> AuthSession = {
                try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "ann@example.com", password: Self.password, tokens: .signed))
                    .decoded(as: AuthSession.self)
            }
            let refresh: (String?) async throws -> TestResponse = { token in
                try await app.v1.post(V1.Sessions.refresh.path, RefreshRequest(refreshToken: token ?? ""))
            }

            // logout
            let loggedOut = try await login()
            #expect(try await app.v1.send(.delete, V1.Sessions.logout.path, token: loggedOut.token).status == .noContent)
            try expectProblem(try await refresh(loggedOut.refreshToken), .badRequest, .refreshTokenInvalid)
            try expectProblem(try await app.v1.get(V1.Accounts.me.path, token: loggedOut.token), .unauthorized, .unauthorized)
            #expect(try Self.claims(try await Self.verifiedByPyJWT(app, [loggedOut.token])[0])["sid"] != nil,
                    "an offline verifier cannot know of the logout: the token's lifetime bounds it")
            // an operator's lock
            let locked = try await login()
            _ = try await app.services.locks.lock(locked.account.id, reason: "test", by: .operator("sam"), origin: AuditOrigin())
            try expectProblem(try await refresh(locked.refreshToken), .badRequest, .refreshTokenInvalid)
            try expectProblem(try await app.v1.get(V1.Accounts.me.path, token: locked.token), .unauthorized, .unauthorized)
            // past its lifetime the access token is refused everywhere
            _ = try await app.services.locks.unlock(locked.account.id, reason: "test", by: .operator("sam"), origin: AuditOrigin())
            let live = try await login()
            app.clock.advance(by: app.configuration.tokens.accessTokenTTL + 1)
            try expectProblem(try await app.v1.get(V1.Accounts.me.path, token: live.token), .unauthorized, .unauthorized)
            #expect(try await refresh(live.refreshToken).status == .ok, "the refresh token outlives the access token")
        }
    }

    @Test("a login through the authenticator app says so: amr pwd and otp, acr 2")
    func secondFactor() async throws {
        try await withApp(.sqlite) { app in
            let (_, uri, _) = try await SecondFactorTests.accountWithTOTP(app, email: "ann@example.com")
            let challenge = try await SecondFactorTests.challenge(app, "ann@example.com")
            app.clock.advance(by: 30)
            let code = try await SecondFactorTests.appCode(uri, at: app.clock.now)
            let session = try await app.v1.post(V1.SecondFactors.complete.path, SecondFactorLogin(challenge: challenge.challenge, code: code, tokens: .signed))
                .decoded(as: AuthSession.self)
            let claims = try Self.claims(try await Self.verifiedByPyJWT(app, [session.token])[0])
            #expect(claims["amr"] as? [String] == ["pwd", "otp"] && claims["acr"] as? String == "2")
        }
    }

    @Test("across a key rotation: a token of the retired key verifies with the published set until it expires; a token of the next key verifies once it signs")
    func keyRotation() async throws {
        try await withApp(.sqlite) { app in
            try await app.registerPhoneAccount(email: "ann@example.com", confirmingEmail: true)
            let login: () async throws -> AuthSession = {
                try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "ann@example.com", password: Self.password, tokens: .signed))
                    .decoded(as: AuthSession.self)
            }
            let ttl = app.configuration.tokens.accessTokenTTL
            let before = try await login()
            let next = try await app.services.tokens.keys.rotate(by: .system("test"), reason: "test")
            app.clock.advance(by: ttl - 10)
            let stillOld = try await login()   // the next key waits its turn
            app.clock.advance(by: 20)
            let newer = try await login()
            let verified = try await Self.verifiedByPyJWT(app, [stillOld.token, newer.token])

            #expect(JWS.keyID(of: stillOld.token) == JWS.keyID(of: before.token))
            #expect(JWS.keyID(of: newer.token) == next)
            #expect(verified.allSatisfy { !$0.hasPrefix("refused") }, "\(verified)")
            #expect(try await app.v1.get(V1.Accounts.me.path, token: stillOld.token).status == .ok, "a retired key's token lives its lifetime")
            app.clock.advance(by: ttl)
            try expectProblem(try await app.v1.get(V1.Accounts.me.path, token: stillOld.token), .unauthorized, .unauthorized)
        }
    }
}
