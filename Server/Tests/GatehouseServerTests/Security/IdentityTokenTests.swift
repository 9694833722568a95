import Crypto
import Foundation
import GatehouseAccounts
import GatehouseFoundation
import GatehouseTestSupport
import Testing
import _CryptoExtras

/// Identity tokens as Apple and Google sign them, checked as docs/social-login.md's threat model says: by a key of the
/// provider's published set, for one of our audiences, in time, with the app's nonce. The provider is a stand-in in
/// the test: its own RSA keys, published as a JWKS document, rotated at will.
@Suite("Sign in with Apple and Google: identity tokens")
struct IdentityTokenTests {
    /// A provider's keys and what it publishes; `fetch` serves the document and counts the fetches.
    final class StandIn: @unchecked Sendable {
        let lock = NSLock()
        var published: [(kid: String, key: _RSA.Signing.PrivateKey)] = []
        var maxAge: TimeInterval? = 3_600
        var away = false

        func add(_ kid: String) throws -> _RSA.Signing.PrivateKey {
            let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            lock.withLock { published.append((kid, key)) }
            return key
        }

        func remove(_ kid: String) { lock.withLock { published.removeAll { $0.kid == kid } } }

        var fetch: ProviderKeys.Fetch {
            { [self] _ in
                let (keys, age, away) = lock.withLock { (published, maxAge, self.away) }
                if away { throw URLError(.cannotConnectToHost) }
                let set = JSONValue.object(["keys": .array(try keys.map { try JWS.jwk($0.key.publicKey, keyID: $0.kid) })])
                return (Array(try JSONEncoder().encode(set)), age)
            }
        }
    }

    struct Claims: Encodable {
        var iss = "https://appleid.apple.com"
        var aud = "com.example.shop"
        var sub = "001234.abcdef.0042"
        var iat: Int
        var exp: Int
        var nonce: String?
        var email: String? = "Ann@Example.com"
        var email_verified: String? = "true"
        var is_private_email: String? = "false"
        var real_user_status: Int? = 2
    }

    let clock = TestClock()

    func claims(nonce raw: String = "n-0S6_WzA2Mj", provider: IdentityProvider = .apple) -> Claims {
        let now = Int(clock.now.timeIntervalSince1970)
        return Claims(iat: now, exp: now + 600, nonce: provider.signedNonce(of: raw))
    }

    func verifier(_ standIn: StandIn, provider: IdentityProvider = .apple) -> (IdentityTokenVerifier, ProviderKeys) {
        let keys = ProviderKeys(url: "https://provider.test/keys", settings: GatehouseConfiguration.IdentityProviders(), clock: clock.gatehouseClock, fetch: standIn.fetch)
        return (IdentityTokenVerifier(provider: provider, audiences: ["com.example.shop", "com.example.shop.web"], keys: keys, skew: 60, clock: clock.gatehouseClock), keys)
    }

    @Test("Apple's token as Apple signs it: the identity, the address verified (Apple's \"true\" as a string), real_user_status; the nonce is the SHA-256 of the app's raw one; Google's the same with its nonce as given and its two issuers")
    func acceptsTheProvidersTokens() async throws {
        let standIn = StandIn()
        let key = try standIn.add("apple-1")
        let (apple, _) = verifier(standIn)
        let token = try JWS.rs256(keyID: "apple-1", claims: claims(), key: key)
        let identity = try await apple.verify(token, nonce: "n-0S6_WzA2Mj")
        #expect(identity.subject == "001234.abcdef.0042" && identity.audience == "com.example.shop" && identity.provider == .apple)
        #expect(identity.email == "ann@example.com" && identity.emailVerified && !identity.isPrivateEmail && identity.realUserStatus == 2)
        #expect(IdentityProvider.apple.signedNonce(of: "abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")

        let (google, _) = verifier(standIn, provider: .google)
        for issuer in ["https://accounts.google.com", "accounts.google.com"] {
            var claims = claims(provider: .google)
            claims.iss = issuer
            claims.email_verified = nil
            let identity = try await google.verify(try JWS.rs256(keyID: "apple-1", claims: claims, key: key), nonce: "n-0S6_WzA2Mj")
            #expect(identity.provider == .google && !identity.emailVerified, "an address the provider does not say it verified is not verified")
        }
    }

