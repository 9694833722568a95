import Crypto
import Foundation
import GatehouseFoundation

/// A software WebAuthn authenticator holding one ES256 credential, made with swift-crypto: what a
/// phone's platform answers to `create()` and `get()`, for the relying party's and the SDK's tests.
package struct SoftwareAuthenticator {
    package var key = P256.Signing.PrivateKey()
    package var credentialID = (0..<16).map { _ in UInt8.random(in: 0...255) }
    package var counter: UInt32 = 0
    package var flags: UInt8 = 0x01 | 0x04  // UP, UV

    package init(key: P256.Signing.PrivateKey = P256.Signing.PrivateKey(), credentialID: [UInt8] = (0..<16).map { _ in UInt8.random(in: 0...255) },
                counter: UInt32 = 0, flags: UInt8 = 0x01 | 0x04) {
        self.key = key
        self.credentialID = credentialID
        self.counter = counter
        self.flags = flags
    }

    package var cose: CBOR {
        let raw = Array(key.publicKey.rawRepresentation)
        return .map([.init(.int(1), .int(2)), .init(.int(3), .int(-7)), .init(.int(-1), .int(1)),
                     .init(.int(-2), .bytes(Array(raw[0..<32]))), .init(.int(-3), .bytes(Array(raw[32..<64])))])
    }

    package func authData(rpID: String = "example.com", attested: Bool) -> [UInt8] {
        var bytes = Array(SHA256.hash(data: Data(rpID.utf8))) + [flags | (attested ? 0x40 : 0)]
        bytes += withUnsafeBytes(of: counter.bigEndian, Array.init)
        if attested { bytes += [UInt8](repeating: 0, count: 16) + [0, UInt8(credentialID.count)] + credentialID + cose.encoded() }
        return bytes
    }

    package static func clientData(_ type: String, _ challenge: [UInt8], origin: String = "https://example.com") -> [UInt8] {
        Array(#"{"type":"\#(type)","challenge":"\#(Base64URL.encode(challenge))","origin":"\#(origin)","crossOrigin":false}"#.utf8)
    }

    /// `create()`: the client data and the attestation object.
    package func register(_ challenge: [UInt8], format: String = "none", origin: String = "https://example.com", rpID: String = "example.com") throws -> ([UInt8], [UInt8]) {
        let clientData = Self.clientData("webauthn.create", challenge, origin: origin)
        let data = authData(rpID: rpID, attested: true)
        let statement: CBOR = format == "packed"
            ? .map([.init(.text("alg"), .int(-7)), .init(.text("sig"), .bytes(Array(try key.signature(for: data + Array(SHA256.hash(data: clientData))).derRepresentation)))])
            : .map([])
        return (clientData, CBOR.map([.init(.text("fmt"), .text(format)), .init(.text("attStmt"), statement), .init(.text("authData"), .bytes(data))]).encoded())
    }

    /// `get()`: the client data, the authenticator data and the signature; the counter moves on.
    package mutating func assert(_ challenge: [UInt8], origin: String = "https://example.com", rpID: String = "example.com") throws -> ([UInt8], [UInt8], [UInt8]) {
        counter += 1
        let clientData = Self.clientData("webauthn.get", challenge, origin: origin)
        let data = authData(rpID: rpID, attested: false)
        return (clientData, data, Array(try key.signature(for: data + Array(SHA256.hash(data: clientData))).derRepresentation))
    }
}
