import Foundation

// The bodies of `/v1`'s sessions: logging in, listing and ending sessions.

/// `POST /v1/sessions`: log in with an email, a tag or a phone.
public struct LoginRequest: Codable, Sendable, Equatable {
    /// An email, a tag or a phone.
    public var identifier: String
    /// The password.
    public var password: String
    /// A label for the session it opens (e.g. "iPhone 15, iOS 18"); the `User-Agent` when absent.
    public var device: String?
    /// Which tokens the answer carries (absent: the session's own token).
    public var tokens: TokenKind?
    /// Makes one of its members, each as its property describes.
    public init(identifier: String, password: String, device: String? = nil, tokens: TokenKind? = nil) {
        self.identifier = identifier
        self.password = password
        self.device = device
        self.tokens = tokens
    }
}

/// Which tokens a sign-in answers (docs/oidc.md).
public enum TokenKind: String, Codable, Sendable, CaseIterable {
    /// The session's own opaque token, as every client of the specs uses (the default).
    case session
    /// A signed access token (a JWT other services verify against `/.well-known/jwks.json`), short-lived, and a
    /// refresh token that renews it (`POST /v1/sessions/refresh`).
    case signed
}

/// `POST /v1/sessions/refresh`: a refresh token, exchanged for new signed tokens (it works once).
public struct RefreshRequest: Codable, Sendable, Equatable {
    /// The refresh token the session answered.
    public var refreshToken: String
    /// Makes one of its members, each as its property describes.
    public init(refreshToken: String) {
        self.refreshToken = refreshToken
    }
}

/// A new session: the only time its token is shown.
public struct AuthSession: Codable, Sendable, Equatable {
    /// The bearer token: the session's own opaque token, or, with `"tokens": "signed"`, a signed access token (a JWT a
    /// team's backend verifies against `/.well-known/jwks.json`; docs/oidc.md).
    public var token: String
    /// Always `Bearer`.
    public var tokenType: String
    /// The session's id (in my sessions' list).
    public var sessionId: UUID
    /// When `token` stops working: the session's end, or the access token's (`GATEHOUSE_ACCESS_TOKEN_TTL_SECONDS`,
    /// 600).
    public var expiresAt: Date
    /// The account signed in.
    public var account: Account
    /// With signed tokens: what renews them (`POST /v1/sessions/refresh`), once; `token` is then the signed access
    /// token and `expiresAt` its end.
    public var refreshToken: String?
    /// Makes one of its members, each as its property describes.
    public init(token: String, tokenType: String = "Bearer", sessionId: UUID, expiresAt: Date, account: Account, refreshToken: String? = nil) {
        self.token = token
        self.tokenType = tokenType
        self.sessionId = sessionId
        self.expiresAt = expiresAt
        self.account = account
        self.refreshToken = refreshToken
    }
}

/// One of my sessions in `GET /v1/sessions`.
public struct SessionInfo: Codable, Sendable, Equatable {
    /// Its id.
    public var id: UUID
    /// The device, as its client named it.
    public var device: String?
    /// The client address it was last used from.
    public var ip: String?
    /// When it was made.
    public var createdAt: Date
    /// When it was last used.
    public var lastUsedAt: Date
    /// When it stops working.
    public var expiresAt: Date
    /// The session making this request.
    public var current: Bool
    /// Makes one of its members, each as its property describes.
    public init(id: UUID, device: String?, ip: String?, createdAt: Date, lastUsedAt: Date, expiresAt: Date, current: Bool) {
        self.id = id
        self.device = device
        self.ip = ip
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.expiresAt = expiresAt
        self.current = current
    }
}

/// `GET /v1/sessions`, newest first.
public struct SessionList: Codable, Sendable, Equatable {
    /// Newest first.
    public var sessions: [SessionInfo]
    /// Makes one of its members, each as its property describes.
    public init(sessions: [SessionInfo]) { self.sessions = sessions }
}

/// `DELETE /v1/sessions?scope=others`.
public struct SessionsRevoked: Codable, Sendable, Equatable {
    /// How many sessions were ended.
    public var revoked: Int
    /// Makes one of its members, each as its property describes.
    public init(revoked: Int) { self.revoked = revoked }
}
