import Foundation
import GatehouseAPI
import GatehouseKit
import GatehouseTestSupport
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Runs `body` and returns the ``GatehouseClientError`` it threw (nil when it succeeded).
func clientError<T>(isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T) async -> GatehouseClientError? {
    do {
        _ = try await body()
        return nil
    } catch let error as GatehouseClientError {
        return error
    } catch {
        Issue.record("not a GatehouseClientError: \(error)")
        return nil
    }
}

/// A transport that answers from a closure and keeps every request it was given.
final class ScriptedTransport: HTTPTransport, @unchecked Sendable {
    private let lock = NSLock()
    private var sent: [URLRequest] = []
    private let answer: @Sendable (URLRequest) -> (status: Int, headers: [String: String], body: String)

    init(_ answer: @escaping @Sendable (URLRequest) -> (status: Int, headers: [String: String], body: String)) {
        self.answer = answer
    }

    var requests: [URLRequest] { lock.withLock { sent } }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        lock.withLock { sent.append(request) }
        let (status, headers, body) = answer(request)
        return (Data(body.utf8), HTTPURLResponse(url: request.url!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!)
    }
}

@Suite("GatehouseKit: the /v1 client against a live server")
struct AccountsClientLiveTests {
    // MARK: Sign-up

    @Test("signup_withEmailCode_storesTheSessionAndStartsConfirmed")
    func signup_withEmailCode_storesTheSessionAndStartsConfirmed() async throws {
        try await withLiveServer { server in
            // setup
            let store = InMemorySessionStore()
            let client = server.accountsClient(store: store)

            // MUT
            let sent = try await client.requestSignupCode(email: "ivan@example.com")
            let code = try await server.latestCodeV1(to: "ivan@example.com")
            let session = try await client.signup(SignupRequest(email: "ivan@example.com", code: code, password: "Secret-42!",
                                                                firstName: "Ivan", lastName: "Petrov", tag: "Ivan.P", locale: "en", device: "test"))

            // validate
            #expect(sent.channel == .email && sent.destination == "ivan@example.com")
            #expect(sent.codeLength == 6 && sent.attemptsAllowed == 5)
            #expect(abs(sent.expiresAt.timeIntervalSince(server.clock.now) - 600) <= 1)
            #expect(abs(sent.resendAvailableAt.timeIntervalSince(server.clock.now) - 60) <= 1)
            #expect(code.count == sent.codeLength)
            #expect(session.tokenType == "Bearer")
            #expect(try store.load() == GatehouseSession(token: session.token, expiresAt: session.expiresAt))
            #expect(session.account.email == "ivan@example.com" && session.account.emailConfirmed)
            #expect(session.account.tag == "ivan.p", "typed capitals are lower-cased")
            #expect(session.account.firstName == "Ivan" && session.account.lastName == "Petrov")
            #expect(client.session?.token == session.token)
            #expect(try await client.me() == session.account)
        }
    }

    @Test("signup_withWrongCode_isRejectedAndTellsTheAttemptsLeft")
    func signup_withWrongCode_isRejectedAndTellsTheAttemptsLeft() async throws {
        try await withLiveServer { server in
            // setup
            let store = InMemorySessionStore()
            let client = server.accountsClient(store: store)
            _ = try await client.requestSignupCode(email: "ivan@example.com")
            let code = try await server.latestCodeV1(to: "ivan@example.com")
            let wrong = code == "000000" ? "111111" : "000000"

            // MUT
            let error = await clientError {
                try await client.signup(SignupRequest(email: "ivan@example.com", code: wrong, password: "Secret-42!", firstName: "I", lastName: "P", tag: "ivan"))
            }

            // validate
            guard case .rejected(let errorCode, let message)? = error else { Issue.record("expected a refusal, got \(String(describing: error))"); return }
            #expect(errorCode == .invalidCode)
            #expect(!message.isEmpty)
            #expect(client.lastProblem?.code == .invalidCode)
            #expect(client.lastProblem?.attemptsLeft == 4)
            #expect(client.lastProblem?.status == 400)
            #expect(try store.load() == nil)
        }
    }

    @Test("requestSignupCode_againWithinTheCooldown_isRateLimitedWithRetryAfter")
    func requestSignupCode_againWithinTheCooldown_isRateLimitedWithRetryAfter() async throws {
        try await withLiveServer { server in
            // setup
            let client = server.accountsClient()
            _ = try await client.requestSignupCode(email: "ivan@example.com")

            // MUT
            let error = await clientError { try await client.requestSignupCode(email: "ivan@example.com") }

            // validate
            guard case .rateLimited(let code, let message, let retryAfter)? = error else { Issue.record("expected 429, got \(String(describing: error))"); return }
            #expect(code == .resendTooSoon || code == .rateLimited)
            #expect(!message.isEmpty)
            #expect(retryAfter == 60)
        }
    }

