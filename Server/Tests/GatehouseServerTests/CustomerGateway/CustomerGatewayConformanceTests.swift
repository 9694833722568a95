import Foundation
import GatehouseAPI
import GatehouseServer
import GatehouseTestSupport
import HTTPTypes
import HummingbirdTesting
import HummingbirdWSClient
import HummingbirdWSTesting
import NIOCore
import NIOWebSocket
import Testing

/// `docs/websocket-login.md` at the wire level: raw text and binary frames from a real
/// WebSocket client, answers checked field by field.
@Suite("WebSocket login gateway")
struct CustomerGatewayConformanceTests {
    typealias API = CustomerGatewayAPI

    /// A connection: send frames, read answers as JSON objects.
    struct Connection {
        let outbound: WebSocketOutboundWriter
        var iterator: WebSocketInboundMessageStream.AsyncIterator

        func send(_ text: String) async throws { try await outbound.write(.text(text)) }

        mutating func receive() async throws -> [String: Any] {
            guard let message = try await iterator.next() else { throw CancellationError() }
            guard case .text(let text) = message else { Issue.record("binary answer"); return [:] }
            return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
        }
    }

    @discardableResult
    func withConnection(_ app: TestHarness, _ body: @escaping @Sendable (inout Connection) async throws -> Void) async throws -> WebSocketCloseFrame? {
        try await app.client.ws(API.path) { inbound, outbound, _ in
            var connection = Connection(outbound: outbound, iterator: inbound.messages(maxSize: 1 << 20).makeAsyncIterator())
            try await body(&connection)
        }
    }

    static func login(_ email: String, _ password: String, sequence: String) -> String {
        #"{"type":"LOGIN_CUSTOMER","sequence_id":"\#(sequence)","data":{"email":"\#(email)","password":"\#(password)"}}"#
    }

