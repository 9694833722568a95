import Foundation
import GatehouseAPI
import GatehouseServer
import GatehouseTestSupport
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// Bad input gets 400 with a precise text and code, never a crash or a half-written record.
@Suite("Phone accounts: bad input")
struct PhoneAccountsBadInputTests {
    typealias P = PhoneAccountsAPI.Path

    @Test("phones in every common format normalise to E.164; nonsense is refused", arguments: TestEngine.once)
    func sms_phoneFormats(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.limits.codeRequestsPerIP = 100 }) { app in
            for (typed, stored) in [("+7 912 345-67-81", "+79123456781"), ("89123456782", "+79123456782"), ("+79123456783", "+79123456783"), ("(912) 345-67-84", "+79123456784")] {
                #expect(try await app.postForm(P.sendSMS, [("phone", typed)]).status == .ok)
                #expect(try await app.outbox(to: stored).count == 1, "\(typed)")
            }
            for bad in ["12345", "+7 912 ABC", "phone", "+7912345678901234"] {
                let response = try await app.postForm(P.sendSMS, [("phone", bad)], headers: [.acceptLanguage: "en"])
                #expect(response.status == .badRequest, "\(bad)")
                #expect(response.errorCode == GatehouseErrorCode.invalidPhone.rawValue)
                #expect(response.text.contains("not a valid phone number"))
            }
            let missing = try await app.postForm(P.sendSMS, [])
            #expect(missing.status == .badRequest)
            #expect(missing.errorCode == GatehouseErrorCode.missingParameter.rawValue)
            #expect(missing.text == "Параметр «phone» обязателен.")   // Russian by default
        }
    }

    @Test("an existing phone cannot ask for a sign-up code", arguments: TestEngine.once)
    func sms_forRegisteredPhone_is400(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            try await app.registerPhoneAccount()
            app.clock.advance(by: 61)
            let response = try await app.postForm(P.sendSMS, [("phone", "8 912 345 67 89")])
            #expect(response.status == .badRequest)
            #expect(response.errorCode == GatehouseErrorCode.phoneTaken.rawValue)
        }
    }

    @Test("duplicate login and email are refused without creating anything", arguments: TestEngine.once)
    func register_duplicates_are400(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            try await app.registerPhoneAccount(email: "taken@example.com", extra: [("login", "Taken01")])
            _ = try await app.postForm(P.sendSMS, [("phone", "+79001112233")])
            let code = try await app.latestCode(to: "+79001112233")
            let byEmail = try await app.postForm(P.register, [("phone", "+79001112233"), ("code", code), ("password", "secret-91!"), ("email", "TAKEN@example.com")])
            #expect(byEmail.errorCode == GatehouseErrorCode.emailTaken.rawValue)
            let byLogin = try await app.postForm(P.register, [("phone", "+79001112233"), ("code", code), ("password", "secret-91!"), ("login", "taken01")])
            #expect(byLogin.errorCode == GatehouseErrorCode.loginTaken.rawValue)
            // the form mistakes did not burn the code
            let ok = try await app.postForm(P.register, [("phone", "+79001112233"), ("code", code), ("password", "secret-91!"), ("login", "fresh01")])
            #expect(ok.status == .ok)
            #expect(ok.text == #"{"login":"fresh01"}"#)
            _ = try await app.login("FRESH01", "secret-91!")
        }
    }

    @Test("weak passwords are refused with the rule that failed; a missing one is generated", arguments: TestEngine.once)
    func register_passwordRules(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            _ = try await app.postForm(P.sendSMS, [("phone", "+79123456789")])
            let code = try await app.latestCode(to: "+79123456789")
            for (password, fragment) in [("a1!", "at least 6"), ("abcdef!", "digit"), ("abcdef1", "special")] {
                let response = try await app.postForm(P.register, [("phone", "+79123456789"), ("code", code), ("password", password)], headers: [.acceptLanguage: "en-US,en;q=0.9"])
                #expect(response.status == .badRequest)
                #expect(response.errorCode == GatehouseErrorCode.weakPassword.rawValue)
                #expect(response.text.contains(fragment), "\(response.text)")
            }
            let generated = try await app.postForm(P.register, [("phone", "+79123456789"), ("code", code)])
            #expect(generated.status == .ok)
            let body = try JSONDecoder().decode(PhoneRegisterResponse.self, from: Data(buffer: generated.body))
            let password = try #require(body.password)
            _ = try await app.login("+79123456789", password)
        }
    }

    @Test("the password rule is configurable", arguments: TestEngine.once)
    func register_relaxedPasswordPolicy(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.passwords.requireSpecial = false; $0.passwords.minLength = 8 }) { app in
            _ = try await app.postForm(P.sendSMS, [("phone", "+79123456789")])
            let code = try await app.latestCode(to: "+79123456789")
            #expect(try await app.postForm(P.register, [("phone", "+79123456789"), ("code", code), ("password", "abc12")]).errorCode == "weak_password")
            #expect(try await app.postForm(P.register, [("phone", "+79123456789"), ("code", code), ("password", "gatehouse7")]).status == .ok)
        }
    }

    @Test("malformed dates, emails and logins are refused precisely", arguments: TestEngine.once)
    func register_malformedFields(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            _ = try await app.postForm(P.sendSMS, [("phone", "+79123456789")])
            let code = try await app.latestCode(to: "+79123456789")
            let base = [("phone", "+79123456789"), ("code", code), ("password", "secret-91!")]
            let cases: [((String, String), GatehouseErrorCode)] = [
                (("birthday", "31.02.2015 10:00:00"), .invalidDate),
                (("birthday", "yesterday"), .invalidDate),
                (("email", "not-an-email"), .invalidEmail),
                (("email", "a@b"), .invalidEmail),
                (("login", "abc"), .invalidLogin),
                (("login", "1234567"), .invalidLogin),
            ]
            for (field, expected) in cases {
                let response = try await app.postForm(P.register, base + [field], headers: [.acceptLanguage: "en"])
                #expect(response.status == .badRequest, "\(field)")
                #expect(response.errorCode == expected.rawValue, "\(field): \(response.text)")
                #expect(!response.text.isEmpty)
                if field.1 == "1234567" { #expect(response.text == "The login must contain at least one letter.") }
            }
            // every birthday format of the spec and its clients
            #expect(try await app.postForm(P.register, base).status == .ok)
            let token = try await app.login("+79123456789", "secret-91!")
            for (typed, shown) in [("2014-05-17T12:03:42", "17.05.2014 12:03:42"), ("2014-05-17T12:03:42Z", "17.05.2014 12:03:42"), ("22.01.2015", "22.01.2015 00:00:00"), ("2014-05-17T15:03:42+03:00", "17.05.2014 12:03:42")] {
                let change = try await app.postForm(P.change, [("birthday", typed)], token: token)
                #expect(change.status == .ok)
                #expect(try await app.user(token).birthday == shown, "\(typed)")
            }
        }
    }

    @Test("bodies over the size limit and fields over the length limit are refused", arguments: TestEngine.once)
    func oversizedInput_is400(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.limits.maxBodyBytes = 2048; $0.limits.maxFieldLength = 100 }) { app in
            let huge = try await app.postForm(P.sendSMS, [("phone", "+79123456789"), ("padding", String(repeating: "x", count: 4000))], headers: [.acceptLanguage: "en"])
            #expect(huge.status == .badRequest)
            #expect(huge.errorCode == GatehouseErrorCode.bodyTooLarge.rawValue)
            #expect(huge.text.contains("2048"))
            let long = try await app.postForm(P.sendSMS, [("phone", String(repeating: "9", count: 150))])
            #expect(long.status == .badRequest)
            #expect(long.errorCode == GatehouseErrorCode.fieldTooLong.rawValue)
            // and nothing was sent or written
            #expect(try await app.outbox(to: "+79123456789").isEmpty)
        }
    }

    @Test("malformed multipart and JSON bodies are 400, not 500", arguments: TestEngine.once)
    func malformedBodies_are400(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            let noBoundary = try await app.client.execute(uri: P.sendSMS, method: .post, headers: [.contentType: "multipart/form-data"], body: ByteBuffer(string: "garbage"))
            #expect(noBoundary.status == .badRequest)
            #expect(noBoundary.errorCode == GatehouseErrorCode.malformedBody.rawValue)
            let badJSON = try await app.client.execute(uri: P.sendSMS, method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(string: "{\"phone\": [1,"))
            #expect(badJSON.status == .badRequest)
            #expect(badJSON.errorCode == GatehouseErrorCode.malformedBody.rawValue)
            let json = try await app.client.execute(uri: P.sendSMS, method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(string: #"{"Phone": "+79123456789"}"#))
            #expect(json.status == .ok)
            let binary = try await app.client.execute(uri: P.sendSMS, method: .post, headers: [.contentType: "application/x-www-form-urlencoded"], body: ByteBuffer(bytes: [0xFF, 0xFE, 0x00, 0x80]))
            #expect(binary.status == .badRequest)
        }
    }

    @Test("hostile multipart bodies are 400 and the server keeps answering", arguments: TestEngine.once)
    func hostileMultipart_is400AndServerSurvives(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup: a part header with bytes above 0x7F (crashed MultipartKit 4.7.1), truncated
            // bodies, a missing close delimiter, non-UTF-8 values
            let bodies: [[UInt8]] = [
                Array("--B\r\n".utf8) + [0xF1, 0x8B, 0xB9, 0x95, 0xC3, 0xA2, 0xC3, 0x81] + Array("--B--\r\n".utf8),
                Array("--B\r\nContent-Disposition: form-data; name=\"phone\"\r\n\r\n+79123456789".utf8),
                Array("--B\r\nContent-Disposition: form-data; name=\"phone\"\r\n\r\n+79123456789\r\n--B".utf8),
                Array("--B\r\nContent-Disposition: form-data; name=\"phone\"\r\n\r\n".utf8) + [0xFF, 0xFE] + Array("\r\n--B--\r\n".utf8),
                Array("--B\r\nno colon here\r\n\r\nx\r\n--B--\r\n".utf8),
                Array("--B--\r\n".utf8),
            ]
            for body in bodies {
                // MUT
                let response = try await app.client.execute(uri: P.register, method: .post, headers: [.contentType: "multipart/form-data; boundary=B"], body: ByteBuffer(bytes: body))
                // validate
                #expect(response.status == .badRequest, "\(body)")
                #expect(response.errorCode == GatehouseErrorCode.malformedBody.rawValue || response.errorCode == GatehouseErrorCode.missingParameter.rawValue)
            }
            // a well-formed multipart form still works, file parts ignored
            let good = Array("--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\nignored\r\n--B\r\nContent-Disposition: form-data; name=\"phone\"\r\n\r\n+79123456789\r\n--B--\r\n".utf8)
            let response = try await app.client.execute(uri: P.sendSMS, method: .post, headers: [.contentType: "multipart/form-data; boundary=B"], body: ByteBuffer(bytes: good))
            #expect(response.status == .ok)
            #expect(try await app.outbox(to: "+79123456789").count == 1)
        }
    }

    @Test("parameters come from the query string too, names in any case", arguments: TestEngine.once)
    func parameters_fromQueryStringAnyCase(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            let response = try await app.client.execute(uri: P.sendSMS + "?PHONE=%2B79123456789", method: .post)
            #expect(response.status == .ok)
            #expect(try await app.outbox(to: "+79123456789").count == 1)
        }
    }

    @Test("/change updates only what is sent; the phone cannot change; empty email is refused", arguments: TestEngine.once)
    func change_partialUpdates(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            try await app.registerPhoneAccount()
            let token = try await app.login("+79123456789", "secret-91!")
            #expect(try await app.postForm(P.change, [("FirstName", "Пётр"), ("fcm", "fcm-token-1")], token: token).status == .ok)
            var user = try await app.user(token)
            #expect(user.firstName == "Пётр" && user.lastName == "Petrov" && user.fcm == "fcm-token-1")
            #expect(user.email == "ivan@example.com")
            let phone = try await app.postForm(P.change, [("phone", "+79990001122")], token: token)
            #expect(phone.status == .badRequest)
            #expect(phone.errorCode == GatehouseErrorCode.phoneChangeNotAllowed.rawValue)
            // sending the same phone back (a full form) is fine
            #expect(try await app.postForm(P.change, [("phone", "89123456789"), ("lastname", "Сидоров")], token: token).status == .ok)
            let empty = try await app.postForm(P.change, [("email", "")], token: token)
            #expect(empty.errorCode == GatehouseErrorCode.invalidEmail.rawValue)
            user = try await app.user(token)
            #expect(user.lastName == "Сидоров" && user.email == "ivan@example.com")
            #expect(try await app.postForm(P.change, [("lastname", "")], token: token).status == .ok)
            #expect(try await app.user(token).lastName == nil)
            #expect(try await app.postForm(P.change, [("name", "x")]).status == .unauthorized)
        }
    }

    @Test("an email another account uses cannot be taken with /change", arguments: TestEngine.once)
    func change_toTakenEmail_is400(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            try await app.registerPhoneAccount(phone: "+79000000001", email: "first@example.com")
            try await app.registerPhoneAccount(phone: "+79000000002", email: "second@example.com")
            let token = try await app.login("+79000000002", "secret-91!")
            let response = try await app.postForm(P.change, [("email", "First@Example.com")], token: token)
            #expect(response.status == .badRequest)
            #expect(response.errorCode == GatehouseErrorCode.emailTaken.rawValue)
        }
    }

    @Test("confirmation links: single use, unknown and account-id links refused", arguments: TestEngine.once)
    func confirm_linkStates(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            try await app.registerPhoneAccount(email: "e@example.com")
            let token = try await app.login("+79123456789", "secret-91!")
            try await app.postForm(P.sendConfirm, [], token: token)
            let link = try await app.latestConfirmationToken(to: "e@example.com")
            let first = try await app.postForm(P.confirm, [("id", link)], headers: [.acceptLanguage: "en"])
            #expect(first.text.contains("e@example.com is confirmed"))
            let second = try await app.get("\(P.confirm)?id=\(link)")
            #expect(second.status == .ok)
            #expect(second.text.contains("data-state=\"already\""))
            let secondPress = try await app.postForm(P.confirm, [("id", link)])
            #expect(secondPress.text.contains("data-state=\"already\""))
            let userID = try await app.user(token).id
            for bad in [userID.uuidString, "nonsense", "", String(repeating: "x", count: 300)] {   // overlong: still the page, not plain text
                for page in [try await app.get("\(P.confirm)?id=\(bad)"), try await app.postForm(P.confirm, [("id", bad)])] {
                    #expect(page.status == .badRequest)
                    #expect(page.text.contains("data-state=\"invalid\""))
                    #expect(page.text.contains("<html lang=\"ru\">"))
                }
            }
        }
    }

    @Test("a confirmation link expires", arguments: TestEngine.once)
    func confirm_afterLifetime_isInvalid(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            try await app.registerPhoneAccount(email: "e@example.com")
            let token = try await app.login("+79123456789", "secret-91!")
            try await app.postForm(P.sendConfirm, [], token: token)
            app.clock.advance(by: 86_401)
            #expect(try await app.confirmEmail("e@example.com").status == .badRequest)
        }
    }
}
