import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehouseServer
import GatehouseTestSupport
import HTTPTypes
import HummingbirdTesting
import NIOCore
import SQLKit
import Testing

/// The defects of the adversarial probe (docs/security.md), each at the wire level as the attacker
/// sent it. Every test here failed on the code before its fix.
@Suite("Security: one-time codes under parallel guessing")
struct CodeGuessingTests {

    static func guesses(around code: String, count: Int, rightAt index: Int) -> [String] {
        var wrong = (0..<count).map { String(format: "%06d", ($0 * 7919 + 13) % 1_000_000) }.filter { $0 != code }
        wrong = Array(wrong.prefix(count - 1))
        wrong.insert(code, at: index)
        return wrong
    }

    static func json(_ value: some Encodable) throws -> String {
        String(decoding: try V1.encoder.encode(value), as: UTF8.self)
    }

    /// Sends every guess at once from its own connection, then checks the rule: at most 5
    /// comparisons (the attempts column counts them), at most one success, and no answer but a
    /// wrong code, a success or `code_attempts_exhausted`. Once the right code succeeded, later
    /// guesses find no live code (`invalid_code`, nothing compared), so the wrong-code answers
    /// are bounded only while nothing succeeded. Returns how many succeeded.
    @discardableResult
    static func guessInParallel(_ app: TestHarness, path: String, bodies: [String], contentType: String, purpose: VerificationPurpose,
                                sourceLocation: SourceLocation = #_sourceLocation) async throws -> Int {
        // MUT: 60 clients at once
        let answers = try await Crowd.post(port: try #require(app.client.port), path: path, bodies: bodies, contentType: contentType)

        // validate
        let attempts = try await app.services.database.sql.raw("SELECT MAX(attempts) AS n FROM verification_codes WHERE purpose = \(bind: purpose.rawValue)")
            .first(decodingColumn: "n", as: Int.self) ?? 0
        let succeeded = answers.filter { $0.status < 300 }.count
        let wrong = answers.filter { $0.code == GatehouseErrorCode.invalidCode.rawValue }.count
        let others = answers.filter { $0.status >= 300 && $0.code != GatehouseErrorCode.invalidCode.rawValue && $0.code != GatehouseErrorCode.codeAttemptsExhausted.rawValue }
        #expect(attempts <= 5, "\(attempts) guesses were compared", sourceLocation: sourceLocation)
        #expect(succeeded <= 1, sourceLocation: sourceLocation)
        #expect(succeeded == 1 || wrong <= 5, "\(wrong) guesses were answered invalid_code", sourceLocation: sourceLocation)
        #expect(others.isEmpty, "unexpected answers: \(others.map { "\($0.status) \($0.code ?? "")" })", sourceLocation: sourceLocation)
        return succeeded
    }

    @Test("60 parallel recovery guesses with the right code among them: at most 5 are compared, at most one succeeds", .tags(.engine), arguments: TestEngine.all)
    func recovery_parallelGuesses_takeTheirAttemptFirst(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            _ = try await app.v1.signedUp(email: "ann@example.com")
            #expect(try await app.v1.post(V1.Accounts.recoveryCode.path, CodeRequest(email: "ann@example.com")).status == .accepted)
            let code = try await app.v1.code(sentTo: "ann@example.com")
            let bodies = try Self.guesses(around: code, count: 60, rightAt: 40).map {
                try Self.json(RecoveryRequest(email: "ann@example.com", code: $0, password: "Attacker-1!"))
            }

            // MUT, validate
            let succeeded = try await Self.guessInParallel(app, path: V1.Accounts.recover.path, bodies: bodies, contentType: "application/json", purpose: .passwordReset)
            if succeeded == 0 {
                // the owner's password still works: nobody took the account over
                _ = try await app.v1.login("ann@example.com", "secret-91!")
            }
        }
    }

    @Test("60 parallel sign-up guesses: at most 5 compared, at most one account", .tags(.engine), arguments: TestEngine.all)
    func signup_parallelGuesses_takeTheirAttemptFirst(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            _ = try await app.v1.requestSignupCode(email: "bob@example.com")
            let code = try await app.v1.code(sentTo: "bob@example.com")
            let bodies = try Self.guesses(around: code, count: 60, rightAt: 17).map {
                try Self.json(SignupRequest(email: "bob@example.com", code: $0, password: "Attacker-1!"))
            }

            // MUT, validate
            try await Self.guessInParallel(app, path: V1.Accounts.signup.path, bodies: bodies, contentType: "application/json", purpose: .emailSignup)
        }
    }

    @Test("phone sign-up on /api: parallel guesses are limited the same way", .tags(.engine), arguments: TestEngine.all)
    func apiRegister_parallelGuesses_takeTheirAttemptFirst(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            #expect(try await app.postForm(PhoneAccountsAPI.Path.sendSMS, [("phone", "+79123456789")]).status == .ok)
            let code = try await app.latestCode(to: "+79123456789")
            let bodies = Self.guesses(around: code, count: 60, rightAt: 55).map {
                FormURLEncoding.encode([("phone", "+79123456789"), ("code", $0), ("password", "Attacker-1!")])
            }

            // MUT, validate
            try await Self.guessInParallel(app, path: PhoneAccountsAPI.Path.register, bodies: bodies,
                                           contentType: "application/x-www-form-urlencoded", purpose: .phoneSignup)
        }
    }
}

