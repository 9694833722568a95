import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseServer
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// Raw requests exactly as a third-party client sends them: form and multipart bodies built by
/// hand, headers spelled out.
enum Wire {
    static func formBody(_ fields: [(String, String)]) -> ByteBuffer {
        ByteBuffer(string: FormURLEncoding.encode(fields))
    }

    static func multipartBody(_ fields: [(String, String)], boundary: String) -> ByteBuffer {
        var text = ""
        for (name, value) in fields {
            text += "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n"
        }
        text += "--\(boundary)--\r\n"
        return ByteBuffer(string: text)
    }
}

extension TestHarness {
    @discardableResult
    func postForm(_ path: String, _ fields: [(String, String)], token: String? = nil, headers extra: HTTPFields = [:]) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
        if let token { headers[.authorization] = "Bearer \(token)" }
        for field in extra { headers[field.name] = field.value }
        return try await client.execute(uri: path, method: .post, headers: headers, body: Wire.formBody(fields))
    }

    @discardableResult
    func postMultipart(_ path: String, _ fields: [(String, String)], token: String? = nil) async throws -> TestResponse {
        let boundary = "----GatehouseBoundary\(UUID().uuidString.prefix(8))"
        var headers: HTTPFields = [.contentType: "multipart/form-data; boundary=\(boundary)"]
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await client.execute(uri: path, method: .post, headers: headers, body: Wire.multipartBody(fields, boundary: boundary))
    }

    func get(_ path: String, token: String? = nil, headers extra: HTTPFields = [:]) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        for field in extra { headers[field.name] = field.value }
        return try await client.execute(uri: path, method: .get, headers: headers)
    }

    /// The development outbox for a destination, newest first, read over the wire.
    func outbox(to destination: String) async throws -> [DevOutboxMessage] {
        let encoded = FormURLEncoding.escape(destination)
        let response = try await get("\(DevAPI.Path.outbox)?to=\(encoded)")
        #expect(response.status == .ok)
        return try JSONDecoder().decode([DevOutboxMessage].self, from: Data(buffer: response.body))
    }

    /// The newest code sent to a destination.
    func latestCode(to destination: String) async throws -> String {
        let messages = try await outbox(to: destination)
        return try #require(messages.first?.code, "no message for \(destination)")
    }

    /// The confirmation link token from the newest mail to `email`.
    func latestConfirmationToken(to email: String) async throws -> String {
        let mail = try #require(try await outbox(to: email).first { $0.subject != nil && $0.body.contains("confirm?id=") })
        let range = try #require(mail.body.range(of: "confirm?id="))
        return String(mail.body[range.upperBound...].prefix { !$0.isWhitespace })
    }

    // MARK: Scenario steps

    /// SMS code → register → (login). Returns the phone in E.164.
    /// `confirmingEmail`: also confirm the address through its link, so that it names the account
    /// (an unconfirmed address is only a claim and logs nobody in).
    func registerPhoneAccount(
        phone: String = "+79123456789", password: String = "secret-91!", email: String? = "ivan@example.com",
        extra: [(String, String)] = [], confirmingEmail: Bool = false
    ) async throws {
        let sms = try await postForm(PhoneAccountsAPI.Path.sendSMS, [("phone", phone)])
        #expect(sms.status == .ok, "sms: \(String(buffer: sms.body))")
        let normalized = PhoneNumber.normalize(phone, defaultCountryCode: "7")!
        let code = try await latestCode(to: normalized)
        var fields = [("phone", phone), ("code", code), ("password", password), ("name", "Ivan"), ("lastname", "Petrov")]
        if let email { fields.append(("email", email)) }
        fields += extra
        let register = try await postForm(PhoneAccountsAPI.Path.register, fields)
        #expect(register.status == .ok, "register: \(String(buffer: register.body))")
        if confirmingEmail, let email {
            let token = try await login(normalized, password)
            #expect(try await postForm(PhoneAccountsAPI.Path.sendConfirm, [], token: token).status == .ok)
            #expect(try await confirmEmail(email.lowercased()).status == .ok)
            #expect(try await postForm(PhoneAccountsAPI.Path.logout, [], token: token).status == .ok)
        }
    }

    func login(_ login: String, _ password: String) async throws -> String {
        let response = try await postForm(PhoneAccountsAPI.Path.login, [("login", login), ("password", password)])
        #expect(response.status == .ok, "login: \(String(buffer: response.body))")
        return try JSONDecoder().decode(PhoneLoginResponse.self, from: Data(buffer: response.body)).token
    }

    func user(_ token: String) async throws -> PhoneUser {
        let response = try await get(PhoneAccountsAPI.Path.user, token: token)
        #expect(response.status == .ok, "user: \(String(buffer: response.body))")
        return try JSONDecoder().decode(PhoneUser.self, from: Data(buffer: response.body))
    }

    /// Opens the newest confirmation link sent to `email` and presses its button, as a person does.
    func confirmEmail(_ email: String) async throws -> TestResponse {
        let token = try await latestConfirmationToken(to: email)
        let page = try await get("\(PhoneAccountsAPI.Path.confirm)?id=\(token)")
        guard page.status == .ok, page.text.contains(#"data-state="pending""#) else { return page }
        return try await postForm(PhoneAccountsAPI.Path.confirm, [("id", token)])
    }
}

extension TestResponse {
    var text: String { String(buffer: body) }
    var errorCode: String? { headers[HTTPField.Name(PhoneAccountsAPI.errorCodeHeader)!] }
}
