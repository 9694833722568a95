import Foundation
import GatehouseAPI
import GatehouseFoundation
import Hummingbird

extension RouterMethods where Context == GatehouseRequestContext {
    /// Adds an operation of a surface that reads its own body and checks its own access (`/api`,
    /// Sign To Login, the console, the operations' routes): the method and the path from the
    /// declaration, its UUID path parameters read (`GatehouseRequestContext.id`), everything else
    /// by the handler.
    @discardableResult
    package func route<Input, Output>(_ endpoint: Endpoint<Input, Output>, use handler: @escaping @Sendable (Request, Context) async throws -> Response) -> Self {
        on(RouterPath(endpoint.path), method: HTTPRequest.Method(rawValue: endpoint.method.rawValue)!) { request, context in
            try await handler(request, endpoint.declaration.readPath(context))
        }
    }
}

extension OperationDeclaration {
    /// The context with the declared UUID path parameters read into it: a value that is not a
    /// UUID answers the declared 404 (one declared without a code is left out, for the surface to
    /// say so its own way).
    package func readPath(_ context: GatehouseRequestContext) throws -> GatehouseRequestContext {
        guard !pathTypes.isEmpty else { return context }
        var context = context
        for (name, type) in pathTypes where type.kind == .uuid {
            if let id = context.parameters.get(name).flatMap(UUID.init(uuidString:)) {
                context.pathIDs[name] = id
            } else if let code = type.notFound {
                throw GatehouseError.notFound(code)
            }
        }
        return context
    }
}
