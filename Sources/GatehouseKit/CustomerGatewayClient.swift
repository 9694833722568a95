import Foundation
import GatehouseAPI

/// What can go wrong talking to the WebSocket login gateway.
public enum CustomerGatewayError: Error, Equatable, Sendable, LocalizedError {
    /// The gateway answered `CUSTOMER_ERROR`: `description` is its `error_description`, the text to show.
    case customer(code: String, description: String)
    /// No answer within the timeout.
    case timeout
    /// The connection could not be opened or was lost.
    case connection(String)

    /// The text to show a person.
    public var errorDescription: String? {
        switch self {
        case .customer(_, let description): description
        case .timeout: "The server did not answer in time."
        case .connection(let reason): reason
        }
    }
}

/// The client of the WebSocket login gateway (`docs/websocket-login.md`): connects, sends
/// `LOGIN_CUSTOMER` with a fresh UUID `sequence_id`, matches answers by `sequence_id` (several
/// logins may be in flight), times out, reconnects when asked, and keeps the token and its
/// expiry in a ``SessionStore``.
public actor CustomerGatewayClient {
    /// The gateway's URL, e.g. `wss://id.example.com/customer-gateway/customer`.
    public let url: URL
    /// Where the token and its expiry are kept between launches.
    public nonisolated let sessionStore: any SessionStore
    private let transport: any WebSocketTransport
    private let timeout: TimeInterval
    private let now: @Sendable () -> Date
    private var connection: (any WebSocketConnection)?
    private var reader: Task<Void, Never>?
    private var pending: [String: CheckedContinuation<String, any Error>] = [:]

    /// Creates a client; it connects on first use.
    /// - Parameters:
    /// A client of the login gateway at `url`.
    ///
    /// - Parameters:
    ///   - url: the gateway endpoint.
    ///   - sessionStore: where the token persists.
    ///   - transport: the WebSocket implementation (``WebSocketTransports/default``).
    ///   - timeout: seconds to wait for an answer.
    ///   - now: the clock that decides whether a stored token has expired.
    public init(url: URL, sessionStore: any SessionStore = InMemorySessionStore(), transport: any WebSocketTransport = WebSocketTransports.default,
                timeout: TimeInterval = 15, now: @escaping @Sendable () -> Date = { Date() }) {
        self.url = url
        self.sessionStore = sessionStore
        self.transport = transport
        self.timeout = timeout
        self.now = now
    }

    /// The gateway URL for a server's base URL (`http` → `ws`, `https` → `wss`).
    public static func gatewayURL(for baseURL: URL) -> URL {
        var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)!
        components.scheme = components.scheme == "https" ? "wss" : "ws"
        components.path = CustomerGatewayAPI.path
        return components.url!
    }

    /// Call on launch: the stored session if its expiry is still in the future; an expired one is forgotten.
    public nonisolated func restoreSession() -> GatehouseSession? {
        sessionStore.restoreValid(at: now())
    }

    /// Sends `LOGIN_CUSTOMER`; on `CUSTOMER_API_TOKEN` stores and returns the session, on
    /// `CUSTOMER_ERROR` throws ``CustomerGatewayError/customer(code:description:)``.
    @discardableResult
    public func login(email: String, password: String) async throws -> GatehouseSession {
        let sequenceID = UUID().uuidString.lowercased()
        let request = CustomerGatewayMessage(type: CustomerGatewayAPI.MessageType.loginCustomer, sequenceID: sequenceID,
                                             data: LoginCustomerData(email: email, password: password))
        let answer = try await exchange(String(decoding: try JSONEncoder().encode(request), as: UTF8.self), sequenceID: sequenceID)
        let data = Data(answer.utf8)
        if let token = try? JSONDecoder().decode(CustomerGatewayMessage<CustomerAPITokenData>.self, from: data),
           token.type == CustomerGatewayAPI.MessageType.customerAPIToken {
            guard let expires = WireDates.parseFlexible(token.data.apiTokenExpirationDate) else {
                throw CustomerGatewayError.connection("unreadable api_token_expiration_date")
            }
            let session = GatehouseSession(token: token.data.apiToken, expiresAt: expires)
            try sessionStore.save(session)
            return session
        }
        if let error = try? JSONDecoder().decode(CustomerGatewayMessage<CustomerErrorData>.self, from: data) {
            throw CustomerGatewayError.customer(code: error.data.errorCode, description: error.data.errorDescription)
        }
        throw CustomerGatewayError.connection("unexpected answer from the gateway")
    }

    /// Forgets the stored session (the gateway protocol has no logout message).
    public func forgetSession() { try? sessionStore.clear() }

    /// Drops the connection and opens a new one.
    public func reconnect() async throws {
        await disconnect()
        try await ensureConnected()
    }

    /// Closes the connection; pending requests fail.
    public func disconnect() async {
        let old = connection
        connection = nil
        reader?.cancel()
        reader = nil
        failAll(CustomerGatewayError.connection("disconnected"))
        await old?.close()
    }

    // MARK: Plumbing

    private func ensureConnected() async throws {
        guard connection == nil else { return }
        let opened: any WebSocketConnection
        do {
            opened = try await transport.connect(to: url)
        } catch {
            throw CustomerGatewayError.connection("cannot connect to \(url.host ?? "the server"): \(error.localizedDescription)")
        }
        connection = opened
        reader = Task { [weak self] in
            do {
                while let text = try await opened.receive() {
                    await self?.deliver(text)
                }
            } catch {}
            await self?.connectionEnded(opened)
        }
    }

    private func exchange(_ text: String, sequenceID: String) async throws -> String {
        try await ensureConnected()
        guard let connection else { throw CustomerGatewayError.connection("not connected") }
        let timeout = self.timeout
        let timer = Task { [weak self] in
            try? await Task.sleep(nanoseconds: UInt64(timeout * 1_000_000_000))
            await self?.fail(sequenceID, CustomerGatewayError.timeout)
        }
        defer { timer.cancel() }
        return try await withCheckedThrowingContinuation { continuation in
            pending[sequenceID] = continuation
            Task {
                do {
                    try await connection.send(text)
                } catch {
                    self.fail(sequenceID, CustomerGatewayError.connection("connection lost"))
                }
            }
        }
    }

    private func deliver(_ text: String) {
        // Answers are matched by sequence_id, not by order.
        struct Envelope: Decodable {
            let sequenceID: String?
            enum CodingKeys: String, CodingKey { case sequenceID = "sequence_id" }
        }
        guard let id = (try? JSONDecoder().decode(Envelope.self, from: Data(text.utf8)))?.sequenceID,
              let continuation = pending.removeValue(forKey: id) else { return }
        continuation.resume(returning: text)
    }

    private func fail(_ sequenceID: String, _ error: any Error) {
        pending.removeValue(forKey: sequenceID)?.resume(throwing: error)
    }

    private func failAll(_ error: any Error) {
        let waiting = pending
        pending = [:]
        for continuation in waiting.values { continuation.resume(throwing: error) }
    }

    private func connectionEnded(_ ended: any WebSocketConnection) {
        guard let current = connection, current as AnyObject === ended as AnyObject else { return }
        connection = nil
        failAll(CustomerGatewayError.connection("the connection was closed"))
    }
}
