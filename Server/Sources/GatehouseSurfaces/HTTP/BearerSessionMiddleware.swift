import GatehouseAccounts
import Hummingbird

/// Resolves a bearer token (an opaque session token or a signed access token, `BearerTokens`) into
/// `context.session`. A route that needs a session calls
/// `context.requireSession()`; its surface decides how "unauthorized" looks on the wire.
package struct BearerSessionMiddleware: RouterMiddleware {
    package typealias Context = GatehouseRequestContext
    package let bearer: BearerTokens

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        if let token = request.bearerToken, let authenticated = try await bearer.authenticate(token) {
            context.session = authenticated.session
            context.sessionAccount = authenticated.account
        }
        // A request that may change something: this person's reads see it (`ReadReplicas`), counted
        // from its answer (a slow write must not outlast the window).
        guard let account = context.sessionAccount?.id, request.method != .get, request.method != .head else {
            return try await next(request, context)
        }
        let database = bearer.sessions.database
        database.readsOwnWrites(account)
        defer { database.readsOwnWrites(account) }
        return try await next(request, context)
    }

    package init(bearer: BearerTokens) {
        self.bearer = bearer
    }
}
