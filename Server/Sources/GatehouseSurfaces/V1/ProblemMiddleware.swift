import Foundation
import GatehouseAPI
import GatehouseFoundation
import HTTPTypes
import Hummingbird

/// The one place where domain errors become `/v1`'s wire form: RFC 9457 problem documents with
/// a stable `code`, a `detail` in the request's language (English unless `Accept-Language`
/// asks for Russian), `Retry-After` on 429 and `WWW-Authenticate` on 401. It also answers
/// unknown `/v1` paths (404) and known paths with another method (405 with `Allow`, found by
/// `MethodNotAllowedMiddleware`) the same way.
package struct ProblemMiddleware: RouterMiddleware {
    package typealias Context = GatehouseRequestContext
    /// The path prefix this surface owns.
    package let prefix: String

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // `/v1` itself belongs to the surface too (a 404 problem, not the plain 404 of other paths).
        let path = request.uri.path
        guard path.hasPrefix(prefix) || path + "/" == prefix else { return try await next(request, context) }
        do {
            return try await next(request, context)
        } catch let error as GatehouseError {
            return Self.response(for: error, request: request)
        } catch let error as HTTPError where error.status == .methodNotAllowed {
            var response = Self.response(for: GatehouseError(.invalidInput, .methodNotAllowed, LocalizedText("error.methodNotAllowed")), request: request, status: .methodNotAllowed)
            response.headers[.allow] = error.headers[.allow]
            return response
        } catch let error as any HTTPResponseError where error.status == .notFound {
            return Self.response(for: GatehouseError(.notFound, .notFound, LocalizedText("error.notFound")), request: request)
        } catch {
            context.logger.error("unhandled error on \(request.method) \(request.uri.path): \(String(describing: error))")
            return Self.response(for: GatehouseError(.internal, .internalError, LocalizedText("error.internal")), request: request)
        }
    }

    package static func response(for error: GatehouseError, request: Request, status override: HTTPResponse.Status? = nil) -> Response {
        let (status, headers, data) = rendered(error, request: request, status: override)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The problem document's status, headers and bytes (what a replayed refusal stores).
    package static func rendered(_ error: GatehouseError, request: Request, status override: HTTPResponse.Status? = nil) -> (HTTPResponse.Status, HTTPFields, Data) {
        let language = AppLanguage.negotiate(request.headers[.acceptLanguage], fallback: .en)
        var headers: HTTPFields = [.contentType: V1.problemContentType]
        var retryAfter: Int?
        let status: HTTPResponse.Status
        switch error.kind {
        case .invalidInput: status = .badRequest
        case .conflict: status = .conflict
        case .notFound: status = .notFound
        case .unprocessable: status = .unprocessableContent
        case .forbidden: status = .forbidden
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
            attemptsLeft: error.attemptsLeft, retryAfter: retryAfter, secondFactor: error.secondFactor, identityLink: error.identityLink
        )
        let data = (try? V1.encoder.encode(problem)) ?? Data("{}".utf8)
        return (finalStatus, headers, data)
    }

    package init(prefix: String) {
        self.prefix = prefix
    }
}
