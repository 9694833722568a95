import GatehouseAPI
import Hummingbird

extension RouterMethods where Context == GatehouseRequestContext {
    /// Adds an operation of a surface that reads its own body and checks its own access (`/api`,
    /// Sign To Login, the console, the operations' routes): the method and the path from the
    /// declaration, everything else by the handler.
    @discardableResult
    package func route<Input, Output>(_ endpoint: Endpoint<Input, Output>, use handler: @escaping @Sendable (Request, Context) async throws -> Response) -> Self {
        on(RouterPath(endpoint.path), method: HTTPRequest.Method(rawValue: endpoint.method.rawValue)!, use: handler)
    }
}
