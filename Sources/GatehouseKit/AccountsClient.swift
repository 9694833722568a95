import Foundation
import GatehouseAPI
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The client of the JSON account API `/v1` (`docs/api-v1.md`): JSON requests and answers in
/// the `GatehouseAPI` wire types, the Bearer header, and every RFC 9457 problem document turned
/// into a ``GatehouseClientError`` carrying the server's code and (localized) `detail`.
///
/// The client keeps the session in its ``SessionStore``: ``login(identifier:password:device:)``
/// and ``signup(_:)`` save it, ``logout()`` and any 401 on an authenticated call clear it,
/// ``restoreSession()`` brings it back on launch only if it has not expired.
public final class AccountsClient: Sendable {
    /// The server's base URL, e.g. `https://id.example.com`.
    public let baseURL: URL
    /// Where the session is kept between launches.
    public let sessionStore: any SessionStore
    private let transport: any HTTPTransport
    private let language: String?
    private let now: @Sendable () -> Date
    private let lastProblemBox = ProblemBox()

    /// Creates a client.
    /// - Parameters:
    ///   - baseURL: the server, without a trailing path.
    ///   - sessionStore: where to keep the session; ``DefaultSessionStore`` picks Keychain or a file.
    ///   - transport: how requests are sent; `URLSession` by default.
    ///   - language: sent as `Accept-Language` so the server's `detail` comes in the app's
    ///     language; when nil, `ru` on a Russian device and `en` otherwise.
    ///   - now: the clock used to decide whether a stored session has expired.
    public init(
        baseURL: URL,
        sessionStore: any SessionStore = InMemorySessionStore(),
        transport: any HTTPTransport = URLSessionTransport(),
        language: String? = nil,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.baseURL = baseURL
        self.sessionStore = sessionStore
        self.transport = transport
        self.language = language ?? defaultLanguage()
        self.now = now
    }

    // MARK: Session

    /// The current session, if one is stored and still valid.
    public var session: GatehouseSession? { sessionStore.validSession(at: now()) }

    /// Call on launch: returns the stored session if it has not expired, and forgets an expired one.
    @discardableResult
    public func restoreSession() -> GatehouseSession? {
        sessionStore.restoreValid(at: now())
    }

    /// The problem document of the most recent refusal this client received, for the members
    /// ``GatehouseClientError`` does not carry (`attemptsLeft`, `field`). With several calls in
    /// flight it belongs to whichever failed last; read it right after catching the error.
    public var lastProblem: Problem? { lastProblemBox.value }

    // MARK: Sign-up

    /// `POST /v1/signup/code`: sends a sign-up code to an email address. An address that already
    /// has an account gets a notice instead, with the same answer (the form never tells).
    public func requestSignupCode(email: String) async throws -> CodeSent {
        try await send("POST", AccountsV1API.Path.signupCode, body: CodeRequest(email: email))
    }

    /// `POST /v1/signup/code`: sends a sign-up code by SMS to a phone in any common format.
    public func requestSignupCode(phone: String) async throws -> CodeSent {
        try await send("POST", AccountsV1API.Path.signupCode, body: CodeRequest(phone: phone))
    }

    /// `POST /v1/signup`: creates the account with the code and stores the new session.
    @discardableResult
    public func signup(_ request: SignupRequest) async throws -> AuthSession {
        let answer: AuthSession = try await send("POST", AccountsV1API.Path.signup, body: request)
        try store(answer)
        return answer
    }

    /// `GET /v1/tags/{tag}`: whether a tag is free. The tag is sent as ``TagRule/canonical(_:)``
    /// makes it (trimmed, without `@`, lower-case); one that breaks the rule is refused with
    /// `invalid_tag`.
    public func tagAvailability(_ tag: String) async throws -> TagAvailability {
        var canonical = TagRule.canonical(tag)
        // A segment of dots would be read as `.`/`..` by URL normalisation: escape them too.
        if !canonical.isEmpty, canonical.allSatisfy({ $0 == "." }) {
            canonical = canonical.replacingOccurrences(of: ".", with: "%2E")
            return try await send("GET", AccountsV1API.Path.tag.replacingOccurrences(of: "{tag}", with: canonical))
        }
        return try await send("GET", AccountsV1API.Path.filling(AccountsV1API.Path.tag, ["tag": canonical]))
    }

    // MARK: Sessions

    /// `POST /v1/sessions`: logs in with an email, a tag or a phone, and stores the session.
    /// A wrong identifier or password is ``GatehouseClientError/rejected(code:message:)`` with
    /// `invalid_credentials`; a failed login leaves a stored session alone.
    /// - Parameter device: a label for the session in the list of sessions (e.g. "iPhone 15").
    @discardableResult
    public func login(identifier: String, password: String, device: String? = nil) async throws -> AuthSession {
        let answer: AuthSession = try await send("POST", AccountsV1API.Path.sessions,
                                                 body: LoginRequest(identifier: identifier, password: password, device: device))
        try store(answer)
        return answer
    }

