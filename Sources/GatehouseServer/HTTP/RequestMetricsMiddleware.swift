import Dispatch
import Hummingbird
import Metrics
import NIOConcurrencyHelpers

/// Hummingbird's `MetricsMiddleware` with the same metrics (names and dimensions, so `/metrics`
/// and dashboards read the same), but it leaves a body it does not need to wait for as it is.
///
/// Hummingbird's wraps every body in a closure that records the request once the body is
/// written. A body held in one buffer (every JSON answer) then loses Hummingbird's fast path,
/// which writes the head, the body and the end in one write: the head went out alone and the
/// body after another hop through the channel's writer, two packets about 0.3 ms apart on an idle
/// server (docs/decisions.md, "Responses in one write"). A body of known length up to
/// `recordedBeforeWrite` is recorded when the handler answers: the time left, its write, is the
/// same for every such body. Longer and streamed bodies (downloads) are still recorded after
/// their last byte.
struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Bodies of known length up to this are recorded when the handler answers.
    static var recordedBeforeWrite: Int { 64 * 1024 }

    private let cache = RequestMetricsCache()

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = DispatchTime.now().uptimeNanoseconds
        let active = cache.active(request.method)
        active.increment()
        do {
            var response = try await next(request, context)
            let id = RequestMetricsCache.ID(endpoint: context.endpointPath ?? "Unknown", method: request.method, status: response.status)
            let record: @Sendable () -> Void = { [cache] in
                let metrics = cache.endpoint(id)
                metrics.counter.increment()
                metrics.timer.recordNanoseconds(DispatchTime.now().uptimeNanoseconds - start)
                active.decrement()
            }
            if let length = response.body.contentLength, length <= Self.recordedBeforeWrite {
                record()
            } else {
                let body = response.body
                response.body = ResponseBody(contentLength: body.contentLength) { writer in
                    defer { record() }
                    try await body.write(writer)
                }
            }
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status ?? .internalServerError
            let metrics = cache.endpoint(.init(endpoint: context.endpointPath ?? "NotFound", method: request.method, status: status))
            metrics.counter.increment()
            metrics.errorCounter.increment()
            active.decrement()
            throw error
        }
    }
}

/// The metrics of each method and endpoint, made once (a metrics factory's lookup by label costs more).
private final class RequestMetricsCache: Sendable {
    struct ID: Hashable, Sendable {
        let endpoint: String
        let method: HTTPRequest.Method
        let status: HTTPResponse.Status
    }

    struct Endpoint: Sendable {
        let counter: Counter
        let timer: Metrics.Timer
        let errorCounter: Counter

        init(_ id: ID) {
            let dimensions = [("http.route", id.endpoint), ("http.request.method", id.method.description)]
            counter = Counter(label: "hb.requests", dimensions: dimensions + [("http.response.status_code", id.status.code.description)])
            timer = Metrics.Timer(label: "http.server.request.duration", dimensions: dimensions + [("http.response.status_code", id.status.code.description)],
                                  preferredDisplayUnit: .seconds)
            errorCounter = Counter(label: "hb.request.errors", dimensions: dimensions + [("error.type", id.status.code.description)])
        }
    }

    private let methods = NIOLockedValueBox<[HTTPRequest.Method: Meter]>([:])
    private let endpoints = NIOLockedValueBox<[ID: Endpoint]>([:])

    func active(_ method: HTTPRequest.Method) -> Meter {
        methods.withLockedValue { methods in
            if let meter = methods[method] { return meter }
            let meter = Meter(label: "http.server.active_requests", dimensions: [("http.request.method", method.description)])
            methods[method] = meter
            return meter
        }
    }

    func endpoint(_ id: ID) -> Endpoint {
        endpoints.withLockedValue { endpoints in
            if let metrics = endpoints[id] { return metrics }
            let metrics = Endpoint(id)
            endpoints[id] = metrics
            return metrics
        }
    }
}
