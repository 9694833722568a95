import Foundation
import GatehouseAPI
import HTTPTypes
import Hummingbird

/// The one place where domain errors become `/v1`'s wire form: RFC 9457 problem documents with
/// a stable `code`, a `detail` in the request's language (English unless `Accept-Language`
/// asks for Russian), `Retry-After` on 429 and `WWW-Authenticate` on 401. It also answers
/// unknown `/v1` paths (404) and known paths with another method (405 with `Allow`) the same way.
struct ProblemMiddleware: RouterMiddleware {
    typealias Context = GatehouseRequestContext
    /// The path prefix this surface owns.
    let prefix: String
    /// The methods each route pattern takes, for 405 answers.
    let routes: RouteTable

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.uri.path.hasPrefix(prefix) else { return try await next(request, context) }
        do {
            return try await next(request, context)
        } catch let error as GatehouseError {
            return Self.response(for: error, request: request)
        } catch let error as any HTTPResponseError where error.status == .notFound || error.status == .methodNotAllowed {
            let allowed = routes.methods(for: request.uri.path)
            if !allowed.isEmpty, !allowed.contains(request.method) {
                var response = Self.response(for: GatehouseError(.invalidInput, .methodNotAllowed, LocalizedText("error.methodNotAllowed")), request: request, status: .methodNotAllowed)
                response.headers[.allow] = allowed.map(\.rawValue).sorted().joined(separator: ", ")
                return response
            }
            return Self.response(for: GatehouseError(.notFound, .notFound, LocalizedText("error.notFound")), request: request)
        } catch {
            context.logger.error("unhandled error on \(request.method) \(request.uri.path): \(String(describing: error))")
            return Self.response(for: GatehouseError(.internal, .internalError, LocalizedText("error.internal")), request: request)
        }
    }

    static func response(for error: GatehouseError, request: Request, status override: HTTPResponse.Status? = nil) -> Response {
        let language = AppLanguage.negotiate(request.headers[.acceptLanguage], fallback: .en)
        var headers: HTTPFields = [.contentType: AccountsV1API.problemContentType]
        var retryAfter: Int?
        let status: HTTPResponse.Status
        switch error.kind {
        case .invalidInput: status = .badRequest
        case .conflict: status = .conflict
        case .notFound: status = .notFound
        case .payloadTooLarge: status = .contentTooLarge
        case .unsupportedMediaType: status = .unsupportedMediaType
        case .unavailable: status = .serviceUnavailable
        case .internal: status = .internalServerError
        case .unauthorized:
            status = .unauthorized
            headers[.wwwAuthenticate] = request.bearerToken == nil ? "Bearer" : "Bearer error=\"invalid_token\""
        case .rateLimited(let seconds):
            status = .tooManyRequests
            headers[.retryAfter] = String(seconds)
            retryAfter = seconds
        }
        let finalStatus = override ?? status
        let problem = Problem(
            type: Problem.typeURI(for: error.code), title: finalStatus.reasonPhrase, status: finalStatus.code,
            detail: error.message.render(language), code: error.code, field: error.field,
            attemptsLeft: error.attemptsLeft, retryAfter: retryAfter
        )
        let data = (try? V1JSON.encoder.encode(problem)) ?? Array("{}".utf8).withUnsafeBytes { Data($0) }
        return Response(status: finalStatus, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

/// Route patterns and their methods, read from the router once its routes are added; answers
/// which methods a concrete path takes.
final class RouteTable: @unchecked Sendable {
    private var entries: [(components: [String], methods: Set<HTTPRequest.Method>)] = []

    func load(_ routes: [(path: String, method: HTTPRequest.Method)]) {
        var byPath: [String: Set<HTTPRequest.Method>] = [:]
        for route in routes { byPath[route.path, default: []].insert(route.method) }
        entries = byPath.map { (components: $0.key.split(separator: "/").map(String.init), methods: $0.value) }
    }

    func methods(for path: String) -> Set<HTTPRequest.Method> {
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
