import Crypto
import Foundation
import GatehouseAPI
import GatehouseFoundation

/// The providers a person may sign in with (docs/social-login.md): the wire's own names, with what the server knows
/// of each.
package typealias IdentityProvider = IdentityProviderName

extension IdentityProviderName {
    /// The `iss` its tokens carry.
    package var issuers: Set<String> {
        switch self {
        case .apple: ["https://appleid.apple.com"]
        case .google: ["https://accounts.google.com", "accounts.google.com"]
        }
    }

    /// The nonce its token carries for the app's raw nonce: Apple signs what AuthenticationServices was given, which
    /// is the raw nonce's SHA-256 in hex (as Apple's sample and Firebase do); Google signs the nonce as given.
    package func signedNonce(of raw: String) -> String {
        switch self {
        case .apple: SHA256.hash(data: Data(raw.utf8)).map { String(format: "%02x", $0) }.joined()
        case .google: raw
        }
    }
}

/// Who a provider says signed in: its `sub` (the identity, stable for the app's team) and what it tells of them.
package struct ProviderIdentity: Sendable, Equatable {
    package var provider: IdentityProvider
    package var subject: String
    /// The audience the token was for (the app's bundle id or client id among those configured).
    package var audience: String
    package var email: String?
    /// The provider says it proved the address (never assumed: an unverified address is a claim at most).
    package var emailVerified: Bool
    /// Apple's private relay address (`…@privaterelay.appleid.com`).
    package var isPrivateEmail: Bool
    /// Apple's `real_user_status`: 0 unsupported, 1 unknown, 2 likely real.
    package var realUserStatus: Int?
    package var givenName: String?
    package var familyName: String?
    package var issuedAt: Date
    package var expiresAt: Date
}

/// Checks a provider's identity token as docs/social-login.md's threat model says: the signature by a key of the
/// provider's published set (RS256, by `kid`), `iss` the provider's, `aud` one of the configured ids, `exp` and
/// `iat` with the configured skew (a minute by default), and the nonce. Nothing of the token is believed before all of these hold.
package struct IdentityTokenVerifier: Sendable {
    package enum Failure: Error, Equatable, Sendable {
        case malformed
        /// Not signed by a key of the provider's set as that key says: why, as the JWS check found it (another
        /// algorithm, a header key, an unknown `kid`, a bad signature).
        case signature(JWS.Failure)
        case issuer
        case audience
        case expired
        case notYetValid
        case nonce
    }

    package let provider: IdentityProvider
    package let audiences: Set<String>
    package let keys: ProviderKeys
    package let clock: GatehouseClock
    package let skew: TimeInterval

    package init(provider: IdentityProvider, audiences: Set<String>, keys: ProviderKeys, skew: TimeInterval, clock: GatehouseClock) {
        self.provider = provider
        self.audiences = audiences
        self.keys = keys
        self.skew = skew
        self.clock = clock
    }

    /// The claims of a JWS the provider signed for one of our audiences (an identity token, or one of Apple's
    /// server-to-server notifications): its signature by a key of the provider's set, its `iss`, its `aud`.
    package func signedClaims(_ token: String) async throws -> (claims: [String: JSONValue], audience: String) {
        guard let keyID = JWS.keyID(of: token) else { throw Failure.malformed }
        let published = await keys.keys(for: keyID)
        let payload: [UInt8]
        do {
            payload = try JWS.verifyRS256(token, keys: published)
        } catch let failure as JWS.Failure {
            throw failure == .malformed ? Failure.malformed : Failure.signature(failure)
        }
        guard case .object(let claims)? = try? JSONValue.parse(payload, maxDepth: 4) else { throw Failure.malformed }
        guard let issuer = claims["iss"]?.string, provider.issuers.contains(issuer) else { throw Failure.issuer }
        // `aud` is a string, or (RFC 7519 §4.1.3) an array holding exactly one of ours.
        let audience: String?
        switch claims["aud"] {
        case .string(let one)?: audience = one
        case .array(let many)?: audience = many.count == 1 ? many.first?.string : nil
        default: audience = nil
        }
        guard let audience, audiences.contains(audience) else { throw Failure.audience }
        return (claims, audience)
    }

    /// The identity `token` proves, given the raw nonce the app made for this sign-in.
    package func verify(_ token: String, nonce: String) async throws -> ProviderIdentity {
        let (claims, audience) = try await signedClaims(token)
        guard let exp = Self.seconds(claims["exp"]), let iat = Self.seconds(claims["iat"]), let subject = claims["sub"]?.string, !subject.isEmpty,
              subject.utf8.count <= 255
        else { throw Failure.malformed }
        let now = clock.now().timeIntervalSince1970
        guard now < exp + skew else { throw Failure.expired }
        guard iat <= now + skew else { throw Failure.notYetValid }
        guard let signed = claims["nonce"]?.string, !nonce.isEmpty,
              Secrets.constantTimeEquals(Array(signed.utf8), Array(provider.signedNonce(of: nonce).utf8))
        else { throw Failure.nonce }
        let email = claims["email"]?.string.flatMap(EmailAddress.normalize)
        return ProviderIdentity(
            provider: provider, subject: subject, audience: audience, email: email,
            emailVerified: email != nil && Self.flag(claims["email_verified"]), isPrivateEmail: Self.flag(claims["is_private_email"]),
            realUserStatus: Self.seconds(claims["real_user_status"]).map { Int($0) },
            givenName: claims["given_name"]?.string, familyName: claims["family_name"]?.string,
            issuedAt: Date(timeIntervalSince1970: iat), expiresAt: Date(timeIntervalSince1970: exp))
    }

    /// A number claim (Apple and Google write times as integers).
    static func seconds(_ value: JSONValue?) -> TimeInterval? {
        switch value {
        case .integer(let n)?: TimeInterval(n)
        case .number(let n)?: n
        default: nil
        }
    }

    /// A boolean claim, which Apple writes as `true` or as the string `"true"`.
    static func flag(_ value: JSONValue?) -> Bool {
        switch value {
        case .bool(let b)?: b
        case .string(let s)?: s == "true"
        default: false
        }
    }
}
