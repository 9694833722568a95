import Hummingbird

/// Answers are not for caches unless a route says otherwise: tokens, codes, temporary passwords
/// and account data must not stay in a proxy's or a browser's cache. Routes that are cacheable
/// (avatars by immutable URL, the OpenAPI document) set their own `Cache-Control`.
package struct NoStoreMiddleware<Context: RequestContext>: RouterMiddleware {
    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        return response
    }

    package init() {

    }
}