    @Test("requestSignupCode_withABadAddress_isRejectedWithTheServersMessageInTheClientsLanguage")
    func requestSignupCode_withABadAddress_isRejected() async throws {
        try await withLiveServer { server in
            // setup
            let english = server.accountsClient(language: "en")
            let russian = server.accountsClient(language: "ru")

            // MUT
            let en = await clientError { try await english.requestSignupCode(email: "ivan@") }
            let ru = await clientError { try await russian.requestSignupCode(email: "ivan@") }

            // validate
            #expect(en?.code == .invalidEmail && ru?.code == .invalidEmail)
            #expect(en?.message != ru?.message, "detail follows Accept-Language")
            #expect(ru?.message.unicodeScalars.contains { (0x0400...0x04FF).contains($0.value) } == true, "\(ru?.message ?? "")")
        }
    }

    // MARK: Tags

    @Test("tagAvailability_answersFreeTakenAndInvalid_withThePathEscaped")
    func tagAvailability_answersFreeTakenAndInvalid() async throws {
        try await withLiveServer { server in
            // setup
            try await server.makeV1Account(email: "ivan@example.com", tag: "ivan")
            let client = server.accountsClient()

            // MUT
            let taken = try await client.tagAvailability("@Ivan")
            let free = try await client.tagAvailability("free_one")
            let short = await clientError { try await client.tagAvailability("ab") }
            let odd = await clientError { try await client.tagAvailability("a b?c") }

            // validate
            #expect(taken == TagAvailability(tag: "ivan", available: false))
            #expect(free == TagAvailability(tag: "free_one", available: true))
            #expect(short?.code == .invalidTag)
            #expect(odd?.code == .invalidTag, "a space and a `?` travel escaped and reach the tag rule")
        }
    }

    // MARK: Sessions

    @Test("login_byEmailOrTag_storesTheSession")
    func login_byEmailOrTag_storesTheSession() async throws {
        try await withLiveServer { server in
            // setup
            let account = try await server.makeV1Account(email: "ivan@example.com", tag: "ivan")
            let byEmail = server.accountsClient()
            let byTag = server.accountsClient()

            // MUT
            let first = try await byEmail.login(identifier: "ivan@example.com", password: "Secret-42!", device: "laptop")
            let second = try await byTag.login(identifier: "ivan", password: "Secret-42!")

            // validate
            #expect(first.account.id == account.id && second.account.id == account.id)
            #expect(first.sessionId != second.sessionId)
            #expect(abs(first.expiresAt.timeIntervalSince(server.clock.now) - 86_400) < 2)
            #expect(byEmail.session?.token == first.token)
            #expect(try await byTag.me().id == account.id)
        }
    }

    @Test("login_withAWrongPassword_isInvalidCredentials_andLeavesAStoredSessionAlone")
    func login_withAWrongPassword_isInvalidCredentials() async throws {
        try await withLiveServer { server in
            // setup
            try await server.makeV1Account(email: "ivan@example.com", tag: "ivan")
            let store = InMemorySessionStore()
            let client = server.accountsClient(store: store)
            let session = try await client.login(identifier: "ivan", password: "Secret-42!")

            // MUT
            let wrong = await clientError { try await client.login(identifier: "ivan", password: "Wrong-42!") }
            let unknown = await clientError { try await client.login(identifier: "nobody@example.com", password: "Secret-42!") }

            // validate
            guard case .rejected(let code, let message)? = wrong else { Issue.record("expected a refusal, got \(String(describing: wrong))"); return }
            #expect(code == .invalidCredentials && !message.isEmpty)
            #expect(unknown == wrong, "an unknown account reads exactly like a wrong password")
            #expect(try store.load()?.token == session.token)
        }
    }

