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
import SQLKit
import Testing

/// The keys of the tokens other services verify (docs/oidc.md, "Keys"), and the one signature they carry: a
/// token is verified only as ES256 by a published key named by its `kid`, never by what the token says of itself.
@Suite("Signing keys and their key set")
struct SigningKeysTests {
    static func payload(_ text: String = #"{"sub":"someone"}"#) -> [UInt8] { Array(text.utf8) }

    @Test("a JWS verifies with its key and type; alg none, HS256 with the public key, a key in the header, another type, an unknown kid, padding or a changed byte do not")
    func jws_isStrict() throws {
        let key = P256.Signing.PrivateKey()
        let keys: (String) -> P256.Signing.PublicKey? = { $0 == "k1" ? key.publicKey : nil }
        let token = try JWS.sign(payload: Self.payload(), type: "at+jwt", keyID: "k1", key: key)
        #expect(try JWS.verify(token, type: "at+jwt", keys: keys) == Self.payload())

        let parts = token.split(separator: ".").map(String.init)
        func header(_ json: String) -> String { Base64URL.encode(Array(json.utf8)) }
        func refused(_ candidate: String, type: String = "at+jwt") -> JWS.Failure? {
            do { _ = try JWS.verify(candidate, type: type, keys: keys); return nil } catch let failure as JWS.Failure { return failure } catch { return nil }
        }
        // alg none, with and without a signature
        #expect(refused(header(#"{"alg":"none","kid":"k1","typ":"at+jwt"}"#) + "." + parts[1] + ".") == .algorithm)
        #expect(refused(header(#"{"alg":"none","kid":"k1","typ":"at+jwt"}"#) + "." + parts[1] + "." + parts[2]) == .algorithm)
        // HS256 keyed with the public key's bytes, as the classic confusion does
        let hsInput = header(#"{"alg":"HS256","kid":"k1","typ":"at+jwt"}"#) + "." + parts[1]
        let mac = HMAC<SHA256>.authenticationCode(for: Data(hsInput.utf8), using: SymmetricKey(data: key.publicKey.x963Representation))
        #expect(refused(hsInput + "." + Base64URL.encode(Array(mac))) == .algorithm)
        // a key carried by the token itself
        let jwk = try JWS.jwk(P256.Signing.PrivateKey().publicKey, keyID: "k1").sortedJSON()
        #expect(refused(header(#"{"alg":"ES256","kid":"k1","typ":"at+jwt","jwk":"# + String(decoding: jwk, as: UTF8.self) + "}") + "." + parts[1] + "." + parts[2]) == .header)
        // an ID token is not an access token; an unknown key; padding; a changed payload
        #expect(refused(token, type: "JWT") == .type)
        let other = try JWS.sign(payload: Self.payload(), type: "at+jwt", keyID: "k2", key: key)
        #expect(refused(other) == .unknownKey)
        #expect(refused(token + "=") == .malformed)
        #expect(refused(parts[0] + "." + Base64URL.encode(Self.payload(#"{"sub":"someone-else"}"#)) + "." + parts[2]) == .signature)
        // another key's signature under the right kid
        let forged = try JWS.sign(payload: Self.payload(), type: "at+jwt", keyID: "k1", key: P256.Signing.PrivateKey())
        #expect(refused(forged) == .signature)
    }

    @Test("the first key signs at once; a rotation publishes the next key, which signs one token lifetime later, and the old key retires, emptied, published until its tokens expire", .tags(.engine), arguments: TestEngine.all)
    func rotation(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            let keys = app.services.tokens.keys
            let lifetime = app.configuration.tokens.accessTokenTTL
            // setup: the first key
            let first = try await keys.signer().id

            // MUT: a rotation
            let next = try await keys.rotate(by: .system("test"), reason: "test")
            let publishedBoth = try await keys.published().map(\.id)
            let stillFirst = try await keys.signer().id
            app.clock.advance(by: lifetime + 1)
            let nowNext = try await keys.signer().id
            let published = try await keys.published().map(\.id)
            app.clock.advance(by: lifetime + 61)
            _ = try await keys.rotate(by: .system("test"), reason: "test")   // reads the table again
            let later = try await keys.published().map(\.id)
            let rows = try await app.services.database.db.raw("SELECT id, private_key_sealed, retired_at FROM signing_keys WHERE id = \(bind: first)").all()

            // validate
            #expect(publishedBoth == [first, next])
            #expect(stillFirst == first, "the next key waits one token lifetime")
            #expect(nowNext == next)
            #expect(published == [first, next], "the retired key stays published while its tokens live")
            #expect(!later.contains(first) && later.contains(next))
            #expect(try rows.first?.decode(column: "private_key_sealed", as: String.self) == "", "nothing signs with a retired key again")
            #expect(try rows.first?.decode(column: "retired_at", as: Date?.self) != nil)
        }
    }

    @Test("the schedule: not before the signing key has signed for its lifetime; then a next key is made, waiting its turn while the first still signs")
    func schedule() async throws {
        try await withApp(.sqlite) { app in
            let keys = app.services.tokens.keys
            let first = try await keys.signer().id
            try await keys.rotateIfDue()
            let early = try await keys.rows().map(\.id)
            app.clock.advance(by: app.configuration.tokens.signingKeyLifetime + 1)
            try await keys.rotateIfDue()
            let due = try await keys.rows()
            #expect(early == [first], "not due yet: no next key")
            #expect(due.first?.id == first && due.dropFirst().contains { $0.signsFrom > app.clock.now }, "a next key, waiting its turn")
            #expect(try await keys.signer().id == first)
        }
    }

    @Test("the private half is sealed with GATEHOUSE_SECRET: the row holds no key, and a server with another secret makes its own and signs with it", .tags(.engine), arguments: TestEngine.all)
    func sealed(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            let (id, key) = try await app.services.tokens.keys.signer()
            let sealed = try #require(try await app.services.database.db.raw("SELECT private_key_sealed FROM signing_keys WHERE id = \(bind: id)")
                .first(decodingColumn: "private_key_sealed", as: String.self))
            let stored = try #require(Data(base64Encoded: sealed))
            #expect(stored.range(of: key.rawRepresentation) == nil, "the raw key is not in the row")

            // Another secret: the key cannot be opened, so it retires and the next one signs.
            let other = SigningKeys(database: app.services.database, clock: app.clock.gatehouseClock,
                                    secrets: Secrets(serverSecret: "another secret, 32 characters long at least"), audit: app.services.audit,
                                    settings: .init(tokenLifetime: 600, keyLifetime: 86_400))
            let replaced = try await other.signer().id
            #expect(replaced != id)
            #expect(Set(try await other.published().map(\.id)).isSuperset(of: [id, replaced]), "the old key stays published until its tokens expire")
            #expect(try await other.signer().id == replaced, "and the new one signs")
        }
    }

    @Test("/.well-known/jwks.json: the published keys as JWKs, cacheable with an ETag; PyJWT verifies a token the server signed with them and refuses a changed one")
    func keySet() async throws {
        try await withApp(.sqlite) { app in
            let (id, key) = try await app.services.tokens.keys.signer()
            _ = try await app.services.tokens.keys.rotate(by: .system("test"), reason: "test")
            let response = try await app.get(ServerPages.WellKnown.keySet.path)
            let etag = try #require(response.headers[.eTag])
            let again = try await app.get(ServerPages.WellKnown.keySet.path, headers: [.ifNoneMatch: etag])
            let token = try JWS.sign(payload: Array(#"{"sub":"s1","aud":"shop","iss":"gatehouse"}"#.utf8), type: "at+jwt", keyID: id, key: key)
            let parts = token.split(separator: ".").map(String.init)
            let tampered = parts[0] + "." + Base64URL.encode(Array(#"{"sub":"s2","aud":"shop","iss":"gatehouse"}"#.utf8)) + "." + parts[2]

            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "application/jwk-set+json")
            #expect(response.headers[.cacheControl] == "public, max-age=300")
            #expect(again.status == .notModified)
            let set = try JSONDecoder().decode([String: [[String: String]]].self, from: Data(buffer: response.body))
            #expect(set["keys"]?.count == 2)
            #expect(set["keys"]?.allSatisfy { $0["kty"] == "EC" && $0["crv"] == "P-256" && $0["alg"] == "ES256" && $0["use"] == "sig" } == true)

            // A verifier nobody here wrote, reading the key set as a team's backend would.
            let output = try await PythonCheck.run("""
                import json, sys, jwt
                keys = {k["kid"]: jwt.PyJWK(k) for k in json.load(open(sys.argv[1]))["keys"]}
                for path in sys.argv[2:]:
                    token = open(path).read()
                    kid = jwt.get_unverified_header(token)["kid"]
                    try:
                        claims = jwt.decode(token, keys[kid].key, algorithms=["ES256"], audience="shop", issuer="gatehouse")
                        print("ok", claims["sub"])
                    except jwt.InvalidTokenError as error:
                        print("refused", type(error).__name__)
                """, files: [String(buffer: response.body), token, tampered])
            #expect(output == "ok s1\nrefused InvalidSignatureError", "\(output)")
        }
    }
}