@Suite("Security: an unproven address is only a claim")
struct ClaimTests {
    typealias A = PhoneAccountsAPI.Path

    @Test("an email squatted unconfirmed on /api does not block its owner's sign-up, and the squatter loses it", arguments: TestEngine.once)
    func squattedEmail_losesToVerifiedSignup(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup: the attacker's phone, the victim's address
            try await app.registerPhoneAccount(phone: "+79120000001", password: "Attacker-1!", email: "victim@example.com")
            let attacker = try await app.login("+79120000001", "Attacker-1!")

            // MUT: the victim signs up with the address
            let sent = try await app.v1.requestSignupCode(email: "victim@example.com")
            let mail = try #require(try await app.v1.messages(to: "victim@example.com").first)
            let signup = try await app.v1.post(V1.Accounts.signup.path, SignupRequest(email: "victim@example.com", code: mail.code ?? "", password: "Victim-1!"))

            // validate
            #expect(sent.destination == "victim@example.com")
            #expect(mail.code != nil, "a real code, not an 'account exists' notice: \(mail.body)")
            #expect(signup.status == .created, "\(signup.text)")
            let squatter = try await app.user(attacker)
            #expect(squatter.email == nil || squatter.email == "")
            let told = try #require(try await app.outbox(to: "+79120000001").first)
            #expect(told.body.contains("victim@example.com"))
            _ = try await app.v1.login("victim@example.com", "Victim-1!")
        }
    }

    @Test("an unconfirmed email opens nothing: no login, no restore", arguments: TestEngine.once)
    func unconfirmedEmail_namesNoAccount(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            try await app.registerPhoneAccount(phone: "+79120000001", password: "Attacker-1!", email: "victim@example.com")

            // MUT
            let apiLogin = try await app.postForm(A.login, [("login", "victim@example.com"), ("password", "Attacker-1!")])
            let v1Login = try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "victim@example.com", password: "Attacker-1!"))
            let restore = try await app.postForm(A.restore, [("mail", "victim@example.com"), ("sms", "true")])

            // validate
            #expect(apiLogin.status == .badRequest)
            #expect(apiLogin.errorCode == GatehouseErrorCode.invalidCredentials.rawValue)
            try expectProblem(v1Login, .badRequest, .invalidCredentials)
            #expect(restore.errorCode == GatehouseErrorCode.accountNotFound.rawValue)
            #expect(try await app.outbox(to: "+79120000001").filter { $0.body.contains("password") }.isEmpty)
        }
    }

    @Test("opening a confirmation link changes nothing; its page's button confirms by POST", arguments: TestEngine.once)
    func confirmationLink_getChangesNothing(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            try await app.registerPhoneAccount(email: "e@example.com")
            let token = try await app.login("+79123456789", "secret-91!")
            try await app.postForm(A.sendConfirm, [], token: token)
            let link = try await app.latestConfirmationToken(to: "e@example.com")

            // MUT: a link scanner fetches the link, twice
            let scanned = try await app.get("\(A.confirm)?id=\(link)", headers: [.acceptLanguage: "en"])
            _ = try await app.get("\(A.confirm)?id=\(link)")
            let afterScan = try await app.user(token).isConfirmed
            let pressed = try await app.postForm(A.confirm, [("id", link)])

            // validate
            #expect(scanned.status == .ok)
            #expect(scanned.text.contains(#"data-state="pending""#))
            #expect(scanned.text.contains(#"<form method="post" action="/api/users/confirm">"#))
            #expect(scanned.text.contains("e@example.com"))
            #expect(afterScan == false)
            #expect(pressed.text.contains(#"data-state="confirmed""#))
            #expect(try await app.user(token).isConfirmed)
            let csp = try #require(scanned.headers[.contentSecurityPolicy])
            #expect(csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'") && csp.contains("form-action 'self'"))
            #expect(!csp.contains("unsafe-inline"))
            #expect(scanned.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
            #expect(scanned.headers[HTTPField.Name("Referrer-Policy")!] == "no-referrer")
            #expect(scanned.headers[.cacheControl] == "no-store")
        }
    }

    @Test("a recovery by email leaves a phone verified before the email was confirmed no way in", arguments: TestEngine.once)
    func emailRecovery_unverifiesAnEarlierPhone(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup: created with the attacker's phone and the victim's address, which the victim confirmed
            try await app.registerPhoneAccount(phone: "+79120000001", password: "Attacker-1!", email: "victim@example.com", confirmingEmail: true)
            app.clock.advance(by: 61)
            #expect(try await app.v1.post(V1.Accounts.recoveryCode.path, CodeRequest(email: "victim@example.com")).status == .accepted)
            let code = try await app.v1.code(sentTo: "victim@example.com")

            // MUT
            let recovered = try await app.v1.post(V1.Accounts.recover.path, RecoveryRequest(email: "victim@example.com", code: code, password: "Victim-1!"))
            app.clock.advance(by: 61)
            let restoreByPhone = try await app.postForm(A.restore, [("phone", "+79120000001"), ("sms", "true")])
            let recoveryByPhone = try await app.v1.post(V1.Accounts.recoveryCode.path, CodeRequest(phone: "+79120000001"))

            // validate
            #expect(recovered.status == .noContent, "\(recovered.text)")
            #expect(restoreByPhone.errorCode == GatehouseErrorCode.accountNotFound.rawValue)
            #expect(recoveryByPhone.status == .accepted)   // the same answer as for anybody, and nothing sent
            // newest first: the notice is the last thing the phone got; no code or password after it
            let newest = try #require(try await app.outbox(to: "+79120000001").first)
            #expect(newest.code == nil)
            #expect(newest.body.contains("больше не восстанавливает"), "in the account's language (ru): \(newest.body)")
            _ = try await app.v1.login("victim@example.com", "Victim-1!")
        }
    }
}

