import HTTPTypes
import Hummingbird

/// Turns the router's 404 for a path that exists with other methods into 405 with `Allow`
/// (RFC 9110 §15.5.6), for every surface; each surface's error middleware then renders it in
/// its own format.
///
/// `HEAD` is answered 405 too: Hummingbird's router has no implicit `HEAD` for `GET` routes,
/// and the not-found path cannot re-dispatch (health probes use `GET /health`).
package struct MethodNotAllowedMiddleware: RouterMiddleware {
    package typealias Context = GatehouseRequestContext
    package let routes: RouteTable

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as any HTTPResponseError where error.status == .notFound {
            let allowed = routes.methods(for: request.uri.path)
            guard !allowed.isEmpty, !allowed.contains(request.method) else { throw error }
            throw HTTPError(.methodNotAllowed, headers: [.allow: allowed.map(\.rawValue).sorted().joined(separator: ", ")])
        }
    }

    package init(routes: RouteTable) {
        self.routes = routes
    }
}

/// Route patterns and their methods, read from the router once its routes are added; answers
/// which methods a concrete path takes.
package final class RouteTable: @unchecked Sendable {
    package init() {}

    private var entries: [(components: [String], methods: Set<HTTPRequest.Method>)] = []

    package func load(_ routes: [(path: String, method: HTTPRequest.Method)]) {
        var byPath: [String: Set<HTTPRequest.Method>] = [:]
        for route in routes { byPath[route.path, default: []].insert(route.method) }
        entries = byPath.map { (components: $0.key.split(separator: "/").map(String.init), methods: $0.value) }
    }

    package func methods(for path: String) -> Set<HTTPRequest.Method> {
        let parts = path.split(separator: "/").map(String.init)
        var exact: Set<HTTPRequest.Method> = []
        var captured: Set<HTTPRequest.Method> = []
        for entry in entries where entry.components.count == parts.count {
            var isExact = true
            let matches = zip(entry.components, parts).allSatisfy { pattern, part in
                if pattern.hasPrefix("{") { isExact = false; return true }
                return pattern == part
            }
            guard matches else { continue }
            if isExact { exact.formUnion(entry.methods) } else { captured.formUnion(entry.methods) }
        }
        // A literal route (`/v1/sessions/current`) shadows a captured one (`/v1/sessions/{id}`).
        return exact.isEmpty ? captured : exact
    }
}