    @Test("LOGIN_CUSTOMER answers CUSTOMER_API_TOKEN with exactly api_token and its UTC expiry; the token works on REST", arguments: TestEngine.once)
    func login_success(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            try await app.registerPhoneAccount(email: "fpi@bk.ru", confirmingEmail: true)
            let box = TokenBox()
            try await withConnection(app) { connection in
                try await connection.send(Self.login("fpi@bk.ru", "secret-91!", sequence: "a29e4fd0-581d-e06b-c837-4f5f4be7dd18"))
                let answer = try await connection.receive()
                #expect(answer["type"] as? String == "CUSTOMER_API_TOKEN")
                #expect(answer["sequence_id"] as? String == "a29e4fd0-581d-e06b-c837-4f5f4be7dd18")
                let data = try #require(answer["data"] as? [String: Any])
                #expect(Set(data.keys) == ["api_token", "api_token_expiration_date"])
                let expiry = try #require(data["api_token_expiration_date"] as? String)
                #expect(expiry.range(of: #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$"#, options: .regularExpression) != nil)
                #expect(expiry == WireDates.iso8601String(from: app.clock.now.addingTimeInterval(86_400)))
                box.token = data["api_token"] as? String
            }
            let token = try #require(box.token)
            let user = try await app.get(PhoneAccountsAPI.Path.user, token: token)
            #expect(user.status == .ok)
            #expect(user.text.contains("fpi@bk.ru"))
        }
    }

    @Test("a locked account: the right password answers customer.accountLocked with the customer_id, a wrong one customer.notFound as for anyone, with none", arguments: TestEngine.once)
    func login_lockedAccount(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            try await app.registerPhoneAccount(email: "fpi@bk.ru", confirmingEmail: true)
            let id = try #require(try await app.services.database.sql.raw("SELECT id FROM accounts WHERE email = 'fpi@bk.ru'").first(decodingColumn: "id", as: UUID.self))
            #expect(try await AccountCommands.setLocked(true, configuration: app.configuration, query: "fpi@bk.ru", reason: "fraud", as: nil))
            try await withConnection(app) { connection in
                for (password, code, customer) in [("secret-91!", "customer.accountLocked", id.uuidString.lowercased()), ("newPassword", "customer.notFound", nil)] {
                    try await connection.send(Self.login("fpi@bk.ru", password, sequence: code))
                    let answer = try await connection.receive()
                    #expect(answer["type"] as? String == "CUSTOMER_ERROR")
                    let data = try #require(answer["data"] as? [String: Any])
                    #expect(data["error_code"] as? String == code)
                    let inEvent = try #require(data["in_event"] as? [String: Any])
                    #expect(inEvent["customer_id"] as? String == customer, "the id only after the right password: \(inEvent)")
                    #expect(inEvent["password"] == nil && !String(describing: answer).contains(password))
                }
            }
        }
    }

    @Test("an account with the authenticator app on: the right password answers customer.secondFactorRequired (the protocol has no second step), a wrong one customer.notFound", arguments: TestEngine.once)
    func login_secondFactorAccount(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            _ = try await SecondFactorTests.accountWithTOTP(app)
            let id = try #require(try await app.services.database.sql.raw("SELECT id FROM accounts WHERE email = 'fpi@bk.ru'").first(decodingColumn: "id", as: UUID.self))
            try await withConnection(app) { connection in
                for (password, code) in [("secret-91!", "customer.secondFactorRequired"), ("newPassword", "customer.notFound")] {
                    try await connection.send(Self.login("fpi@bk.ru", password, sequence: code))
                    let answer = try await connection.receive()
                    #expect(answer["type"] as? String == "CUSTOMER_ERROR")
                    let data = try #require(answer["data"] as? [String: Any])
                    #expect(data["error_code"] as? String == code)
                    let customer = (data["in_event"] as? [String: Any])?["customer_id"] as? String
                    #expect(customer == (password == "secret-91!" ? id.uuidString.lowercased() : nil), "the account's id only after the right password")
                }
            }
        }
    }

    @Test("unknown email and wrong password: the same CUSTOMER_ERROR, with a new event_id for each frame and no customer_id, never echoing the password", arguments: TestEngine.once)
    func login_failures_lookTheSame(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            try await app.registerPhoneAccount(email: "fpi@bk.ru", confirmingEmail: true)
            try await withConnection(app) { connection in
                var eventIDs: Set<String> = []
                for (email, sequence) in [("fpi@bk.ru", "715c13b3-881a-9c97-b853-10be585a9747"), ("123@gmail.com", "seq-2")] {
                    try await connection.send(Self.login(email, "newPassword", sequence: sequence))
                    let answer = try await connection.receive()
                    #expect(answer["type"] as? String == "CUSTOMER_ERROR")
                    #expect(answer["sequence_id"] as? String == sequence)
                    let data = try #require(answer["data"] as? [String: Any])
                    #expect(data["error_code"] as? String == "customer.notFound")
                    #expect(data["error_description"] as? String == "Customer not found")
                    #expect(UUID(uuidString: data["error_uuid"] as? String ?? "") != nil)
                    let inEvent = try #require(data["in_event"] as? [String: Any])
                    #expect(inEvent["type"] as? String == "LOGIN_CUSTOMER")
                    #expect(inEvent["sequence_id"] as? String == sequence)
                    #expect(inEvent["email"] as? String == email)
                    #expect(inEvent["password"] == nil)
                    #expect(inEvent["customer_id"] == nil, "whether the account exists is not told")
                    let eventID = try #require(inEvent["event_id"] as? String)
                    #expect(UUID(uuidString: eventID) != nil && eventID == eventID.lowercased())
                    eventIDs.insert(eventID)
                    #expect(!String(describing: answer).contains("newPassword"))
                }
                #expect(eventIDs.count == 2, "an id per frame")
            }
        }
    }

    @Test("customers are identified by email: an account's phone with its right password is an unknown customer", arguments: TestEngine.once)
    func login_withPhone_isUnknownCustomer(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            try await app.registerPhoneAccount(email: "fpi@bk.ru", extra: [("login", "ivan.petrov")], confirmingEmail: true)
            try await withConnection(app) { connection in
                // "@login" and "@phone" contain an "@" but are no email (found by the WebSocket fuzzer)
                for identifier in ["+79123456789", "@ivan.petrov", " @IVAN.PETROV ", "@+79123456789"] {
                    try await connection.send(Self.login(identifier, "secret-91!", sequence: "by-\(identifier)"))
                    let answer = try await connection.receive()
                    #expect(answer["type"] as? String == "CUSTOMER_ERROR", "\(identifier)")
                    #expect((answer["data"] as? [String: Any])?["error_code"] as? String == "customer.notFound", "\(identifier)")
                }
                try await connection.send(Self.login("fpi@bk.ru", "secret-91!", sequence: "by-email"))
                #expect(try await connection.receive()["type"] as? String == "CUSTOMER_API_TOKEN")
            }
        }
    }

    @Test("every kind of bad input gets a CUSTOMER_ERROR with its code, and the connection stays usable", arguments: TestEngine.once)
    func badInput_isAnsweredAndTheConnectionSurvives(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            try await app.registerPhoneAccount(email: "fpi@bk.ru", confirmingEmail: true)
            let close = try await withConnection(app) { connection in
                let cases: [(String, String, String)] = [
                    ("{not json", API.ErrorCode.malformedJSON, ""),
                    ("[1,2,3]", API.ErrorCode.malformedJSON, ""),
                    (#"{"sequence_id":"s1","data":{}}"#, API.ErrorCode.missingType, "s1"),
                    (#"{"type":"","sequence_id":"s2"}"#, API.ErrorCode.missingType, "s2"),
                    (#"{"type":42,"sequence_id":"s3"}"#, API.ErrorCode.missingType, "s3"),
                    (#"{"type":"LOGOUT_CUSTOMER","sequence_id":"s4","data":{}}"#, API.ErrorCode.unknownType, "s4"),
                    (#"{"type":"LOGIN_CUSTOMER","sequence_id":"s5"}"#, API.ErrorCode.invalidData, "s5"),
                    (#"{"type":"LOGIN_CUSTOMER","sequence_id":"s6","data":{"email":"fpi@bk.ru"}}"#, API.ErrorCode.invalidData, "s6"),
                    (#"{"type":"LOGIN_CUSTOMER","sequence_id":"s7","data":{"email":5,"password":true}}"#, API.ErrorCode.invalidData, "s7"),
                    (#"{"type":"LOGIN_CUSTOMER","sequence_id":"s8","data":"x"}"#, API.ErrorCode.invalidData, "s8"),
                    (#"{"type":"LOGIN_CUSTOMER","sequence_id":17,"data":{}}"#, API.ErrorCode.invalidSequenceID, ""),
                ]
                for (frame, code, sequence) in cases {
                    try await connection.send(frame)
                    let answer = try await connection.receive()
                    #expect(answer["type"] as? String == "CUSTOMER_ERROR", "\(frame)")
                    #expect(answer["sequence_id"] as? String == sequence, "\(frame)")
                    let data = answer["data"] as? [String: Any]
                    #expect(data?["error_code"] as? String == code, "\(frame)")
                    #expect((data?["error_description"] as? String)?.isEmpty == false)
                }
                try await connection.outbound.write(.binary(ByteBuffer(bytes: [0, 1, 2, 3])))
                let binary = try await connection.receive()
                #expect((binary["data"] as? [String: Any])?["error_code"] as? String == API.ErrorCode.binaryNotSupported)
                #expect(binary["sequence_id"] as? String == "")
                // still usable
                try await connection.send(Self.login("fpi@bk.ru", "secret-91!", sequence: "after"))
                let ok = try await connection.receive()
                #expect(ok["type"] as? String == "CUSTOMER_API_TOKEN" && ok["sequence_id"] as? String == "after")
            }
            #expect(close?.closeCode == .normalClosure)
        }
    }

    @Test("a frame over the size limit closes the connection with 1009", arguments: TestEngine.once)
    func oversizedFrame_closesWith1009(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.gateway.maxFrameBytes = 1024 }) { app in
            let close = try await withConnection(app) { connection in
                try await connection.send(Self.login("a@b.cd", String(repeating: "x", count: 4096), sequence: "big"))
                _ = try? await connection.iterator.next()
            }
            #expect(close?.closeCode == .messageTooLarge)
        }
    }

    @Test("100 concurrent logins on one connection are answered by sequence_id", .tags(.engine), arguments: TestEngine.all)
    func concurrentLogins_areMatchedBySequenceID(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.gateway.failuresPerConnection = 1000; $0.limits.loginFailuresPerAccount = 1000 }) { app in
            try await app.registerPhoneAccount(email: "many@example.com", confirmingEmail: true)
            try await withConnection(app) { connection in
                var expected: [String: String] = [:]
                for i in 0..<100 {
                    let sequence = UUID().uuidString.lowercased()
                    let good = i % 3 != 0
                    expected[sequence] = good ? "CUSTOMER_API_TOKEN" : "CUSTOMER_ERROR"
                    try await connection.send(Self.login("many@example.com", good ? "secret-91!" : "wrong-1!", sequence: sequence))
                }
                var answered: [String: String] = [:]
                for _ in 0..<100 {
                    let answer = try await connection.receive()
                    let sequence = try #require(answer["sequence_id"] as? String)
                    #expect(answered[sequence] == nil, "answered twice")
                    answered[sequence] = answer["type"] as? String
                }
                #expect(answered == expected)
            }
        }
    }

    @Test("failed logins are throttled per connection", arguments: TestEngine.once)
    func failures_areThrottledPerConnection(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.gateway.failuresPerConnection = 3 }) { app in
            try await app.registerPhoneAccount(email: "t@example.com", confirmingEmail: true)
            try await withConnection(app) { connection in
                for i in 0..<3 {
                    try await connection.send(Self.login("t@example.com", "wrong-1!", sequence: "f\(i)"))
                    #expect((try await connection.receive()["data"] as? [String: Any])?["error_code"] as? String == "customer.notFound")
                }
                try await connection.send(Self.login("t@example.com", "secret-91!", sequence: "right"))
                let blocked = try await connection.receive()
                #expect((blocked["data"] as? [String: Any])?["error_code"] as? String == API.ErrorCode.tooManyAttempts)
            }
            // a new connection (same account, under the account limit) works
            try await withConnection(app) { connection in
                try await connection.send(Self.login("t@example.com", "secret-91!", sequence: "fresh"))
                #expect(try await connection.receive()["type"] as? String == "CUSTOMER_API_TOKEN")
            }
        }
    }

    @Test("an idle connection is closed with 1001", arguments: TestEngine.once)
    func idleConnection_isClosed(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.gateway.idleTimeout = .milliseconds(300) }) { app in
            let close = try await withConnection(app) { connection in
                // wait for the server to end the connection (no sleeping on our side)
                while (try? await connection.iterator.next()) != nil {}
            }
            #expect(close?.closeCode == .goingAway)
        }
    }

    @Test("connections beyond the limit are refused with 1013", arguments: TestEngine.once)
    func overConnectionLimit_isRefused(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.gateway.maxConnections = 1 }) { app in
            try await withConnection(app) { _ in
                let second = try await withConnection(app) { connection in
                    while (try? await connection.iterator.next()) != nil {}
                }
                #expect(second?.closeCode == .unknown(1013))
            }
        }
    }
}

