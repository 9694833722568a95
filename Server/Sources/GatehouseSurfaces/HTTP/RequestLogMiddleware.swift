import Hummingbird
import Logging

/// Echoes a request id (the client's `X-Request-Id` when sane, else Hummingbird's) and logs one
/// line per request: method, the route's template (`/admin/v1/clients/{phone}`: a phone, a tag or
/// a token in a path stays out of the log; the request id leads to the audit trail, which names
/// the target) or the path of a request no route took, never the query (it may hold a
/// confirmation token), status and duration.
package struct RequestLogMiddleware: RouterMiddleware {
    package typealias Context = GatehouseRequestContext

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let incoming = request.headers[.init("X-Request-Id")!].flatMap { id in
            id.count <= 64 && id.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) ? id : nil
        }
        let requestID = incoming ?? context.id
        // One id per request in the logs: Hummingbird's own (`hb.request.id`) gives way to ours, which is the client's
        // `X-Request-Id` when it sent a sane one and Hummingbird's otherwise, and which the answer carries back.
        context.logger[metadataKey: "hb.request.id"] = nil
        context.logger[metadataKey: "request.id"] = .string(requestID)
        context.requestID = requestID
        let start = ContinuousClock.now
        do {
            var response = try await next(request, context)
            response.headers[.init("X-Request-Id")!] = requestID
            log(context, request, status: response.status.code, start: start)
            return response
        } catch let error as any HTTPResponseError {
            // Router errors (404, 413…) become responses here so they carry the request id too.
            var response = try error.response(from: request, context: context)
            response.headers[.init("X-Request-Id")!] = requestID
            log(context, request, status: response.status.code, start: start)
            return response
        } catch {
            log(context, request, status: 500, start: start)
            throw error
        }
    }

    private func log(_ context: Context, _ request: Request, status: Int, start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        let ms = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
        context.logger.info("\(request.method) \(context.endpointPath ?? request.uri.path) \(status) \(String(format: "%.1f", ms))ms")
    }

    package init() {

    }
}