    @Test("sessions_canBeListedEndedOneByOneAndAllButThisOne")
    func sessions_listEndOneEndOthers() async throws {
        try await withLiveServer { server in
            // setup
            try await server.makeV1Account(email: "ivan@example.com", tag: "ivan")
            let a = server.accountsClient(), b = server.accountsClient(), c = server.accountsClient()
            let sessionA = try await a.login(identifier: "ivan", password: "Secret-42!", device: "A")
            let sessionB = try await b.login(identifier: "ivan", password: "Secret-42!", device: "B")
            _ = try await c.login(identifier: "ivan", password: "Secret-42!", device: "C")
            // A login that names no device is named by the SDK's User-Agent.
            _ = try await server.accountsClient().login(identifier: "ivan", password: "Secret-42!")

            // MUT
            let listed = try await a.sessions()
            try await a.endSession(id: sessionB.sessionId)
            let bAfter = await clientError { try await b.me() }
            let revoked = try await a.endOtherSessions()
            let cAfter = await clientError { try await c.me() }
            let missing = await clientError { try await a.endSession(id: UUID()) }

            // validate
            #expect(listed.count == 5, "the sign-up's session, and four logins")
            #expect(listed.filter(\.current).map(\.id) == [sessionA.sessionId])
            #expect(Set(listed.compactMap(\.device)).isSuperset(of: ["A", "B", "C", GatehouseVersion.userAgent]))
            #expect(GatehouseVersion.userAgent.contains("GatehouseKit/\(GatehouseVersion.current) ("))
            guard case .sessionExpired? = bAfter else { Issue.record("B should be logged out: \(String(describing: bAfter))"); return }
            #expect(b.session == nil, "a 401 forgets the stored session")
            #expect(revoked == 3)
            guard case .sessionExpired? = cAfter else { Issue.record("C should be logged out: \(String(describing: cAfter))"); return }
            #expect(missing?.code == .sessionNotFound)
            #expect(try await a.sessions().map(\.id) == [sessionA.sessionId])
            let events = try await a.securityEvents(limit: 3)
            #expect(events.items.map(\.kind) == ["sessions.revoked", "session.revoked", "login.succeeded"], "my own history, newest first")
            #expect(events.items.first?.detail["sessions"] == "3" && events.nextCursor != nil)
            let rest = try await a.securityEvents(cursor: events.nextCursor)
            #expect(rest.items.last?.kind == "account.created" && rest.nextCursor == nil)
        }
    }

    @Test("aRefusedToken_isSessionExpired_andIsForgotten; noToken_isNotLoggedIn")
    func refusedToken_isSessionExpired() async throws {
        try await withLiveServer { server in
            // setup
            let store = InMemorySessionStore(GatehouseSession(token: "not-a-token", expiresAt: server.clock.now.addingTimeInterval(3600)))
            let client = server.accountsClient(store: store)

            // MUT
            let refused = await clientError { try await client.me() }
            let none = await clientError { try await client.me() }

            // validate
            guard case .sessionExpired? = refused else { Issue.record("expected 401, got \(String(describing: refused))"); return }
            let stored = try store.load()
            #expect(refused?.code == .unauthorized)
            #expect(stored == nil)
            #expect(none == .notLoggedIn)
        }
    }

    @Test("logout_endsTheSessionOnTheServer_andForgetsIt_evenWhenTheServerHadAlreadyEndedIt")
    func logout_endsAndForgets() async throws {
        try await withLiveServer { server in
            // setup
            try await server.makeV1Account(email: "ivan@example.com", tag: "ivan")
            let store = InMemorySessionStore()
            let client = server.accountsClient(store: store)
            let session = try await client.login(identifier: "ivan", password: "Secret-42!")
            let stale = InMemorySessionStore(GatehouseSession(token: "already-ended", expiresAt: server.clock.now.addingTimeInterval(3600)))

            // MUT
            try await client.logout()
            try await server.accountsClient(store: stale).logout()

            // validate
            #expect(try store.load() == nil)
            #expect(try stale.load() == nil, "a 401 on logout still forgets the session")
            let reused = server.accountsClient(store: InMemorySessionStore(GatehouseSession(token: session.token, expiresAt: session.expiresAt)))
            guard case .sessionExpired? = await clientError({ try await reused.me() }) else { Issue.record("the token must be dead"); return }
        }
    }

    // MARK: Recovery

