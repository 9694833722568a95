import Foundation
import GatehouseAPI
import GatehouseFoundation
import HTTPTypes
import Hummingbird
import Logging

/// The one place where errors become the wire form of `/v1` and `/admin`: RFC 9457 problem documents with
/// a stable `code`, a `detail` in the request's language (English unless `Accept-Language`
/// asks for Russian), `Retry-After` on 429 and on 503 `service_unavailable` (the database away for a moment), and
/// `WWW-Authenticate` on 401. Unknown paths of these surfaces (404)
/// and known paths with another method (405 with `Allow`) answer the same way (`EveryRequestMiddleware`).
package enum ProblemDocuments {
    /// Any error thrown on one of these surfaces, as its problem document.
    package static func response(for error: any Error, request: Request, logger: Logger) -> Response {
        switch error {
        case let error as GatehouseError:
            return response(for: error, request: request)
        case let error as HTTPError where error.status == .methodNotAllowed:
            var response = response(for: GatehouseError(.invalidInput, .methodNotAllowed, LocalizedText("error.methodNotAllowed")), request: request, status: .methodNotAllowed)
            response.headers[.allow] = error.headers[.allow]
            return response
        case let error as any HTTPResponseError where error.status == .notFound:
            return response(for: GatehouseError(.notFound, .notFound, LocalizedText("error.notFound")), request: request)
        default:
            return response(for: DatabaseOutage.refusal(for: error, method: "\(request.method)", path: request.uri.path, logger: logger), request: request)
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
        headers.addChallenge(for: error, request: request)
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
        case .unauthorized: status = .unauthorized
        case .rateLimited(let seconds):
            status = .tooManyRequests
            retryAfter = seconds
        }
        if error.code == .serviceUnavailable { retryAfter = 1 }
        let finalStatus = override ?? status
        let problem = Problem(
            type: Problem.typeURI(for: error.code), title: finalStatus.reasonPhrase, status: finalStatus.code,
            detail: error.message.render(language), code: error.code, field: error.field,
            attemptsLeft: error.attemptsLeft, retryAfter: retryAfter, secondFactor: error.secondFactor, identityLink: error.identityLink
        )
        let data = (try? V1.encoder.encode(problem)) ?? Data("{}".utf8)
        return (finalStatus, headers, data)
    }
}