final class TokenBox: @unchecked Sendable {
    var token: String?
}

@Suite("Failed-login limits under concurrency")
struct ConcurrentThrottlingTests {
    @Test("40 concurrent wrong passwords on one connection: no more than the limit are ever checked", .tags(.engine), arguments: TestEngine.all)
    func gateway_concurrentGuesses_stayWithinTheLimit(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.gateway.failuresPerConnection = 10; $0.limits.loginFailuresPerAccount = 1000 }) { app in
            try await app.registerPhoneAccount(email: "fpi@bk.ru", confirmingEmail: true)
            try await app.client.ws(CustomerGatewayAPI.path) { inbound, outbound, _ in
                for i in 0..<40 {
                    try await outbound.write(.text(CustomerGatewayConformanceTests.login("fpi@bk.ru", "wrong-1!", sequence: "r\(i)")))
                }
                var codes: [String: Int] = [:]
                var iterator = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
                for _ in 0..<40 {
                    guard case .text(let text)? = try await iterator.next() else { break }
                    let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
                    let code = (object?["data"] as? [String: Any])?["error_code"] as? String ?? "?"
                    codes[code, default: 0] += 1
                }
                #expect(codes["customer.notFound"] == 10, "\(codes)")
                #expect(codes[CustomerGatewayAPI.ErrorCode.tooManyAttempts] == 30, "\(codes)")
            }
        }
    }

    @Test("30 concurrent wrong passwords on REST: no more than the account limit are checked", .tags(.engine), arguments: TestEngine.all)
    func rest_concurrentGuesses_stayWithinTheLimit(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.limits.loginFailuresPerAccount = 10 }) { app in
            try await app.registerPhoneAccount()
            // 30 clients at once, each on its own connection
            let body = FormURLEncoding.encode([("login", "+79123456789"), ("password", "wrong-1!")])
            let statuses = try await Crowd.post(port: try #require(app.client.port), path: PhoneAccountsAPI.Path.login,
                                                bodies: Array(repeating: body, count: 30), contentType: "application/x-www-form-urlencoded").map(\.status)
            #expect(statuses.filter { $0 == 400 }.count == 10)
            #expect(statuses.filter { $0 == 429 }.count == 20)
        }
    }

    @Test("successful logins do not use up the failure budget", arguments: TestEngine.once)
    func successes_doNotCount(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.limits.loginFailuresPerAccount = 3 }) { app in
            try await app.registerPhoneAccount()
            for _ in 0..<6 { _ = try await app.login("+79123456789", "secret-91!") }
            #expect(try await app.postForm(PhoneAccountsAPI.Path.login, [("login", "+79123456789"), ("password", "wrong-1!")]).status == .badRequest)
        }
    }

    @Test("a long sequence_id is echoed whole", arguments: TestEngine.once)
    func longSequenceID_isEchoedWhole(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            let sequence = String(repeating: "q", count: 600)
            try await app.client.ws(CustomerGatewayAPI.path) { inbound, outbound, _ in
                try await outbound.write(.text(CustomerGatewayConformanceTests.login("nobody@example.com", "x", sequence: sequence)))
                var iterator = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
                guard case .text(let text)? = try await iterator.next() else { Issue.record("no answer"); return }
                let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
                #expect(object?["sequence_id"] as? String == sequence)
            }
        }
    }
}
