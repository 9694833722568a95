import Crypto
import Foundation
import _CryptoExtras

/// A credential public key as an authenticator writes it (COSE_Key, RFC 9052 §7 and RFC 9053): the
/// two algorithms WebAuthn relying parties must take, ES256 (ECDSA on P-256 with SHA-256) and RS256
/// (RSASSA-PKCS1-v1_5 with SHA-256), verified with swift-crypto. Anything else, or a key whose
/// parameters do not agree with its algorithm, is refused by name.
package struct COSEKey: Sendable, Equatable {
    /// COSE algorithm identifiers.
    package enum Algorithm: Int64, Sendable {
        case es256 = -7
        case rs256 = -257
    }

    package let algorithm: Algorithm
    /// The key as COSE wrote it (kept to store and compare the credential).
    package let cbor: CBOR

    /// The key in a COSE_Key map.
    package init(_ cbor: CBOR) throws {
        guard cbor.map != nil else { throw COSEKeyError.notAKey }
        guard let alg = cbor[3]?.int else { throw COSEKeyError.missing("alg (3)") }
        guard let algorithm = Algorithm(rawValue: alg) else { throw COSEKeyError.unsupportedAlgorithm(alg) }
        self.algorithm = algorithm
        self.cbor = cbor
        switch algorithm {
        case .es256: _ = try p256()
        case .rs256: _ = try rsa()
        }
    }

    /// The key in the bytes of a COSE_Key (a stored credential).
    package init(encoded bytes: [UInt8]) throws {
        try self.init(try CBOR.decode(bytes))
    }

    /// Whether `signature` (an ES256 signature is DER, as WebAuthn carries it) signs `data` under this key.
    package func isValidSignature(_ signature: [UInt8], for data: [UInt8]) -> Bool {
        switch algorithm {
        case .es256:
            guard let key = try? p256(), let parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return key.isValidSignature(parsed, for: SHA256.hash(data: data))
        case .rs256:
            guard let key = try? rsa() else { return false }
            return key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: SHA256.hash(data: data),
                                        padding: .insecurePKCS1v1_5)
        }
    }

    private func p256() throws -> P256.Signing.PublicKey {
        guard cbor[1]?.int == 2 else { throw COSEKeyError.mismatch("kty must be EC2 (2) for ES256") }
        guard cbor[-1]?.int == 1 else { throw COSEKeyError.mismatch("crv must be P-256 (1) for ES256") }
        guard let x = cbor[-2]?.bytes, let y = cbor[-3]?.bytes, x.count == 32, y.count == 32 else {
            throw COSEKeyError.missing("x (-2) and y (-3), 32 bytes each")
        }
        do {
            return try P256.Signing.PublicKey(x963Representation: [0x04] + x + y)
        } catch {
            throw COSEKeyError.mismatch("the point is not on P-256")
        }
    }

    private func rsa() throws -> _RSA.Signing.PublicKey {
        guard cbor[1]?.int == 3 else { throw COSEKeyError.mismatch("kty must be RSA (3) for RS256") }
        guard let n = cbor[-1]?.bytes, let e = cbor[-2]?.bytes, !n.isEmpty, !e.isEmpty, e.count <= 8 else {
            throw COSEKeyError.missing("n (-1) and e (-2)")
        }
        do {
            // swift-crypto refuses keys under 2048 bits.
            return try _RSA.Signing.PublicKey(n: n, e: e)
        } catch {
            throw COSEKeyError.mismatch("the RSA key is not one of 2048 bits or more")
        }
    }
}

/// Why a COSE_Key is refused.
package enum COSEKeyError: Error, Equatable, CustomStringConvertible {
    case notAKey
    case missing(String)
    case unsupportedAlgorithm(Int64)
    case mismatch(String)

    package var description: String {
        switch self {
        case .notAKey: "the credential public key is not a COSE_Key map"
        case .missing(let what): "the credential public key has no \(what)"
        case .unsupportedAlgorithm(let alg): "the credential public key's algorithm \(alg) is not ES256 (-7) or RS256 (-257)"
        case .mismatch(let what): "the credential public key is inconsistent: \(what)"
        }
    }
}
