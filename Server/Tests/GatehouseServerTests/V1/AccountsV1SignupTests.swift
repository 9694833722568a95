import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehouseServer
import GatehouseTestSupport
import HTTPTypes
import HummingbirdTesting
import NIOConcurrencyHelpers
import Testing

/// `POST /v1/signup/code`, `POST /v1/signup` and `GET /v1/tags/{tag}` at the wire level
/// (docs/api-v1.md), on every engine.
@Suite("/v1: sign-up, codes and tags")
struct AccountsV1SignupTests {

    // MARK: Code requests

    @Test("a sign-up code request by email answers 202 CodeSent with the code's lifetime, cooldown and rules", arguments: TestEngine.once)
    func signupCode_byEmail_is202WithCodeSent(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let now = app.clock.now

            // MUT: the address as typed, mixed case
            let response = try await app.v1.post(V1.Accounts.signupCode.path, json: #"{"email":"Ann@Example.com"}"#)

            // validate
            #expect(response.status == .accepted, "\(response.text)")
            #expect(response.mediaType == "application/json")
            let sent = try response.decoded(as: CodeSent.self)
            #expect(sent.channel == .email)
            #expect(sent.destination == "ann@example.com")
            #expect(sent.expiresAt == now.addingTimeInterval(600))
            #expect(sent.resendAvailableAt == now.addingTimeInterval(60))
            #expect(sent.attemptsAllowed == 5)
            #expect(sent.codeLength == 6)
            // ISO 8601 in UTC, whole seconds, as the contract writes instants
            #expect(response.text.contains(#""expiresAt":"2027-01-15T08:10:00Z""#), "\(response.text)")
            #expect(response.text.contains(#""resendAvailableAt":"2027-01-15T08:01:00Z""#), "\(response.text)")
            #expect(response.text.contains(#""channel":"email""#))

            let mail = try #require(try await app.v1.messages(to: "ann@example.com").first)
            #expect(mail.channel == "email")
            let code = try #require(mail.code)
            #expect(code.count == 6 && code.allSatisfy(\.isNumber))
            #expect(mail.body.contains(code))
        }
    }

    @Test("a sign-up code request by phone texts the code to the phone in E.164", arguments: TestEngine.once)
    func signupCode_byPhone_sendsSMSToE164(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // MUT
            let response = try await app.v1.post(V1.Accounts.signupCode.path, json: #"{"phone":"+7 912 345-67-89"}"#)

            // validate
            #expect(response.status == .accepted, "\(response.text)")
            let sent = try response.decoded(as: CodeSent.self)
            #expect(sent.channel == .sms)
            #expect(sent.destination == "+79123456789")
            #expect(sent.expiresAt == app.clock.now.addingTimeInterval(600))
            let sms = try #require(try await app.v1.messages(to: "+79123456789").first)
            #expect(sms.channel == "sms")
            let code = try #require(sms.code)
            #expect(sms.body.contains(code))
        }
    }

    @Test("CodeSent follows the configured code length, lifetime, cooldown and attempts", arguments: TestEngine.once)
    func signupCode_reflectsConfiguredLimits(engine: TestEngine) async throws {
        try await withApp(engine, configure: {
            $0.limits.codeLength = 8
            $0.limits.codeTTL = 300
            $0.limits.resendCooldown = 30
            $0.limits.codeMaxAttempts = 3
        }) { app in
            // MUT
            let sent = try await app.v1.requestSignupCode(email: "ann@example.com")

            // validate
            #expect(sent.codeLength == 8)
            #expect(sent.attemptsAllowed == 3)
            #expect(sent.expiresAt == app.clock.now.addingTimeInterval(300))
            #expect(sent.resendAvailableAt == app.clock.now.addingTimeInterval(30))
            let code = try await app.v1.code(sentTo: "ann@example.com")
            #expect(code.count == 8)
        }
    }

    // MARK: Sign-up

