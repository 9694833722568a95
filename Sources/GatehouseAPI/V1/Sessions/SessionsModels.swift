import Foundation

// The bodies of `/v1`'s sessions: logging in, listing and ending sessions.

/// `POST /v1/sessions`: log in with an email, a tag or a phone.
public struct LoginRequest: Codable, Sendable, Equatable {
    public var identifier: String
    public var password: String
    public var device: String?
    /// Which tokens the answer carries (absent: the session's own token).
    public var tokens: TokenKind?
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
    public var refreshToken: String
    public init(refreshToken: String) {
        self.refreshToken = refreshToken
    }
}

/// A new session: the only time its token is shown.
public struct AuthSession: Codable, Sendable, Equatable {
    public var token: String
    /// Always `Bearer`.
    public var tokenType: String
    public var sessionId: UUID
    public var expiresAt: Date
    public var account: Account
    /// With signed tokens: what renews them (`POST /v1/sessions/refresh`), once; `token` is then the signed access
    /// token and `expiresAt` its end.
    public var refreshToken: String?
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
    public var id: UUID
    public var device: String?
    public var ip: String?
    public var createdAt: Date
    public var lastUsedAt: Date
    public var expiresAt: Date
    /// The session making this request.
    public var current: Bool
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
    public var sessions: [SessionInfo]
    public init(sessions: [SessionInfo]) { self.sessions = sessions }
}

/// `DELETE /v1/sessions?scope=others`.
public struct SessionsRevoked: Codable, Sendable, Equatable {
    public var revoked: Int
    public init(revoked: Int) { self.revoked = revoked }
}
