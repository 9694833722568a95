import Crypto
import Foundation
import GatehouseAccounts
import GatehouseFoundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import _CryptoExtras

/// A stand-in for Apple's and Google's Sign in endpoints, as their documentation describes them: a real HTTP server that
/// publishes RSA keys as a JWKS document with `Cache-Control: max-age` (Apple's `/auth/keys`, Google's
/// `/oauth2/v3/certs`), rotated at will; Apple's `/auth/token` (an authorization code for a refresh token) and
/// `/auth/revoke`, each checking the client secret as Apple does (ES256 by the team's key, its claims, its times); and
/// tokens and server-to-server notifications signed as theirs are (RS256 by `kid`). Counts the key-set fetches.
public final class IdentityProviderStandIn: @unchecked Sendable {
    private let lock = NSLock()
    private var keys: [(kid: String, key: _RSA.Signing.PrivateKey)] = []
    private var _fetches = 0
    private var task: Task<Void, any Error>?
    public private(set) var port = 0

    public var fetches: Int { lock.withLock { _fetches } }

    public init() {}

    // Apple's token and revoke endpoints: the team's key (its public half checks each client secret), the codes
    // the app got, the refresh tokens they were exchanged for, and the revocations.
    public static let teamID = "TEAM123456"
    public static let keyID = "SIWA123456"
    public let teamKey = P256.Signing.PrivateKey()
    private var _now: @Sendable () -> Date = { Date() }
    public var now: @Sendable () -> Date {
        get { lock.withLock { _now } }
        set { lock.withLock { _now = newValue } }
    }
    private var codes: [String: String] = [:]        // code → client id
    private var refreshTokens: [String: String] = [:] // refresh token → client id
    private var _revoked: [String] = []
    private var _revokeAttempts = 0
    private var _away = false
    private var _refusedSecrets: [String] = []
    /// The client secrets the token endpoint refused.
    public var refusedSecrets: [String] { lock.withLock { _refusedSecrets } }

    public var revoked: [String] { lock.withLock { _revoked } }
    public var revokeAttempts: Int { lock.withLock { _revokeAttempts } }
    public var issuedRefreshTokens: [String] { lock.withLock { Array(refreshTokens.keys) } }
    public var away: Bool {
        get { lock.withLock { _away } }
        set { lock.withLock { _away = newValue } }
    }

