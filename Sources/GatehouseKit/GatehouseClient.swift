import Foundation
import GatehouseAPI
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The shared core of every `/v1` client: the server's base URL, the transport, the session
/// store and the language, and one way to call an ``Endpoint`` as `GatehouseAPI` declares it —
/// the Bearer header for ``Access/session`` endpoints, JSON both ways, and every RFC 9457 problem
/// document turned into a ``GatehouseClientError`` carrying the server's code and `detail`.
///
/// One core serves every per-surface client (``AccountsClient`` today, the apps' clients next),
/// so they share one session: a login through one is seen by all, and a refused token (401)
/// clears it for all.
public final class GatehouseClient: Sendable {
    /// The server's base URL, e.g. `https://id.example.com`.
    public let baseURL: URL
    /// Where the session is kept between launches.
    public let sessionStore: any SessionStore
    // Internal: the module's other clients (the phone API's, with its own wire format) send through these too.
    let transport: any HTTPTransport
    let language: String?
    let now: @Sendable () -> Date
    /// Which tokens this client's sign-ins ask for: the session's own (the default), or signed ones that it renews
    /// by itself before they expire and after a refused call, once, however many calls wait (docs/oidc.md).
    public let tokens: TokenKind
    private let lastProblemBox = ProblemBox()
    private let refreshGate = RefreshGate()

    /// Creates a client core.
    /// - Parameters:
    ///   - baseURL: the server, without a trailing path.
    ///   - sessionStore: where to keep the session; ``DefaultSessionStore`` picks Keychain or a file.
    ///   - transport: how requests are sent; `URLSession` by default.
    ///   - language: sent as `Accept-Language` so the server's `detail` comes in the app's
    ///     language; when nil, `ru` on a Russian device and `en` otherwise.
    ///   - now: the clock used to decide whether a stored session has expired.
    ///   - tokens: ``TokenKind/signed`` for short-lived signed tokens renewed by this client; the session's own
    ///     token by default.
    public init(
        baseURL: URL,
        sessionStore: any SessionStore = InMemorySessionStore(),
        transport: any HTTPTransport = URLSessionTransport(),
        language: String? = nil,
        now: @escaping @Sendable () -> Date = { Date() },
        tokens: TokenKind = .session
    ) {
        self.baseURL = baseURL
        self.sessionStore = sessionStore
        self.transport = transport
        self.language = language ?? defaultLanguage()
        self.now = now
        self.tokens = tokens
    }

    /// The current session, if one is stored and still valid.
    public var session: GatehouseSession? { sessionStore.validSession(at: now()) }

    /// Call on launch: returns the stored session if it has not expired, and forgets an expired one.
    @discardableResult
    public func restoreSession() -> GatehouseSession? {
        sessionStore.restoreValid(at: now())
    }

    /// Keeps a new session (a session that cannot be kept would make every later call fail: the
    /// error says so now).
    public func store(_ answer: AuthSession) throws {
        try sessionStore.save(GatehouseSession(token: answer.token, expiresAt: answer.expiresAt, refreshToken: answer.refreshToken))
    }

    /// What a sign-in asks for: nil (the session's own token) unless this client uses signed tokens.
    var requestedTokens: TokenKind? { tokens == .signed ? .signed : nil }

    /// The stored session, renewed first when its signed token is about to expire (one renewal for every call that
    /// asks at once). A renewal the server refuses ends the session (``GatehouseClientError/sessionExpired(message:)``);
    /// one that cannot reach the server leaves the token as it is, for the call to try.
    public func freshSession() async throws -> GatehouseSession? {
        guard let stored = try? sessionStore.load(), stored.isValid(at: now()) else { return nil }
        guard stored.needsRefresh(at: now()) else { return stored }
        do {
            return try await refreshed(from: stored)
        } catch GatehouseClientError.transport(_) where stored.expiresAt > now() {
            return stored
        }
    }

    /// The session after renewing `stale`'s token: one request to the server for every caller holding the same
    /// refresh token; a caller whose store already holds a newer session gets that.
    func refreshed(from stale: GatehouseSession) async throws -> GatehouseSession {
        guard let refreshToken = stale.refreshToken else { throw GatehouseClientError.sessionExpired(message: nil) }
        if let current = try? sessionStore.load(), current.refreshToken != refreshToken, current.token != stale.token { return current }
        return try await refreshGate.run(key: refreshToken) { [self] in
            do {
                let answer = try await call(V1.Sessions.refresh, RefreshRequest(refreshToken: refreshToken))
                try store(answer)
                return GatehouseSession(token: answer.token, expiresAt: answer.expiresAt, refreshToken: answer.refreshToken)
            } catch let error as GatehouseClientError where error.code == .refreshTokenInvalid {
                try? sessionStore.clear()
                throw GatehouseClientError.sessionExpired(message: error.message)
            }
        }
    }

