import Foundation
import GatehouseFoundation
import GatehousePlatform

/// Refresh tokens (docs/oidc.md, "The tokens"): what renews a session's signed access tokens. A token is `ghr_` and
/// 256 random bits, kept as its SHA-256; it works once. Exchanged, it answers the next token of its family and its
/// session; exchanged again within `reuseInterval` (a client racing itself, or a lost answer retried) it answers
/// another, as the first time; exchanged again later it is a stolen copy or a stolen original — the session ends
/// (with every refresh token it has) and the trail says `refresh_token.reused`. A token never outlives its session,
/// and an ended session takes its tokens with it (its rows go with the session's).
package struct RefreshTokens: Sendable {
    package struct Settings: Sendable {
        /// A token unused this long expires (its session's end comes first when sooner).
        package var lifetime: TimeInterval = 30 * 86_400
        /// A token exchanged again within this is a race, not a theft.
        package var reuseInterval: TimeInterval = 10

        package init() {}
    }

    /// What an exchange renews.
    package struct Renewed: Sendable {
        package var session: AuthenticatedSession
        package var refreshToken: String
        /// What the session's client was granted (nil for a session of `/v1`).
        package var scope: String?
    }

    package let database: DatabaseProvider
    package let clock: GatehouseClock
    package let random: GatehouseRandom
    package let sessions: SessionService
    package let audit: AuditLog
    package let settings: Settings
    private var store: RefreshTokenStore { RefreshTokenStore(database: database) }
    package static let prefix = "ghr_"

    package init(database: DatabaseProvider, clock: GatehouseClock, random: GatehouseRandom, sessions: SessionService, audit: AuditLog, settings: Settings) {
        self.database = database
        self.clock = clock
        self.random = random
        self.sessions = sessions
        self.audit = audit
        self.settings = settings
    }

    /// A new token for `session` (a new family, or the next of `family`), expiring with the session at the latest.
    package func issue(session: UUID, sessionExpiresAt: Date, family: UUID? = nil, on tx: (any GatehouseDatabase)? = nil) async throws -> String {
        let token = Self.prefix + random.token()
        let now = clock.now()
        try await store.insert(id: OrderedID.make(), family: family ?? OrderedID.make(), session: session, tokenHash: Secrets.sha256Hex(token),
                               at: now, expiresAt: min(sessionExpiresAt, now.addingTimeInterval(settings.lifetime)), on: tx ?? database.db)
        return token
    }

    /// `token` exchanged for the next: its session and the new token. An unknown, expired or used token, one whose
    /// session ended, or one of another client's session (`client`: the OpenID Connect client exchanging it, nil on
    /// `/v1`) is `refresh_token_invalid`; a reuse after the interval ends the session too.
    package func exchange(_ token: String, client: String? = nil, origin: AuditOrigin) async throws -> Renewed {
        guard token.hasPrefix(Self.prefix), token.utf8.count <= 128 else { throw GatehouseError.refreshTokenInvalid }
        let hash = Secrets.sha256Hex(token)
        let now = clock.now()
        enum Outcome: Sendable { case invalid, renewed(RefreshTokenRow, String), reused(RefreshTokenRow) }
        let outcome: Outcome = try await database.db.withTransaction { tx in
            guard let row = try await store.find(tokenHash: hash, postgres: tx.isPostgres, on: tx), row.expiresAt > now, row.sessionExpiresAt > now,
                  row.clientID == client else {
                return .invalid
            }
            let first = try await store.use(row.id, at: now, on: tx)
            if first || row.usedAt.map({ now.timeIntervalSince($0) <= settings.reuseInterval }) == true {
                return .renewed(row, try await issue(session: row.sessionID, sessionExpiresAt: row.sessionExpiresAt, family: row.familyID, on: tx))
            }
            return .reused(row)
        }
        switch outcome {
        case .invalid:
            throw GatehouseError.refreshTokenInvalid
        case .renewed(let row, let next):
            return Renewed(session: AuthenticatedSession(id: row.sessionID, accountID: row.accountID, expiresAt: row.sessionExpiresAt, methods: row.methods),
                           refreshToken: next, scope: row.scope)
        case .reused(let row):
            try await audit.record(AuditEvent(.refreshTokenReused, by: .anonymous, account: row.accountID, origin: origin,
                                              detail: ["session": row.sessionID.uuidString.lowercased(), "family": row.familyID.uuidString.lowercased()]))
            try await sessions.revoke(sessionID: row.sessionID)
            throw GatehouseError.refreshTokenInvalid
        }
    }

    /// The live, unused token's row (introspection, revocation): nil for anything else.
    package func find(_ token: String) async throws -> RefreshTokenRow? {
        guard token.hasPrefix(Self.prefix), token.utf8.count <= 128, let row = try await store.peek(tokenHash: Secrets.sha256Hex(token)) else { return nil }
        let now = clock.now()
        return row.expiresAt > now && row.sessionExpiresAt > now && row.usedAt == nil ? row : nil
    }

    package func purgeExpired() async throws {
        try await store.purge(before: clock.now())
    }
}