    /// `GET /v1/sessions`: my sessions, newest first; ``SessionInfo/current`` marks this one.
    public func sessions() async throws -> [SessionInfo] {
        let list: SessionList = try await send("GET", AccountsV1API.Path.sessions, authenticated: true)
        return list.sessions
    }

    /// `DELETE /v1/sessions/{id}`: ends one of my sessions (another account's id is `session_not_found`).
    public func endSession(id: UUID) async throws {
        try await sendNoContent("DELETE", AccountsV1API.Path.filling(AccountsV1API.Path.session, ["id": id.uuidString.lowercased()]), authenticated: true)
    }

    /// `DELETE /v1/sessions?scope=others`: ends every session but this one; returns how many ended.
    @discardableResult
    public func endOtherSessions() async throws -> Int {
        let answer: SessionsRevoked = try await send("DELETE", AccountsV1API.Path.sessions, query: "scope=others", authenticated: true)
        return answer.revoked
    }

    /// `DELETE /v1/sessions/current`: ends the session on the server and forgets it here. The
    /// session is forgotten locally whatever happens; a 401 (already ended or expired) counts
    /// as success, while a transport or server failure is still thrown so an app may say the
    /// server did not hear it (the token then dies at its expiry).
    public func logout() async throws {
        defer { try? sessionStore.clear() }
        guard session != nil else { return }
        do {
            try await sendNoContent("DELETE", AccountsV1API.Path.currentSession, authenticated: true)
        } catch GatehouseClientError.sessionExpired {
            return
        }
    }

    // MARK: Recovery

    /// `POST /v1/recovery/code`: sends a password-recovery code to an email address. Always
    /// answers the same: an unknown or unconfirmed address is sent nothing.
    public func requestRecoveryCode(email: String) async throws -> CodeSent {
        try await send("POST", AccountsV1API.Path.recoveryCode, body: CodeRequest(email: email))
    }

    /// `POST /v1/recovery/code`: sends a password-recovery code by SMS to a verified phone.
    public func requestRecoveryCode(phone: String) async throws -> CodeSent {
        try await send("POST", AccountsV1API.Path.recoveryCode, body: CodeRequest(phone: phone))
    }

    /// `POST /v1/recovery`: sets the new password with the code. Every session of the account
    /// ends (this client's stored one too, if it belonged to it: log in again).
    public func recoverPassword(_ request: RecoveryRequest) async throws {
        try await sendNoContent("POST", AccountsV1API.Path.recovery, body: request)
    }

    // MARK: Profile

    /// `GET /v1/me`: my account.
    public func me() async throws -> Account {
        try await send("GET", AccountsV1API.Path.me, authenticated: true)
    }

    /// `PATCH /v1/me`: changes what `update` sets (a merge patch: `.some(nil)` clears a member).
    @discardableResult
    public func updateProfile(_ update: ProfileUpdate) async throws -> Account {
        try await send("PATCH", AccountsV1API.Path.me, body: update, authenticated: true)
    }

    /// `POST /v1/me/password`: changes the password; every other session ends.
    public func changePassword(current: String, new: String) async throws {
        try await sendNoContent("POST", AccountsV1API.Path.password, body: PasswordChange(currentPassword: current, newPassword: new), authenticated: true)
    }

    /// `POST /v1/me/email`: makes `email` pending and sends it a code; the current address
    /// keeps working until ``verifyEmailChange(code:)``. The server asks for the current password
    /// (a new address is a new way into the account).
    public func requestEmailChange(_ email: String, currentPassword: String) async throws -> CodeSent {
        try await send("POST", AccountsV1API.Path.email, body: EmailChangeRequest(email: email, currentPassword: currentPassword), authenticated: true)
    }

    /// `POST /v1/me/email/verify`: switches to the pending address with its code.
    @discardableResult
    public func verifyEmailChange(code: String) async throws -> Account {
        try await send("POST", AccountsV1API.Path.emailVerify, body: CodeVerification(code: code), authenticated: true)
    }

    /// `DELETE /v1/me/email`: drops the pending address.
    @discardableResult
    public func cancelEmailChange() async throws -> Account {
        try await send("DELETE", AccountsV1API.Path.email, authenticated: true)
    }

    /// `POST /v1/me/phone`: sends an SMS code to a phone to attach it to the account; needs the
    /// current password.
    public func requestPhoneVerification(_ phone: String, currentPassword: String) async throws -> CodeSent {
        try await send("POST", AccountsV1API.Path.phone, body: PhoneVerificationRequest(phone: phone, currentPassword: currentPassword), authenticated: true)
    }