extension ClaimTests {
    @Test("a phone left unverified by an email recovery goes to whoever verifies it, and the account is told by mail", arguments: TestEngine.once)
    func unverifiedPhone_losesToVerifiedSignup(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup: as above, the phone loses its standing by a recovery by email
            try await app.registerPhoneAccount(phone: "+79120000001", password: "Attacker-1!", email: "victim@example.com", confirmingEmail: true)
            app.clock.advance(by: 61)
            #expect(try await app.v1.post(V1.Accounts.recoveryCode.path, CodeRequest(email: "victim@example.com")).status == .accepted)
            let code = try await app.v1.code(sentTo: "victim@example.com")
            #expect(try await app.v1.post(V1.Accounts.recover.path, RecoveryRequest(email: "victim@example.com", code: code, password: "Victim-1!")).status == .noContent)
            app.clock.advance(by: 61)

            // MUT: the phone's owner signs up with it
            let phoneOwner = try await app.v1.signedUp(phone: "+79120000001", password: "Owner-1!x")

            // validate
            #expect(try await app.v1.me(phoneOwner.token).phoneVerified)
            let victim = try await app.v1.login("victim@example.com", "Victim-1!")
            #expect(try await app.v1.me(victim.token).phone == nil)
            let told = try #require(try await app.v1.messages(to: "victim@example.com").first)
            #expect(told.body.contains("+79120000001") && told.code == nil, "\(told.body)")
        }
    }
}

@Suite("Security: a stolen session cannot add a way in")
struct StolenSessionTests {
    typealias A = PhoneAccountsAPI.Path

    @Test("a new phone needs the current password; the old phone is told; other sessions end", arguments: TestEngine.once)
    func phoneChange_needsPasswordTellsOldPhoneEndsOtherSessions(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup: the owner's two devices
            let thief = try await app.v1.signedUp(phone: "+79120000001")
            let owner = try await app.v1.login("+79120000001", "secret-91!")

            // MUT
            let without = try await app.v1.post(V1.Accounts.requestPhoneVerification.path, json: #"{"phone":"+79120000002"}"#, token: thief.token)
            let wrong = try await app.v1.post(V1.Accounts.requestPhoneVerification.path, PhoneVerificationRequest(phone: "+79120000002", currentPassword: "guess-1!"), token: thief.token)
            let right = try await app.v1.post(V1.Accounts.requestPhoneVerification.path, PhoneVerificationRequest(phone: "+79120000002", currentPassword: "secret-91!"), token: thief.token)
            let code = try await app.v1.code(sentTo: "+79120000002")
            let verified = try await app.v1.post(V1.Accounts.verifyPhone.path, CodeVerification(code: code, phone: "+79120000002"), token: thief.token)

            // validate
            try expectProblem(without, .badRequest, .currentPasswordRequired)
            try expectProblem(wrong, .badRequest, .invalidCredentials)
            #expect(right.status == .accepted)
            #expect(verified.status == .ok, "\(verified.text)")
            let told = try #require(try await app.outbox(to: "+79120000001").first)
            #expect(told.body.contains("+79120000002"))
            #expect(try await app.v1.get(V1.Accounts.me.path, token: owner.token).status == .unauthorized)
            #expect(try await app.v1.get(V1.Accounts.me.path, token: thief.token).status == .ok)
        }
    }

    @Test("a new email needs the current password; at its verification other sessions end", arguments: TestEngine.once)
    func emailChange_needsPasswordEndsOtherSessions(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let thief = try await app.v1.signedUp(email: "ann@example.com")
            let owner = try await app.v1.login("ann@example.com", "secret-91!")

            // MUT
            let without = try await app.v1.post(V1.Accounts.requestEmailChange.path, json: #"{"email":"thief@example.com"}"#, token: thief.token)
            let right = try await app.v1.post(V1.Accounts.requestEmailChange.path, EmailChangeRequest(email: "thief@example.com", currentPassword: "secret-91!"), token: thief.token)
            let code = try await app.v1.code(sentTo: "thief@example.com")
            let verified = try await app.v1.post(V1.Accounts.verifyEmailChange.path, CodeVerification(code: code), token: thief.token)

            // validate
            try expectProblem(without, .badRequest, .currentPasswordRequired)
            #expect(right.status == .accepted)
            #expect(verified.status == .ok)
            #expect(try await app.v1.messages(to: "ann@example.com").contains { $0.body.contains("thief@example.com") })
            #expect(try await app.v1.get(V1.Accounts.me.path, token: owner.token).status == .unauthorized)
        }
    }

