// Drives a live Gatehouse through the client swift-openapi-generator wrote from the server's whole OpenAPI
// document: two people sign up by phone, one logs in, opens a chat with the other and sends a message, and
// pays them from a credited wallet. Every call goes through the generated `Client`; only the one-time codes
// are read from the development outbox (`/dev/outbox`, not part of the API) and the wallet is credited with
// the server's CLI (where a payment provider would). Exits non-zero on the first answer that is not the
// documented success.
//
//   GATEHOUSE_URL=http://127.0.0.1:8080 GATEHOUSE_CLI=Server/.build/debug/gatehouse swift run --package-path Examples/OpenAPIClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import OpenAPIRuntime
import OpenAPIURLSession

struct Failure: Error, CustomStringConvertible {
    let description: String
}

/// Sends `Authorization: Bearer <token>` with every request (the document's `bearerAuth`).
struct BearerAuthentication: ClientMiddleware {
    let token: String

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        request.headerFields[.authorization] = "Bearer \(token)"
        return try await next(request, body, baseURL)
    }
}

let environment = ProcessInfo.processInfo.environment
guard let base = environment["GATEHOUSE_URL"].flatMap(URL.init(string:)) else {
    throw Failure(description: "set GATEHOUSE_URL to a running development server")
}
let transport = URLSessionTransport()
let anonymous = Client(serverURL: base, transport: transport)
let run = String(Int(Date().timeIntervalSince1970) % 100_000_000)

/// The newest code the development outbox holds for `destination`.
func outboxCode(_ destination: String) async throws -> String {
    var components = URLComponents(url: base.appendingPathComponent("dev/outbox"), resolvingAgainstBaseURL: false)!
    components.queryItems = [URLQueryItem(name: "to", value: destination), URLQueryItem(name: "last", value: "1")]
    let (data, _) = try await URLSession.shared.data(from: components.url!)
    guard let messages = try JSONSerialization.jsonObject(with: data) as? [[String: Any]], let code = messages.first?["code"] as? String else {
        throw Failure(description: "no code in the outbox for \(destination)")
    }
    return code
}

/// Signs a person up by phone: a code by SMS, then the account with it. Answers the new session's token
/// and the account's id.
func signUp(phone: String, tag: String, password: String) async throws -> (token: String, id: String) {
    switch try await anonymous.requestSignupCode(body: .json(.init(phone: phone))) {
    case .accepted: break
    case let other: throw Failure(description: "requestSignupCode: \(other)")
    }
    let code = try await outboxCode(phone)
    switch try await anonymous.signUp(body: .json(.init(phone: phone, code: code, password: password, tag: tag))) {
    case .created(let created):
        let session = try created.body.json
        print("signed up @\(tag): account \(session.account.id)")
        return (session.token, session.account.id)
    case let other: throw Failure(description: "signUp: \(other)")
    }
}

let password = "openapi-pass-1!"
let annPhone = "+7916" + String(run.suffix(7)).leftPadded(to: 7)
let bobPhone = "+7915" + String(run.suffix(7)).leftPadded(to: 7)
_ = try await signUp(phone: annPhone, tag: "ann\(run)", password: password)
let (bobToken, bobID) = try await signUp(phone: bobPhone, tag: "bob\(run)", password: password)

// Ann logs in with her password (a second session).
let annToken: String
switch try await anonymous.logIn(body: .json(.init(identifier: annPhone, password: password, device: "openapi-client"))) {
case .created(let created):
    annToken = try created.body.json.token
    print("logged in as @ann\(run)")
case let other: throw Failure(description: "logIn: \(other)")
}
let ann = Client(serverURL: base, transport: transport, middlewares: [BearerAuthentication(token: annToken)])
let bob = Client(serverURL: base, transport: transport, middlewares: [BearerAuthentication(token: bobToken)])

// A message: Ann opens the direct chat with Bob and writes.
let chat: Components.Schemas.Chat
switch try await ann.openChat(body: .json(.init(personId: bobID))) {
case .ok(let ok): chat = try ok.body.json
case let other: throw Failure(description: "openChat: \(other)")
}
switch try await ann.sendMessage(path: .init(id: chat.id), body: .json(.init(text: "Hello from a generated client", clientMessageId: UUID().uuidString))) {
case .created(let created):
    let message = try created.body.json
    print("sent message \(message.id) to chat \(chat.id)")
case let other: throw Failure(description: "sendMessage: \(other)")
}
switch try await bob.listMessages(path: .init(id: chat.id)) {
case .ok(let ok):
    let texts = try ok.body.json.items.map(\.text)
    guard texts.contains("Hello from a generated client") else { throw Failure(description: "Bob does not see the message: \(texts)") }
    print("Bob reads it")
case let other: throw Failure(description: "listMessages: \(other)")
}

// A transfer: both open wallets, Ann's is credited, she pays Bob 10.50 ₽.
for (name, client) in [("Ann", ann), ("Bob", bob)] {
    switch try await client.attachWallet() {
    case .ok, .created: print("\(name)'s wallet is open")
    case let other: throw Failure(description: "attachWallet: \(other)")
    }
}
if let cli = environment["GATEHOUSE_CLI"] {
    let credit = Process()
    credit.executableURL = URL(fileURLWithPath: cli)
    credit.arguments = ["wallet", "credit", "--phone", annPhone, "--amount", "100.00", "--reason", "openapi client check"]
    try credit.run()
    credit.waitUntilExit()
    guard credit.terminationStatus == 0 else { throw Failure(description: "gatehouse wallet credit failed") }
}
let key = UUID().uuidString
for attempt in 1...2 {
    // The same intent twice with one Idempotency-Key: one transfer, the same answer.
    switch try await ann.createTransfer(headers: .init(idempotencyKey: key), body: .json(.init(amount: 1050, comment: "generated", to: .init(tag: "bob\(run)")))) {
    case .created(let created):
        let result = try created.body.json
        print("transfer \(result.transfer.id) (attempt \(attempt)): \(result.transfer.amount) kopecks")
    case let other: throw Failure(description: "createTransfer: \(other)")
    }
}
switch try await bob.getWallet() {
case .ok(let ok):
    let wallet = try ok.body.json
    guard wallet.balance == 1050 else { throw Failure(description: "Bob's balance is \(wallet.balance), not 1050") }
    print("Bob's balance: \(wallet.balance) kopecks")
case let other: throw Failure(description: "getWallet: \(other)")
}
print("ok: signed up, logged in, sent a message and made a transfer through the generated client")

extension String {
    func leftPadded(to length: Int) -> String { String(repeating: "0", count: max(0, length - count)) + self }
}
