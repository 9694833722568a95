import GatehouseFoundation
import GatehousePlatform
import HTTPTypes
import Hummingbird
import NIOCore

/// Refuses a request whose address (its path or query string) decodes to U+0000 (`%00`), before a
/// route reads a parameter from it: text may not hold that character (`InputText`), and a path
/// parameter or a query value reaches lookups on both engines. The refusal is 400 in the format of
/// the surface the path belongs to (its renderer, given by the composition root); a path of no
/// listed surface (the consoles' pages, the operations' routes) gets the message as plain text.
package struct NULAddressMiddleware: RouterMiddleware {
    package typealias Context = GatehouseRequestContext
    /// How a surface writes a refusal.
    package typealias Render = @Sendable (GatehouseError, Request) -> Response

    /// Path prefixes and their surface's renderer; the first that matches answers.
    private let surfaces: [(prefix: String, render: Render)]

    package init(surfaces: [(prefix: String, render: Render)]) {
        self.surfaces = surfaces
    }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard InputText.hasEncodedNUL(request.uri.description) else { return try await next(request, context) }
        let error = GatehouseError.invalid(.invalidParameter, "error.nulInAddress")
        let path = request.uri.path.lowercased()
        if let surface = surfaces.first(where: { path.hasPrefix($0.prefix) }) {
            return surface.render(error, request)
        }
        let language = AppLanguage.negotiate(request.headers[.acceptLanguage], fallback: .en)
        return Response(status: .badRequest, headers: [.contentType: "text/plain; charset=utf-8"],
                        body: .init(byteBuffer: ByteBuffer(string: error.message.render(language))))
    }
}