    @Test("/api: fixing an unconfirmed email right after login needs no password; later it does", arguments: TestEngine.once)
    func apiEmailChange_recentLoginOrPassword(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            try await app.registerPhoneAccount(email: "typo@example.con")
            let token = try await app.login("+79123456789", "secret-91!")

            // MUT
            let fixed = try await app.postForm(A.change, [("email", "right@example.com")], token: token)
            app.clock.advance(by: 601)
            let late = try await app.postForm(A.change, [("email", "other@example.com")], token: token)
            let withPassword = try await app.postForm(A.change, [("email", "other@example.com"), ("current_password", "secret-91!")], token: token)
            let inQuery = try await app.postForm("\(A.change)?current_password=secret-91!", [("email", "third@example.com")], token: token)

            // validate
            #expect(fixed.status == .ok)
            #expect(late.status == .badRequest)
            #expect(late.errorCode == GatehouseErrorCode.currentPasswordRequired.rawValue)
            #expect(withPassword.status == .ok)
            #expect(inQuery.errorCode == GatehouseErrorCode.currentPasswordRequired.rawValue, "a password in the query string is not read")
            #expect(try await app.user(token).email == "other@example.com")
        }
    }

    @Test("/api: the password can be changed with the current one (after a restore, say)", arguments: TestEngine.once)
    func apiPasswordChange(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            try await app.registerPhoneAccount()
            let token = try await app.login("+79123456789", "secret-91!")
            let other = try await app.login("+79123456789", "secret-91!")

            // MUT
            let without = try await app.postForm(A.change, [("password", "Newpass-2!")], token: token)
            let changed = try await app.postForm(A.change, [("password", "Newpass-2!"), ("current_password", "secret-91!")], token: token)

            // validate
            #expect(without.errorCode == GatehouseErrorCode.currentPasswordRequired.rawValue)
            #expect(changed.status == .ok, "\(changed.text)")
            _ = try await app.login("+79123456789", "Newpass-2!")
            #expect(try await app.get(A.user, token: other).status == .unauthorized)
            #expect(try await app.postForm(A.login, [("login", "+79123456789"), ("password", "secret-91!")]).status == .badRequest)
        }
    }
}

@Suite("Security: enumeration on /api costs the budgets")
struct EnumerationTests {
    typealias A = PhoneAccountsAPI.Path

    @Test("a taken phone answers phone_taken once, then the resend cooldown like any phone", arguments: TestEngine.once)
    func sms_takenPhone_isBudgeted(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            try await app.registerPhoneAccount()
            app.clock.advance(by: 61)

            // MUT
            let first = try await app.postForm(A.sendSMS, [("phone", "+79123456789")])
            let second = try await app.postForm(A.sendSMS, [("phone", "+79123456789")])

            // validate
            #expect(first.errorCode == GatehouseErrorCode.phoneTaken.rawValue)
            #expect(second.status == .tooManyRequests)
            #expect(try await app.outbox(to: "+79123456789").count == 1, "nothing was sent for the taken phone")
        }
    }

    @Test("registration checks the code before it says an email or login is taken", arguments: TestEngine.once)
    func register_codeBeforeUniqueness(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            try await app.registerPhoneAccount(email: "known@example.com", extra: [("login", "known.user")])
            #expect(try await app.postForm(A.sendSMS, [("phone", "+79120000002")]).status == .ok)
            let code = try await app.latestCode(to: "+79120000002")
            let wrong = code == "000000" ? "111111" : "000000"

            // MUT
            let byEmail = try await app.postForm(A.register, [("phone", "+79120000002"), ("code", wrong), ("password", "secret-91!"), ("email", "known@example.com")])
            let byLogin = try await app.postForm(A.register, [("phone", "+79120000002"), ("code", wrong), ("password", "secret-91!"), ("login", "known.user")])
            let withCode = try await app.postForm(A.register, [("phone", "+79120000002"), ("code", code), ("password", "secret-91!"), ("email", "known@example.com")])
            let codeInQuery = try await app.postForm("\(A.register)?code=\(code)", [("phone", "+79120000002"), ("password", "secret-91!")])

            // validate
            #expect(byEmail.errorCode == GatehouseErrorCode.invalidCode.rawValue)
            #expect(byLogin.errorCode == GatehouseErrorCode.invalidCode.rawValue)
            #expect(withCode.errorCode == GatehouseErrorCode.emailTaken.rawValue)
            #expect(codeInQuery.errorCode == GatehouseErrorCode.missingParameter.rawValue)
        }
    }

    @Test("restore with unknown identifiers runs into the per-client and per-identifier budgets", arguments: TestEngine.once)
    func restore_unknown_isBudgeted(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.limits.codeRequestsPerIP = 5 }) { app in
            // MUT
            var answers: [TestResponse] = []
            for i in 0..<6 { answers.append(try await app.postForm(A.restore, [("login", "nobody\(i)@example.com")])) }
            app.clock.advance(by: 301)
            let first = try await app.postForm(A.restore, [("login", "someone.else")])
            let again = try await app.postForm(A.restore, [("login", "someone.else")])

            // validate
            #expect(answers.prefix(5).allSatisfy { $0.errorCode == GatehouseErrorCode.accountNotFound.rawValue })
            #expect(answers[5].status == .tooManyRequests)
            #expect(first.errorCode == GatehouseErrorCode.accountNotFound.rawValue)
            #expect(again.status == .tooManyRequests)
        }
    }
}