    @Test("recovery_withTheMailedCode_setsTheNewPassword_andEndsEverySession")
    func recovery_setsTheNewPassword() async throws {
        try await withLiveServer { server in
            // setup
            try await server.makeV1Account(email: "ivan@example.com", tag: "ivan")
            let loggedIn = server.accountsClient()
            try await loggedIn.login(identifier: "ivan", password: "Secret-42!")
            let client = server.accountsClient()

            // MUT
            let sent = try await client.requestRecoveryCode(email: "ivan@example.com")
            let stranger = try await client.requestRecoveryCode(email: "nobody@example.com")
            let code = try await server.latestCodeV1(to: "ivan@example.com")
            let wrong = await clientError {
                try await client.recoverPassword(RecoveryRequest(email: "ivan@example.com", code: code == "000000" ? "111111" : "000000", password: "Better-43!"))
            }
            let weak = await clientError { try await client.recoverPassword(RecoveryRequest(email: "ivan@example.com", code: code, password: "weak")) }
            try await client.recoverPassword(RecoveryRequest(email: "ivan@example.com", code: code, password: "Better-43!"))

            // validate
            #expect(sent.channel == .email && sent.destination == "ivan@example.com")
            #expect(stranger.destination == "nobody@example.com", "an unknown address gets the same answer")
            #expect(try await server.outbox.messages(to: "nobody@example.com").isEmpty)
            #expect(wrong?.code == .invalidCode)
            #expect(weak?.code == .weakPassword)
            guard case .sessionExpired? = await clientError({ try await loggedIn.me() }) else { Issue.record("sessions must end"); return }
            #expect(await clientError { try await client.login(identifier: "ivan", password: "Secret-42!") }?.code == .invalidCredentials)
            #expect(try await client.login(identifier: "ivan@example.com", password: "Better-43!").account.tag == "ivan")
        }
    }

    // MARK: Profile

    @Test("updateProfile_isAMergePatch: left out stays, null clears, a taken tag is refused")
    func updateProfile_isAMergePatch() async throws {
        try await withLiveServer { server in
            // setup
            try await server.makeV1Account(email: "other@example.com", tag: "other")
            try await server.makeV1Account(email: "ivan@example.com", tag: "ivan")
            let client = server.accountsClient()
            try await client.login(identifier: "ivan", password: "Secret-42!")

            // MUT
            let named = try await client.updateProfile(ProfileUpdate(firstName: "Пётр", middleName: "Ильич", birthday: "1990-04-01"))
            let cleared = try await client.updateProfile(ProfileUpdate(middleName: .some(nil)))
            let taken = await clientError { try await client.updateProfile(ProfileUpdate(tag: "Other")) }
            let badDate = await clientError { try await client.updateProfile(ProfileUpdate(birthday: "01.04.1990")) }

            // validate
            #expect(named.firstName == "Пётр" && named.lastName == "Petrov" && named.middleName == "Ильич" && named.birthday == "1990-04-01")
            #expect(cleared.middleName == nil && cleared.firstName == "Пётр")
            #expect(taken?.code == .tagTaken)
            #expect(badDate?.code == .invalidDate)
            #expect(try await client.me().tag == "ivan")
        }
    }

    @Test("changePassword_needsTheCurrentOne_andEndsEveryOtherSession")
    func changePassword() async throws {
        try await withLiveServer { server in
            // setup
            try await server.makeV1Account(email: "ivan@example.com", tag: "ivan")
            let client = server.accountsClient(), other = server.accountsClient()
            try await client.login(identifier: "ivan", password: "Secret-42!")
            try await other.login(identifier: "ivan", password: "Secret-42!")

            // MUT
            let wrong = await clientError { try await client.changePassword(current: "Wrong-42!", new: "Better-43!") }
            try await client.changePassword(current: "Secret-42!", new: "Better-43!")

            // validate
            #expect(wrong?.code == .invalidCredentials)
            #expect(client.session != nil, "a refused change is not a 401: the session stays")
            #expect(try await client.me().tag == "ivan")
            guard case .sessionExpired? = await clientError({ try await other.me() }) else { Issue.record("other sessions must end"); return }
            #expect(try await server.accountsClient().login(identifier: "ivan", password: "Better-43!").account.tag == "ivan")
        }
    }

    @Test("emailChange_staysPendingUntilItsCodeIsGiven, and can be cancelled")
    func emailChange() async throws {
        try await withLiveServer { server in
            // setup
            try await server.makeV1Account(email: "ivan@example.com", tag: "ivan")
            let client = server.accountsClient()
            try await client.login(identifier: "ivan", password: "Secret-42!")

            // MUT
            let sent = try await client.requestEmailChange("new@example.com", currentPassword: "Secret-42!")
            let pending = try await client.me()
            let code = try await server.latestCodeV1(to: "new@example.com")
            let wrong = await clientError { try await client.verifyEmailChange(code: code == "000000" ? "111111" : "000000") }
            let switched = try await client.verifyEmailChange(code: code)
            server.clock.advance(by: 61)
            _ = try await client.requestEmailChange("third@example.com", currentPassword: "Secret-42!")
            let cancelled = try await client.cancelEmailChange()
            let nothing = await clientError { try await client.cancelEmailChange() }

            // validate
            #expect(sent.destination == "new@example.com" && sent.channel == .email)
            #expect(pending.email == "ivan@example.com" && pending.pendingEmail == "new@example.com")
            #expect(wrong?.code == .invalidCode)
            #expect(switched.email == "new@example.com" && switched.pendingEmail == nil && switched.emailConfirmed)
            #expect(cancelled.email == "new@example.com" && cancelled.pendingEmail == nil)
            #expect(nothing?.code == .noPendingEmail)
        }
    }