    /// `POST /v1/me/phone/verify`: attaches `phone` as verified with the code it received.
    @discardableResult
    public func verifyPhone(_ phone: String, code: String) async throws -> Account {
        try await send("POST", AccountsV1API.Path.phoneVerify, body: CodeVerification(code: code, phone: phone), authenticated: true)
    }

    /// `PUT /v1/me/avatar`: uploads an image as the avatar.
    /// - Parameters:
    ///   - data: the image's bytes, at most the server's `GATEHOUSE_AVATAR_MAX_BYTES` (2 MiB).
    ///   - contentType: `image/png`, `image/jpeg`, `image/gif` or `image/webp`, matching the bytes.
    @discardableResult
    public func uploadAvatar(data: Data, contentType: String) async throws -> Account {
        try await send("PUT", AccountsV1API.Path.avatar, rawBody: (data, contentType), authenticated: true)
    }

    /// `DELETE /v1/me/avatar`: removes the avatar.
    @discardableResult
    public func removeAvatar() async throws -> Account {
        try await send("DELETE", AccountsV1API.Path.avatar, authenticated: true)
    }

    // MARK: Plumbing

    private struct NoBody: Encodable {}

    private func store(_ answer: AuthSession) throws {
        // A session that cannot be kept would make every later call fail: say so now.
        try sessionStore.save(GatehouseSession(token: answer.token, expiresAt: answer.expiresAt))
    }

    private func send<Answer: Decodable>(_ method: String, _ path: String, query: String? = nil, authenticated: Bool = false) async throws -> Answer {
        try decode(try await perform(method, path, query: query, body: nil, authenticated: authenticated))
    }

    private func send<Answer: Decodable, Body: Encodable>(_ method: String, _ path: String, body: Body, authenticated: Bool = false) async throws -> Answer {
        try decode(try await perform(method, path, query: nil, body: (try encode(body), "application/json"), authenticated: authenticated))
    }

    private func send<Answer: Decodable>(_ method: String, _ path: String, rawBody: (Data, String), authenticated: Bool) async throws -> Answer {
        try decode(try await perform(method, path, query: nil, body: rawBody, authenticated: authenticated))
    }

    private func sendNoContent(_ method: String, _ path: String, authenticated: Bool) async throws {
        _ = try await perform(method, path, query: nil, body: nil, authenticated: authenticated)
    }

    private func sendNoContent<Body: Encodable>(_ method: String, _ path: String, body: Body, authenticated: Bool = false) async throws {
        _ = try await perform(method, path, query: nil, body: (try encode(body), "application/json"), authenticated: authenticated)
    }

    private func encode<Body: Encodable>(_ body: Body) throws -> Data {
        do {
            return try AccountsV1API.makeEncoder().encode(body)
        } catch {
            throw GatehouseClientError.transport("cannot encode the request: \(error)")
        }
    }

    /// `path` is already percent-escaped (``AccountsV1API/Path/filling(_:_:)``), so it is set as
    /// the encoded path rather than appended (which would escape the `%` again).
    private func url(_ path: String, query: String?) -> URL {
        var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)!
        var base = components.percentEncodedPath
        while base.hasSuffix("/") { base.removeLast() }
        components.percentEncodedPath = base + path
        components.percentEncodedQuery = query
        return components.url!
    }

    private func perform(_ method: String, _ path: String, query: String?, body: (Data, String)?, authenticated: Bool) async throws -> Data {
        var request = URLRequest(url: url(path, query: query))
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let (data, contentType) = body {
            request.setValue(contentType, forHTTPHeaderField: "Content-Type")
            request.httpBody = data
        }
        try request.setHeaders(language: language, authenticated: authenticated, session: session)
        let (data, response) = try await transport.exchange(request)
        if (200..<300).contains(response.statusCode) { return data }
        throw refusal(response, data, authenticated: authenticated)
    }

    /// The typed error for a non-2xx answer: from its problem document, or, for a body that is
    /// not one (a proxy's page, an older server), from the status, `X-Error-Code` and the text.
    private func refusal(_ response: HTTPURLResponse, _ data: Data, authenticated: Bool) -> GatehouseClientError {
        let status = response.statusCode
        let problem = try? AccountsV1API.makeDecoder().decode(Problem.self, from: data)
        lastProblemBox.value = problem
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

    private func decode<T: Decodable>(_ data: Data) throws -> T {
        do {
            return try AccountsV1API.makeDecoder().decode(T.self, from: data)
        } catch {
            throw GatehouseClientError.server(status: 200, message: "unexpected answer: \(error)")
        }
    }
}

/// The last problem document, shared between concurrent calls.
private final class ProblemBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Problem?
    var value: Problem? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
