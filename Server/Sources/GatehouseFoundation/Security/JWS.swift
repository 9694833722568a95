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
        /// `alg` is not `ES256`.
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
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, token.utf8.count <= 16_384,
              let headerBytes = Base64URL.decode(String(parts[0])), let payload = Base64URL.decode(String(parts[1])),
              let signatureBytes = Base64URL.decode(String(parts[2])),
              case .object(let header)? = try? JSONValue.parse(headerBytes, maxDepth: 2)
        else { throw Failure.malformed }
        guard header["alg"]?.string == "ES256" else { throw Failure.algorithm }
        guard Set(header.keys).isSubset(of: ["alg", "kid", "typ"]) else { throw Failure.header }
        guard let typ = header["typ"]?.string, typ.lowercased() == type.lowercased() || typ.lowercased() == "application/" + type.lowercased() else {
            throw Failure.type
        }
        guard let keyID = header["kid"]?.string, let key = keys(keyID) else { throw Failure.unknownKey }
        guard signatureBytes.count == 64, let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
              key.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8))
        else { throw Failure.signature }
        return payload
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
