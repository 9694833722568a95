import GatehousePlatform
import HTTPTypes
import Hummingbird

/// Leaves U+0000 out of a request's query string (`%00`) before any route reads it: text never holds the character
/// (`InputText`), no browser or client of the specs sends it, and a query value reaches lookups on both engines.
/// Taking it out — rather than refusing — keeps every route's answer one its document declares (a search for
/// `jo%00se` is a search for `jose`, as a search already leaves control characters out); the bodies, where a value is
/// the client's to fix, are refused by their readers instead. (A path parameter is given to its route as sent,
/// percent-escapes and all, so `%00` there is three characters of text, which the route's own rule refuses.)
package struct NULAddressMiddleware: RouterMiddleware {
    package typealias Context = GatehouseRequestContext

    package init() {}

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let target = request.head.path, InputText.hasEncodedNUL(target) else { return try await next(request, context) }
        var head = request.head
        head.path = InputText.removingEncodedNUL(target)
        return try await next(Request(head: head, body: request.body), context)
    }
}
