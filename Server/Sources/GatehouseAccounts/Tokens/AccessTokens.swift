import Foundation
import GatehouseFoundation
import GatehousePlatform

/// The claims of a signed access token (RFC 9068): who (`sub`, the account), for whom (`aud`), how long, which
/// session (`sid`), and how its person signed in (`amr`, `acr`). A service's token (`client_credentials`) is of no
/// person: its `sub` is the client, and it has no `sid`, `amr` or `acr`.
package struct AccessClaims: Codable, Sendable, Equatable {
    package var iss: String
    package var sub: String
    package var aud: String
    package var exp: Int64
    package var iat: Int64
    package var nbf: Int64
    package var jti: String
    package var sid: String?
    package var clientID: String
    package var amr: [String]?
    package var acr: String?
    /// Space-separated, absent for a session's own tokens (which may do what the session may).
    package var scope: String?

    /// The claims' names on the wire, in the order a token writes them.
    private enum Claim: String, CodingKey {
        case iss, sub, aud, exp, iat, nbf, jti, sid, clientID = "client_id", amr, acr, scope
    }

    package init(iss: String, sub: String, aud: String, exp: Int64, iat: Int64, nbf: Int64, jti: String, sid: String?, clientID: String,
                 amr: [String]?, acr: String?, scope: String?) {
        (self.iss, self.sub, self.aud, self.exp, self.iat, self.nbf) = (iss, sub, aud, exp, iat, nbf)
        (self.jti, self.sid, self.clientID, self.amr, self.acr, self.scope) = (jti, sid, clientID, amr, acr, scope)
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Claim.self)
        self.init(iss: try c.decode(String.self, forKey: .iss), sub: try c.decode(String.self, forKey: .sub), aud: try c.decode(String.self, forKey: .aud),
                  exp: try c.decode(Int64.self, forKey: .exp), iat: try c.decode(Int64.self, forKey: .iat), nbf: try c.decode(Int64.self, forKey: .nbf),
                  jti: try c.decode(String.self, forKey: .jti), sid: try c.decodeIfPresent(String.self, forKey: .sid),
                  clientID: try c.decode(String.self, forKey: .clientID), amr: try c.decodeIfPresent([String].self, forKey: .amr),
                  acr: try c.decodeIfPresent(String.self, forKey: .acr), scope: try c.decodeIfPresent(String.self, forKey: .scope))
    }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Claim.self)
        try c.encode(iss, forKey: .iss)
        try c.encode(sub, forKey: .sub)
        try c.encode(aud, forKey: .aud)
        try c.encode(exp, forKey: .exp)
        try c.encode(iat, forKey: .iat)
        try c.encode(nbf, forKey: .nbf)
        try c.encode(jti, forKey: .jti)
        try c.encodeIfPresent(sid, forKey: .sid)
        try c.encode(clientID, forKey: .clientID)
        try c.encodeIfPresent(amr, forKey: .amr)
        try c.encodeIfPresent(acr, forKey: .acr)
        try c.encodeIfPresent(scope, forKey: .scope)
    }
}

/// Signed access tokens (docs/oidc.md, "The tokens"): a JWT (`typ: at+jwt`, ES256 by the signing key of the moment)
/// that a team's backend verifies against the key set, and Gatehouse's own surfaces verify too — and then also ask
/// whether its session lives, so an ended session's tokens stop here at once and elsewhere at their `exp`.
package struct AccessTokens: Sendable {
    package struct Settings: Sendable {
        /// `iss`: the server's public URL.
        package var issuer: String
        /// `aud` of a session's own tokens.
        package var audience: String
        package var lifetime: TimeInterval

        package init(issuer: String, audience: String, lifetime: TimeInterval) {
            self.issuer = issuer
            self.audience = audience
            self.lifetime = lifetime
        }
    }

    package static let type = "at+jwt"
    /// The `client_id` of the tokens a sign-in on `/v1` answers.
    package static let firstPartyClient = "gatehouse"
    /// How far a verifier's clock may be ahead of ours.
    static let leeway: TimeInterval = 60

    package let keys: SigningKeys
    package let clock: GatehouseClock
    package let random: GatehouseRandom
    package let settings: Settings

    package init(keys: SigningKeys, clock: GatehouseClock, random: GatehouseRandom, settings: Settings) {
        self.keys = keys
        self.clock = clock
        self.random = random
        self.settings = settings
    }

    /// A token for `session`: the token and when it expires (never after the session). A session a client of the
    /// provider was granted (`client`, `scope`) gets a token for that client (`aud` and `client_id` the client's id).
    package func issue(for session: AuthenticatedSession, client: String? = nil, scope: String? = nil) async throws -> (token: String, expiresAt: Date) {
        let now = clock.now()
        let expiresAt = min(session.expiresAt, now.addingTimeInterval(settings.lifetime))
        return try await sign(AccessClaims(
            iss: settings.issuer, sub: session.accountID.uuidString.lowercased(), aud: client ?? settings.audience,
            exp: Self.seconds(expiresAt), iat: Self.seconds(now), nbf: Self.seconds(now), jti: String(random.token().prefix(22)),
            sid: session.id.uuidString.lowercased(), clientID: client ?? Self.firstPartyClient, amr: session.methods.map(\.rawValue),
            acr: AuthMethod.contextClass(session.methods), scope: scope))
    }

    /// A service's token (`client_credentials`): `sub` the client, `aud` the team's services, no session and no person.
    package func issue(forService client: String, scope: String) async throws -> (token: String, expiresAt: Date) {
        let now = clock.now()
        return try await sign(AccessClaims(
            iss: settings.issuer, sub: client, aud: settings.audience, exp: Self.seconds(now.addingTimeInterval(settings.lifetime)), iat: Self.seconds(now),
            nbf: Self.seconds(now), jti: String(random.token().prefix(22)), sid: nil, clientID: client, amr: nil, acr: nil, scope: scope))
    }

    private func sign(_ claims: AccessClaims) async throws -> (token: String, expiresAt: Date) {
        let (id, key) = try await keys.signer()
        let token = try JWS.sign(payload: Array(try OrderedJSONEncoder.encode(claims).utf8), type: Self.type, keyID: id, key: key)
        return (token, Date(timeIntervalSince1970: TimeInterval(claims.exp)))
    }

    static func seconds(_ date: Date) -> Int64 { Int64(date.timeIntervalSince1970.rounded(.down)) }

    /// The claims of `token` when it is one of ours, for us (or, with `anyAudience`, for any client of ours: the
    /// provider's `userinfo` and introspection), and in its lifetime; nil otherwise.
    package func verify(_ token: String, anyAudience: Bool = false) async throws -> AccessClaims? {
        guard let id = JWS.keyID(of: token), let key = try await keys.verifier(id),
              let payload = try? JWS.verify(token, type: Self.type, keys: { $0 == id ? key : nil }),
              let claims = try? JSONDecoder().decode(AccessClaims.self, from: Data(payload))
        else { return nil }
        let now = clock.now().timeIntervalSince1970
        guard claims.iss == settings.issuer, anyAudience || claims.aud == settings.audience, TimeInterval(claims.exp) > now,
              TimeInterval(claims.nbf) <= now + Self.leeway
        else { return nil }
        return claims
    }

    /// Whether a bearer token is a signed one (three base64url parts) rather than an opaque session token.
    package static func isSigned(_ token: String) -> Bool {
        token.utf8.lazy.filter { $0 == UInt8(ascii: ".") }.count == 2
    }
}