    /// An authorization code, as Apple gives the app beside the identity token.
    public func code(for clientID: String) -> String {
        let code = "c" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "") + ".0.nrxq." + UUID().uuidString.prefix(8)
        lock.withLock { codes[code] = clientID }
        return code
    }

    /// Checks a client secret as Apple does: ES256 by the team's key named by `kid`, `iss` the team, `sub` the
    /// client id, `aud` Apple, not expired. nil when it holds, else why not.
    public func refusal(ofSecret secret: String, clientID: String) -> String? {
        let parts = secret.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let header = Base64URL.decode(parts[0]), let payload = Base64URL.decode(parts[1]), let signature = Base64URL.decode(parts[2]),
              case .object(let h)? = try? JSONValue.parse(header), case .object(let c)? = try? JSONValue.parse(payload) else { return "malformed" }
        guard h["alg"]?.string == "ES256", h["kid"]?.string == Self.keyID else { return "header" }
        guard let sig = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
              teamKey.publicKey.isValidSignature(sig, for: Data((parts[0] + "." + parts[1]).utf8)) else { return "signature" }
        guard c["iss"]?.string == Self.teamID, c["sub"]?.string == clientID, c["aud"]?.string == "https://appleid.apple.com" else { return "claims" }
        let now = self.now().timeIntervalSince1970
        guard case .integer(let exp)? = c["exp"], case .integer(let iat)? = c["iat"], Double(exp) > now, Double(iat) <= now + 60,
              exp - iat <= 15_777_000 else { return "times" }
        return nil
    }

    public func tokenEndpoint(_ form: [String: String]) -> (HTTPResponse.Status, String) {
        let refused = form["client_id"].map { refusal(ofSecret: form["client_secret"] ?? "", clientID: $0) } ?? "no client id"
        return lock.withLock {
            guard !_away else { return (.serviceUnavailable, "") }
            guard let clientID = form["client_id"], refused == nil else {
                _refusedSecrets.append(form["client_secret"] ?? "")
                return (.badRequest, #"{"error":"invalid_client"}"#)
            }
            guard form["grant_type"] == "authorization_code", let code = form["code"], codes[code] == clientID else {
                return (.badRequest, #"{"error":"invalid_grant"}"#)
            }
            codes[code] = nil
            let refresh = "r" + UUID().uuidString.lowercased()
            refreshTokens[refresh] = clientID
            return (.ok, #"{"access_token":"a\#(UUID().uuidString)","token_type":"Bearer","expires_in":3600,"refresh_token":"\#(refresh)","id_token":"x.y.z"}"#)
        }
    }

    public func revokeEndpoint(_ form: [String: String]) -> (HTTPResponse.Status, String) {
        let refused = form["client_id"].map { refusal(ofSecret: form["client_secret"] ?? "", clientID: $0) } ?? "no client id"
        return lock.withLock {
            _revokeAttempts += 1
            guard !_away else { return (.serviceUnavailable, "") }
            guard let clientID = form["client_id"], refused == nil else {
                return (.badRequest, #"{"error":"invalid_client"}"#)
            }
            if let token = form["token"], refreshTokens[token] == clientID, form["token_type_hint"] == "refresh_token" {
                refreshTokens[token] = nil
                _revoked.append(token)
            }
            return (.ok, "")
        }
    }

    /// A server-to-server notification as Apple signs it: its `events` claim a JSON string.
    public func notification(_ type: String, sub: String, at: Date, iat: Date? = nil, key: _RSA.Signing.PrivateKey? = nil) throws -> String {
        struct Notification: Encodable {
            var iss = "https://appleid.apple.com"
            var aud = IdentityProviderStandIn.appleClient
            var iat: Int
            var jti = UUID().uuidString
            var events: String
        }
        let events = #"{"type":"\#(type)","sub":"\#(sub)","event_time":\#(Int(at.timeIntervalSince1970 * 1000)),"email":"x7f2@privaterelay.appleid.com","is_private_email":"true"}"#
        return try token(Notification(iat: Int((iat ?? at).timeIntervalSince1970), events: events), key: key)
    }

    @discardableResult
    public func rotate(_ kid: String) throws -> _RSA.Signing.PrivateKey {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        lock.withLock { keys.insert((kid, key), at: 0) }
        return key
    }

    public var current: (kid: String, key: _RSA.Signing.PrivateKey) { lock.withLock { keys[0] } }

    public func start() async throws {
        let router = Router()
        let handler: @Sendable (Request, BasicRequestContext) async throws -> Response = { [self] _, _ in
            let published = lock.withLock { () -> [(kid: String, key: _RSA.Signing.PrivateKey)] in
                _fetches += 1
                return keys
            }
            let set = JSONValue.object(["keys": .array(try published.map { try JWS.jwk($0.key.publicKey, keyID: $0.kid) })])
            return Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: "public, max-age=3600"],
                            body: .init(byteBuffer: ByteBuffer(bytes: try JSONEncoder().encode(set))))
        }
        router.get("auth/keys", use: handler)
        router.get("oauth2/v3/certs", use: handler)
        @Sendable func form(_ request: Request) async throws -> [String: String] {
            let body = String(buffer: try await request.body.collect(upTo: 1 << 16))
            var fields: [String: String] = [:]
            for pair in body.split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1).map { String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0) }
                if kv.count == 2 { fields[kv[0]] = kv[1] }
            }
            return fields
        }
        router.post("auth/token") { [self] request, _ -> Response in
            let (status, body) = tokenEndpoint(try await form(request))
            return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: body)))
        }
        router.post("auth/revoke") { [self] request, _ -> Response in
            let (status, body) = revokeEndpoint(try await form(request))
            return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: body)))
        }
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "identity-provider")
        logger.logLevel = .error
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { continuation.yield($0.localAddress?.port ?? 0) }, logger: logger)
        task = Task { try await app.runService(gracefulShutdownSignals: []) }
        var iterator = stream.makeAsyncIterator()
        port = await iterator.next() ?? 0
    }

    public func stop() async {
        task?.cancel()
        _ = try? await task?.value
    }

    /// A token as the provider signs it.
    public func token(_ claims: some Encodable, kid: String? = nil, key: _RSA.Signing.PrivateKey? = nil) throws -> String {
        let signer = current
        return try JWS.rs256(keyID: kid ?? signer.kid, claims: claims, key: key ?? signer.key)
    }
}

