import Crypto
import Foundation

/// The relying party's side of WebAuthn (Level 2/3, §7 "WebAuthn Relying Party Operations"): checks
/// a registration (attestation) and an authentication (assertion) an authenticator made, as pure
/// functions of what the client sent, the challenge the server issued and what it stored. The
/// ceremonies' HTTP surface and storage sit on top of this.
///
/// What is accepted: attestation `none`, and `packed` self-attestation (signed by the credential's
/// own key); ES256 and RS256 keys (``COSEKey``). A sign counter that does not grow is reported as a
/// possible clone (``WebAuthnError/counterDidNotIncrease(stored:received:)``), never let through.
package struct WebAuthnRelyingParty: Sendable {
    /// The RP id: the registrable domain the credentials are scoped to (`example.com`).
    package var id: String
    /// The web origins (and `ios:bundle-id:` / `android:apk-key-hash:` origins) whose ceremonies count.
    package var origins: Set<String>

    package init(id: String, origins: Set<String>) {
        self.id = id
        self.origins = origins
    }

    /// A credential the server keeps after a registration.
    package struct Credential: Sendable, Equatable {
        package var id: [UInt8]
        package var publicKey: COSEKey
        package var signCount: UInt32
        package var aaguid: [UInt8]
        /// The authenticator may sync it (a passkey in a cloud keychain): flag BE.
        package var backupEligible: Bool
        /// The user was verified (biometrics, PIN) when it was made.
        package var userVerified: Bool

        package init(id: [UInt8], publicKey: COSEKey, signCount: UInt32, aaguid: [UInt8], backupEligible: Bool, userVerified: Bool) {
            self.id = id
            self.publicKey = publicKey
            self.signCount = signCount
            self.aaguid = aaguid
            self.backupEligible = backupEligible
            self.userVerified = userVerified
        }
    }

    // MARK: Registration

    /// Checks `navigator.credentials.create()`'s answer (§7.1) against the challenge issued for it.
    package func verifyRegistration(clientDataJSON: [UInt8], attestationObject: [UInt8], challenge: [UInt8],
                                    requireUserVerification: Bool) throws -> Credential {
        let clientDataHash = try checkClientData(clientDataJSON, type: "webauthn.create", challenge: challenge)
        let attestation: CBOR
        do { attestation = try CBOR.decode(attestationObject) } catch { throw WebAuthnError.malformed("attestationObject: \(error)") }
        guard let format = attestation["fmt"]?.text, let statement = attestation["attStmt"], statement.map != nil,
              let authDataBytes = attestation["authData"]?.bytes else {
            throw WebAuthnError.malformed("attestationObject needs fmt, attStmt and authData")
        }
        let data = try AuthenticatorData(authDataBytes)
        try checkAuthenticatorData(data, requireUserVerification: requireUserVerification)
        guard let credential = data.attestedCredential else { throw WebAuthnError.malformed("authData has no attested credential (flag AT)") }
        switch format {
        case "none":
            guard statement.map?.isEmpty == true else { throw WebAuthnError.malformed("attestation none carries a statement") }
        case "packed":
            guard statement["x5c"] == nil else { throw WebAuthnError.unsupportedAttestation("packed with a certificate chain") }
            guard statement["alg"]?.int == credential.publicKey.algorithm.rawValue, let signature = statement["sig"]?.bytes else {
                throw WebAuthnError.malformed("packed self-attestation needs the credential's alg and a sig")
            }
            guard credential.publicKey.isValidSignature(signature, for: authDataBytes + clientDataHash) else {
                throw WebAuthnError.badSignature
            }
        default:
            throw WebAuthnError.unsupportedAttestation(format)
        }
        return Credential(id: credential.id, publicKey: credential.publicKey, signCount: data.signCount, aaguid: credential.aaguid,
                          backupEligible: data.flags.contains(.backupEligible), userVerified: data.flags.contains(.userVerified))
    }

    // MARK: Authentication

    /// Checks `navigator.credentials.get()`'s answer (§7.2) for `credential` against the challenge issued for it;
    /// answers the sign count to store.
    package func verifyAssertion(credential: Credential, clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8],
                                 challenge: [UInt8], requireUserVerification: Bool) throws -> UInt32 {
        let clientDataHash = try checkClientData(clientDataJSON, type: "webauthn.get", challenge: challenge)
        let data = try AuthenticatorData(authenticatorData)
        try checkAuthenticatorData(data, requireUserVerification: requireUserVerification)
        guard credential.publicKey.isValidSignature(signature, for: authenticatorData + clientDataHash) else {
            throw WebAuthnError.badSignature
        }
        // §7.2 step 21: a counter that does not grow, when either is non-zero, means two copies of the key.
        if data.signCount != 0 || credential.signCount != 0, data.signCount <= credential.signCount {
            throw WebAuthnError.counterDidNotIncrease(stored: credential.signCount, received: data.signCount)
        }
        return data.signCount
    }

    // MARK: Shared checks

    /// The client data's type, challenge and origin; answers its SHA-256 (what the authenticator signed with).
    private func checkClientData(_ json: [UInt8], type: String, challenge: [UInt8]) throws -> [UInt8] {
        guard let object = try? JSONValue.parse(json), object.object != nil else {
            throw WebAuthnError.malformed("clientDataJSON is not a JSON object")
        }
        guard object["type"]?.string == type else { throw WebAuthnError.wrongType(expected: type) }
        guard let sent = object["challenge"]?.string.flatMap(Base64URL.decode),
              Secrets.constantTimeEquals(sent, challenge) else { throw WebAuthnError.wrongChallenge }
        guard let origin = object["origin"]?.string, origins.contains(origin) else {
            throw WebAuthnError.wrongOrigin(object["origin"]?.string ?? "")
        }
        if object["crossOrigin"]?.bool == true { throw WebAuthnError.wrongOrigin("a cross-origin frame") }
        return Array(SHA256.hash(data: json))
    }

    private func checkAuthenticatorData(_ data: AuthenticatorData, requireUserVerification: Bool) throws {
        guard Secrets.constantTimeEquals(data.rpIdHash, Array(SHA256.hash(data: Data(id.utf8)))) else { throw WebAuthnError.wrongRelyingParty }
        guard data.flags.contains(.userPresent) else { throw WebAuthnError.userNotPresent }
        if requireUserVerification, !data.flags.contains(.userVerified) { throw WebAuthnError.userNotVerified }
    }
}