    @Test("phoneVerification_attachesThePhoneWithTheTextedCode")
    func phoneVerification() async throws {
        try await withLiveServer { server in
            // setup
            try await server.makeV1Account(email: "ivan@example.com", tag: "ivan")
            let client = server.accountsClient()
            try await client.login(identifier: "ivan", password: "Secret-42!")

            // MUT
            let sent = try await client.requestPhoneVerification("+7 912 345-67-89", currentPassword: "Secret-42!")
            let code = try await server.latestCodeV1(to: "+79123456789")
            let account = try await client.verifyPhone("+7 912 345-67-89", code: code)

            // validate
            #expect(sent.channel == .sms && sent.destination == "+79123456789")
            #expect(account.phone == "+79123456789" && account.phoneVerified)
        }
    }

    /// A 1×1 transparent PNG.
    static let png = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=")!

    @Test("avatar_uploadGivesAPublicURL, removeClearsIt; bytes that are not the type are refused")
    func avatar() async throws {
        try await withLiveServer { server in
            // setup
            try await server.makeV1Account(email: "ivan@example.com", tag: "ivan")
            let client = server.accountsClient()
            try await client.login(identifier: "ivan", password: "Secret-42!")

            // MUT
            let uploaded = try await client.uploadAvatar(data: Self.png, contentType: "image/png")
            let url = try #require(uploaded.avatarUrl.flatMap(URL.init(string:)))
            var fetch = URLComponents(url: server.baseURL, resolvingAgainstBaseURL: false)!
            fetch.path = url.path
            let (image, response) = try await URLSessionTransport().send(URLRequest(url: fetch.url!))
            let notAnImage = await clientError { try await client.uploadAvatar(data: Data("hello".utf8), contentType: "image/png") }
            let wrongType = await clientError { try await client.uploadAvatar(data: Self.png, contentType: "text/plain") }
            let removed = try await client.removeAvatar()

            // validate
            #expect(url.path.hasPrefix("/v1/avatars/"))
            #expect(response.statusCode == 200 && image == Self.png)
            #expect(response.value(forHTTPHeaderField: "Content-Type") == "image/png")
            #expect(notAnImage?.code == .invalidImage)
            #expect(wrongType?.code == .unsupportedMediaType)
            #expect(removed.avatarUrl == nil)
        }
    }
}

@Suite("GatehouseKit: how the /v1 client reads answers")
struct AccountsClientWireTests {
    let base = URL(string: "http://id.example.com/gatehouse/")!

    static func problem(_ code: String, status: Int, extra: String = "") -> String {
        #"{"code":"\#(code)","detail":"Nope.","status":\#(status),"title":"T","type":"urn:gatehouse:problem:\#(code)"\#(extra)}"#
    }

