import Crypto
import Foundation
import _CryptoExtras

/// Compact JSON Web Signatures (RFC 7515) as the push services take them: ES256 (APNs' provider
/// token, signed with the team's `.p8` key) and RS256 (the JWT-bearer assertion of a Google
/// service account).
package enum JWS {
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