@Suite("Security: slow, broken and greedy clients")
struct SlowClientTests {
    static func configure(_ c: inout GatehouseConfiguration) {
        c.http.headerTimeout = 1
        c.http.bodyTimeout = 0.3
        c.http.idleTimeout = 0.3
    }

    @Test("a connection that never finishes its head, or says nothing, gets 408 and is closed")
    func slowHead_is408() async throws {
        try await withApp(.sqlite, configure: Self.configure) { app in
            // setup
            let port = try #require(app.client.port)

            // MUT
            let partial = try await RawConnection.open(port: port)
            try await partial.send("GET /health HTTP/1.1\r\nHost: x\r\n")
            let silent = try await RawConnection.open(port: port)
            let partialClosed = await partial.closedByServer(within: .seconds(10))
            let silentClosed = await silent.closedByServer(within: .seconds(10))

            // validate
            #expect(partialClosed && silentClosed)
            #expect(partial.text.hasPrefix("HTTP/1.1 408"), "\(partial.text)")
            #expect(silent.text.hasPrefix("HTTP/1.1 408"), "\(silent.text)")
            let next = try await RawConnection.open(port: port)
            try await next.send("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(await next.closedByServer(within: .seconds(5)))
            #expect(next.text.hasPrefix("HTTP/1.1 200"), "the server still answers: \(next.text)")
        }
    }

    @Test("a body that stops arriving gets 408")
    func slowBody_is408() async throws {
        try await withApp(.sqlite, configure: Self.configure) { app in
            let connection = try await RawConnection.open(port: try #require(app.client.port))
            try await connection.send("POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nlogin=a")
            #expect(await connection.closedByServer(within: .seconds(10)))
            #expect(connection.text.hasPrefix("HTTP/1.1 408"), "\(connection.text)")
        }
    }

    @Test("a slow body that keeps moving is read whole: the body deadline is between its parts")
    func slowButMovingBody_isRead() async throws {
        try await withApp(.sqlite, configure: { $0.http.bodyTimeout = 2 }) { app in
            // setup: 15 parts 0.2 s apart, 3 s in all, longer than the deadline
            let body = "login=%2B79123456789&password=wrong-pass-1234"
            let connection = try await RawConnection.open(port: try #require(app.client.port))
            try await connection.send("POST /api/auth/login HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\n\r\n")

            // MUT
            let parts = Array(body).chunked(into: 3)
            for part in parts {
                try await Task.sleep(for: .milliseconds(200))
                try await connection.send(String(part))
            }

            // validate: answered (a wrong password), not timed out
            #expect(parts.count == 15)
            #expect(await connection.closedByServer(within: .seconds(10)))
            #expect(connection.text.hasPrefix("HTTP/1.1 400"), "\(connection.text)")
            #expect(connection.text.contains("invalid_credentials"))
        }
    }

    @Test("an unknown method is answered 501, a head too large 431, a malformed request 400")
    func brokenRequests_areAnswered() async throws {
        try await withApp(.sqlite) { app in
            let port = try #require(app.client.port)
            let unknown = try await RawConnection.open(port: port)
            try await unknown.send("FOOA /v1/me HTTP/1.1\r\nHost: x\r\n\r\n")
            let huge = try await RawConnection.open(port: port)
            try await huge.send("GET /health HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 200_000))\r\n\r\n")
            let malformed = try await RawConnection.open(port: port)
            try await malformed.send("GET /health HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n")

            #expect(await unknown.closedByServer(within: .seconds(5)))
            #expect(await huge.closedByServer(within: .seconds(5)))
            #expect(await malformed.closedByServer(within: .seconds(5)))
            #expect(unknown.text.hasPrefix("HTTP/1.1 501"), "\(unknown.text)")
            #expect(huge.text.hasPrefix("HTTP/1.1 431"), "\(huge.text.prefix(80))")
            #expect(malformed.text.hasPrefix("HTTP/1.1 400"), "\(malformed.text)")
        }
    }

    @Test("a keep-alive connection nobody uses is closed after the idle timeout")
    func idleKeepAlive_isClosed() async throws {
        try await withApp(.sqlite, configure: Self.configure) { app in
            let connection = try await RawConnection.open(port: try #require(app.client.port))
            try await connection.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await connection.closedByServer(within: .seconds(10)))
            #expect(connection.text.hasPrefix("HTTP/1.1 200"))
            // (not just "408": the answer's random X-Request-Id may hold those digits)
            #expect(!connection.text.contains("HTTP/1.1 408"), "an idle connection is closed without an answer")
        }
    }

    @Test("one client address holds at most the configured number of connections")
    func connectionsPerAddress_areCapped() async throws {
        try await withApp(.sqlite, configure: { $0.http.maxConnectionsPerAddress = 3 }) { app in
            let port = try #require(app.client.port)
            // From an address of their own (the harness's client holds a connection from 127.0.0.1), and
            // each answered once before the next: a connection the client has opened may not be counted
            // yet, and on a loaded machine a later one could be counted first.
            var held: [RawConnection] = []
            for _ in 0..<3 {
                let connection = try await RawConnection.open(port: port, from: "127.0.0.2")
                try await connection.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(await eventually { connection.text.hasPrefix("HTTP/1.1 200") }, "connection \(held.count): \(connection.text)")
                held.append(connection)
            }

            let extra = try await RawConnection.open(port: port, from: "127.0.0.2")
            #expect(await extra.closedByServer(within: .seconds(5)))
            #expect(extra.text.hasPrefix("HTTP/1.1 503"), "\(extra.text)")

            // Once the server has seen a held connection close, its place is free again. (When it sees
            // the close is up to the machine's load: a new connection is tried until one is admitted.)
            await held[1].close()
            let admitted = await eventually(within: .seconds(10)) {
                guard let next = try? await RawConnection.open(port: port, from: "127.0.0.2") else { return false }
                try? await next.send("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                _ = await next.closedByServer(within: .seconds(5))
                return next.text.hasPrefix("HTTP/1.1 200")
            }
            #expect(admitted, "a place freed by a closed connection is taken again")
            for connection in held { await connection.close() }
        }
    }

    @Test("behind a load balancer (GATEHOUSE_TRUST_FORWARDED_FOR) the per-address cap is off: every connection comes from the balancer")
    func connectionsPerAddress_offBehindALoadBalancer() async throws {
        try await withApp(.sqlite, configure: { $0.http.maxConnectionsPerAddress = 1; $0.trustForwardedFor = true }) { app in
            let port = try #require(app.client.port)
            let first = try await RawConnection.open(port: port)
            let second = try await RawConnection.open(port: port)
            try await second.send("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(await second.closedByServer(within: .seconds(5)))
            #expect(second.text.hasPrefix("HTTP/1.1 200"), "\(second.text)")
            await first.close()
        }
    }
}

@Suite("Security: look-alike logins")
struct LookAlikeLoginTests {
    typealias A = PhoneAccountsAPI.Path

    func register(_ app: TestHarness, phone: String, login: String) async throws -> TestResponse {
        #expect(try await app.postForm(A.sendSMS, [("phone", phone)]).status == .ok)
        let code = try await app.latestCode(to: phone)
        return try await app.postForm(A.register, [("phone", phone), ("code", code), ("password", "secret-91!"), ("login", login)])
    }

    @Test("NFC and NFD, full-width forms and case are one login; mixed scripts and invisible characters are refused", arguments: TestEngine.once)
    func lookAlikes_areOneLoginOrRefused(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            #expect(try await register(app, phone: "+79120000001", login: "caf\u{E9}122x").status == .ok)

            // MUT
            let nfd = try await register(app, phone: "+79120000002", login: "cafe\u{301}122x")
            let fullWidth = try await register(app, phone: "+79120000003", login: "\u{FF43}\u{FF41}\u{FF46}\u{E9}122\u{FF58}")
            let upper = try await register(app, phone: "+79120000004", login: "CAF\u{C9}122X")
            let mixed = try await register(app, phone: "+79120000005", login: "iv\u{430}n.petrov122")
            let joiner = try await register(app, phone: "+79120000006", login: "caf\u{E9}122x\u{200D}")
            let selector = try await register(app, phone: "+79120000007", login: "caf\u{E9}122x\u{FE0F}")
            let cyrillic = try await register(app, phone: "+79120000008", login: "\u{438}\u{432}\u{430}\u{43D}.\u{43F}\u{435}\u{442}\u{440}\u{43E}\u{432}")

            // validate
            for taken in [nfd, fullWidth, upper] { #expect(taken.errorCode == GatehouseErrorCode.loginTaken.rawValue, "\(taken.text)") }
            for refused in [mixed, joiner, selector] { #expect(refused.errorCode == GatehouseErrorCode.invalidLogin.rawValue, "\(refused.text)") }
            #expect(cyrillic.status == .ok, "one script, even a non-Latin one, is fine: \(cyrillic.text)")
            _ = try await app.login("cafe\u{301}122X", "secret-91!")   // any form of the name signs in
        }
    }
}

@Suite("Security: a failed login costs the same whatever the account's state")
struct LoginCostTests {
    @Test("a pending temporary password adds no bcrypt to a failed login", arguments: TestEngine.once)
    func pendingRestore_doesNotChangeTheCost(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            try await app.registerPhoneAccount()
            let hasher = app.services.login.hasher
            func cost(_ login: String) async throws -> Int {
                let before = hasher.verifications.count
                #expect(try await app.postForm(PhoneAccountsAPI.Path.login, [("login", login), ("password", "wrong-1!")]).status == .badRequest)
                return hasher.verifications.count - before
            }
            let plain = try await cost("+79123456789")
            let unknown = try await cost("+79990000000")
            #expect(try await app.postForm(PhoneAccountsAPI.Path.restore, [("phone", "+79123456789"), ("sms", "true")]).status == .ok)

            // MUT
            let pending = try await cost("+79123456789")

            // validate
            #expect(plain == 1 && unknown == 1 && pending == 1, "bcrypt runs: \(plain), \(unknown), \(pending)")
            let temporary = try #require(try await app.outbox(to: "+79123456789").first?.code)
            _ = try await app.login("+79123456789", temporary)
        }
    }
}

@Suite("Security: hardening")
struct HardeningTests {
    typealias A = PhoneAccountsAPI.Path

    @Test("answers carrying a token or a secret are not stored by caches", arguments: TestEngine.once)
    func tokens_areNoStore(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            try await app.registerPhoneAccount()
            let apiLogin = try await app.postForm(A.login, [("login", "+79123456789"), ("password", "secret-91!")])
            _ = try await app.v1.requestSignupCode(email: "ann@example.com")
            let code = try await app.v1.code(sentTo: "ann@example.com")
            let signup = try await app.v1.post(V1.Accounts.signup.path, SignupRequest(email: "ann@example.com", code: code, password: "secret-91!"))
            let v1Login = try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "ann@example.com", password: "secret-91!"))
            for response in [apiLogin, signup, v1Login] {
                #expect(response.status.code < 300)
                #expect(response.headers[.cacheControl] == "no-store")
            }
        }
    }

    @Test("a password in the query string of /api/auth/login is not read", arguments: TestEngine.once)
    func credentials_fromBodyOnly(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            try await app.registerPhoneAccount()
            let response = try await app.postForm("\(A.login)?login=%2B79123456789&password=secret-91!", [])
            #expect(response.status == .badRequest)
            #expect(response.errorCode == GatehouseErrorCode.missingParameter.rawValue)
            let loginInQuery = try await app.postForm("\(A.login)?login=%2B79123456789", [("password", "secret-91!")])
            #expect(loginInQuery.status == .ok, "the spec's query parameters still work for what is not a secret")
        }
    }

    @Test("development mode refuses a network address unless asked to")
    func developmentOnNetwork_isRefused() throws {
        #expect(throws: ConfigurationError.self) { try GatehouseConfiguration.fromEnvironment(["GATEHOUSE_HOST": "0.0.0.0"]) }
        let allowed = try GatehouseConfiguration.fromEnvironment(["GATEHOUSE_HOST": "0.0.0.0", "GATEHOUSE_ALLOW_DEV_ON_NETWORK": "true"])
        #expect(allowed.host == "0.0.0.0")
        let production = try GatehouseConfiguration.fromEnvironment([
            "GATEHOUSE_HOST": "0.0.0.0", "GATEHOUSE_ENV": "production", "GATEHOUSE_SECRET": String(repeating: "s", count: 40),
            "GATEHOUSE_ALLOW_DEV_DELIVERY": "true",
        ])
        #expect(production.environment == .production)
    }

    @Test("an image with anything after its end is refused; avatars are served as images only", arguments: TestEngine.once)
    func polyglotImage_isRefused(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            let session = try await app.v1.signedUp(email: "ann@example.com")
            let png = TestImage.png(width: 2, height: 2)
            let polyglot = png + Array("<html><script>alert(1)</script></html>".utf8)
            let truncated = Array(png.dropLast(5))
            try expectProblem(try await app.v1.put(V1.Accounts.uploadAvatar.path, body: polyglot, contentType: "image/png", token: session.token), .badRequest, .invalidImage)
            try expectProblem(try await app.v1.put(V1.Accounts.uploadAvatar.path, body: truncated, contentType: "image/png", token: session.token), .badRequest, .invalidImage)

            let uploaded = try await app.v1.put(V1.Accounts.uploadAvatar.path, body: png, contentType: "image/png", token: session.token)
            let url = try #require(try uploaded.decoded(as: Account.self).avatarUrl)
            let image = try await app.v1.get(try TestImage.path(of: url))
            #expect(image.headers[.contentDisposition]?.hasPrefix("inline; filename=\"avatar.png\"") == true)
            #expect(image.headers[.contentSecurityPolicy]?.contains("sandbox") == true)
        }
    }

