import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import GatehouseServer
import GatehouseTestSupport
import HTTPTypes
import HummingbirdTesting
import HummingbirdWSTesting
import NIOCore
import Testing

/// Text never holds U+0000 (`InputText`): PostgreSQL's `text` cannot store it, so a login with it
/// once failed the statement and answered 500 on PostgreSQL while SQLite took it. The APIs' body
/// readers refuse it before a service runs, with a 400 in the surface's own format; an address and
/// the consoles' forms leave it out. Both engines answer alike.
@Suite("Text never holds U+0000: refused in the APIs' bodies, left out of query strings and console forms")
struct NULCharacterTests {
    @Test("the readers' rules: %00 in an address, the \\u0000 escape in JSON (not an escaped backslash), the character in any member")
    func rules() throws {
        #expect(InputText.hasNUL("a\u{0}b"))
        #expect(!InputText.hasNUL("a0b"))
        #expect(InputText.hasEncodedNUL("/v1/people?q=%00"))
        #expect(InputText.hasEncodedNUL("/admin/v1/clients/%00"))
        #expect(!InputText.hasEncodedNUL("/v1/people?q=%2500"))
        #expect(!InputText.hasEncodedNUL("/v1/people?q=%20%0A"))
        #expect(InputText.hasEscapedNUL(inJSON: Array(#"{"a":"x\u0000"}"#.utf8)))
        #expect(InputText.hasEscapedNUL(inJSON: Array(#"{"a":"\\\u0000"}"#.utf8)))
        #expect(!InputText.hasEscapedNUL(inJSON: Array(#"{"a":"\\u0000"}"#.utf8)))
        #expect(InputText.hasEscapedNUL(inJSON: Array(#"{"a":"\u0001\u00000"}"#.utf8)))
        #expect(!InputText.hasEscapedNUL(inJSON: Array(#"{"a":"\u0010"}"#.utf8)))
        let value = try JSONValue.parse(Array(#"{"a":"ok","b":{"c":[1,"x\u0000"]}}"#.utf8))
        #expect(InputText.memberWithNUL(value) == "b.c.1")
        #expect(InputText.memberWithNUL(try JSONValue.parse(Array(#"{"a":"ok"}"#.utf8))) == nil)
    }

    @Test("/v1: a problem document, 400 invalid_parameter naming the member, nested ones too", .tags(.engine), arguments: TestEngine.all)
    func v1(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            let login = try await app.v1.post(V1.Sessions.login.path, json: #"{"identifier":"ivan\u0000@example.com","password":"secret-91!"}"#)
            let code = try await app.v1.post(V1.Accounts.signupCode.path, json: #"{"email":"ivan@example.com\u0000"}"#)
            // An escaped backslash followed by "u0000" is text like any other.
            let text = try await app.v1.post(V1.Sessions.login.path, json: #"{"identifier":"ivan\\u0000@example.com","password":"secret-91!"}"#)

            let problem = try expectProblem(login, .badRequest, .invalidParameter)
            #expect(problem.field == "identifier" && problem.detail.contains("U+0000"))
            #expect(try expectProblem(code, .badRequest, .invalidParameter).field == "email")
            try expectProblem(text, .badRequest, .invalidCredentials)
        }
    }

    @Test("an address: %00 is left out of its query before any route reads it; in a path it is text the route's rule refuses", .tags(.engine), arguments: TestEngine.all)
    func address(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            let query = try await app.v1.get("/v1/tags/ann?x=%00&y=a%00b")
            let path = try await app.v1.get("/v1/tags/an%00n")
            #expect(query.status == .ok, "\(query.text)")
            #expect(try query.decoded(as: TagAvailability.self).tag == "ann")
            try expectProblem(path, .badRequest, .invalidTag)
        }
    }

    @Test("/api: plain text with X-Error-Code invalid_parameter, from a form, multipart or JSON body", .tags(.engine), arguments: TestEngine.all)
    func phoneAccounts(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            let path = PhoneAccountsAPI.Path.login
            let form = try await app.postForm(path, [("login", "ivan\u{0}"), ("password", "secret-91!")], headers: [.acceptLanguage: "en"])
            let multipart = try await app.postMultipart(path, [("login", "ivan"), ("password", "secret\u{0}-91!")])
            let json = try await app.v1.post(path, json: #"{"login":"\u0000","password":"secret-91!"}"#)
            let fine = try await app.postForm(path, [("login", "ivan"), ("password", "secret-91!")])

            for response in [form, multipart, json] {
                #expect(response.status == .badRequest, "\(response.status): \(response.text)")
                #expect(response.errorCode == GatehouseErrorCode.invalidParameter.rawValue)
                #expect(response.headers[.contentType]?.hasPrefix("text/plain") == true)
            }
            #expect(form.text.contains("\"login\"") && form.text.contains("U+0000"), "\(form.text)")
            #expect(fine.status == .badRequest && fine.errorCode == GatehouseErrorCode.invalidCredentials.rawValue)
        }
    }

    @Test("Sign To Login: {\"res\": \"10\"} with an error, from JSON or a form", .tags(.engine), arguments: TestEngine.all)
    func signToLogin(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            let json = try await app.v1.post(SignToLoginAPI.Path.login, json: #"{"apikey":"k\u0000","email":"a@b.example"}"#)
            let form = try await app.postForm(SignToLoginAPI.Path.login, [("apikey", "k"), ("email", "a\u{0}@b.example")])
            let fine = try await app.v1.post(SignToLoginAPI.Path.login, json: #"{"apikey":"k","email":"a@b.example"}"#)

            for response in [json, form] {
                #expect(response.status == .ok && response.text.hasPrefix(#"{"res":"10","error":"#), "\(response.text)")
            }
            #expect(fine.text.hasPrefix(#"{"res":"1","#), "\(fine.text)")
        }
    }

    @Test("the consoles: NUL is left out of a form's fields, and the page answers as for the value without it", .tags(.engine), arguments: TestEngine.all)
    func consoles(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            let console = try await app.postForm("/console/login", [("csrf", "t"), ("email", "a\u{0}@b.example"), ("password", "x")], headers: [.cookie: "gh_console_csrf=t"])
            let operatorLogin = try await app.postForm("/operator/login", [("csrf", "t"), ("name", "sam\u{0}"), ("password", "x")],
                                                       headers: [.cookie: "gh_operator_csrf=t"])

            // A sign-in with the address (or name) as typed without it: refused as any wrong one is, on its page.
            for response in [console, operatorLogin] {
                #expect((400..<500).contains(response.status.code) && response.text.contains("<!doctype html>"),
                        "\(response.status): \(response.text.prefix(300))")
                #expect(!response.text.contains("\u{0}"))
            }
        }
    }

    @Test("the WebSocket login gateway: an INVALID_DATA frame, the connection kept", .tags(.engine), arguments: TestEngine.all)
    func gateway(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            try await app.client.ws(CustomerGatewayAPI.path) { inbound, outbound, _ in
                var messages = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
                try await outbound.write(.text(#"{"type":"LOGIN_CUSTOMER","sequence_id":"1","data":{"email":"a\u0000@b.example","password":"x"}}"#))
                guard case .text(let refused)? = try await messages.next() else { Issue.record("no answer"); return }
                try await outbound.write(.text(#"{"type":"LOGIN_CUSTOMER","sequence_id":"2","data":{"email":"a@b.example","password":"x"}}"#))
                guard case .text(let wrong)? = try await messages.next() else { Issue.record("no second answer"); return }
                #expect(refused.contains(#""error_code":"\#(CustomerGatewayAPI.ErrorCode.invalidData)""#) && refused.contains("U+0000"), "\(refused)")
                #expect(wrong.contains(#""sequence_id":"2""#) && !wrong.contains("U+0000"), "\(wrong)")
            }
        }
    }
}
