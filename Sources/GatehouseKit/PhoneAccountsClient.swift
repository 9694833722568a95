import Foundation
import GatehouseAPI
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The client of the phone-first API of `docs/phone-accounts.md` (`/api/...`): form-encoded
/// requests exactly as the spec describes, the Bearer header, answers decoded into the
/// `GatehouseAPI` types, refusals turned into ``GatehouseClientError``.
///
/// The client keeps the session in its ``SessionStore``: ``login(login:password:)`` saves it,
/// ``logout()`` and any 401 clear it, ``restoreSession()`` brings it back on launch only if it
/// has not expired.
public final class PhoneAccountsClient: SessionKeepingClient {
    /// The core it shares with the other clients: base URL, transport, session store, language.
    /// The phone API has its own wire format (forms, its own errors), so only these are shared.
    public let core: GatehouseClient
    private var transport: any HTTPTransport { core.transport }
    private var language: String? { core.language }
    private func now() -> Date { core.now() }

    /// Creates a client on a shared core (``SessionKeepingClient`` makes one with a core of its own).
    public init(core: GatehouseClient) {
        self.core = core
    }

    // MARK: Endpoints

    /// `POST /api/users/sms`: sends a registration code by SMS to a phone in any common format.
    public func sendRegistrationCode(phone: String) async throws {
        _ = try await send(PhoneAccountsAPI.Path.sendSMS, fields: [(PhoneAccountsAPI.Parameter.phone, phone)])
    }

    /// `POST /api/users/register`: creates the account with the code from the SMS.
    public func register(_ request: PhoneRegisterRequest) async throws -> PhoneRegisterResponse {
        try decode(try await send(PhoneAccountsAPI.Path.register, fields: request.formFields))
    }

    /// `POST /api/auth/login` with a phone (any format), login or email; stores the session.
    @discardableResult
    public func login(login: String, password: String) async throws -> GatehouseSession {
        let data = try await send(PhoneAccountsAPI.Path.login, fields: [(PhoneAccountsAPI.Parameter.login, login), (PhoneAccountsAPI.Parameter.password, password)])
        let answer: PhoneLoginResponse = try decode(data)
        // A server that omits `expires` still promises at most 24 hours.
        let expires = answer.expires.flatMap(WireDates.parseFlexible) ?? now().addingTimeInterval(86_400)
        let session = GatehouseSession(token: answer.token, expiresAt: expires)
        // A session that cannot be kept would make every later call fail: say so now.
        try sessionStore.save(session)
        return session
    }

    /// `POST /api/auth/logout`: ends the session on the server and forgets it here. It cannot
    /// fail: without a network the session is still forgotten locally (and expires on the server).
    public func logout() async {
        defer { try? sessionStore.clear() }
        guard session != nil else { return }
        _ = try? await send(PhoneAccountsAPI.Path.logout, fields: [], authenticated: true)
    }

    /// `GET /api/users/user`: the account.
    public func currentUser() async throws -> PhoneUser {
        try decode(try await send(PhoneAccountsAPI.Path.user, method: "GET", fields: [], authenticated: true))
    }

    /// `POST /api/users/change`: changes only what `change` sets; a new email resets `isConfirmed`.
    @discardableResult
    public func changeProfile(_ change: PhoneProfileChange) async throws -> PhoneUser {
        try decode(try await send(PhoneAccountsAPI.Path.change, fields: change.formFields, authenticated: true))
    }

    /// `POST /api/users/send-confirm`: mails a confirmation link to the account's email.
    public func sendConfirmationEmail() async throws {
        _ = try await send(PhoneAccountsAPI.Path.sendConfirm, fields: [], authenticated: true)
    }

    /// `POST /api/users/restore`: sends a temporary password by SMS (`viaSMS`) or email.
    public func restorePassword(_ identifier: PhoneRestoreIdentifier, viaSMS: Bool) async throws {
        _ = try await send(PhoneAccountsAPI.Path.restore, fields: [identifier.formField, (PhoneAccountsAPI.Parameter.sms, viaSMS ? "true" : "false")])
    }

    // MARK: Plumbing

    private func send(_ path: String, method: String = "POST", fields: [(String, String)], authenticated: Bool = false) async throws -> Data {
        var request = URLRequest(url: baseURL.appendingPathComponent(path))
        request.httpMethod = method
        if method == "POST" {
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(FormURLEncoding.encode(fields).utf8)
        }
        try request.setHeaders(language: language, authenticated: authenticated, session: session)
        let (data, response) = try await transport.exchange(request)
        let text = String(decoding: data, as: UTF8.self)
        let code = response.value(forHTTPHeaderField: PhoneAccountsAPI.errorCodeHeader).map(GatehouseErrorCode.init(rawValue:))
        switch response.statusCode {
        case 200..<300:
            return data
        case 401:
            try? sessionStore.clear()
            throw GatehouseClientError.sessionExpired(message: text.isEmpty ? nil : text)
        case 429:
            throw GatehouseClientError.rateLimited(code: code, message: text, retryAfter: response.value(forHTTPHeaderField: "Retry-After").flatMap(Int.init))
        case 400..<500:
            throw GatehouseClientError.rejected(code: code, message: text.isEmpty ? "HTTP \(response.statusCode)" : text)
        default:
            throw GatehouseClientError.server(status: response.statusCode, message: text)
        }
    }

    private func decode<T: Decodable>(_ data: Data) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw GatehouseClientError.server(status: 200, message: "unexpected answer: \(error)")
        }
    }
}