    @Test("sign-up by email: 201 with a working session and an account whose email is confirmed", arguments: TestEngine.once)
    func signup_byEmail_is201WithWorkingSessionAndConfirmedEmail(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            try await app.v1.requestSignupCode(email: "ann@example.com")
            let code = try await app.v1.code(sentTo: "ann@example.com")
            let now = app.clock.now

            // MUT
            let response = try await app.v1.post(V1.Accounts.signup.path, json: """
                {"email":"Ann@Example.com","code":"\(code)","password":"secret-91!","firstName":"Ann","lastName":"Smith",\
                "tag":"Ann_1","birthday":"1990-05-17","locale":"en","device":"iPhone 15, iOS 18"}
                """)

            // validate
            #expect(response.status == .created, "\(response.text)")
            #expect(response.mediaType == "application/json")
            let session = try response.decoded(as: AuthSession.self)
            #expect(session.tokenType == "Bearer")
            #expect(!session.token.isEmpty)
            #expect(session.expiresAt == now.addingTimeInterval(app.configuration.limits.sessionTTL))
            let account = session.account
            #expect(account.email == "ann@example.com")
            #expect(account.emailConfirmed)
            #expect(account.pendingEmail == nil)
            #expect(account.phone == nil && !account.phoneVerified)
            #expect(account.tag == "ann_1")
            #expect(account.firstName == "Ann" && account.lastName == "Smith" && account.middleName == nil)
            #expect(account.birthday == "1990-05-17")
            #expect(account.locale == "en")
            #expect(account.avatarUrl == nil)
            #expect(account.createdAt == now)
            #expect(response.text.contains(#""birthday":"1990-05-17""#))

            // the session works and is the account's only one
            #expect(try await app.v1.me(session.token) == account)
            let sessions = try await app.v1.sessions(session.token)
            #expect(sessions.count == 1)
            #expect(sessions.first?.id == session.sessionId)
            #expect(sessions.first?.device == "iPhone 15, iOS 18")
            #expect(sessions.first?.current == true)
            // and the password logs in
            _ = try await app.v1.login("ann@example.com", "secret-91!")
        }
    }

    @Test("sign-up by phone: the account starts with a verified phone", arguments: TestEngine.once)
    func signup_byPhone_is201WithVerifiedPhone(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            try await app.v1.requestSignupCode(phone: "+79123456789")
            let code = try await app.v1.code(sentTo: "+79123456789")

            // MUT: the phone as typed in another format
            let response = try await app.v1.post(V1.Accounts.signup.path, json: #"{"phone":"8 912 345 67 89","code":"\#(code)","password":"secret-91!","tag":"ivan"}"#)

            // validate
            #expect(response.status == .created, "\(response.text)")
            let session = try response.decoded(as: AuthSession.self)
            #expect(session.account.phone == "+79123456789")
            #expect(session.account.phoneVerified)
            #expect(session.account.email == nil && !session.account.emailConfirmed)
            #expect(try await app.v1.me(session.token).phone == "+79123456789")
        }
    }

    @Test("a code expires after its lifetime (10 minutes), and works until then", arguments: TestEngine.once)
    func signup_afterCodeLifetime_isCodeExpired(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup: two codes asked for at the same instant
            try await app.v1.requestSignupCode(email: "early@example.com")
            try await app.v1.requestSignupCode(email: "late@example.com")
            let early = try await app.v1.code(sentTo: "early@example.com")
            let late = try await app.v1.code(sentTo: "late@example.com")

            // MUT + validate: one second before the end it works
            app.clock.advance(by: 599)
            let inTime = try await app.v1.post(V1.Accounts.signup.path, SignupRequest(email: "early@example.com", code: early, password: "secret-91!"))
            #expect(inTime.status == .created, "\(inTime.text)")

            // one second after, it is expired
            app.clock.advance(by: 2)
            let tooLate = try await app.v1.post(V1.Accounts.signup.path, SignupRequest(email: "late@example.com", code: late, password: "secret-91!"))
            try expectProblem(tooLate, .badRequest, .codeExpired)
        }
    }

    @Test("wrong codes count down attemptsLeft until the code dies, even for the right code", arguments: TestEngine.once)
    func signup_withWrongCode_isRejectedAndCountsAnAttempt(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let sent = try await app.v1.requestSignupCode(email: "ann@example.com")
            let code = try await app.v1.code(sentTo: "ann@example.com")
            let wrong = code == "000000" ? "111111" : "000000"

            // MUT + validate
            for attempt in 1..<sent.attemptsAllowed {
                let response = try await app.v1.post(V1.Accounts.signup.path, SignupRequest(email: "ann@example.com", code: wrong, password: "secret-91!"))
                let problem = try expectProblem(response, .badRequest, .invalidCode)
                #expect(problem.attemptsLeft == sent.attemptsAllowed - attempt, "attempt \(attempt): \(response.text)")
                #expect(response.text.contains(#""attemptsLeft":\#(sent.attemptsAllowed - attempt)"#))
            }
            let last = try await app.v1.post(V1.Accounts.signup.path, SignupRequest(email: "ann@example.com", code: wrong, password: "secret-91!"))
            try expectProblem(last, .badRequest, .codeAttemptsExhausted)
            let right = try await app.v1.post(V1.Accounts.signup.path, SignupRequest(email: "ann@example.com", code: code, password: "secret-91!"))
            try expectProblem(right, .badRequest, .codeAttemptsExhausted)
            #expect(try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "ann@example.com", password: "secret-91!")).status == .badRequest)
        }
    }

    @Test("a new code no sooner than the 60 s cooldown: 429 resend_too_soon with Retry-After", arguments: TestEngine.once)
    func signupCode_withinCooldown_is429ResendTooSoon(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            try await app.v1.requestSignupCode(email: "ann@example.com")
            app.clock.advance(by: 20)

            // MUT
            let early = try await app.v1.post(V1.Accounts.signupCode.path, CodeRequest(email: "ann@example.com"))

            // validate
            let problem = try expectProblem(early, .tooManyRequests, .resendTooSoon)
            #expect(early.headers[.retryAfter] == "40")
            #expect(problem.retryAfter == 40)
            #expect(try await app.v1.messages(to: "ann@example.com").count == 1)
            app.clock.advance(by: 40)
            let again = try await app.v1.requestSignupCode(email: "ann@example.com")
            #expect(again.resendAvailableAt == app.clock.now.addingTimeInterval(60))
            #expect(try await app.v1.messages(to: "ann@example.com").count == 2)
        }
    }

    // MARK: Addresses that already have an account

    @Test("a code request for a taken email answers the same 202 and mails a notice instead of a code", arguments: TestEngine.once)
    func signupCode_forTakenEmail_answersTheSameAndSendsANotice(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let existing = try await app.v1.signedUp(email: "taken@example.com", tag: "taken")
            let before = try await app.v1.messages(to: "taken@example.com").count
            app.clock.advance(by: 61)
            let free = try await app.v1.post(V1.Accounts.signupCode.path, json: #"{"email":"free@example.com"}"#)

            // MUT: same instant, an address with an account
            let taken = try await app.v1.post(V1.Accounts.signupCode.path, json: #"{"email":"Taken@Example.com"}"#)

            // validate: indistinguishable from the free address but for the destination
            #expect(free.status == .accepted)
            #expect(taken.status == .accepted, "\(taken.text)")
            #expect(taken.headers[.contentType] == free.headers[.contentType])
            #expect(taken.text.replacingOccurrences(of: "taken@example.com", with: "free@example.com") == free.text)
            let messages = try await app.v1.messages(to: "taken@example.com")
            #expect(messages.count == before + 1)
            let notice = try #require(messages.first)
            #expect(notice.channel == "email")
            #expect(notice.code == nil, "a notice, not a code: \(notice.body)")
            #expect(notice.body.lowercased().contains("already"), "\(notice.body)")

            // a guessed code does not create a second account nor touch the first
            for guess in ["000000", "123456"] {
                let response = try await app.v1.post(V1.Accounts.signup.path, SignupRequest(email: "taken@example.com", code: guess, password: "other1!pw"))
                #expect(response.status == .badRequest || response.status == .conflict, "\(response.text)")
                #expect(response.mediaType == V1.problemContentType)
            }
            #expect(try await app.v1.me(existing.token).email == "taken@example.com")
            _ = try await app.v1.login("taken@example.com", "secret-91!")
            #expect(try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "taken@example.com", password: "other1!pw")).status == .badRequest)
        }
    }

    @Test("a code request for a taken phone answers the same 202 and texts a notice instead of a code", arguments: TestEngine.once)
    func signupCode_forTakenPhone_answersTheSameAndTextsANotice(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            _ = try await app.v1.signedUp(phone: "+79123456789")
            app.clock.advance(by: 61)
            let free = try await app.v1.post(V1.Accounts.signupCode.path, json: #"{"phone":"+79000000001"}"#)

            // MUT
            let taken = try await app.v1.post(V1.Accounts.signupCode.path, json: #"{"phone":"+79123456789"}"#)

            // validate
            #expect(taken.status == .accepted, "\(taken.text)")
            #expect(taken.text.replacingOccurrences(of: "+79123456789", with: "+79000000001") == free.text)
            let notice = try #require(try await app.v1.messages(to: "+79123456789").first)
            #expect(notice.channel == "sms")
            #expect(notice.code == nil, "a notice, not a code: \(notice.body)")
        }
    }

    // MARK: Tags

    @Test("tags break the rule: too short, too long, bad characters, no letter → 400 invalid_tag", arguments: TestEngine.once)
    func signup_withBadTag_isInvalidTag(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            try await app.v1.requestSignupCode(email: "ann@example.com")
            let code = try await app.v1.code(sentTo: "ann@example.com")
            let bad = ["ab", "@ab", String(repeating: "a", count: 33), "ann-smith", "ann smith", "ann!", "анна", "12345", "_._", "1.2_3"]

            for tag in bad {
                // MUT
                let response = try await app.v1.post(V1.Accounts.signup.path, SignupRequest(email: "ann@example.com", code: code, password: "secret-91!", tag: tag))

                // validate
                let problem = try expectProblem(response, .badRequest, .invalidTag)
                #expect(problem.field == "tag", "\(tag): \(response.text)")
            }
        }
    }

    @Test("a tag is stored lower-case without its leading @; 32 characters are fine", arguments: TestEngine.once)
    func signup_withCapitalsAndAt_storesNormalisedTag(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // MUT
            let first = try await app.v1.signedUp(email: "ann@example.com", tag: "@Ann.Smith_1")
            let longest = String(repeating: "b", count: 32)
            let second = try await app.v1.signedUp(email: "bob@example.com", tag: longest.uppercased())
            let shortest = try await app.v1.signedUp(email: "cy@example.com", tag: "c3p")

            // validate
            #expect(first.account.tag == "ann.smith_1")
            #expect(second.account.tag == longest)
            #expect(shortest.account.tag == "c3p")
            #expect(try await app.v1.me(first.token).tag == "ann.smith_1")
        }
    }

    @Test("tags are unique case-insensitively: 409 tag_taken", arguments: TestEngine.once)
    func signup_withTagTakenInAnotherCase_is409TagTaken(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            _ = try await app.v1.signedUp(email: "ann@example.com", tag: "ann")
            try await app.v1.requestSignupCode(email: "other@example.com")
            let code = try await app.v1.code(sentTo: "other@example.com")

            // MUT
            let response = try await app.v1.post(V1.Accounts.signup.path, SignupRequest(email: "other@example.com", code: code, password: "secret-91!", tag: "@ANN"))

            // validate
            let problem = try expectProblem(response, .conflict, .tagTaken)
            #expect(problem.field == "tag")
            let retry = try await app.v1.post(V1.Accounts.signup.path, SignupRequest(email: "other@example.com", code: code, password: "secret-91!", tag: "ann2"))
            #expect(retry.status == .created, "a taken tag does not burn the code: \(retry.text)")
        }
    }

    @Test("GET /v1/tags/{tag} answers free, taken (in any case) and invalid", arguments: TestEngine.once)
    func tagAvailability_answersFreeTakenAndInvalid(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            _ = try await app.v1.signedUp(email: "ann@example.com", tag: "ann")
            func tagPath(_ tag: String) -> String { V1Client.path(V1.Accounts.tag.path, ["tag": tag]) }

            // MUT + validate: free
            let free = try await app.v1.get(tagPath("bob"))
            #expect(free.status == .ok, "\(free.text)")
            #expect(free.mediaType == "application/json")
            #expect(try free.decoded(as: TagAvailability.self) == TagAvailability(tag: "bob", available: true))
            #expect(free.text == #"{"available":true,"tag":"bob"}"#)

            // taken, asked in capitals and with @
            for asked in ["ann", "ANN", "@Ann"] {
                let taken = try await app.v1.get(tagPath(asked))
                #expect(taken.status == .ok, "\(asked): \(taken.text)")
                #expect(try taken.decoded(as: TagAvailability.self) == TagAvailability(tag: "ann", available: false), "\(asked)")
            }

            // normalised in the answer
            let normalised = try await app.v1.get(tagPath("@Bob.Smith"))
            #expect(try normalised.decoded(as: TagAvailability.self) == TagAvailability(tag: "bob.smith", available: true))

            // invalid
            for bad in ["ab", "12345", "ann-smith", String(repeating: "x", count: 33), "анна"] {
                try expectProblem(try await app.v1.get(tagPath(bad)), .badRequest, .invalidTag)
            }
        }
    }

    // MARK: Other fields

    @Test("a weak password is refused with weak_password, naming the member", arguments: TestEngine.once)
    func signup_withWeakPassword_isWeakPassword(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            try await app.v1.requestSignupCode(email: "ann@example.com")
            let code = try await app.v1.code(sentTo: "ann@example.com")

            for weak in ["a1!", "abcdefg!", "abcdefg1"] {
                // MUT
                let response = try await app.v1.post(V1.Accounts.signup.path, SignupRequest(email: "ann@example.com", code: code, password: weak))

                // validate
                let problem = try expectProblem(response, .badRequest, .weakPassword)
                #expect(problem.field == "password", "\(weak): \(response.text)")
            }
            #expect(try await app.v1.post(V1.Accounts.signup.path, SignupRequest(email: "ann@example.com", code: code, password: "secret-91!")).status == .created)
        }
    }

    @Test("neither email nor phone is missing_parameter", arguments: TestEngine.once)
    func signupAndCode_withoutEmailOrPhone_isMissingParameter(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // MUT
            let codeRequest = try await app.v1.post(V1.Accounts.signupCode.path, json: "{}")
            let nulls = try await app.v1.post(V1.Accounts.signupCode.path, json: #"{"email":null,"phone":null}"#)
            let signup = try await app.v1.post(V1.Accounts.signup.path, json: #"{"code":"123456","password":"secret-91!"}"#)

            // validate
            try expectProblem(codeRequest, .badRequest, .missingParameter)
            try expectProblem(nulls, .badRequest, .missingParameter)
            try expectProblem(signup, .badRequest, .missingParameter)
        }
    }

    @Test("both email and phone is 400 and sends nothing", arguments: TestEngine.once)
    func signupAndCode_withEmailAndPhone_is400(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // MUT
            let codeRequest = try await app.v1.post(V1.Accounts.signupCode.path, json: #"{"email":"ann@example.com","phone":"+79123456789"}"#)
            let signup = try await app.v1.post(V1.Accounts.signup.path, json: #"{"email":"ann@example.com","phone":"+79123456789","code":"123456","password":"secret-91!"}"#)

            // validate
            try expectProblem(codeRequest, .badRequest, nil)
            try expectProblem(signup, .badRequest, nil)
            #expect(try await app.v1.messages(to: "ann@example.com").isEmpty)
            #expect(try await app.v1.messages(to: "+79123456789").isEmpty)
        }
    }

    @Test("a malformed email or phone is invalid_email / invalid_phone, naming the member", arguments: TestEngine.once)
    func signupCode_withMalformedAddress_isInvalid(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // MUT
            let email = try await app.v1.post(V1.Accounts.signupCode.path, CodeRequest(email: "not-an-email"))
            let phone = try await app.v1.post(V1.Accounts.signupCode.path, CodeRequest(phone: "12345"))

            // validate
            #expect(try expectProblem(email, .badRequest, .invalidEmail).field == "email")
            #expect(try expectProblem(phone, .badRequest, .invalidPhone).field == "phone")
        }
    }

    @Test("the 'you already have an account' notice speaks the owner's language, not the asker's", arguments: TestEngine.once)
    func accountExistsNotice_inOwnersLanguage(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup: a Russian-speaking owner
            _ = try await app.v1.signedUp(phone: "+79123456789", locale: "ru")
            app.clock.advance(by: 61)

            // MUT: a stranger asks in English
            let response = try await app.v1.post(V1.Accounts.signupCode.path, CodeRequest(phone: "+79123456789"), headers: [.acceptLanguage: "en"])

            // validate
            #expect(response.status == .accepted)
            let notice = try #require(try await app.v1.messages(to: "+79123456789").first)
            #expect(notice.code == nil)
            #expect(notice.body.contains("учётная запись") || notice.body.contains("уже есть"), "\(notice.body)")
        }
    }
}