    @Test("requests_carryJSONTheLanguageAndTheBearer_andEscapePathParameters")
    func requests_areWellFormed() async throws {
        // setup
        let transport = ScriptedTransport { request in
            switch request.url?.path ?? "" {
            case let path where path.contains("/v1/tags/"): (200, [:], #"{"tag":"x","available":true}"#)
            default: (204, [:], "")
            }
        }
        let store = InMemorySessionStore(GatehouseSession(token: "tok", expiresAt: Date().addingTimeInterval(3600)))
        let client = AccountsClient(baseURL: base, sessionStore: store, transport: transport, language: "ru")
        let id = UUID()

        // MUT
        _ = try await client.tagAvailability("@Who Am?I")
        try await client.endSession(id: id)
        try await client.changePassword(current: "a", new: "b")
        _ = try await client.tagAvailability("..")

        // validate
        let requests = transport.requests
        #expect(requests.count == 4)
        #expect(requests[3].url?.absoluteString == "http://id.example.com/gatehouse/v1/tags/%2E%2E", "a dot segment would be normalised away")
        #expect(requests[0].url?.absoluteString == "http://id.example.com/gatehouse/v1/tags/who%20am%3Fi")
        #expect(requests[0].httpMethod == "GET" && requests[0].value(forHTTPHeaderField: "Authorization") == nil)
        #expect(requests[1].url?.absoluteString == "http://id.example.com/gatehouse/v1/sessions/\(id.uuidString.lowercased())")
        #expect(requests[1].httpMethod == "DELETE" && requests[1].value(forHTTPHeaderField: "Authorization") == "Bearer tok")
        #expect(requests[2].value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(requests[2].value(forHTTPHeaderField: "Accept-Language") == "ru")
        let body = try #require(requests[2].httpBody)
        #expect(String(decoding: body, as: UTF8.self) == #"{"currentPassword":"a","newPassword":"b"}"#)
    }

    @Test("problems_becomeTypedErrors: 4xx rejected, 429 rate-limited with Retry-After, 5xx server")
    func problems_becomeTypedErrors() async throws {
        // setup
        let transport = ScriptedTransport { request in
            switch request.url?.path ?? "" {
            case "/gatehouse/v1/signup": (409, ["Content-Type": "application/problem+json"], Self.problem("tag_taken", status: 409))
            case "/gatehouse/v1/signup/code": (429, ["Content-Type": "application/problem+json", "Retry-After": "17"], Self.problem("resend_too_soon", status: 429, extra: #","retryAfter":17"#))
            case "/gatehouse/v1/recovery": (400, ["Content-Type": "application/problem+json"], Self.problem("invalid_code", status: 400, extra: #","attemptsLeft":2,"field":"code""#))
            case "/gatehouse/v1/recovery/code": (502, ["Content-Type": "text/html"], "<html>Bad gateway</html>")
            default: (400, ["Content-Type": "text/plain"], "plain refusal")
            }
        }
        let client = AccountsClient(baseURL: base, transport: transport, language: "en")

        // MUT
        let taken = await clientError { try await client.signup(SignupRequest(email: "a@b.cd", code: "1", password: "p")) }
        let limited = await clientError { try await client.requestSignupCode(email: "a@b.cd") }
        let wrongCode = await clientError { try await client.recoverPassword(RecoveryRequest(email: "a@b.cd", code: "1", password: "p")) }
        let problem = client.lastProblem
        let gateway = await clientError { try await client.requestRecoveryCode(email: "a@b.cd") }
        let plain = await clientError { try await client.tagAvailability("abc") }

        // validate
        #expect(taken == .rejected(code: .tagTaken, message: "Nope."))
        #expect(limited == .rateLimited(code: .resendTooSoon, message: "Nope.", retryAfter: 17))
        #expect(wrongCode == .rejected(code: .invalidCode, message: "Nope."))
        #expect(problem?.attemptsLeft == 2 && problem?.field == "code")
        #expect(gateway == .server(status: 502, message: "HTTP 502"))
        #expect(plain == .rejected(code: nil, message: "plain refusal"))
    }

    @Test("a401_onAnUnauthenticatedCall_leavesTheStoredSessionAlone; on an authenticated one forgets it")
    func unauthorized_onlyEndsARefusedToken() async throws {
        // setup
        let transport = ScriptedTransport { _ in (401, ["Content-Type": "application/problem+json", "WWW-Authenticate": "Bearer"], Self.problem("unauthorized", status: 401)) }
        let store = InMemorySessionStore(GatehouseSession(token: "tok", expiresAt: Date().addingTimeInterval(3600)))
        let client = AccountsClient(baseURL: base, sessionStore: store, transport: transport)

        // MUT
        let login = await clientError { try await client.login(identifier: "a", password: "b") }
        let storedAfterLogin = try store.load()
        let me = await clientError { try await client.me() }

        // validate
        #expect(login == .sessionExpired(message: "Nope."))
        #expect(storedAfterLogin?.token == "tok")
        #expect(me == .sessionExpired(message: "Nope."))
        #expect(try store.load() == nil)
    }

    @Test("noServer_isATransportError")
    func noServer_isATransportError() async throws {
        // setup
        let client = AccountsClient(baseURL: URL(string: "http://127.0.0.1:9")!, transport: URLSessionTransport(timeout: 5))

        // MUT
        let error = await clientError { try await client.requestSignupCode(email: "a@example.com") }

        // validate
        guard case .transport? = error else { Issue.record("expected a transport error, got \(String(describing: error))"); return }
    }
}
