import Crypto
import Foundation
import _CryptoExtras

/// Compact JSON Web Signatures (RFC 7515): the tokens other services verify (ES256, RFC 7518 §3.4; docs/oidc.md), and
/// the assertions the push services take (APNs' provider token, ES256 with the team's `.p8` key; a Google service
/// account's JWT-bearer assertion, RS256). Signing writes the protected header `{"alg":"ES256","kid":…,"typ":…}` and
/// the signature as `r || s` (64 bytes). Verifying is strict, for a reader who trusts nothing of the token: three
/// base64url parts without padding; a header that is a JSON object with exactly `alg`, `kid` and `typ`, `alg`
/// `ES256` (not `none`, not `HS256` with the public key as a secret), `typ` the expected one (an ID token is not an
/// access token), `kid` one of the verifier's keys (a key named by the token itself, `jwk`, `jku`, `x5u`, `x5c`, is
/// never used, and `crit` is refused); then the signature over the first two parts as sent.
package enum JWS {
    package enum Failure: Error, Equatable {
        /// Not three base64url parts, or a header that is not the JSON object described above.
        case malformed
        /// `alg` is not the one verified (`ES256`; `RS256` for a provider's token).
        case algorithm
        /// `typ` is not the expected type.
        case type
        /// The header names a member beyond `alg`, `kid`, `typ`.
        case header
        /// `kid` names no key of the verifier.
        case unknownKey
        /// The signature does not verify.
        case signature
    }

    /// `payload` (JSON) signed with `key` under the key id `keyID`, its header's `typ` `type`.
    package static func sign(payload: [UInt8], type: String, keyID: String, key: P256.Signing.PrivateKey) throws -> String {
        let header = "{\"alg\":\"ES256\",\"kid\":\(JSONString.quoted(keyID)),\"typ\":\(JSONString.quoted(type))}"
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(payload)
        let signature = try key.signature(for: Data(input.utf8))
        return input + "." + Base64URL.encode(Array(signature.rawRepresentation))
    }

    /// The payload of `token` when it is a JWS of type `type` signed by the key its `kid` names among `keys`.
    package static func verify(_ token: String, type: String, keys: (String) -> P256.Signing.PublicKey?) throws -> [UInt8] {
        let (header, payload, signatureBytes, input) = try parts(of: token)
        guard header["alg"]?.string == "ES256" else { throw Failure.algorithm }
        guard Set(header.keys).isSubset(of: ["alg", "kid", "typ"]) else { throw Failure.header }
        guard let typ = header["typ"]?.string, typ.lowercased() == type.lowercased() || typ.lowercased() == "application/" + type.lowercased() else {
            throw Failure.type
        }
        guard let keyID = header["kid"]?.string, let key = keys(keyID) else { throw Failure.unknownKey }
        guard signatureBytes.count == 64, let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
              key.isValidSignature(signature, for: input)
        else { throw Failure.signature }
        return payload
    }

    /// A compact JWS's parts, decoded: its header (a JSON object), payload and signature, and the signing input (the
    /// first two parts as sent). At most 16 KiB; anything else is `malformed`.
    private static func parts(of token: String) throws -> (header: [String: JSONValue], payload: [UInt8], signature: [UInt8], input: Data) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, token.utf8.count <= 16_384,
              let headerBytes = Base64URL.decode(String(parts[0])), let payload = Base64URL.decode(String(parts[1])),
              let signature = Base64URL.decode(String(parts[2])),
              case .object(let header)? = try? JSONValue.parse(headerBytes, maxDepth: 2)
        else { throw Failure.malformed }
        return (header, payload, signature, Data((parts[0] + "." + parts[1]).utf8))
    }

    /// The `kid` a token's header names, read without verifying anything (to find the key to verify it with).
    package static func keyID(of token: String) -> String? {
        guard let dot = token.firstIndex(of: "."), token.utf8.count <= 16_384, let header = Base64URL.decode(String(token[..<dot])),
              case .object(let members)? = try? JSONValue.parse(header, maxDepth: 2)
        else { return nil }
        return members["kid"]?.string
    }

    /// A public key as a JWK (RFC 7517, RFC 7518 §6.2), with its `kid` and what it is for.
    package static func jwk(_ key: P256.Signing.PublicKey, keyID: String) -> JSONValue {
        // x9.63: 0x04 || X (32 bytes) || Y (32 bytes).
        let point = Array(key.x963Representation)
        return .object([
            "kty": .string("EC"), "crv": .string("P-256"), "alg": .string("ES256"), "use": .string("sig"), "kid": .string(keyID),
            "x": .string(Base64URL.encode(Array(point[1..<33]))), "y": .string(Base64URL.encode(Array(point[33..<65]))),
        ])
    }

    // MARK: Identity providers' tokens (Sign in with Apple and Google, docs/social-login.md)

    /// A provider's published keys (its JWKS, RFC 7517): the RSA signing keys of 2048 bits or more, by `kid`. A key
    /// of another type, use or algorithm is left out, not refused: providers publish what they like beside them.
    package struct RSAKeySet: Sendable {
        package var keys: [String: _RSA.Signing.PublicKey]

        package init(keys: [String: _RSA.Signing.PublicKey] = [:]) {
            self.keys = keys
        }

        package func has(_ keyID: String) -> Bool { keys[keyID] != nil }
        package var isEmpty: Bool { keys.isEmpty }

        /// Nil when `bytes` is not a key set (`{"keys": […]}`).
        package init?(jwks bytes: [UInt8]) {
            guard bytes.count <= 1_048_576, case .object(let root)? = try? JSONValue.parse(bytes, maxDepth: 4),
                  case .array(let list)? = root["keys"] else { return nil }
            var keys: [String: _RSA.Signing.PublicKey] = [:]
            for case .object(let jwk) in list {
                guard jwk["kty"]?.string == "RSA", let kid = jwk["kid"]?.string,
                      jwk["use"].map({ $0.string == "sig" }) ?? true, jwk["alg"].map({ $0.string == "RS256" }) ?? true,
                      let n = jwk["n"]?.string.flatMap(Base64URL.decode), let e = jwk["e"]?.string.flatMap(Base64URL.decode),
                      let key = try? _RSA.Signing.PublicKey(n: n, e: e), key.keySizeInBits >= 2048
                else { continue }
                keys[kid] = key
            }
            self.keys = keys
        }
    }

    /// A public RSA key as a JWK (what a provider publishes; the tests' stand-ins publish theirs with it).
    package static func jwk(_ key: _RSA.Signing.PublicKey, keyID: String) throws -> JSONValue {
        let primitives = try key.getKeyPrimitives()
        return .object([
            "kty": .string("RSA"), "alg": .string("RS256"), "use": .string("sig"), "kid": .string(keyID),
            "n": .string(Base64URL.encode(Array(primitives.modulus))), "e": .string(Base64URL.encode(Array(primitives.publicExponent))),
        ])
    }

    /// The payload of a provider's identity token signed RS256 by the key its `kid` names among `keys`: a header with
    /// `alg` `RS256`, a `kid`, and at most `typ` `JWT` beside them (a key named by the token itself, `crit`, or any
    /// other algorithm is refused); then the PKCS #1 v1.5 signature over the first two parts as sent.
    package static func verifyRS256(_ token: String, keys: RSAKeySet) throws -> [UInt8] {
        let (header, payload, signatureBytes, input) = try parts(of: token)
        guard header["alg"]?.string == "RS256" else { throw Failure.algorithm }
        guard Set(header.keys).isSubset(of: ["alg", "kid", "typ"]) else { throw Failure.header }
        if let typ = header["typ"] { guard typ.string?.uppercased() == "JWT" else { throw Failure.type } }
        guard let keyID = header["kid"]?.string, let key = keys.keys[keyID] else { throw Failure.unknownKey }
        guard key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signatureBytes), for: input, padding: .insecurePKCS1v1_5)
        else { throw Failure.signature }
        return payload
    }

    // MARK: The push services' assertions

    package static func base64URL(_ data: some DataProtocol) -> String {
        Data(data).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    private static func signingInput(header: [String: String], claims: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return base64URL(try encoder.encode(header)) + "." + base64URL(try encoder.encode(claims))
    }

    /// ES256: ECDSA P-256 with SHA-256, the signature as r ‖ s (64 bytes).
    package static func es256(keyID: String, claims: some Encodable, key: P256.Signing.PrivateKey) throws -> String {
        let input = try signingInput(header: ["alg": "ES256", "kid": keyID], claims: claims)
        let signature = try key.signature(for: Data(input.utf8))
        return input + "." + base64URL(signature.rawRepresentation)
    }

    /// RS256: RSASSA-PKCS1-v1_5 with SHA-256.
    package static func rs256(keyID: String?, claims: some Encodable, key: _RSA.Signing.PrivateKey) throws -> String {
        var header = ["alg": "RS256", "typ": "JWT"]
        if let keyID { header["kid"] = keyID }
        let input = try signingInput(header: header, claims: claims)
        let signature = try key.signature(for: Data(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + base64URL(signature.rawRepresentation)
    }
}