@Suite("The first requests a newcomer makes")
struct FirstRequestsTests {
    @Test("GET / names the version and points to the document, its reference page, the console, the health checks and the APIs; /v1 without a slash is a problem like /v1/")
    func root_andBareV1() async throws {
        try await withApp(.sqlite) { app in
            let root = try await app.get("/")
            let object = try root.jsonObject()
            #expect(root.status == .ok && root.mediaType == "application/json")
            #expect(object["openapi"] as? String == "/openapi.json" && object["docs"] as? String == "/docs")
            #expect(object["health"] as? String == "/health" && object["live"] as? String == "/health/live")
            #expect(object["version"] as? String == GatehouseVersion.current && object["console"] as? String == "/console"
                    && object["operator"] as? String == "/operator")
            #expect(GatehouseVersion.current.wholeMatch(of: /\d+\.\d+\.\d+/) != nil)
            // The console's page is where the root says.
            #expect(try await app.get("/console").status != .notFound)
            for path in ["/v1", "/v1/"] {
                try expectProblem(try await app.get(path), .notFound, .notFound)
            }
        }
    }
}

@Suite("Injected randomness")
struct InjectedRandomnessTests {
    @Test("codes and session tokens come from the injected source: a test knows the code without reading the outbox", arguments: TestEngine.once)
    func knownCodesAndTokens(engine: TestEngine) async throws {
        let issued = NIOLockedValueBox(0)
        let random = GatehouseRandom(
            code: { length in String(String(repeating: "42", count: length).prefix(length)) },
            token: { issued.withLockedValue { $0 += 1; return "test-token-\($0)" } }
        )
        try await withApp(engine, random: random) { app in
            let sent = try await app.v1.requestSignupCode(email: "known@example.com")
            let code = String(String(repeating: "42", count: sent.codeLength).prefix(sent.codeLength))
            let response = try await app.v1.post(V1.Accounts.signup.path, SignupRequest(email: "known@example.com", code: code, password: "secret-91!"))
            #expect(response.status == .created, "\(response.text)")
            let session = try response.decoded(as: AuthSession.self)
            #expect(session.token.hasPrefix("test-token-"))
            #expect(try await app.v1.me(session.token).email == "known@example.com")
            #expect(try await app.v1.code(sentTo: "known@example.com") == code, "the mail carries the same code")
        }
    }
}
