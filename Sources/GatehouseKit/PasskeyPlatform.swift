import Foundation
import GatehouseAPI

// What AuthenticationServices takes and gives is `Data`; the wire is base64url. These convert, so an
// app passes the platform's objects straight through (docs/sdk.md, "Passkeys").

extension PasskeyCreationOptions {
    /// The challenge as bytes, for `createCredentialRegistrationRequest(challenge:name:userID:)`.
    public var challengeData: Data { Data(base64URL: challenge) ?? Data() }
    /// The account's opaque handle as bytes, for `userID:`.
    public var userIDData: Data { Data(base64URL: user.id) ?? Data() }
}

extension PasskeyRequestOptions {
    /// The challenge as bytes, for `createCredentialAssertionRequest(challenge:)`.
    public var challengeData: Data { Data(base64URL: challenge) ?? Data() }
    /// The credential ids of `allowCredentials` as bytes, for `allowedCredentials`.
    public var allowedCredentialIDs: [Data] { allowCredentials.compactMap { Data(base64URL: $0.id) } }
}

extension PasskeyRegistrationCredential {
    /// From `ASAuthorizationPlatformPublicKeyCredentialRegistration`'s `credentialID`,
    /// `rawClientDataJSON` and `rawAttestationObject`.
    public init(credentialID: Data, clientDataJSON: Data, attestationObject: Data) {
        let id = credentialID.base64URLEncoded
        self.init(id: id, rawId: id, response: Response(clientDataJSON: clientDataJSON.base64URLEncoded,
                                                          attestationObject: attestationObject.base64URLEncoded, transports: ["internal"]),
                  authenticatorAttachment: "platform")
    }
}

extension PasskeyAssertion {
    /// From `ASAuthorizationPlatformPublicKeyCredentialAssertion`'s `credentialID`,
    /// `rawClientDataJSON`, `rawAuthenticatorData`, `signature` and `userID`.
    public init(credentialID: Data, clientDataJSON: Data, authenticatorData: Data, signature: Data, userHandle: Data?) {
        let id = credentialID.base64URLEncoded
        self.init(id: id, rawId: id, response: Response(clientDataJSON: clientDataJSON.base64URLEncoded, authenticatorData: authenticatorData.base64URLEncoded,
                                                          signature: signature.base64URLEncoded, userHandle: userHandle?.base64URLEncoded),
                  authenticatorAttachment: "platform")
    }
}

extension Data {
    /// Base64url without padding (RFC 4648 §5), as WebAuthn writes bytes in JSON.
    var base64URLEncoded: String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    init?(base64URL text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        self.init(base64Encoded: base64)
    }
}
