import Foundation
import GatehouseFoundation
import GatehousePlatform

/// Who a bearer token is, whichever kind: an opaque session token, or a signed access token whose signature, issuer,
/// audience and lifetime hold and whose session still lives (looked up, and cached, as an opaque token's is). Every
/// surface that reads a bearer token asks this.
package struct BearerTokens: Sendable {
    package let sessions: SessionService
    package let access: AccessTokens

    package init(sessions: SessionService, access: AccessTokens) {
        self.sessions = sessions
        self.access = access
    }

    package func authenticate(_ token: String) async throws -> SessionWithAccount? {
        guard AccessTokens.isSigned(token) else { return try await sessions.authenticate(token: token) }
        guard let claims = try await access.verify(token), let sessionID = claims.sid.flatMap(UUID.init(uuidString:)),
              let found = try await sessions.authenticate(sessionID: sessionID), found.account.id.uuidString.lowercased() == claims.sub
        else { return nil }
        return found
    }
}

/// Signed tokens (docs/oidc.md): the keys, the access tokens they sign, the refresh tokens that renew them, and
/// the reading of a bearer token of either kind. Built once by the composition root.
package struct TokensModule: Sendable {
    package let keys: SigningKeys
    package let access: AccessTokens
    package let refresh: RefreshTokens
    package let bearer: BearerTokens

    package struct Settings: Sendable {
        package var issuer: String
        package var audience: String
        package var accessTokenLifetime: TimeInterval
        package var keyLifetime: TimeInterval
        package var refresh = RefreshTokens.Settings()

        package init(issuer: String, audience: String, accessTokenLifetime: TimeInterval, keyLifetime: TimeInterval) {
            self.issuer = issuer
            self.audience = audience
            self.accessTokenLifetime = accessTokenLifetime
            self.keyLifetime = keyLifetime
        }
    }

    package static func make(database: DatabaseProvider, clock: GatehouseClock, random: GatehouseRandom, secrets: Secrets, audit: AuditLog,
                             sessions: SessionService, settings: Settings) -> TokensModule {
        let keys = SigningKeys(database: database, clock: clock, secrets: secrets, audit: audit,
                               settings: .init(tokenLifetime: settings.accessTokenLifetime, keyLifetime: settings.keyLifetime))
        let access = AccessTokens(keys: keys, clock: clock, random: random,
                                  settings: .init(issuer: settings.issuer, audience: settings.audience, lifetime: settings.accessTokenLifetime))
        let refresh = RefreshTokens(database: database, clock: clock, random: random, sessions: sessions, audit: audit, settings: settings.refresh)
        return TokensModule(keys: keys, access: access, refresh: refresh, bearer: BearerTokens(sessions: sessions, access: access))
    }
}
