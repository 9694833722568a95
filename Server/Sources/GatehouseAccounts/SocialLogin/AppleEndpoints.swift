import Crypto
import Foundation
import GatehouseFoundation

/// Apple's token and revoke endpoints (`/auth/token`, `/auth/revoke`), which Sign in with Apple's REST API answers to
/// a client that proves itself with a client secret: a JWT signed ES256 by the team's Sign in with Apple key (`kid`
/// the key's id; `iss` the team id, `sub` the client id — the bundle id or service id the code was issued to — `aud`
/// `https://appleid.apple.com`, `iat` and `exp`, at most six months apart; ours lives five minutes). The
/// authorization code the app got beside its identity token is exchanged once for a refresh token, kept sealed and
/// used only to revoke the person's authorization when their account is deleted (App Store Review Guideline 5.1.1(v)).
package struct AppleEndpoints: Sendable {
    /// A form POST: its status and body.
    package typealias Post = @Sendable (_ url: String, _ form: [(String, String)]) async throws -> (status: Int, body: [UInt8])

    /// Why a call failed: worth another try later, or never.
    package enum Failure: Error, Equatable {
        case refused(String)
        case unavailable(String)
    }

    package let url: String
    package let teamID: String
    package let keyID: String
    /// The team's key, as its raw scalar (the key type is not `Sendable`; it is made again for each signature).
    private let keyData: Data
    package let clock: GatehouseClock
    package let post: Post

    /// Apple's endpoints when the team's key is configured (all three of `GATEHOUSE_APPLE_TEAM_ID`, `…_KEY_ID`,
    /// `…_KEY_FILE`), else nil: codes are then not exchanged and there is nothing to revoke.
    package init?(settings: GatehouseConfiguration.IdentityProviders.Apple, clock: GatehouseClock, post: @escaping Post) throws {
        guard let teamID = settings.teamID, let keyID = settings.keyID, let pem = settings.privateKeyPEM else { return nil }
        self.url = settings.url
        self.teamID = teamID
        self.keyID = keyID
        self.keyData = try P256.Signing.PrivateKey(pemRepresentation: pem).rawRepresentation
        self.clock = clock
        self.post = post
    }

    struct ClientSecret: Encodable {
        var iss: String
        var iat: Int
        var exp: Int
        var aud: String
        var sub: String
    }

    /// The client secret for `clientID`, fresh for each call.
    package func clientSecret(clientID: String) throws -> String {
        let now = Int(clock.now().timeIntervalSince1970)
        return try JWS.es256(keyID: keyID, claims: ClientSecret(iss: teamID, iat: now, exp: now + 300, aud: "https://appleid.apple.com", sub: clientID),
                              key: try P256.Signing.PrivateKey(rawRepresentation: keyData))
    }

    /// Exchanges the app's authorization code for the refresh token (`grant_type=authorization_code`).
    package func refreshToken(code: String, clientID: String) async throws -> String {
        let (status, body) = try await call("/auth/token", [("client_id", clientID), ("client_secret", try clientSecret(clientID: clientID)),
                                                           ("code", code), ("grant_type", "authorization_code")])
        guard status == 200 else { throw Self.failure(status, body) }
        guard case .object(let answer)? = try? JSONValue.parse(body, maxDepth: 4), let token = answer["refresh_token"]?.string, !token.isEmpty else {
            throw Failure.refused("Apple's answer has no refresh_token")
        }
        return token
    }

    /// Revokes a refresh token (`token_type_hint=refresh_token`): the person's authorization of the app ends at Apple.
    package func revoke(refreshToken: String, clientID: String) async throws {
        let (status, body) = try await call("/auth/revoke", [("client_id", clientID), ("client_secret", try clientSecret(clientID: clientID)),
                                                            ("token", refreshToken), ("token_type_hint", "refresh_token")])
        guard status == 200 else { throw Self.failure(status, body) }
    }

    private func call(_ path: String, _ form: [(String, String)]) async throws -> (status: Int, body: [UInt8]) {
        do {
            return try await post(url + path, form)
        } catch {
            throw Failure.unavailable("Apple did not answer: \(error)")
        }
    }

    /// A 4xx is Apple's refusal (`invalid_client`, `invalid_grant`, …: another try would be refused the same way);
    /// anything else is worth another try.
    private static func failure(_ status: Int, _ body: [UInt8]) -> Failure {
        var reason = "HTTP \(status)"
        if case .object(let answer)? = try? JSONValue.parse(body, maxDepth: 4), let error = answer["error"]?.string { reason += " " + String(error.prefix(60)) }
        return (400..<500).contains(status) && status != 429 ? .refused(reason) : .unavailable(reason)
    }
}
