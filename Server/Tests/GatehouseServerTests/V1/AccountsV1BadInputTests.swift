import Foundation
import GatehouseAPI
import GatehouseServer
import GatehouseTestSupport
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// Bad input on `/v1` gets a precise problem document (docs/api-v1.md, Conventions), in the
/// client's language, never a crash, a 500 or a glimpse of the server's insides.
@Suite("/v1: bad input and problem documents")
struct AccountsV1BadInputTests {

    static func containsCyrillic(_ text: String) -> Bool {
        text.unicodeScalars.contains { (0x0400...0x04FF).contains($0.value) }
    }

    @Test("JSON that does not parse is 400 malformed_body, as a problem document", arguments: TestEngine.once)
    func malformedJSON_is400MalformedBody(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let bodies = [#"{"email": "#, "not json", #"{"email" "ann@example.com"}"#, #"{"email":"ann@example.com"}}"#, "[1,2]", #""ann@example.com""#, "null"]

            for body in bodies {
                // MUT
                let response = try await app.v1.post(V1.Accounts.signupCode.path, json: body)

                // validate: the problem's members, read raw
                try expectProblem(response, .badRequest, .malformedBody)
                let object = try response.jsonObject()
                #expect(object["type"] as? String == "urn:gatehouse:problem:malformed_body", "\(body)")
                #expect((object["status"] as? NSNumber)?.intValue == 400)
                #expect(object["title"] as? String == "Bad Request")
                #expect(object["code"] as? String == "malformed_body")
                #expect((object["detail"] as? String)?.isEmpty == false)
            }
            #expect(try await app.v1.messages(to: "ann@example.com").isEmpty)

            // on other routes too
            let session = try await app.v1.signedUp(email: "bob@example.com")
            try expectProblem(try await app.v1.post(V1.Sessions.login.path, json: #"{"identifier":"bob@example.com","#), .badRequest, .malformedBody)
            try expectProblem(try await app.v1.patch(V1.Accounts.me.path, json: #"{"firstName":"#, token: session.token), .badRequest, .malformedBody)
            try expectProblem(try await app.v1.post(V1.Accounts.changePassword.path, json: "{", token: session.token), .badRequest, .malformedBody)
        }
    }

    @Test("a member of the wrong type is 400 malformed_body naming the member", arguments: TestEngine.once)
    func memberOfWrongType_is400MalformedBodyWithField(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let session = try await app.v1.signedUp(email: "ann@example.com")
            let cases: [(HTTPRequest.Method, String, String, String)] = [
                (.post, V1.Accounts.signupCode.path, #"{"email":42}"#, "email"),
                (.post, V1.Accounts.signupCode.path, #"{"phone":["+79123456789"]}"#, "phone"),
                (.post, V1.Accounts.signup.path, #"{"email":"bob@example.com","code":123456,"password":"secret-91!"}"#, "code"),
                (.post, V1.Sessions.login.path, #"{"identifier":"ann@example.com","password":123}"#, "password"),
                (.post, V1.Sessions.login.path, #"{"identifier":"ann@example.com","password":"secret-91!","device":{"name":"x"}}"#, "device"),
                (.patch, V1.Accounts.me.path, #"{"firstName":["Ann"]}"#, "firstName"),
                (.patch, V1.Accounts.me.path, #"{"birthday":19900517}"#, "birthday"),
                (.post, V1.Accounts.changePassword.path, #"{"currentPassword":"secret-91!","newPassword":true}"#, "newPassword"),
            ]

            for (method, path, body, field) in cases {
                // MUT
                let response = try await app.v1.send(method, path, body: ByteBuffer(string: body), contentType: "application/json", token: session.token)

                // validate
                let problem = try expectProblem(response, .badRequest, .malformedBody)
                #expect(problem.field == field, "\(path) \(body): \(response.text)")
            }
            #expect(try await app.v1.me(session.token).firstName == "Ann")
        }
    }

    @Test("unknown members are ignored; a missing Content-Type is read as JSON", arguments: TestEngine.once)
    func unknownMembersAndMissingContentType_areAccepted(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // MUT
            let extra = try await app.v1.post(V1.Accounts.signupCode.path, json: #"{"email":"ann@example.com","referrer":{"a":[1,2]},"utm":"x"}"#)
            let untyped = try await app.v1.post(V1.Accounts.signupCode.path, body: ByteBuffer(string: #"{"email":"bob@example.com"}"#), contentType: nil)
            let charset = try await app.v1.post(V1.Accounts.signupCode.path, body: ByteBuffer(string: #"{"email":"cy@example.com"}"#), contentType: "application/json; charset=utf-8")

            // validate
            #expect(extra.status == .accepted, "\(extra.text)")
            #expect(untyped.status == .accepted, "\(untyped.text)")
            #expect(charset.status == .accepted, "\(charset.text)")
            for address in ["ann@example.com", "bob@example.com", "cy@example.com"] {
                #expect(try await app.v1.messages(to: address).count == 1, "\(address)")
            }
        }
    }

    @Test("a body that is not JSON is 415 unsupported_media_type and nothing is sent", arguments: TestEngine.once)
    func nonJSONContentType_is415(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let cases: [(String, String)] = [
                ("application/x-www-form-urlencoded", "email=ann%40example.com"),
                ("text/plain", #"{"email":"ann@example.com"}"#),
                ("multipart/form-data; boundary=xyz", "--xyz\r\nContent-Disposition: form-data; name=\"email\"\r\n\r\nann@example.com\r\n--xyz--\r\n"),
                ("application/xml", "<email>ann@example.com</email>"),
            ]

            for (type, body) in cases {
                // MUT
                let response = try await app.v1.post(V1.Accounts.signupCode.path, body: ByteBuffer(string: body), contentType: type)

                // validate
                try expectProblem(response, .unsupportedMediaType, .unsupportedMediaType)
            }
            #expect(try await app.v1.messages(to: "ann@example.com").isEmpty)
            let login = try await app.v1.post(V1.Sessions.login.path, body: ByteBuffer(string: "identifier=ann&password=x"), contentType: "application/x-www-form-urlencoded")
            try expectProblem(login, .unsupportedMediaType, .unsupportedMediaType)
        }
    }

    @Test("a body over GATEHOUSE_MAX_BODY_BYTES is 413 body_too_large", arguments: TestEngine.once)
    func oversizedBody_is413BodyTooLarge(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.limits.maxBodyBytes = 2_048 }) { app in
            // setup
            let padding = String(repeating: "x", count: 4_000)

            // MUT
            let response = try await app.v1.post(V1.Accounts.signupCode.path, json: #"{"email":"ann@example.com","padding":"\#(padding)"}"#)

            // validate
            try expectProblem(response, .contentTooLarge, .bodyTooLarge)
            #expect(try await app.v1.messages(to: "ann@example.com").isEmpty)
            // under the limit the same request (unknown member and all) goes through
            let small = try await app.v1.post(V1.Accounts.signupCode.path, json: #"{"email":"ann@example.com","padding":"\#(padding.prefix(1_500))"}"#)
            #expect(small.status == .accepted, "\(small.text)")
        }
    }

    @Test("an unknown /v1 path is 404 not_found as application/problem+json", arguments: TestEngine.once)
    func unknownV1Path_is404ProblemJSON(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            for path in ["/v1/nothing-here", "/v1/signup/code/extra", "/v1/tags", "/v1/avatars"] {
                // MUT
                let response = try await app.v1.get(path)

                // validate
                try expectProblem(response, .notFound, .notFound)
            }
            let post = try await app.v1.post("/v1/unknown", json: "{}")
            try expectProblem(post, .notFound, .notFound)
        }
    }

    @Test("a known path with another method is 405 with Allow, on /v1 as a problem and on /api as HTTP", arguments: TestEngine.once)
    func knownPathWrongMethod_is405WithAllow(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // MUT
            let v1 = try await app.v1.put(V1.Accounts.me.path, body: Array("{}".utf8), contentType: "application/json")
            let api = try await app.client.execute(uri: PhoneAccountsAPI.Path.user, method: .delete)
            let session = try await app.v1.put("/v1/sessions/\(UUID().uuidString)", body: [], contentType: nil)

            // validate
            try expectProblem(v1, .methodNotAllowed, .methodNotAllowed)
            #expect(v1.headers[.allow] == "DELETE, GET, PATCH")
            #expect(api.status == .methodNotAllowed)
            #expect(api.headers[.allow] == "GET")
            try expectProblem(session, .methodNotAllowed, .methodNotAllowed)
            #expect(session.headers[.allow] == "DELETE")
        }
    }

    @Test("problem documents carry exactly the documented members", arguments: TestEngine.once)
    func problem_invalidCode_hasTheDocumentedMembers(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            try await app.v1.requestSignupCode(email: "ann@example.com")
            let code = try await app.v1.code(sentTo: "ann@example.com")

            // MUT
            let response = try await app.v1.post(V1.Accounts.signup.path, SignupRequest(email: "ann@example.com", code: code == "000000" ? "111111" : "000000", password: "secret-91!"))

            // validate: the contract's example, member for member
            try expectProblem(response, .badRequest, .invalidCode)
            let object = try response.jsonObject().filter { !($0.value is NSNull) }
            #expect(Set(object.keys) == ["type", "title", "status", "detail", "code", "attemptsLeft"], "\(response.text)")
            #expect(object["type"] as? String == "urn:gatehouse:problem:invalid_code")
            #expect((object["status"] as? NSNumber)?.intValue == 400)
            #expect(object["title"] as? String == "Bad Request")
            #expect((object["attemptsLeft"] as? NSNumber)?.intValue == 4)
        }
    }

    @Test("Accept-Language: ru gives a Russian detail; English is the default; the code never changes", arguments: TestEngine.once)
    func acceptLanguage_ru_givesRussianDetail(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let body = #"{"email":"not-an-email"}"#

            // MUT
            let plain = try await app.v1.post(V1.Accounts.signupCode.path, json: body)
            let english = try await app.v1.post(V1.Accounts.signupCode.path, json: body, headers: [.acceptLanguage: "en-GB,en;q=0.9"])
            let russian = try await app.v1.post(V1.Accounts.signupCode.path, json: body, headers: [.acceptLanguage: "ru"])
            let preferred = try await app.v1.post(V1.Accounts.signupCode.path, json: body, headers: [.acceptLanguage: "ru-RU,ru;q=0.9,en;q=0.8"])
            let unsupported = try await app.v1.post(V1.Accounts.signupCode.path, json: body, headers: [.acceptLanguage: "de-DE"])

            // validate
            let plainProblem = try expectProblem(plain, .badRequest, .invalidEmail)
            let englishProblem = try expectProblem(english, .badRequest, .invalidEmail)
            let russianProblem = try expectProblem(russian, .badRequest, .invalidEmail)
            let preferredProblem = try expectProblem(preferred, .badRequest, .invalidEmail)
            let unsupportedProblem = try expectProblem(unsupported, .badRequest, .invalidEmail)
            #expect(!Self.containsCyrillic(plainProblem.detail), "English by default: \(plainProblem.detail)")
            #expect(englishProblem.detail == plainProblem.detail)
            #expect(unsupportedProblem.detail == plainProblem.detail)
            #expect(Self.containsCyrillic(russianProblem.detail), "\(russianProblem.detail)")
            #expect(preferredProblem.detail == russianProblem.detail)
            // only the detail is translated: type, title and code stay
            #expect(russianProblem.title == "Bad Request")
            #expect(russianProblem.type == plainProblem.type)

            // other answers too: 401 and malformed_body
            let unauthorized = try await app.v1.get(V1.Accounts.me.path, headers: [.acceptLanguage: "ru"])
            #expect(Self.containsCyrillic(try expectProblem(unauthorized, .unauthorized, .unauthorized).detail))
            let malformed = try await app.v1.post(V1.Accounts.signupCode.path, json: "{", headers: [.acceptLanguage: "ru"])
            #expect(Self.containsCyrillic(try expectProblem(malformed, .badRequest, .malformedBody).detail))
            let notFound = try await app.v1.get("/v1/nothing-here", headers: [.acceptLanguage: "ru"])
            #expect(Self.containsCyrillic(try expectProblem(notFound, .notFound, .notFound).detail))
        }
    }

    @Test("hostile input is a 4xx problem that shows nothing of the server's insides", arguments: TestEngine.once)
    func hostileInput_neverLeaksInternals(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let session = try await app.v1.signedUp(email: "ann@example.com")
            let deep = String(repeating: "[", count: 2_000) + String(repeating: "]", count: 2_000)
            let cases: [(HTTPRequest.Method, String, ByteBuffer?, String?)] = [
                (.post, V1.Accounts.signupCode.path, ByteBuffer(string: #"{"email":"\u0000"}"#), "application/json"),
                (.post, V1.Accounts.signupCode.path, ByteBuffer(string: #"{"email":1e400}"#), "application/json"),
                (.post, V1.Accounts.signupCode.path, ByteBuffer(string: #"{"email":"a@example.com","phone":{"nested":[1,{"deep":null}]}}"#), "application/json"),
                (.post, V1.Accounts.signupCode.path, ByteBuffer(bytes: [0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x3A, 0x80, 0x7D]), "application/json"),
                (.post, V1.Accounts.signupCode.path, ByteBuffer(string: #"{"email":"#+deep+"}"), "application/json"),
                (.post, V1.Accounts.signup.path, ByteBuffer(string: #"{"email":"b@example.com","code":null,"password":null}"#), "application/json"),
                (.post, V1.Sessions.login.path, ByteBuffer(string: #"{"identifier":"' OR 1=1 --","password":"x"}"#), "application/json"),
                (.post, V1.Sessions.login.path, ByteBuffer(string: #"{"identifier":"\#(String(repeating: "a", count: 5_000))","password":"x"}"#), "application/json"),
                (.post, V1.Sessions.login.path, ByteBuffer(string: #"{}"#), "application/json"),
                (.get, V1Client.path(V1.Accounts.tag.path, ["tag": "'; DROP TABLE accounts; --"]), nil, nil),
                (.delete, V1Client.path(V1.Sessions.end.path, ["id": "'; DROP TABLE sessions; --"]), nil, nil),
                (.get, V1Client.path(V1.Accounts.avatarImage.path, ["id": "../../etc/passwd"]), nil, nil),
                (.patch, V1.Accounts.me.path, ByteBuffer(string: "null"), "application/json"),
                (.patch, V1.Accounts.me.path, ByteBuffer(string: #"{"birthday":"9999-99-99"}"#), "application/json"),
                (.post, V1.Accounts.verifyPhone.path, ByteBuffer(string: #"{"phone":"+7","code":"\u0000"}"#), "application/json"),
            ]
            let leaks = ["DecodingError", "Swift.", "codingPath", "debugDescription", "typeMismatch", "keyNotFound", "valueNotFound",
                         "dataCorrupted", "NSCocoaErrorDomain", "Error Domain", "Fluent", "SQLite", "sqlite", "Postgres", "PSQL",
                         "GatehouseError", "internal_error", "/Sources/", ".swift"]

            for (method, path, body, type) in cases {
                // MUT
                let response = try await app.v1.send(method, path, body: body, contentType: type, token: session.token)

                // validate
                #expect((400..<500).contains(response.status.code), "\(method) \(path): \(response.status.code) \(response.text)")
                #expect(response.mediaType == V1.problemContentType, "\(method) \(path)")
                #expect((try? response.decoded(as: Problem.self)) != nil, "\(method) \(path): \(response.text)")
                for leak in leaks {
                    #expect(!response.text.contains(leak), "\(method) \(path) leaks \"\(leak)\": \(response.text)")
                }
            }
            // and the server is still whole
            #expect(try await app.v1.me(session.token).email == "ann@example.com")
            _ = try await app.v1.login("ann@example.com", "secret-91!")
        }
    }
}
