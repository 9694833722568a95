import Foundation
import GatehousePlatform
import HTTPTypes
import Hummingbird
import Logging
import Metrics
import NIOConcurrencyHelpers

/// What every request pays, in one layer (docs/performance.md, "Cost per operation": each layer of middleware is an
/// async frame and a copy of the request's context, and seven of them were a tenth of a plaintext answer):
///
/// - **the request id**: the client's `X-Request-Id` when sane (64 letters, digits, `-` or `_` at most), Hummingbird's
///   otherwise; answered in `X-Request-Id` and written in the logs as `request.id` (`GatehouseLogHandler`);
/// - **U+0000 out of the query string** (`%00`) before any route reads it: text never holds the character
///   (`InputText`), no browser or client of the specs sends it, and a query value reaches lookups on both engines.
///   Taking it out — rather than refusing — keeps every route's answer one its document declares (a search for
///   `jo%00se` is a search for `jose`, as a search already leaves control characters out); the bodies, where a value
///   is the client's to fix, are refused by their readers instead. (A path parameter is given to its route as sent,
///   percent-escapes and all, so `%00` there is three characters of text, which the route's own rule refuses.)
/// - **405 with `Allow`** (RFC 9110 §15.5.6) for a path that exists with other methods, where the router says 404.
///   `HEAD` is answered 405 too: Hummingbird's router has no implicit `HEAD` for `GET` routes (health probes use
///   `GET /health`);
/// - **errors in the surface's own format**: a path under a surface's prefix (`/v1/`, `/admin/`, and the prefix
///   without its slash) answers every error in that surface's format (their problem documents); elsewhere the
///   router's errors (404, 413…) become their own responses, so they carry the request id too;
/// - **no caching**: answers are not for caches unless a route says otherwise (tokens, codes, temporary passwords
///   and account data must not stay in a proxy's or a browser's cache); routes that are cacheable (avatars by
///   immutable URL, the OpenAPI document) set their own `Cache-Control`;
/// - **metrics** under Hummingbird's names (`hb.requests`, `http.server.request.duration`, `hb.request.errors`,
///   `http.server.active_requests`), the duration up to the answer's head: a body is not wrapped to time its last
///   byte, which would lose Hummingbird's one-write answer;
/// - **one log line**: method, the route's template (`/admin/v1/clients/{phone}`: a phone, a tag or a token in a
///   path stays out of the log; the request id leads to the audit trail, which names the target) or the path of a
///   request no route took, never the query (it may hold a confirmation token), status and duration.
package struct EveryRequestMiddleware: RouterMiddleware {
    package typealias Context = GatehouseRequestContext
    /// A surface that answers every error under its path prefixes in its own format.
    package struct ErrorSurface: Sendable {
        package let prefixes: [String]
        package let answer: @Sendable (_ error: any Error, _ request: Request, _ logger: Logger) -> Response

        package init(prefixes: [String], answer: @escaping @Sendable (_ error: any Error, _ request: Request, _ logger: Logger) -> Response) {
            self.prefixes = prefixes
            self.answer = answer
        }

        func owns(_ path: String) -> Bool {
            prefixes.contains { path.hasPrefix($0) || path + "/" == $0 }
        }
    }

    package let routes: RouteTable
    package let surfaces: [ErrorSurface]
    private let metrics = RequestMetrics()
    private static let requestIDField = HTTPField.Name("X-Request-Id")!

    package init(routes: RouteTable, surfaces: [ErrorSurface]) {
        self.routes = routes
        self.surfaces = surfaces
    }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let requestID: String
        if let incoming = request.headers[Self.requestIDField], Self.isSane(incoming) {
            requestID = incoming
            context.logger[metadataKey: "hb.request.id"] = .string(incoming)
        } else {
            requestID = context.id
        }
        context.requestID = requestID
        let start = ContinuousClock.now
        let active = metrics.active(request.method)
        active.increment()
        defer { active.decrement() }
        var response: Response
        // The route's template for the metrics (the router records it as it routes); a request that ended in an error
        // no route took is `NotFound`, as Hummingbird names it.
        var threw = false
        var route: String { context.endpointPath ?? (threw ? "NotFound" : "Unknown") }
        do {
            response = try await next(Self.withoutNUL(request), context)
        } catch {
            threw = true
            do {
                response = try failure(error, request: request, context: context)
                metrics.failed(route, request.method, response.status)
            } catch {
                metrics.failed(route, request.method, .internalServerError)
                metrics.answered(route, request.method, .internalServerError, ContinuousClock.now - start)
                log(context, request, status: 500, start: start)
                throw error
            }
        }
        metrics.answered(route, request.method, response.status, ContinuousClock.now - start)
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        response.headers[Self.requestIDField] = requestID
        log(context, request, status: response.status.code, start: start)
        return response
    }

    /// An error as its surface answers it; thrown again when no surface answers it (Hummingbird then answers 500).
    private func failure(_ error: any Error, request: Request, context: Context) throws -> Response {
        var error = error
        let path = request.uri.path
        if let notFound = error as? any HTTPResponseError, notFound.status == .notFound {
            let allowed = routes.methods(for: path)
            if !allowed.isEmpty, !allowed.contains(request.method) {
                error = HTTPError(.methodNotAllowed, headers: [.allow: allowed.map(\.rawValue).sorted().joined(separator: ", ")])
            }
        }
        // `/v1` itself belongs to the surface too (a 404 problem, not the plain 404 of other paths).
        if let surface = surfaces.first(where: { $0.owns(path) }) {
            return surface.answer(error, request, context.logger)
        }
        guard let answerable = error as? any HTTPResponseError else { throw error }
        return try answerable.response(from: request, context: context)
    }

    private static func isSane(_ id: String) -> Bool {
        id.utf8.count <= 64 && id.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"): true
            default: false
            }
        }
    }

    private static func withoutNUL(_ request: Request) -> Request {
        guard let target = request.head.path, InputText.hasEncodedNUL(target) else { return request }
        var head = request.head
        head.path = InputText.removingEncodedNUL(target)
        return Request(head: head, body: request.body)
    }

    private func log(_ context: Context, _ request: Request, status: Int, start: ContinuousClock.Instant) {
        context.logger.info("\(request.method) \(context.endpointPath ?? request.uri.path) \(status) \(Self.milliseconds(ContinuousClock.now - start))ms")
    }

    private static func milliseconds(_ elapsed: Duration) -> String {
        let ms = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
        return String(format: "%.1f", ms)
    }
}

