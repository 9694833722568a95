import GatehouseAPI
import GatehouseFoundation
import HTTPTypes
import Hummingbird
import Logging

/// The one place where domain errors become the phone-accounts wire form: a plain-text message
/// (Russian by default, English by `Accept-Language`) with `X-Error-Code`; 400 for every
/// refusal, as the spec says, 401 with `WWW-Authenticate: Bearer` for a missing or dead session,
/// 429 with `Retry-After` for limits, 503 `service_unavailable` with `Retry-After` while the database is away.
package struct PhoneAccountsErrorMiddleware: RouterMiddleware {
    package typealias Context = GatehouseRequestContext

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as GatehouseError {
            return Self.response(for: error, request: request)
        } catch let error as any HTTPResponseError where error.status == .notFound || error.status == .methodNotAllowed {
            throw error
        } catch {
            return Self.response(for: DatabaseOutage.refusal(for: error, method: "\(request.method)", path: request.uri.path, logger: context.logger),
                                 request: request)
        }
    }

    package static func response(for error: GatehouseError, request: Request) -> Response {
        let language = AppLanguage.negotiate(request.headers[.acceptLanguage], fallback: .ru)
        var headers: HTTPFields = [.contentType: "text/plain; charset=utf-8"]
        headers[HTTPField.Name(PhoneAccountsAPI.errorCodeHeader)!] = error.code.rawValue
        headers.addChallenge(for: error, request: request)
        let status: HTTPResponse.Status
        switch error.kind {
        case .unauthorized: status = .unauthorized
        case .rateLimited: status = .tooManyRequests
        case .internal:
            status = .internalServerError
        case .unavailable:
            status = .serviceUnavailable
        case .invalidInput, .conflict, .forbidden, .notFound, .unprocessable, .payloadTooLarge, .unsupportedMediaType:
            status = .badRequest
        }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: error.message.render(language))))
    }
}
