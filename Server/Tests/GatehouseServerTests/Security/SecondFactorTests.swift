import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import GatehouseServer
import GatehouseTestSupport
import HTTPTypes
import SQLKit
import Testing

/// Second factors (docs/security.md, "Second factors"): the authenticator app's codes computed by
/// pyotp (the algorithm every TOTP app runs) from the `otpauth://` URI the server hands out; the
/// two-step login on `/v1` and the refusal of surfaces without a second step; replay, attempts,
/// recovery codes, turning it off, an operator's removal, recovery by email and erasure.
@Suite("Second factors: the authenticator app and recovery codes")
struct SecondFactorTests {
    static let password = "secret-91!"

    /// The code an authenticator app shows at `date` for the secret of `uri` (pyotp).
    static func appCode(_ uri: String, at date: Date) async throws -> String {
        try await PythonCheck.run("""
            import sys, pyotp
            uri = open(sys.argv[1]).read()
            print(pyotp.parse_uri(uri).at(int(open(sys.argv[2]).read())))
            """, files: [uri, String(Int(date.timeIntervalSince1970))])
    }

    /// An account with the authenticator app on: its `/v1` token, the URI and the recovery codes.
    static func accountWithTOTP(_ app: TestHarness, email: String = "fpi@bk.ru", phone: String = "+79123456789") async throws -> (token: String, uri: String, codes: [String]) {
        try await app.registerPhoneAccount(phone: phone, email: email, confirmingEmail: true)
        let token = try await app.v1.login(email, password).token
        let enrolled = try await app.v1.post(V1.SecondFactors.enrolTOTP.path, TOTPEnrolmentRequest(currentPassword: password), token: token)
        #expect(enrolled.status == .created, "\(enrolled.text)")
        let enrolment = try enrolled.decoded(as: TOTPEnrolment.self)
        let code = try await appCode(enrolment.uri, at: app.clock.now)
        let confirmed = try await app.v1.post(V1.SecondFactors.confirmTOTP.path, CodeVerification(code: code), token: token)
        #expect(confirmed.status == .ok, "\(confirmed.text)")
        return (token, enrolment.uri, try confirmed.decoded(as: RecoveryCodes.self).codes)
    }