/// Authenticator data (§6.1): the RP id's hash, flags, the sign counter, and on registration the credential.
package struct AuthenticatorData: Sendable {
    package struct Flags: OptionSet, Sendable {
        package let rawValue: UInt8
        package init(rawValue: UInt8) { self.rawValue = rawValue }
        package static let userPresent = Flags(rawValue: 0x01)
        package static let userVerified = Flags(rawValue: 0x04)
        package static let backupEligible = Flags(rawValue: 0x08)
        package static let backedUp = Flags(rawValue: 0x10)
        package static let attestedCredential = Flags(rawValue: 0x40)
        package static let extensions = Flags(rawValue: 0x80)
    }

    package struct AttestedCredential: Sendable {
        package var aaguid: [UInt8]
        package var id: [UInt8]
        package var publicKey: COSEKey
    }

    package var rpIdHash: [UInt8]
    package var flags: Flags
    package var signCount: UInt32
    package var attestedCredential: AttestedCredential?

    package init(_ bytes: [UInt8]) throws {
        guard bytes.count >= 37 else { throw WebAuthnError.malformed("authenticator data is shorter than 37 bytes") }
        rpIdHash = Array(bytes[0..<32])
        flags = Flags(rawValue: bytes[32])
        signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        var offset = 37
        if flags.contains(.attestedCredential) {
            guard bytes.count >= offset + 18 else { throw WebAuthnError.malformed("the attested credential is cut short") }
            let aaguid = Array(bytes[offset..<offset + 16])
            let length = Int(bytes[offset + 16]) << 8 | Int(bytes[offset + 17])
            offset += 18
            guard length <= 1023, bytes.count >= offset + length else { throw WebAuthnError.malformed("the credential id is cut short or too long") }
            let id = Array(bytes[offset..<offset + length])
            offset += length
            let key: CBOR, used: Int
            do { (key, used) = try CBOR.decodePrefix(Array(bytes[offset...])) } catch { throw WebAuthnError.malformed("credential public key: \(error)") }
            offset += used
            do {
                attestedCredential = AttestedCredential(aaguid: aaguid, id: id, publicKey: try COSEKey(key))
            } catch {
                throw WebAuthnError.unsupportedKey("\(error)")
            }
        } else {
            attestedCredential = nil
        }
        if flags.contains(.extensions) {
            do { offset += try CBOR.decodePrefix(Array(bytes[offset...])).1 } catch { throw WebAuthnError.malformed("extensions: \(error)") }
        }
        guard offset == bytes.count else { throw WebAuthnError.malformed("bytes follow the authenticator data") }
    }
}

/// Why a ceremony's answer is refused.
package enum WebAuthnError: Error, Equatable, CustomStringConvertible {
    case malformed(String)
    case wrongType(expected: String)
    case wrongChallenge
    case wrongOrigin(String)
    case wrongRelyingParty
    case userNotPresent
    case userNotVerified
    case badSignature
    case unsupportedAttestation(String)
    case unsupportedKey(String)
    case counterDidNotIncrease(stored: UInt32, received: UInt32)

    package var description: String {
        switch self {
        case .malformed(let what): "malformed: \(what)"
        case .wrongType(let expected): "the client data's type is not \(expected)"
        case .wrongChallenge: "the challenge is not the one issued"
        case .wrongOrigin(let origin): "the origin \(origin) is not one of this relying party's"
        case .wrongRelyingParty: "the authenticator data is for another relying party (RP id hash)"
        case .userNotPresent: "the user was not present (flag UP)"
        case .userNotVerified: "the user was not verified (flag UV)"
        case .badSignature: "the signature does not verify"
        case .unsupportedAttestation(let format): "attestation \(format) is not accepted (none and packed self-attestation are)"
        case .unsupportedKey(let why): "unsupported credential key: \(why)"
        case .counterDidNotIncrease(let stored, let received): "the sign counter did not increase (\(stored) stored, \(received) received): a cloned authenticator is suspected"
        }
    }
}

/// Base64url without padding (RFC 4648 §5), as WebAuthn writes challenges and credential ids.
package enum Base64URL {
    package static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    package static func decode(_ text: String) -> [UInt8]? {
        guard text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64).map(Array.init)
    }
}
