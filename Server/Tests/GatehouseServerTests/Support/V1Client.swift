import Foundation
import GatehouseAPI
import GatehouseServer
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

extension TestHarness {
    /// The JSON API `/v1`, spoken as a third-party client speaks it.
    var v1: V1Client { V1Client(app: self) }
}

/// Raw `/v1` requests: JSON bodies written by hand (when the bytes matter) or encoded from the
/// wire types, `Authorization: Bearer`, `Accept-Language` and any other header spelled out, and
/// raw bodies with any `Content-Type` (avatars, wrong media types).
struct V1Client {
    let app: TestHarness

    // MARK: Requests

    /// Any request. `contentType` nil sends no `Content-Type` header at all.
    func send(
        _ method: HTTPRequest.Method, _ path: String, body: ByteBuffer? = nil, contentType: String? = nil,
        token: String? = nil, headers extra: HTTPFields = [:]
    ) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        if let contentType { headers[.contentType] = contentType }
        if let token { headers[.authorization] = "Bearer \(token)" }
        for field in extra { headers[field.name] = field.value }
        return try await app.client.execute(uri: path, method: method, headers: headers, body: body)
    }

    /// `POST` with a JSON body written by hand.
    @discardableResult
    func post(_ path: String, json: String, token: String? = nil, headers: HTTPFields = [:]) async throws -> TestResponse {
        try await send(.post, path, body: ByteBuffer(string: json), contentType: "application/json", token: token, headers: headers)
    }

    /// `POST` with a wire type encoded as the SDK would encode it.
    @discardableResult
    func post(_ path: String, _ value: some Encodable, token: String? = nil, headers: HTTPFields = [:]) async throws -> TestResponse {
        try await send(.post, path, body: try Self.encode(value), contentType: "application/json", token: token, headers: headers)
    }

    /// `POST` with a raw body and whatever `Content-Type` (nil: none).
    @discardableResult
    func post(_ path: String, body: ByteBuffer, contentType: String?, token: String? = nil, headers: HTTPFields = [:]) async throws -> TestResponse {
        try await send(.post, path, body: body, contentType: contentType, token: token, headers: headers)
    }

    /// `PATCH` with a JSON body written by hand (a merge patch: `null` means "clear").
    @discardableResult
    func patch(_ path: String, json: String, token: String? = nil, headers: HTTPFields = [:]) async throws -> TestResponse {
        try await send(.patch, path, body: ByteBuffer(string: json), contentType: "application/json", token: token, headers: headers)
    }

    @discardableResult
    func patch(_ path: String, _ value: some Encodable, token: String? = nil, headers: HTTPFields = [:]) async throws -> TestResponse {
        try await send(.patch, path, body: try Self.encode(value), contentType: "application/json", token: token, headers: headers)
    }

    /// `PUT` with a raw body (an image) and its `Content-Type`.
    @discardableResult
    func put(_ path: String, body: [UInt8], contentType: String?, token: String? = nil, headers: HTTPFields = [:]) async throws -> TestResponse {
        try await send(.put, path, body: ByteBuffer(bytes: body), contentType: contentType, token: token, headers: headers)
    }

    func get(_ path: String, token: String? = nil, headers: HTTPFields = [:]) async throws -> TestResponse {
        try await send(.get, path, token: token, headers: headers)
    }

    @discardableResult
    func delete(_ path: String, token: String? = nil, headers: HTTPFields = [:]) async throws -> TestResponse {
        try await send(.delete, path, token: token, headers: headers)
    }

    static func encode(_ value: some Encodable) throws -> ByteBuffer {
        ByteBuffer(bytes: try V1.encoder.encode(value))
    }

    // MARK: The development outbox

    /// Everything sent to `destination`, newest first.
    func messages(to destination: String) async throws -> [DevOutboxMessage] {
        try await app.outbox(to: destination)
    }

    /// The newest one-time code sent to `destination` (notices without a code are skipped).
    func code(sentTo destination: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let messages = try await messages(to: destination)
        return try #require(messages.first(where: { $0.code != nil })?.code, "no code sent to \(destination)", sourceLocation: sourceLocation)
    }

    // MARK: Scenario steps

    /// `POST /v1/signup/code`, expecting 202.
    @discardableResult
    func requestSignupCode(email: String? = nil, phone: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws -> CodeSent {
        let response = try await post(V1.Accounts.signupCode.path, CodeRequest(email: email, phone: phone))
        #expect(response.status == .accepted, "signup code: \(response.text)", sourceLocation: sourceLocation)
        return try response.decoded(as: CodeSent.self)
    }

    /// Code request and sign-up by email; returns the new session (token and account).
    func signedUp(
        email: String = "ann@example.com", tag: String? = nil, password: String = "secret-91!",
        firstName: String? = "Ann", lastName: String? = "Smith", locale: String? = "en", device: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> AuthSession {
        let sent = try await requestSignupCode(email: email, sourceLocation: sourceLocation)
        let code = try await self.code(sentTo: sent.destination, sourceLocation: sourceLocation)
        let response = try await post(V1.Accounts.signup.path, SignupRequest(
            email: email, code: code, password: password, firstName: firstName, lastName: lastName,
            tag: tag, locale: locale, device: device
        ))
        #expect(response.status == .created, "signup: \(response.text)", sourceLocation: sourceLocation)
        return try response.decoded(as: AuthSession.self)
    }

    /// Code request and sign-up by phone.
    func signedUp(
        phone: String, tag: String? = nil, password: String = "secret-91!", locale: String? = "en", device: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> AuthSession {
        let sent = try await requestSignupCode(phone: phone, sourceLocation: sourceLocation)
        let code = try await self.code(sentTo: sent.destination, sourceLocation: sourceLocation)
        let response = try await post(V1.Accounts.signup.path, SignupRequest(phone: phone, code: code, password: password, tag: tag, locale: locale, device: device))
        #expect(response.status == .created, "signup: \(response.text)", sourceLocation: sourceLocation)
        return try response.decoded(as: AuthSession.self)
    }

    /// `POST /v1/sessions`, expecting 201.
    func login(_ identifier: String, _ password: String, device: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws -> AuthSession {
        let response = try await post(V1.Sessions.login.path, LoginRequest(identifier: identifier, password: password, device: device))
        #expect(response.status == .created, "login \(identifier): \(response.text)", sourceLocation: sourceLocation)
        return try response.decoded(as: AuthSession.self)
    }

    /// `GET /v1/me`, expecting 200.
    func me(_ token: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Account {
        let response = try await get(V1.Accounts.me.path, token: token)
        #expect(response.status == .ok, "me: \(response.text)", sourceLocation: sourceLocation)
        return try response.decoded(as: Account.self)
    }

    /// `GET /v1/sessions`, expecting 200.
    func sessions(_ token: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [SessionInfo] {
        let response = try await get(V1.Sessions.login.path, token: token)
        #expect(response.status == .ok, "sessions: \(response.text)", sourceLocation: sourceLocation)
        return try response.decoded(as: SessionList.self).sessions
    }

    /// `path` with `{name}` placeholders filled.
    static func path(_ template: String, _ values: [String: String]) -> String {
        V1.filling(template, values)
    }
}

extension TestResponse {
    /// The body as a wire type, read with the SDK's decoder.
    func decoded<T: Decodable>(as type: T.Type) throws -> T {
        try V1.decoder.decode(T.self, from: Data(buffer: body))
    }

    /// `Content-Type` without its parameters, lower-cased (`application/problem+json`).
    var mediaType: String? {
        headers[.contentType].map { $0.split(separator: ";").first.map(String.init) ?? $0 }?
            .trimmingCharacters(in: .whitespaces).lowercased()
    }

    /// The body as a JSON object, for members the wire types do not show (or show too kindly).
    func jsonObject() throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(buffer: body))
        return try #require(object as? [String: Any], "not a JSON object: \(text)")
    }
}

/// Checks a `/v1` error answer to the letter of RFC 9457 and the contract: the status, the
/// `application/problem+json` media type, and the members `type` (`urn:gatehouse:problem:<code>`),
/// `status`, `title` (the reason phrase), `detail` (non-empty) and `code`. Returns the problem.
@discardableResult
func expectProblem(
    _ response: TestResponse, _ status: HTTPResponse.Status, _ code: GatehouseErrorCode?,
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> Problem {
    #expect(response.status == status, "expected \(status.code), got \(response.status.code): \(response.text)", sourceLocation: sourceLocation)
    #expect(response.mediaType == V1.problemContentType, "Content-Type: \(response.headers[.contentType] ?? "none")", sourceLocation: sourceLocation)
    let problem = try #require(try? response.decoded(as: Problem.self), "not a problem document: \(response.text)", sourceLocation: sourceLocation)
    if let code {
        #expect(problem.code == code, "code \(problem.code), expected \(code): \(response.text)", sourceLocation: sourceLocation)
        #expect(problem.type == "urn:gatehouse:problem:\(code.rawValue)", sourceLocation: sourceLocation)
    }
    #expect(problem.type == Problem.typeURI(for: problem.code), sourceLocation: sourceLocation)
    #expect(problem.status == status.code, sourceLocation: sourceLocation)
    #expect(problem.title == status.reasonPhrase, "title \(problem.title)", sourceLocation: sourceLocation)
    #expect(!problem.detail.isEmpty, sourceLocation: sourceLocation)
    return problem
}