    /// Real images, made with ImageMagick and cwebp for this test (2×2, one colour): a baseline
    /// and a progressive JPEG (several scans), a GIF and a lossless WebP.
    static let images: [(type: String, base64: String)] = [
        ("image/jpeg", "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgICAgMCAgIDAwMDBAYEBAQEBAgGBgUGCQgKCgkICQkKDA8MCgsOCwkJDRENDg8QEBEQCgwSExIQEw8QEBD/2wBDAQMDAwQDBAgEBAgQCwkLEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBD/wAARCAACAAIDAREAAhEBAxEB/8QAFAABAAAAAAAAAAAAAAAAAAAAB//EABQQAQAAAAAAAAAAAAAAAAAAAAD/xAAVAQEBAAAAAAAAAAAAAAAAAAAHCP/EABQRAQAAAAAAAAAAAAAAAAAAAAD/2gAMAwEAAhEDEQA/AAIZLjf/2Q=="),
        ("image/jpeg", "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgICAgMCAgIDAwMDBAYEBAQEBAgGBgUGCQgKCgkICQkKDA8MCgsOCwkJDRENDg8QEBEQCgwSExIQEw8QEBD/2wBDAQMDAwQDBAgEBAgQCwkLEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBD/wgARCAACAAIDAREAAhEBAxEB/8QAFAABAAAAAAAAAAAAAAAAAAAABv/EABUBAQEAAAAAAAAAAAAAAAAAAAYH/9oADAMBAAIQAxAAAAEAYuP/xAAUEAEAAAAAAAAAAAAAAAAAAAAA/9oACAEBAAEFAn//xAAUEQEAAAAAAAAAAAAAAAAAAAAA/9oACAEDAQE/AX//xAAUEQEAAAAAAAAAAAAAAAAAAAAA/9oACAECAQE/AX//xAAUEAEAAAAAAAAAAAAAAAAAAAAA/9oACAEBAAY/An//xAAUEAEAAAAAAAAAAAAAAAAAAAAA/9oACAEBAAE/IX//2gAMAwEAAgADAAAAEP8A/8QAFBEBAAAAAAAAAAAAAAAAAAAAAP/aAAgBAwEBPxB//8QAFBEBAAAAAAAAAAAAAAAAAAAAAP/aAAgBAgEBPxB//8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxB//9k="),
        ("image/gif", "R0lGODlhAgACAPAAAMgeHgAAACH5BAAAAAAALAAAAAACAAIAAAIChFEAOw=="),
        ("image/webp", "UklGRh4AAABXRUJQVlA4TBEAAAAvAUAAAAdQjyLXo/+BiOh/AAA="),
    ]