    /// The problem document of the most recent refusal, for the members ``GatehouseClientError``
    /// does not carry (`attemptsLeft`, `field`). With several calls in flight it belongs to
    /// whichever failed last; read it right after catching the error.
    public var lastProblem: Problem? { lastProblemBox.value }

    // MARK: Calls

    /// Calls `endpoint` with a JSON body.
    /// - Parameters:
    ///   - parameters: values for the path's `{name}` placeholders (percent-escaped here).
    ///   - query: an already-escaped query string, without `?`.
    ///   - headers: extra request headers (the wallet's `Idempotency-Key`).
    public func call<Input: Encodable, Output: Decodable>(
        _ endpoint: Endpoint<Input, Output>, _ input: Input, parameters: [String: String] = [:], query: String? = nil,
        headers: [String: String] = [:]
    ) async throws -> Output {
        let body = Input.self == NoContent.self ? nil : (try encode(input), "application/json")
        return try decode(try await exchange(endpoint, path: endpoint.path(parameters), query: query, body: body, headers: headers).0)
    }

    /// Calls an endpoint whose input is its query string (a search, a page, a choice).
    public func call<Query: EndpointQuery, Output: Decodable>(
        _ endpoint: Endpoint<Query, Output>, _ query: Query, parameters: [String: String] = [:], headers: [String: String] = [:]
    ) async throws -> Output {
        try decode(try await exchange(endpoint, path: endpoint.path(parameters), query: queryString(query.values), body: nil, headers: headers).0)
    }

    /// Calls an endpoint that takes no body.
    public func call<Output: Decodable>(
        _ endpoint: Endpoint<NoContent, Output>, parameters: [String: String] = [:], query: String? = nil, headers: [String: String] = [:]
    ) async throws -> Output {
        try decode(try await exchange(endpoint, path: endpoint.path(parameters), query: query, body: nil, headers: headers).0)
    }

    /// Calls an endpoint whose body is not JSON (an image upload, an attachment); `progress`
    /// hears how much of the body has gone out.
    public func call<Output: Decodable>(_ endpoint: Endpoint<RawBody, Output>, _ input: RawBody, query: String? = nil,
                                        progress: UploadProgress? = nil) async throws -> Output {
        try decode(try await exchange(endpoint, path: endpoint.path, query: query, body: (input.data, input.contentType), progress: progress).0)
    }

    /// Calls an endpoint whose answer is not JSON (an attachment's bytes): the body with its `Content-Type`.
    public func call(_ endpoint: Endpoint<NoContent, RawBody>, parameters: [String: String] = [:]) async throws -> RawBody {
        let (data, response) = try await exchange(endpoint, path: endpoint.path(parameters), query: nil, body: nil)
        return RawBody(data: data, contentType: response.value(forHTTPHeaderField: "Content-Type") ?? "application/octet-stream")
    }

    /// Calls an endpoint on an exact, already-escaped path (for paths `parameters` cannot
    /// express, such as a tag made only of dots).
    func call<Output: Decodable>(_ endpoint: Endpoint<NoContent, Output>, escapedPath: String) async throws -> Output {
        try decode(try await perform(endpoint, path: escapedPath, query: nil, body: nil))
    }

    // MARK: Plumbing

    private func encode<Body: Encodable>(_ body: Body) throws -> Data {
        do {
            return try V1.encoder.encode(body)
        } catch {
            throw GatehouseClientError.transport("cannot encode the request: \(error)")
        }
    }

