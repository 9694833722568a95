import GatehouseAccounts
import Hummingbird

/// Resolves a bearer token into `context.session`. A route that needs a session calls
/// `context.requireSession()`; its surface decides how "unauthorized" looks on the wire.
package struct BearerSessionMiddleware: RouterMiddleware {
    package typealias Context = GatehouseRequestContext
    package let sessions: SessionService

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        if let token = request.bearerToken, let authenticated = try await sessions.authenticate(token: token) {
            context.session = authenticated.session
            context.sessionAccount = authenticated.account
        }
        return try await next(request, context)
    }

    package init(sessions: SessionService) {
        self.sessions = sessions
    }
}
