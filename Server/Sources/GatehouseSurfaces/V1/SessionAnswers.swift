import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation

/// The answer of every sign-in on `/v1` (docs/api-v1.md, docs/oidc.md): the session's own opaque token, or, when the
/// client asked for `"tokens": "signed"`, a signed access token and a refresh token — the session's opaque token is
/// then never shown. `POST /v1/sessions/refresh` answers the same way.
package struct SessionAnswers: Sendable {
    package let tokens: TokensModule
    package let edge: SurfaceEdge

    package init(tokens: TokensModule, edge: SurfaceEdge) {
        self.tokens = tokens
        self.edge = edge
    }

    package func answer(_ session: IssuedSession, account: AccountSnapshot, kind: TokenKind?) async throws -> AuthSession {
        let shown = account.v1Account(publicURL: edge.publicURL)
        guard kind == .signed else {
            return AuthSession(token: session.token, sessionId: session.id, expiresAt: session.expiresAt, account: shown)
        }
        let refresh = try await tokens.refresh.issue(session: session.id, sessionExpiresAt: session.expiresAt)
        return try await signed(AuthenticatedSession(id: session.id, accountID: session.accountID, expiresAt: session.expiresAt, methods: session.methods),
                                account: account, refreshToken: refresh)
    }

    /// Signed tokens for a live session: a new access token, with the refresh token that goes with it.
    package func signed(_ session: AuthenticatedSession, account: AccountSnapshot, refreshToken: String) async throws -> AuthSession {
        let (access, expiresAt) = try await tokens.access.issue(for: session)
        return AuthSession(token: access, sessionId: session.id, expiresAt: expiresAt, account: account.v1Account(publicURL: edge.publicURL),
                           refreshToken: refreshToken)
    }
}