/// The claims of an identity token as Apple and Google write them.
public struct IdentityClaims: Encodable, Sendable {
    public var iss: String
    public var aud: String
    public var sub: String
    public var iat: Int
    public var exp: Int
    public var nonce: String?
    public var email: String?
    public var email_verified: String?
    public var is_private_email: String?
    public var given_name: String?
    public var family_name: String?
    /// Apple's judgement of the person: 2 likely real, 1 unknown, 0 unsupported.
    public var real_user_status: Int?
    /// Each token the provider signs is its own (Google's carry a `jti`; Apple's an `auth_time` and hashes).
    public var jti = UUID().uuidString

    public init(iss: String, aud: String, sub: String, iat: Int, exp: Int, nonce: String?, email: String?, email_verified: String?,
                is_private_email: String? = nil, given_name: String? = nil, family_name: String? = nil, real_user_status: Int? = nil) {
        self.iss = iss
        self.aud = aud
        self.sub = sub
        self.iat = iat
        self.exp = exp
        self.nonce = nonce
        self.email = email
        self.email_verified = email_verified
        self.is_private_email = is_private_email
        self.real_user_status = real_user_status
        self.given_name = given_name
        self.family_name = family_name
    }
}

extension IdentityProviderStandIn {
    /// A stand-in with its first key (`key-1`), listening while `body` runs, stopped after it whatever happens.
    public static func run(isolation: isolated (any Actor)? = #isolation, _ body: (IdentityProviderStandIn) async throws -> Void) async throws {
        let provider = IdentityProviderStandIn()
        try provider.rotate("key-1")
        try await provider.start()
        do {
            try await body(provider)
        } catch {
            await provider.stop()
            throw error
        }
        await provider.stop()
    }

    public static let appleClient = "com.example.shop"
    public static let googleClient = "1234-abc.apps.googleusercontent.com"

    /// A token's claims as Apple writes them (its booleans strings, the nonce hashed), issued `now`.
    public static func apple(now: Date, sub: String = "001234.abcdef.0042", email: String? = "ann@example.com", verified: Bool = true,
                             nonce: String) -> IdentityClaims {
        let at = Int(now.timeIntervalSince1970)
        return IdentityClaims(iss: "https://appleid.apple.com", aud: appleClient, sub: sub, iat: at, exp: at + 600,
                              nonce: IdentityProvider.apple.signedNonce(of: nonce), email: email, email_verified: verified ? "true" : "false",
                              is_private_email: "false", real_user_status: 2)
    }

    /// A token's claims as Google writes them (with the person's names), issued `now`.
    public static func google(now: Date, sub: String = "110248495921238986420", email: String? = "ann@example.com", verified: Bool = true,
                              nonce: String) -> IdentityClaims {
        let at = Int(now.timeIntervalSince1970)
        return IdentityClaims(iss: "https://accounts.google.com", aud: googleClient, sub: sub, iat: at, exp: at + 3_600, nonce: nonce, email: email,
                              email_verified: verified ? "true" : "false", given_name: "Ann", family_name: "Lee")
    }

    /// Points a server's configuration at this stand-in: both providers on, Apple's team key set.
    public func configure(_ c: inout GatehouseConfiguration) {
        c.identityProviders.apple.clientIDs = [Self.appleClient]
        c.identityProviders.apple.url = "http://127.0.0.1:\(port)"
        c.identityProviders.google.clientIDs = [Self.googleClient]
        c.identityProviders.google.keysURL = "http://127.0.0.1:\(port)/oauth2/v3/certs"
        c.identityProviders.apple.teamID = Self.teamID
        c.identityProviders.apple.keyID = Self.keyID
        c.identityProviders.apple.privateKeyPEM = teamKey.pemRepresentation
    }
}