/// The request metrics' instruments, made once per route, method and status (the metrics factory's own lookup takes
/// its lock and builds the labels each time).
private final class RequestMetrics: Sendable {
    private struct Key: Hashable {
        let endpoint: String
        let method: HTTPRequest.Method
        let status: Int
    }

    private struct Instruments {
        let requests: Counter
        let duration: Metrics.Timer
        let errors: Counter
    }

    /// The methods of the server's routes, made up front and read without a lock; any other from `otherMethods`.
    private let routeMethods: [HTTPRequest.Method: Meter] = Dictionary(uniqueKeysWithValues: [HTTPRequest.Method.get, .post, .put, .patch, .delete].map {
        ($0, Meter(label: "http.server.active_requests", dimensions: [("http.request.method", $0.rawValue)]))
    })
    private let otherMethods = NIOLockedValueBox<[HTTPRequest.Method: Meter]>([:])
    private let byRoute = NIOLockedValueBox<[Key: Instruments]>([:])

    func active(_ method: HTTPRequest.Method) -> Meter {
        if let meter = routeMethods[method] { return meter }
        return otherMethods.withLockedValue { meters in
            if let meter = meters[method] { return meter }
            let meter = Meter(label: "http.server.active_requests", dimensions: [("http.request.method", method.rawValue)])
            meters[method] = meter
            return meter
        }
    }

    func answered(_ endpoint: String, _ method: HTTPRequest.Method, _ status: HTTPResponse.Status, _ elapsed: Duration) {
        let instruments = self.instruments(endpoint, method, status.code)
        instruments.requests.increment()
        let (seconds, attoseconds) = elapsed.components
        instruments.duration.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    func failed(_ endpoint: String, _ method: HTTPRequest.Method, _ status: HTTPResponse.Status) {
        instruments(endpoint, method, status.code).errors.increment()
    }

    private func instruments(_ endpoint: String, _ method: HTTPRequest.Method, _ status: Int) -> Instruments {
        let key = Key(endpoint: endpoint, method: method, status: status)
        return byRoute.withLockedValue { all in
            if let found = all[key] { return found }
            let route: [(String, String)] = [("http.route", endpoint), ("http.request.method", method.rawValue)]
            let made = Instruments(
                requests: Counter(label: "hb.requests", dimensions: route + [("http.response.status_code", String(status))]),
                duration: Metrics.Timer(label: "http.server.request.duration", dimensions: route + [("http.response.status_code", String(status))],
                                        preferredDisplayUnit: .seconds),
                errors: Counter(label: "hb.request.errors", dimensions: route + [("error.type", String(status))]))
            all[key] = made
            return made
        }
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
