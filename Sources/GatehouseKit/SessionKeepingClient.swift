import Foundation

/// A client that signs people in and keeps their session in the core's ``SessionStore``:
/// ``AccountsClient`` (`/v1`) and ``PhoneAccountsClient`` (`/api`). What they share (how they are
/// made, the base URL, the stored session) is written once here; each speaks its own API.
public protocol SessionKeepingClient: Sendable {
    /// The core this client sends through (share it with the apps' clients for one session).
    var core: GatehouseClient { get }
    /// Creates a client on a shared core.
    init(core: GatehouseClient)
}

extension SessionKeepingClient {
    /// Creates a client with a core of its own.
    /// - Parameters:
    ///   - baseURL: the server, without a trailing path.
    ///   - sessionStore: where to keep the session; ``DefaultSessionStore`` picks Keychain or a file.
    ///   - transport: how requests are sent; `URLSession` by default.
    ///   - language: sent as `Accept-Language` so the server's messages come in the app's
    ///     language; when nil, `ru` on a Russian device and `en` otherwise, as ``Localizer/device``
    ///     of the screens chooses.
    ///   - now: the clock used to decide whether a stored session has expired.
    public init(
        baseURL: URL,
        sessionStore: any SessionStore = InMemorySessionStore(),
        transport: any HTTPTransport = URLSessionTransport(),
        language: String? = nil,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.init(core: GatehouseClient(baseURL: baseURL, sessionStore: sessionStore, transport: transport, language: language, now: now))
    }

    /// The server's base URL, e.g. `https://id.example.com`.
    public var baseURL: URL { core.baseURL }
    /// Where the session is kept between launches.
    public var sessionStore: any SessionStore { core.sessionStore }
    /// The current session, if one is stored and still valid.
    public var session: GatehouseSession? { core.session }

    /// Call on launch: returns the stored session if it has not expired, and forgets an expired one.
    @discardableResult
    public func restoreSession() -> GatehouseSession? { core.restoreSession() }
}