    /// `POST /v1/sessions` with the right password: the 403 problem's challenge.
    static func challenge(_ app: TestHarness, _ identifier: String = "fpi@bk.ru", password: String = password) async throws -> SecondFactorChallenge {
        let response = try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: identifier, password: password))
        let problem = try expectProblem(response, .forbidden, .secondFactorRequired)
        return try #require(problem.secondFactor, "no challenge: \(response.text)")
    }

    @Test("enrol with the password (an otpauth URI pyotp reads), confirm with its first code: ten recovery codes; a /v1 login is two steps, the app's code finishes it once (replayed: refused), a recovery code works once and is told; /api answers second_factor_required in its own form", arguments: TestEngine.once)
    func enrolAndTwoStepLogin(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup: enrolment's refusals, then the account
            try await app.registerPhoneAccount(email: "fpi@bk.ru", confirmingEmail: true)
            let token = try await app.v1.login("fpi@bk.ru", Self.password).token
            try expectProblem(try await app.v1.post(V1.SecondFactors.enrolTOTP.path, TOTPEnrolmentRequest(currentPassword: "wrong-91!"), token: token),
                              .badRequest, .invalidCredentials)
            let enrolment = try await app.v1.post(V1.SecondFactors.enrolTOTP.path, TOTPEnrolmentRequest(currentPassword: Self.password), token: token)
                .decoded(as: TOTPEnrolment.self)
            #expect(enrolment.uri.hasPrefix("otpauth://totp/Gatehouse:fpi%40bk.ru?secret=\(enrolment.secret)&issuer=Gatehouse"), "\(enrolment.uri)")
            #expect(Base32.decode(enrolment.secret)?.count == 20)
            let before = try await app.v1.get(V1.SecondFactors.status.path, token: token).decoded(as: SecondFactorStatus.self)
            #expect(!before.totp, "not on until its first code")
            try expectProblem(try await app.v1.post(V1.SecondFactors.confirmTOTP.path, CodeVerification(code: "000000"), token: token), .badRequest, .invalidCode)

            // MUT: confirm with pyotp's code
            let first = try await Self.appCode(enrolment.uri, at: app.clock.now)
            let confirmed = try await app.v1.post(V1.SecondFactors.confirmTOTP.path, CodeVerification(code: first), token: token)
            let codes = try confirmed.decoded(as: RecoveryCodes.self).codes

            // validate: on, ten distinct codes, the owner told, the session that turned it on kept
            #expect(codes.count == 10 && Set(codes).count == 10)
            #expect(codes.allSatisfy { $0.range(of: #"^[a-z2-9]{5}-[a-z2-9]{5}$"#, options: .regularExpression) != nil }, "\(codes)")
            let status = try await app.v1.get(V1.SecondFactors.status.path, token: token).decoded(as: SecondFactorStatus.self)
            #expect(status.totp && status.recoveryCodesLeft == 10 && abs(status.totpSince?.timeIntervalSince(app.clock.now) ?? 99) < 1)
            // In the account's language: it signed up on /api, in Russian.
            #expect(try await app.outbox(to: "fpi@bk.ru").first?.subject == "Вход в два шага включён")
            #expect(try await app.v1.get(V1.Accounts.me.path, token: token).status == .ok)
            try expectProblem(try await app.v1.post(V1.SecondFactors.enrolTOTP.path, TOTPEnrolmentRequest(currentPassword: Self.password), token: token),
                              .conflict, .totpAlreadyEnabled)

            // The password alone: a challenge, no session; the code of the step confirmed is spent already.
            let challenge = try await Self.challenge(app)
            #expect(challenge.methods == ["totp", "recovery_code"] && abs(challenge.expiresAt.timeIntervalSince(app.clock.now) - 300) < 1)
            // A right code spent already is refused in words of its own, and not counted as a failure.
            let spent = try expectProblem(try await app.v1.post(V1.SecondFactors.complete.path, SecondFactorLogin(challenge: challenge.challenge, code: first)),
                                          .badRequest, .invalidCode)
            #expect(spent.detail == "This code was already used. Wait for the next code in your authenticator app.", "\(spent)")
            app.clock.advance(by: 30)
            let next = try await Self.appCode(enrolment.uri, at: app.clock.now)
            let signedIn = try await app.v1.post(V1.SecondFactors.complete.path, SecondFactorLogin(challenge: challenge.challenge, code: next, device: "phone"))
            #expect(signedIn.status == .created, "\(signedIn.text)")
            let session = try signedIn.decoded(as: AuthSession.self)
            #expect(try await app.v1.me(session.token).email == "fpi@bk.ru")
            // The challenge is used; the same code on a new challenge is a replay.
            try expectProblem(try await app.v1.post(V1.SecondFactors.complete.path, SecondFactorLogin(challenge: challenge.challenge, code: next)),
                              .badRequest, .loginChallengeInvalid)
            let replay = try await app.v1.post(V1.SecondFactors.complete.path, SecondFactorLogin(challenge: try await Self.challenge(app).challenge, code: next),
                                               headers: [.acceptLanguage: "ru"])
            #expect(try expectProblem(replay, .badRequest, .invalidCode).detail == "Этот код уже использован. Дождитесь следующего кода в приложении-аутентификаторе.")

            // A recovery code, typed in capitals without its dash, works once; the owner is told how many are left.
            let recovery = codes[3].uppercased().replacingOccurrences(of: "-", with: "")
            let byRecovery = try await app.v1.post(V1.SecondFactors.complete.path, SecondFactorLogin(challenge: try await Self.challenge(app).challenge, recoveryCode: recovery))
            #expect(byRecovery.status == .created, "\(byRecovery.text)")
            #expect(try await app.outbox(to: "fpi@bk.ru").first?.body.contains("Осталось резервных кодов: 9") == true)
            try expectProblem(try await app.v1.post(V1.SecondFactors.complete.path, SecondFactorLogin(challenge: try await Self.challenge(app).challenge, recoveryCode: codes[3])),
                              .badRequest, .invalidCode)
            try expectProblem(try await app.v1.post(V1.SecondFactors.complete.path, SecondFactorLogin(challenge: try await Self.challenge(app).challenge)),
                              .badRequest, .missingParameter)
            // An expired challenge asks for the password again.
            let late = try await Self.challenge(app)
            app.clock.advance(by: 301)
            try expectProblem(try await app.v1.post(V1.SecondFactors.complete.path, SecondFactorLogin(challenge: late.challenge, code: try await Self.appCode(enrolment.uri, at: app.clock.now))),
                              .badRequest, .loginChallengeInvalid)

            // Surfaces without a second step: the right password gets their own form of second_factor_required.
            let api = try await app.postForm(PhoneAccountsAPI.Path.login, [("login", "fpi@bk.ru"), ("password", Self.password)])
            #expect(api.status == .badRequest && api.headers[HTTPField.Name("X-Error-Code")!] == "second_factor_required", "\(api.text)")
            #expect(api.text.contains("вход в два шага"), "\(api.text)")
            let apiWrong = try await app.postForm(PhoneAccountsAPI.Path.login, [("login", "fpi@bk.ru"), ("password", "wrong-91!")])
            #expect(apiWrong.headers[HTTPField.Name("X-Error-Code")!] == "invalid_credentials", "a wrong password says nothing of the factor")

            let events = try await app.services.audit.events(AuditLog.Query(kinds: [.secondFactorAdded, .recoveryCodeUsed, .secondFactorFailed, .loginSucceeded]))
            #expect(events.filter { $0.kind == "second_factor.added" }.count == 1)
            #expect(events.first { $0.kind == "second_factor.recovery_code_used" }?.detail["left"] == "9")
            #expect(events.contains { $0.kind == "login.succeeded" && $0.detail["with"] == "password + totp" })
            #expect(events.contains { $0.kind == "login.succeeded" && $0.detail["with"] == "password + recovery code" })
            // Failures: the wrong code at confirmation and the spent recovery code; neither replayed app code.
            #expect(events.filter { $0.kind == "second_factor.failed" }.map(\.count).reduce(0, +) == 2, "\(events.filter { $0.kind == "second_factor.failed" })")
        }
    }

    @Test("100 wrong codes at once on one challenge: no more than its 5 attempts are judged; across challenges the account's budget of 10 holds, and then the right code waits too", .tags(.engine), arguments: TestEngine.all)
    func parallelGuessesTakeNoMoreThanTheLimit(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let (_, uri, _) = try await Self.accountWithTOTP(app)
            let challenge = try await Self.challenge(app)
            let right = try await Self.appCode(uri, at: app.clock.now.addingTimeInterval(30))
            let wrong = (0..<100).map { String(format: "%06d", ($0 * 7919 + 13) % 1_000_000) }.filter { $0 != right }

            // MUT: every guess at once, each on its own connection
            let statuses = try await Crowd.with(port: try #require(app.client.port), connections: wrong.count) { crowd in
                try await withThrowingTaskGroup(of: GatehouseErrorCode?.self) { group in
                    for guess in wrong {
                        group.addTask {
                            let body = String(buffer: try V1Client.encode(SecondFactorLogin(challenge: challenge.challenge, code: guess)))
                            let answer = try await crowd.post(V1.SecondFactors.complete.path, body: body)
                            return answer.code.flatMap(GatehouseErrorCode.init(rawValue:))
                        }
                    }
                    return try await group.reduce(into: [GatehouseErrorCode?]()) { $0.append($1) }
                }
            }

            // validate: five judged (invalid_code), the rest refused unjudged
            let judged = statuses.filter { $0 == .invalidCode }.count
            #expect(judged == 5, "judged \(judged): \(statuses)")
            #expect(statuses.filter { $0 == .loginChallengeInvalid }.count == wrong.count - 5)
            // The account's budget: five more wrong on a second challenge spend it (10), the right code on a third waits.
            let second = try await Self.challenge(app)
            for guess in wrong.prefix(5) {
                try expectProblem(try await app.v1.post(V1.SecondFactors.complete.path, SecondFactorLogin(challenge: second.challenge, code: guess)), .badRequest, .invalidCode)
            }
            app.clock.advance(by: 30)
            let third = try await app.v1.post(V1.SecondFactors.complete.path, SecondFactorLogin(challenge: try await Self.challenge(app).challenge, code: right))
            try expectProblem(third, .tooManyRequests, .rateLimited)
            app.clock.advance(by: 901)
            let later = try await Self.appCode(uri, at: app.clock.now)
            let after = try await app.v1.post(V1.SecondFactors.complete.path, SecondFactorLogin(challenge: try await Self.challenge(app).challenge, code: later))
            #expect(after.status == .created, "after the window: \(after.text)")
        }
    }

    @Test("recovery by email keeps a factor older than its window; a temporary password becomes the password only with the code; renew and turn off need the password and a code; an operator's removal is audited and told; erasure leaves no factor", arguments: TestEngine.once)
    func recoveryRenewDisableRemove(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.limits.accountDeletionGrace = 0 }) { app in
            // setup
            let (token, uri, codes) = try await Self.accountWithTOTP(app)
            // An app on for longer than GATEHOUSE_RECOVERY_UNDOES_FACTORS_DAYS: a recovery keeps it
            // (one turned on in those days goes with it: `SecondFactors.undoRecentFactors`).
            app.clock.advance(by: 8 * 86_400)

            // Recovery by email sets the password, and a login still asks for the code.
            _ = try await app.v1.post(V1.Accounts.recoveryCode.path, CodeRequest(email: "fpi@bk.ru"))
            let mailed = try #require(try await app.outbox(to: "fpi@bk.ru").first?.code)
            let recovered = try await app.v1.post(V1.Accounts.recover.path, RecoveryRequest(email: "fpi@bk.ru", code: mailed, password: "new-secret-7!"))
            #expect(recovered.status == .noContent, "\(recovered.text)")
            #expect(try await app.v1.get(V1.Accounts.me.path, token: token).status == .unauthorized, "recovery ended every session")
            _ = try await Self.challenge(app, password: "new-secret-7!")

            // A temporary password (/api's restore by email: the recovery by email unverified the phone)
            // is not the password until the second step.
            let restore = try await app.postForm(PhoneAccountsAPI.Path.restore, [("mail", "fpi@bk.ru")])
            #expect(restore.status == .ok, "\(restore.text)")
            let temporary = try #require(try await app.outbox(to: "fpi@bk.ru").first?.code)
            let pending = try await Self.challenge(app, password: temporary)
            _ = try await Self.challenge(app, password: "new-secret-7!")   // the old one still works meanwhile
            app.clock.advance(by: 30)
            let finished = try await app.v1.post(V1.SecondFactors.complete.path,
                                                 SecondFactorLogin(challenge: pending.challenge, code: try await Self.appCode(uri, at: app.clock.now)))
            #expect(finished.status == .created, "\(finished.text)")
            let fresh = try finished.decoded(as: AuthSession.self).token
            try expectProblem(try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "fpi@bk.ru", password: "new-secret-7!")), .badRequest, .invalidCredentials)
            _ = try await Self.challenge(app, password: temporary)

            // Renew: password and a recovery code; the old codes die.
            try expectProblem(try await app.v1.post(V1.SecondFactors.renewRecoveryCodes.path, SecondFactorProof(currentPassword: temporary), token: fresh),
                              .forbidden, .secondFactorRequired)
            let renewed = try await app.v1.post(V1.SecondFactors.renewRecoveryCodes.path, SecondFactorProof(currentPassword: temporary, recoveryCode: codes[0]), token: fresh)
            #expect(renewed.status == .created, "\(renewed.text)")
            let newCodes = try renewed.decoded(as: RecoveryCodes.self).codes
            try expectProblem(try await app.v1.post(V1.SecondFactors.complete.path, SecondFactorLogin(challenge: try await Self.challenge(app, password: temporary).challenge, recoveryCode: codes[1])),
                              .badRequest, .invalidCode)

            // Turn off: a wrong code refuses, the app's code turns it off; the password alone then signs in.
            app.clock.advance(by: 30)
            try expectProblem(try await app.v1.send(.delete, V1.SecondFactors.disableTOTP.path, body: try V1Client.encode(SecondFactorProof(currentPassword: temporary, code: "123456")),
                                                    contentType: "application/json", token: fresh), .badRequest, .invalidCode)
            let off = try await app.v1.send(.delete, V1.SecondFactors.disableTOTP.path,
                                            body: try V1Client.encode(SecondFactorProof(currentPassword: temporary, code: try await Self.appCode(uri, at: app.clock.now))),
                                            contentType: "application/json", token: fresh)
            #expect(off.status == .noContent, "\(off.text)")
            #expect(try await app.outbox(to: "fpi@bk.ru").first?.subject == "Вход в два шага отключён")
            _ = try await app.v1.login("fpi@bk.ru", temporary)
            #expect(try await app.v1.get(V1.SecondFactors.status.path, token: fresh).decoded(as: SecondFactorStatus.self) == SecondFactorStatus(totp: false, totpSince: nil, recoveryCodesLeft: 0))
            _ = newCodes

            // An operator's removal (the person lost the phone and the codes), audited with the reason.
            _ = try await Self.accountWithTOTP(app, email: "ann@example.com", phone: "+79123456780")
            #expect(try await AccountCommands.removeSecondFactor(configuration: app.configuration, query: "ann@example.com", reason: "lost phone; passport checked", as: "alice"))
            #expect(try await !AccountCommands.removeSecondFactor(configuration: app.configuration, query: "ann@example.com", reason: "twice", as: "alice"))
            _ = try await app.v1.login("ann@example.com", Self.password)
            let removed = try await app.services.audit.events(AuditLog.Query(kinds: [.secondFactorRemoved]))
            #expect(removed.count == 2 && removed.first?.actorID == "alice" && removed.first?.detail["reason"] == "lost phone; passport checked")

            // Erasure takes the factor with the account.
            let (bobToken, _, _) = try await Self.accountWithTOTP(app, email: "bob@example.com", phone: "+79123456781")
            #expect(try await app.v1.send(.delete, V1.Accounts.deleteMe.path, body: try V1Client.encode(AccountDeletionRequest(currentPassword: Self.password)),
                                          contentType: "application/json", token: bobToken).status == .accepted)
            app.clock.advance(by: 1)
            #expect(try await app.services.accountDeletion.eraseDue() == 1)
            let sql = app.services.database.sql
            for table in ["account_totp", "recovery_codes", "login_challenges"] {
                let left = try await sql.raw("SELECT COUNT(*) AS n FROM \(unsafeRaw: table)").first()?.decode(column: "n", as: Int.self)
                #expect(left == 0, "\(table): \(left ?? -1) rows")
            }
        }
    }

    @Test("the second factors' and passkeys' settings: defaults, each variable read, bad values refused")
    func settings() throws {
        let defaults = try GatehouseConfiguration.fromEnvironment([:]).secondFactors
        #expect(defaults.challengeTTL == 300 && defaults.attemptsPerChallenge == 5 && defaults.failuresPerAccount == 10)
        #expect(defaults.enrolmentTTL == 900 && defaults.issuer == "Gatehouse" && defaults.recoveryUndoesWithin == 7 * 86_400)
        let set = try GatehouseConfiguration.fromEnvironment([
            "GATEHOUSE_SECOND_FACTOR_CHALLENGE_SECONDS": "120", "GATEHOUSE_SECOND_FACTOR_ATTEMPTS": "3",
            "GATEHOUSE_SECOND_FACTOR_FAILURES_PER_ACCOUNT": "7", "GATEHOUSE_TOTP_ENROLMENT_SECONDS": "600", "GATEHOUSE_TOTP_ISSUER": " Acme Bank ",
            "GATEHOUSE_RECOVERY_UNDOES_FACTORS_DAYS": "2",
        ]).secondFactors
        #expect(set.challengeTTL == 120 && set.attemptsPerChallenge == 3 && set.failuresPerAccount == 7 && set.enrolmentTTL == 600)
        #expect(set.issuer == "Acme Bank" && set.recoveryUndoesWithin == 2 * 86_400)
        // Passkeys: the relying party and its origins follow PUBLIC_URL unless set.
        let derived = try GatehouseConfiguration.fromEnvironment(["PUBLIC_URL": "https://id.example.com"])
        #expect(derived.passkeyRPID == "id.example.com" && derived.passkeyOrigins == ["https://id.example.com"])
        let passkeys = try GatehouseConfiguration.fromEnvironment([
            "GATEHOUSE_WEBAUTHN_RP_ID": "example.com", "GATEHOUSE_WEBAUTHN_ORIGINS": "https://example.com, ios:bundle-id:com.example.app",
            "GATEHOUSE_WEBAUTHN_RP_NAME": "Example", "GATEHOUSE_WEBAUTHN_CHALLENGE_SECONDS": "120", "GATEHOUSE_PASSKEYS_PER_ACCOUNT": "3",
            "GATEHOUSE_PASSKEY_OPTIONS_PER_IP": "7",
        ])
        #expect(passkeys.passkeyRPID == "example.com" && passkeys.passkeyOrigins == ["https://example.com", "ios:bundle-id:com.example.app"])
        #expect(passkeys.passkeys.rpName == "Example" && passkeys.passkeys.challengeTTL == 120 && passkeys.passkeys.perAccount == 3)
        #expect(passkeys.passkeys.optionsPerIP == 7)
        for (name, value) in [("GATEHOUSE_TOTP_ISSUER", "a:b"), ("GATEHOUSE_SECOND_FACTOR_ATTEMPTS", "0"),
                              ("GATEHOUSE_SECOND_FACTOR_CHALLENGE_SECONDS", "5"), ("GATEHOUSE_WEBAUTHN_RP_ID", "https://example.com"),
                              ("GATEHOUSE_WEBAUTHN_ORIGINS", "example.com"), ("GATEHOUSE_PASSKEYS_PER_ACCOUNT", "0"),
                              ("GATEHOUSE_RECOVERY_UNDOES_FACTORS_DAYS", "-1"), ("GATEHOUSE_RECOVERY_UNDOES_FACTORS_DAYS", "a week")] {
            #expect(throws: ConfigurationError.self, "\(name)=\(value)") { try GatehouseConfiguration.fromEnvironment([name: value]) }
        }
    }
}