    /// `path` is already percent-escaped, so it is set as the encoded path rather than appended
    /// (which would escape the `%` again).
    private func url(_ path: String, query: String?) -> URL {
        var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)!
        var base = components.percentEncodedPath
        while base.hasSuffix("/") { base.removeLast() }
        components.percentEncodedPath = base + path
        components.percentEncodedQuery = query
        return components.url!
    }

    private func perform<Input, Output>(_ endpoint: Endpoint<Input, Output>, path: String, query: String?, body: (Data, String)?) async throws -> Data {
        try await exchange(endpoint, path: path, query: query, body: body).0
    }

    private func exchange<Input, Output>(_ endpoint: Endpoint<Input, Output>, path: String, query: String?,
                                         body: (Data, String)?, headers: [String: String] = [:],
                                         progress: UploadProgress? = nil) async throws -> (Data, HTTPURLResponse) {
        let authenticated = endpoint.access == .session
        var request = URLRequest(url: url(path, query: query))
        request.httpMethod = endpoint.method.rawValue
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let (data, contentType) = body {
            request.setValue(contentType, forHTTPHeaderField: "Content-Type")
            request.httpBody = data
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let sent = authenticated ? try await freshSession() : nil
        try request.setHeaders(language: language, authenticated: authenticated, session: sent)
        var (data, response) = try await transport.exchange(request, progress: progress)
        // A signed token refused (expired early, a clock off, a key the server dropped): renewed once, the call sent again.
        if response.statusCode == 401, authenticated, let sent, sent.refreshToken != nil {
            let renewed = try await refreshed(from: sent)
            try request.setHeaders(language: language, authenticated: true, session: renewed)
            (data, response) = try await transport.exchange(request, progress: progress)
        }
        if (200..<300).contains(response.statusCode) { return (data, response) }
        throw refusal(response, data, authenticated: authenticated)
    }

    /// The typed error for a non-2xx answer: from its problem document, or, for a body that is
    /// not one (a proxy's page, an older server), from the status, `X-Error-Code` and the text.
    private func refusal(_ response: HTTPURLResponse, _ data: Data, authenticated: Bool) -> GatehouseClientError {
        let status = response.statusCode
        let problem = try? V1.decoder.decode(Problem.self, from: data)
        lastProblemBox.value = problem
        Self.problemCapture?.value = problem
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let code = problem?.code ?? response.value(forHTTPHeaderField: PhoneAccountsAPI.errorCodeHeader).map(GatehouseErrorCode.init(rawValue:))
        let message = problem?.detail ?? (text.isEmpty || text.hasPrefix("<") ? "HTTP \(status)" : text)
        switch status {
        case 401:
            // Only a refused token ends the stored session; an unauthenticated call's 401 is about
            // its own input and leaves the session alone.
            if authenticated { try? sessionStore.clear() }
            return .sessionExpired(message: problem?.detail ?? (text.isEmpty ? nil : message))
        case 429:
            let retryAfter = response.value(forHTTPHeaderField: "Retry-After").flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } ?? problem?.retryAfter
            return .rateLimited(code: code ?? .rateLimited, message: message, retryAfter: retryAfter)
        case 400..<500:
            return .rejected(code: code, message: message)
        default:
            return .server(status: status, message: message)
        }
    }

    /// An empty 2xx body decodes as ``NoContent``; anything else must be the declared type.
    private func decode<T: Decodable>(_ data: Data) throws -> T {
        if T.self == NoContent.self, let none = NoContent() as? T { return none }
        do {
            return try V1.decoder.decode(T.self, from: data)
        } catch {
            throw GatehouseClientError.server(status: 200, message: "unexpected answer: \(error)")
        }
    }
}

extension GatehouseClient {
    /// Where a refusal's problem document goes for the calls of one task alone (set with
    /// `$problemCapture.withValue`), so a caller reads the members of its own refusal, whatever
    /// else fails meanwhile.
    @TaskLocal static var problemCapture: ProblemBox?
}

/// A problem document, shared between concurrent calls.
final class ProblemBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Problem?
    var value: Problem? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

/// One renewal of a signed token at a time per refresh token: the calls that find the same token stale wait for the
/// one request and share its answer (no storm of refreshes, each spending the token the others need); a call that
/// comes after it finished gets its answer too.
final class RefreshGate: @unchecked Sendable {
    private let lock = NSLock()
    private var running: [String: Task<GatehouseSession, any Error>] = [:]
    private var last: (key: String, session: GatehouseSession)?

    func run(key: String, _ body: @escaping @Sendable () async throws -> GatehouseSession) async throws -> GatehouseSession {
        let task: Task<GatehouseSession, any Error> = lock.withLock {
            if let last, last.key == key { return Task { last.session } }
            if let running = running[key] { return running }
            let task = Task { try await body() }
            running[key] = task
            return task
        }
        do {
            let session = try await task.value
            lock.withLock {
                running[key] = nil
                last = (key, session)
            }
            return session
        } catch {
            lock.withLock { running[key] = nil }
            throw error
        }
    }
}