    @Test("JPEG (baseline and progressive), GIF and WebP are taken whole; with anything after their end, or cut short, refused", arguments: TestEngine.once)
    func imageFormats_walkedToTheirEnd(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            let session = try await app.v1.signedUp(email: "ann@example.com")
            for (type, base64) in Self.images {
                let image = try #require(Data(base64Encoded: base64)).map { $0 }
                // MUT
                let whole = try await app.v1.put(V1.Accounts.uploadAvatar.path, body: image, contentType: type, token: session.token)
                let polyglot = try await app.v1.put(V1.Accounts.uploadAvatar.path, body: image + Array("<html><script>alert(1)</script>".utf8), contentType: type, token: session.token)
                let cut = try await app.v1.put(V1.Accounts.uploadAvatar.path, body: Array(image.dropLast(3)), contentType: type, token: session.token)

                // validate
                #expect(whole.status == .ok, "\(type) \(image.count) bytes: \(whole.text)")
                if let url = try? whole.decoded(as: Account.self).avatarUrl {
                    let served = try await app.v1.get(try TestImage.path(of: url))
                    #expect(Array(served.body.readableBytesView) == image)
                    #expect(served.headers[.contentType] == type)
                }
                try expectProblem(polyglot, .badRequest, .invalidImage)
                try expectProblem(cut, .badRequest, .invalidImage)
            }
        }
    }

    @Test("/metrics can require a token")
    func metrics_token() async throws {
        try await withApp(.sqlite, configure: { $0.metricsToken = "metrics-secret-0123456789" }) { app in
            let none = try await app.get("/metrics")
            let wrong = try await app.get("/metrics", token: "wrong")
            let right = try await app.get("/metrics", token: "metrics-secret-0123456789")
            #expect(none.status == .unauthorized && wrong.status == .unauthorized)
            #expect(right.status == .ok)
        }
    }

    @Test("SMS go to the allowed countries only", arguments: TestEngine.once)
    func sms_countryAllowList(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            try expectProblem(try await app.v1.post(V1.Accounts.signupCode.path, CodeRequest(phone: "+1 202 555 0100")), .badRequest, .phoneCountryNotAllowed)
            #expect(try await app.postForm(A.sendSMS, [("phone", "+12025550100")]).status == .badRequest)
            #expect(try await app.outbox(to: "+12025550100").isEmpty)
        }
        try await withApp(engine, configure: { $0.smsCountries = ["7", "1"] }) { app in
            let response = try await app.v1.post(V1.Accounts.signupCode.path, CodeRequest(phone: "+1 202 555 0100"))
            #expect(response.status == .accepted)
        }
    }

    @Test("one client address cannot spend a phone's whole daily SMS budget", arguments: TestEngine.once)
    func sms_perAddressShareOfTheBudget(engine: TestEngine) async throws {
        try await withApp(engine, configure: {
            $0.limits.codeRequestsPerAddressPerDestination = 3
            $0.limits.resendCooldown = 0
            $0.trustForwardedFor = true
        }) { app in
            func ask(from ip: String) async throws -> TestResponse {
                try await app.v1.post(V1.Accounts.signupCode.path, CodeRequest(phone: "+79123456789"), headers: [HTTPField.Name("X-Forwarded-For")!: ip])
            }
            var stranger: [HTTPResponse.Status] = []
            for _ in 0..<4 { stranger.append(try await ask(from: "203.0.113.9").status) }
            let owner = try await ask(from: "198.51.100.7")

            #expect(stranger == [.accepted, .accepted, .accepted, .tooManyRequests])
            #expect(owner.status == .accepted, "the owner still gets a code: \(owner.text)")
        }
    }
}

private extension Array {
    func chunked(into size: Int) -> [[Element]] {
        stride(from: 0, to: count, by: size).map { Array(self[$0..<Swift.min($0 + size, count)]) }
    }
}
