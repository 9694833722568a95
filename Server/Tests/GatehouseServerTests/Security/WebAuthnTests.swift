import Crypto
import Foundation
import GatehouseFoundation
import GatehouseTestSupport
import Testing
import _CryptoExtras

/// The relying party's checks of WebAuthn ceremonies (§7.1, §7.2), against a software authenticator
/// made here with swift-crypto: registrations with attestation none and packed self-attestation,
/// assertions; every refusal the spec lists for a relying party, each by name.
@Suite("WebAuthn: the relying party's checks")
struct WebAuthnTests {
    static let rp = WebAuthnRelyingParty(id: "example.com", origins: ["https://example.com", "ios:bundle-id:com.example.app"])

    typealias Authenticator = SoftwareAuthenticator

    static func challenge() -> [UInt8] { (0..<32).map { _ in UInt8.random(in: 0...255) } }

    @Test("a registration with attestation none and with packed self-attestation gives the credential; an assertion signs in and moves the counter")
    func registerAndAuthenticate() throws {
        var authenticator = Authenticator()
        for format in ["none", "packed"] {
            let challenge = Self.challenge()
            let (clientData, attestation) = try authenticator.register(challenge, format: format)
            let credential = try Self.rp.verifyRegistration(clientDataJSON: clientData, attestationObject: attestation, challenge: challenge, requireUserVerification: true)
            #expect(credential.id == authenticator.credentialID && credential.publicKey.algorithm == .es256 && credential.userVerified, "\(format)")
        }
        let challenge = Self.challenge()
        let (clientData, attestation) = try authenticator.register(challenge)
        var credential = try Self.rp.verifyRegistration(clientDataJSON: clientData, attestationObject: attestation, challenge: challenge, requireUserVerification: true)
        for expected in 1...3 as ClosedRange<UInt32> {
            let login = Self.challenge()
            let (data, auth, signature) = try authenticator.assert(login)
            credential.signCount = try Self.rp.verifyAssertion(credential: credential, clientDataJSON: data, authenticatorData: auth, signature: signature,
                                                               challenge: login, requireUserVerification: true)
            #expect(credential.signCount == expected)
        }
        // From an iOS app: its origin is the app's.
        let fromApp = Self.challenge()
        let (data, auth, signature) = try authenticator.assert(fromApp, origin: "ios:bundle-id:com.example.app")
        #expect(try Self.rp.verifyAssertion(credential: credential, clientDataJSON: data, authenticatorData: auth, signature: signature,
                                            challenge: fromApp, requireUserVerification: true) == 4)
    }

    @Test("refused: a lowered or repeated counter (a clone), a wrong origin, another RP id's hash, no UV when required, no UP, a bad signature, another challenge, the wrong ceremony, packed signed by another key")
    func refusals() throws {
        let authenticator = Authenticator()
        let registration = Self.challenge()
        let (clientData, attestation) = try authenticator.register(registration)
        let credential = try Self.rp.verifyRegistration(clientDataJSON: clientData, attestationObject: attestation, challenge: registration, requireUserVerification: true)
        func refusal(_ make: (inout Authenticator, [UInt8]) throws -> ([UInt8], [UInt8], [UInt8]), stored: UInt32 = 0, requireUV: Bool = true,
                     expecting: [UInt8]? = nil) -> WebAuthnError? {
            var copy = authenticator
            let challenge = Self.challenge()
            do {
                let (data, auth, signature) = try make(&copy, challenge)
                var known = credential
                known.signCount = stored
                _ = try Self.rp.verifyAssertion(credential: known, clientDataJSON: data, authenticatorData: auth, signature: signature,
                                                challenge: expecting ?? challenge, requireUserVerification: requireUV)
                return nil
            } catch { return error as? WebAuthnError }
        }
        #expect(refusal({ try $0.assert($1) }, stored: 5) == .counterDidNotIncrease(stored: 5, received: 1))
        #expect(refusal({ try $0.assert($1) }, stored: 1) == .counterDidNotIncrease(stored: 1, received: 1))
        #expect(refusal({ try $0.assert($1, origin: "https://evil.example") }) == .wrongOrigin("https://evil.example"))
        #expect(refusal({ try $0.assert($1, rpID: "evil.example") }) == .wrongRelyingParty)
        #expect(refusal({ $0.flags = 0x01; return try $0.assert($1) }) == .userNotVerified)
        #expect(refusal({ $0.flags = 0x01; return try $0.assert($1) }, requireUV: false) == nil, "a second factor may skip UV")
        #expect(refusal({ $0.flags = 0x04; return try $0.assert($1) }) == .userNotPresent)
        #expect(refusal({ var (d, a, s) = try $0.assert($1); s[s.count - 3] ^= 0x01; return (d, a, s) }) == .badSignature)
        #expect(refusal({ let (d, a, _) = try $0.assert($1); return (d, a, Array(try P256.Signing.PrivateKey().signature(for: a).derRepresentation)) }) == .badSignature)
        #expect(refusal({ try $0.assert($1) }, expecting: Self.challenge()) == .wrongChallenge)
        #expect(refusal({ let (_, a, s) = try $0.assert($1); return (Authenticator.clientData("webauthn.create", $1), a, s) }) == .wrongType(expected: "webauthn.get"))
        #expect(refusal({ let (_, a, s) = try $0.assert($1); return (Array(#"{"type":"webauthn.get","challenge":"\#(Base64URL.encode($1))","origin":"https://example.com","crossOrigin":true}"#.utf8), a, s) })
                == .wrongOrigin("a cross-origin frame"))

        // Registrations
        func registrationRefusal(_ make: (Authenticator, [UInt8]) throws -> ([UInt8], [UInt8]), requireUV: Bool = true) -> WebAuthnError? {
            let challenge = Self.challenge()
            do {
                let (data, attestation) = try make(authenticator, challenge)
                _ = try Self.rp.verifyRegistration(clientDataJSON: data, attestationObject: attestation, challenge: challenge, requireUserVerification: requireUV)
                return nil
            } catch { return error as? WebAuthnError }
        }
        #expect(registrationRefusal({ try $0.register($1, origin: "https://evil.example") }) == .wrongOrigin("https://evil.example"))
        #expect(registrationRefusal({ try $0.register($1, rpID: "evil.example") }) == .wrongRelyingParty)
        #expect(registrationRefusal({ try $0.register($1, format: "fido-u2f") }) == .unsupportedAttestation("fido-u2f"))
        #expect(registrationRefusal({ var other = $0; other.flags = 0x01; return try other.register($1) }) == .userNotVerified)
        #expect(registrationRefusal({ authenticator, challenge in
            let (data, _) = try authenticator.register(challenge)
            let forged = Authenticator()
            let (_, attestation) = try Authenticator(key: forged.key, credentialID: authenticator.credentialID, counter: 0, flags: 0x05)
                .register(challenge, format: "packed")
            // The packed statement is signed by another key than the credential it carries: swap the key in.
            var object = try CBOR.decode(attestation).map!
            var authData = try #require(object[2].value.bytes)
            let ownKey = authenticator.cose.encoded()
            authData.replaceSubrange((authData.count - ownKey.count)..., with: ownKey)
            object[2] = .init(.text("authData"), .bytes(authData))
            return (data, CBOR.map(object).encoded())
        }) == .badSignature)
        #expect(registrationRefusal({ _, challenge in
            (Authenticator.clientData("webauthn.create", challenge), Array("not cbor".utf8))
        })?.description.hasPrefix("malformed") == true)
    }

    @Test("authenticator data: cut short, a credential id longer than it says, bytes after it, a key of another algorithm are refused")
    func authenticatorData_malformed() throws {
        let authenticator = Authenticator()
        let full = authenticator.authData(attested: true)
        #expect(throws: WebAuthnError.self) { try AuthenticatorData(Array(full.prefix(36))) }
        #expect(throws: WebAuthnError.self) { try AuthenticatorData(Array(full.prefix(60))) }
        #expect(throws: WebAuthnError.self) { try AuthenticatorData(full + [0]) }
        var longID = full
        longID[53] = 0xff
        #expect(throws: WebAuthnError.self) { try AuthenticatorData(longID) }
        let parsed = try AuthenticatorData(full)
        #expect(parsed.attestedCredential?.id == authenticator.credentialID && parsed.flags.contains(.userVerified) && parsed.signCount == 0)
        #expect(Base64URL.decode(Base64URL.encode([0xfb, 0xff, 0x00])) == [0xfb, 0xff, 0x00] && Base64URL.decode("a+b/") == nil)
    }
}