    @Test("refused: another key, alg none, HS256 keyed with the public key, a key in the header, an unknown kid, another app's aud, another issuer, expired, issued in the future, no nonce, another nonce, Apple's nonce unhashed")
    func refusals() async throws {
        let standIn = StandIn()
        let key = try standIn.add("apple-1")
        let stranger = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let (apple, _) = verifier(standIn)
        func refused(_ token: String, nonce: String = "n-0S6_WzA2Mj") async -> IdentityTokenVerifier.Failure? {
            do {
                _ = try await apple.verify(token, nonce: nonce)
                return nil
            } catch let failure as IdentityTokenVerifier.Failure {
                return failure
            } catch {
                return .malformed
            }
        }
        let good = try JWS.rs256(keyID: "apple-1", claims: claims(), key: key)
        let parts = good.split(separator: ".").map(String.init)
        func header(_ json: String) -> String { Base64URL.encode(Array(json.utf8)) }
        let hmac = HMAC<SHA256>.authenticationCode(for: Data((header(#"{"alg":"HS256","kid":"apple-1"}"#) + "." + parts[1]).utf8),
                                                   using: SymmetricKey(data: try key.publicKey.getKeyPrimitives().modulus))
        var other = claims()
        other.aud = "com.example.game"
        var issuer = claims()
        issuer.iss = "https://appleid.apple.com.evil"
        var expired = claims()
        expired.exp = Int(clock.now.timeIntervalSince1970) - 61
        var future = claims()
        future.iat = Int(clock.now.timeIntervalSince1970) + 120
        var noNonce = claims()
        noNonce.nonce = nil
        var rawNonce = claims()
        rawNonce.nonce = "n-0S6_WzA2Mj"

        #expect(await refused(try JWS.rs256(keyID: "apple-1", claims: claims(), key: stranger)) == .signature(.signature))
        #expect(await refused(header(#"{"alg":"none","kid":"apple-1"}"#) + "." + parts[1] + ".") == .signature(.algorithm))
        #expect(await refused(header(#"{"alg":"HS256","kid":"apple-1"}"#) + "." + parts[1] + "." + Base64URL.encode(Array(hmac))) == .signature(.algorithm))
        #expect(await refused(header(#"{"alg":"RS256","kid":"apple-1","jwk":{}}"#) + "." + parts[1] + "." + parts[2]) == .signature(.header), "a key named in the header")
        #expect(await refused(try JWS.rs256(keyID: "apple-9", claims: claims(), key: key)) == .signature(.unknownKey))
        #expect(await refused(try JWS.rs256(keyID: "apple-1", claims: other, key: key)) == .audience)
        #expect(await refused(try JWS.rs256(keyID: "apple-1", claims: issuer, key: key)) == .issuer)
        #expect(await refused(try JWS.rs256(keyID: "apple-1", claims: expired, key: key)) == .expired)
        #expect(await refused(try JWS.rs256(keyID: "apple-1", claims: future, key: key)) == .notYetValid)
        #expect(await refused(try JWS.rs256(keyID: "apple-1", claims: noNonce, key: key)) == .nonce)
        #expect(await refused(good, nonce: "another") == .nonce)
        #expect(await refused(good, nonce: "") == .nonce)
        #expect(await refused(try JWS.rs256(keyID: "apple-1", claims: rawNonce, key: key)) == .nonce, "Apple signs the nonce's hash, never the nonce")
        #expect(await refused(parts[0] + "." + parts[1]) == .malformed)
        #expect(await refused(good) == nil)
    }

    @Test("the provider's keys: fetched once and kept for their max-age; a rotation at the provider is picked up by the first token of the new key; unknown kids fetch at most once a minute; a provider away keeps the keys it had")
    func keyRotationAndCaching() async throws {
        let standIn = StandIn()
        let first = try standIn.add("k1")
        let (apple, keys) = verifier(standIn)
        for _ in 0..<3 { _ = try await apple.verify(try JWS.rs256(keyID: "k1", claims: claims(), key: first), nonce: "n-0S6_WzA2Mj") }
        #expect(await keys.fetches == 1, "kept, not fetched per token")

        // The provider rotates: a token of the new key, a minute or more after the last fetch, fetches once and signs in.
        let second = try standIn.add("k2")
        clock.advance(by: 61)
        _ = try await apple.verify(try JWS.rs256(keyID: "k2", claims: claims(), key: second), nonce: "n-0S6_WzA2Mj")
        #expect(await keys.fetches == 2)

        // Made-up kids: one fetch a minute at most, however many tokens.
        clock.advance(by: 61)
        for index in 0..<20 {
            await #expect(throws: IdentityTokenVerifier.Failure.signature(.unknownKey)) {
                try await apple.verify(try JWS.rs256(keyID: "made-up-\(index)", claims: claims(), key: first), nonce: "n-0S6_WzA2Mj")
            }
        }
        #expect(await keys.fetches == 3)

        // Away: the kept keys still verify when the cache runs out; the fetch is tried again a minute later.
        standIn.away = true
        clock.advance(by: 3_600)
        _ = try await apple.verify(try JWS.rs256(keyID: "k2", claims: claims(), key: second), nonce: "n-0S6_WzA2Mj")
        #expect(await keys.fetches == 4)
        standIn.away = false
        standIn.remove("k1")
        clock.advance(by: 61)
        _ = try await apple.verify(try JWS.rs256(keyID: "k2", claims: claims(), key: second), nonce: "n-0S6_WzA2Mj")
        await #expect(throws: IdentityTokenVerifier.Failure.signature(.unknownKey), "a key the provider retired is gone once fetched again") {
            try await apple.verify(try JWS.rs256(keyID: "k1", claims: claims(), key: first), nonce: "n-0S6_WzA2Mj")
        }
        #expect(ProviderKeys.maxAge(cacheControl: "public, max-age=21600, must-revalidate, no-transform") == 21_600)
        #expect(ProviderKeys.maxAge(cacheControl: "no-store") == nil)
    }
}
