import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import GatehouseServer
import GatehouseTestSupport
import HTTPTypes
import HummingbirdTesting
import NIOCore
import SQLKit
import Testing

/// What an adversarial probe of the new surfaces found, each replayed at the wire as the probe did
/// it (docs/security.md, "Step-up" and the rules it names): a password thief who added a passkey
/// and an authenticator app is out after the owner's recovery, the payment webhook cannot flood the
/// audit trail, a client record follows the account's phone, a top-up paid after a deletion
/// request goes back, an operator cannot be kept out from another address, what an operator did
/// shows the person no internal detail, and the small ones.
@Suite("The probe's findings, replayed")
struct ProbeFindingsTests {
    static let password = "secret-91!"

    // MARK: 1. A password thief after the owner's recovery

    @Test("a thief who knows only the password adds a passkey and turns the app on with it (the password alone no longer does; the owner is told, with the way to undo it); the owner's recovery by email removes both: the owner signs in with the new password, the thief's passkey is refused", arguments: TestEngine.once)
    func thiefAfterRecovery(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup: the owner's account; the thief logs in with the password
            try await app.registerPhoneAccount(email: "owner@example.com", confirmingEmail: true)
            let thief = try await app.v1.login("owner@example.com", Self.password).token

            // MUT: the thief's passkey (the password is all the account has), then the app, stepped up by that passkey
            let thiefKey = try await PasskeyTests.register(app, token: thief, name: "Thief's phone")
            // With a passkey on, the app is turned on only with it too.
            let passwordOnly = try await app.v1.post(V1.SecondFactors.enrolTOTP.path, TOTPEnrolmentRequest(currentPassword: Self.password), token: thief)
            let proof = try await PasskeyTests.stepUp(app, token: thief, state: thiefKey)
            let enrolment = try await app.v1.post(V1.SecondFactors.enrolTOTP.path, TOTPEnrolmentRequest(currentPassword: Self.password, passkey: proof.assertion),
                                                  token: thief).decoded(as: TOTPEnrolment.self)
            let confirmed = try await app.v1.post(V1.SecondFactors.confirmTOTP.path,
                                                  CodeVerification(code: try await SecondFactorTests.appCode(enrolment.uri, at: app.clock.now)), token: thief)
            #expect(confirmed.status == .ok, "\(confirmed.text)")
            let told = try await app.outbox(to: "owner@example.com")
            // The owner recovers by email an hour later.
            app.clock.advance(by: 3_600)
            _ = try await app.v1.post(V1.Accounts.recoveryCode.path, CodeRequest(email: "owner@example.com"))
            let code = try #require(try await app.outbox(to: "owner@example.com").first?.code)
            let recovered = try await app.v1.post(V1.Accounts.recover.path, RecoveryRequest(email: "owner@example.com", code: code, password: "owners-new-7!"))
            let ownerLogin = try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "owner@example.com", password: "owners-new-7!"))
            let thiefPasskey = try await PasskeyTests.login(app, try await PasskeyTests.assertion(app, state: proof.state))

            // validate: told at once, each notice naming the way to undo it
            try expectProblem(passwordOnly, .forbidden, .secondFactorRequired)
            #expect(told.contains { $0.subject == "Добавлен ключ входа" && $0.body.contains("Thief's phone") && $0.body.contains("7 дн.") }, "\(told.map(\.subject))")
            #expect(told.contains { $0.subject == "Вход в два шага включён" && $0.body.contains("7 дн.") })
            #expect(recovered.status == .noContent, "\(recovered.text)")
            #expect(ownerLogin.status == .created, "the owner is in, no second step: \(ownerLogin.text)")
            try expectProblem(thiefPasskey, .badRequest, .passkeyInvalid)
            let owner = try ownerLogin.decoded(as: AuthSession.self).token
            #expect(try await app.v1.get(V1.SecondFactors.status.path, token: owner).decoded(as: SecondFactorStatus.self)
                    == SecondFactorStatus(totp: false, totpSince: nil, recoveryCodesLeft: 0, passkeys: 0))
            let removed = try await app.services.audit.events(AuditLog.Query(kinds: [.secondFactorRemoved]))
            #expect(Set(removed.map { $0.detail["factor"] ?? "" }) == ["totp", "passkey"] && removed.allSatisfy { $0.detail["reason"] == "password recovery" })
        }
    }

    @Test("step-up: with the app on, a stolen session and the password add no passkey (403 second_factor_required), a wrong code neither, the app's code does; an operator sees the app and the passkeys (command line and console) and removes them all", arguments: TestEngine.once)
    func stepUpAndOperators(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup: the app on
            let (token, uri, _) = try await SecondFactorTests.accountWithTOTP(app, email: "owner@example.com")

            // MUT
            let passwordOnly = try await app.v1.post(V1.Passkeys.creationOptions.path, PasskeyOptionsRequest(currentPassword: Self.password), token: token)
            let wrongCode = try await app.v1.post(V1.Passkeys.creationOptions.path, PasskeyOptionsRequest(currentPassword: Self.password, code: "000000"), token: token)
            app.clock.advance(by: 30)
            let withCode = try await PasskeyTests.register(app, token: token, name: "Owner iPad", proof: PasskeyOptionsRequest(
                currentPassword: Self.password, code: try await SecondFactorTests.appCode(uri, at: app.clock.now)))
            _ = withCode
            let shown = try await AccountCommands.show(configuration: app.configuration, query: "owner@example.com")
            let desk = try await OperatorConsoleTests.signIn(app, "sam", role: "support")
            let page = try await desk.get("/operator/accounts/\(shown.id.uuidString.lowercased())")
            let removal = try await desk.post("/operator/accounts/\(shown.id.uuidString.lowercased())/remove-second-factors", [("reason", "ticket 77: passport checked")])
            let after = try await AccountCommands.show(configuration: app.configuration, query: "owner@example.com")

            // validate
            try expectProblem(passwordOnly, .forbidden, .secondFactorRequired)
            try expectProblem(wrongCode, .badRequest, .invalidCode)
            #expect(shown.passkeys.map(\.name) == ["Owner iPad"] && shown.authenticatorAppSince != nil)
            #expect(page.text.contains("Owner iPad") && page.text.contains("remove-second-factors"), "the console lists the passkey, and the action")
            #expect(removal.status == .seeOther || removal.status == .found, "\(removal.status) \(removal.text)")
            #expect(after.passkeys.isEmpty && after.authenticatorAppSince == nil)
            let removed = try await app.services.audit.events(AuditLog.Query(kinds: [.secondFactorRemoved]))
            #expect(removed.filter { $0.actorID == "sam" }.count == 2 && removed.allSatisfy { $0.detail["reason"] == "ticket 77: passport checked" })
        }
    }

    // MARK: 2. The payment webhook and the audit trail

    @Test("300 unsigned posts to /webhooks/stripe from one address: each refused (400), one counted audit row")
    func webhookFlood() async throws {
        try await withApp(.sqlite) { app in
            for _ in 0..<300 {
                let refused = try await app.v1.post("/webhooks/stripe", json: "{}", headers: [HTTPField.Name("Stripe-Signature")!: "t=1,v1=00"])
                #expect(refused.status == .badRequest)
            }
            let rows = try await app.services.audit.events(AuditLog.Query(kinds: [.paymentNotificationRefused]))
            #expect(rows.count == 1 && rows.first?.count == 300, "\(rows.map(\.count))")
        }
    }

    // MARK: 3 and 7. A client record and a recycled number

    @Test("a record bound to A stays with the phone when A verifies another: A no longer sees it, B who registers that phone does; nothing of the record is copied into B's account", .tags(.engine), arguments: TestEngine.all)
    func recordFollowsThePhone(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup: a record for P1; A registers P1 (bound)
            _ = try await app.services.clients.importFile(
                #"{"phone":"+79120000001","firstName":"Previous","lastName":"Holder","birthday":"1970-01-02","room":"Room 12"}"#, format: .jsonLines, by: .system(nil))
            try await app.registerPhoneAccount(phone: "+79120000001", email: nil)
            let a = try await app.login("+79120000001", Self.password)
            #expect(try await app.user(a).room == "Room 12")
            let aV1 = try await app.v1.login("+79120000001", Self.password).token

            // MUT: A verifies P2; B registers P1
            _ = try await app.v1.post(V1.Accounts.requestPhoneVerification.path, PhoneVerificationRequest(phone: "+79120000002", currentPassword: Self.password), token: aV1)
            let verified = try await app.v1.post(V1.Accounts.verifyPhone.path,
                                                 CodeVerification(code: try await app.v1.code(sentTo: "+79120000002"), phone: "+79120000002"), token: aV1)
            app.clock.advance(by: 300)   // past the number's SMS cooldown
            try await app.registerPhoneAccount(phone: "+79120000001", email: nil)
            let b = try await app.login("+79120000001", Self.password)

            // validate
            #expect(verified.status == .ok, "\(verified.text)")
            let aUser = try await app.user(try await app.login("+79120000002", Self.password))
            let bUser = try await app.user(b)
            #expect(aUser.room == nil && aUser.parts.isEmpty, "A changed its phone: the record is not A's")
            #expect(bUser.room == "Room 12", "B holds the phone now")
            #expect(bUser.firstName != "Previous" && bUser.birthday == nil, "the previous holder's names and birthday are not B's")
            let unbound = try await app.services.audit.events(AuditLog.Query(kinds: [.clientUnbound]))
            #expect(unbound.count == 1 && unbound.first?.detail["reason"] == "the account's verified phone changed")
        }
    }

    // MARK: 4. A top-up paid after a deletion request

    @Test("a top-up paid after its person asked for deletion is credited and given back at the provider at once (audited), and its page says so", .tags(.engine), arguments: TestEngine.all)
    func topUpAfterDeletion(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup: a top-up started, then the deletion asked for
            let ann = try await app.v1.walletHolder("ann", phone: "+79160000001")
            let started = try await app.v1.post(V1.Wallet.createTopUp.path, NewTopUp(amount: 150_000), token: ann.token,
                                                headers: app.v1.idempotencyHeaders(UUID().uuidString)).decoded(as: TopUp.self)
            let deletion = try await app.v1.send(.delete, V1.Accounts.deleteMe.path, body: try V1Client.encode(AccountDeletionRequest(currentPassword: Self.password)),
                                                 contentType: "application/json", token: ann.token)
            #expect(deletion.status == .accepted, "\(deletion.text)")

            // MUT: the provider's page is paid (the same signed notification Stripe sends), twice
            let path = try #require(started.confirmationUrl.flatMap { URL(string: $0)?.path })
            let payment = String(path.split(separator: "/").last ?? "")
            let paid = try await app.v1.post(path, body: ByteBuffer(string: "id=\(payment)"), contentType: "application/x-www-form-urlencoded")
            let again = try await app.v1.post(path, body: ByteBuffer(string: "id=\(payment)"), contentType: "application/x-www-form-urlencoded")

            // validate
            #expect(paid.status == .ok && paid.text.contains("given back"), "\(paid.status) \(paid.text)")
            #expect(again.status == .ok, "\(again.status) \(again.text)")
            let credited = try await app.services.audit.events(AuditLog.Query(kinds: [.walletCredited]))
            let refunded = try await app.services.audit.events(AuditLog.Query(kinds: [.walletRefunded]))
            #expect(credited.count == 1 && credited.first?.detail["amount_kopecks"] == "150000")
            #expect(refunded.count == 1 && refunded.first?.detail["amount_kopecks"] == "150000" && refunded.first?.account == ann.id)
            let balance = try await app.services.database.sql.raw("SELECT balance FROM wallets WHERE account_id = \(bind: ann.id)").first()?
                .decode(column: "balance", as: Int64.self)
            #expect(balance == 0, "nothing is left in a wallet about to be erased")
            let row = try await app.services.database.sql.raw("SELECT state, refunded FROM wallet_topups WHERE id = \(bind: started.id)").first()
            #expect(try row?.decode(column: "state", as: String.self) == "paid" && row?.decode(column: "refunded", as: Int64.self) == 150_000)
        }
    }

    // MARK: 5. Operators kept out from elsewhere

    @Test("five wrong sign-ins for sam from another address do not keep sam out of the console from his own; his own address is still limited")
    func operatorNotLockedOut() async throws {
        try await withApp(.sqlite, configure: { $0.trustForwardedFor = true }) { app in
            // setup
            let made = try await ConsoleCommands.createOperator(configuration: app.configuration, name: "sam", role: "support", password: "Operator-pass-1", as: nil)
            let secret = try #require(Base32.decode(made.secret))
            func signIn(from address: String, password: String) async throws -> TestResponse {
                let csrf = String(repeating: "c", count: 43)
                return try await app.postForm("/operator/login", [("csrf", csrf), ("name", "sam"), ("password", password),
                                                                  ("code", TOTP(secret: secret).code(at: app.clock.now))],
                                              headers: [.cookie: "gh_operator_csrf=\(csrf)", HTTPField.Name("X-Forwarded-For")!: address])
            }

            // MUT
            for _ in 0..<6 { _ = try await signIn(from: "203.0.113.9", password: "wrong-guess-1") }
            let attacker = try await signIn(from: "203.0.113.9", password: "Operator-pass-1")
            let sam = try await signIn(from: "198.51.100.7", password: "Operator-pass-1")

            // validate
            #expect(attacker.status == .tooManyRequests, "the guessing address is limited: \(attacker.status)")
            #expect(sam.status == .seeOther || sam.status == .found, "sam from his own address is in: \(sam.status) \(sam.text.prefix(300))")
        }
    }

    // MARK: 6 and 9. What the person is shown of what others did

    @Test("/v1/me/events: an operator's action shows no address, browser or internal reason; a stranger's recovery request is not the person's own", arguments: TestEngine.once)
    func ownEventsShowNoStaffDetail(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.signedUp(email: "ann@example.com")
            let account = try await app.services.login.account(id: ann.account.id)

            // MUT: a stranger asks for a recovery code; an operator sends one with a reason
            #expect(try await app.v1.post(V1.Accounts.recoveryCode.path, CodeRequest(email: "ann@example.com")).status == .accepted)
            app.clock.advance(by: 300)   // past the resend cooldown
            _ = try await app.services.recovery.requestRecoveryCode(
                to: .email("ann@example.com"), origin: RequestOrigin(ip: "10.20.30.40", language: account.language, device: "Firefox/140 (support desk)"),
                by: .operator("sam"), reason: "ticket #4411: flagged by fraud model (score 0.93)")
            let events = try await app.v1.get(V1.Accounts.myEvents.path, token: ann.token).decoded(as: SecurityEventPage.self).items

            // validate
            let requests = events.filter { $0.kind == "recovery.requested" }
            #expect(requests.count == 2)
            let byOperator = try #require(requests.first { $0.actor == "operator" })
            #expect(byOperator.ip == nil && byOperator.device == nil && byOperator.detail["reason"] == nil, "\(byOperator)")
            #expect(requests.contains { $0.actor == "anonymous" }, "a stranger's request is nobody's: \(requests.map(\.actor))")
            // The operator's reason is still in the trail for operators.
            let trail = try await app.services.audit.events(AuditLog.Query(account: ann.account.id, kinds: [.recoveryRequested]))
            #expect(trail.contains { $0.detail["reason"]?.contains("ticket #4411") == true && $0.ip == "10.20.30.40" })
        }
    }

    // MARK: 8. Imports

    @Test("imports: a file of more rows than the limit is cut at the limit while read (CSV and JSON lines, CRLF too); a dry run writes nothing and reports what the import does; a read-only operator is refused before the body is read")
    func imports() async throws {
        // The reader stops at the limit: a million rows are never held.
        let reader = ClientRecordFile(defaultCountryCode: "7")
        let csv = "phone,room\r\n" + String(repeating: "+79120000001,Room 1\r\n", count: 1_000_000)
        #expect(reader.parse(csv, format: .csv, limit: 11).count == 11)
        let lines = String(repeating: #"{"phone":"+79120000001"}"# + "\r\n", count: 1_000_000)
        #expect(reader.parse(lines, format: .jsonLines, limit: 11).count == 11)
        let crlf = reader.parse("phone,room\r\n+79120000001,Room 1\r\n+79120000002,\"Room, 2\"\r\n", format: .csv).map { try? $0.result.get().room }
        #expect(crlf == ["Room 1", "Room, 2"], "CRLF ends a row, never part of a field: \(crlf)")

        try await withApp(.sqlite, configure: { $0.operators.importMaxRows = 100; $0.operators.importMaxBytes = 4_096 }) { app in
            let clients = app.services.clients
            let file = (1...50).map { #"{"phone":"+7912000\#(String(format: "%04d", $0))","room":"R\#($0)"}"# }.joined(separator: "\n")
            let over = try await clients.importFile((1...150).map { #"{"phone":"+7912100\#(String(format: "%04d", $0))"}"# }.joined(separator: "\n"),
                                                    format: .jsonLines, by: .system(nil))
            let dry = try await clients.importFile(file, format: .jsonLines, by: .system(nil), dryRun: true)
            let count = { try await app.services.database.sql.raw("SELECT COUNT(*) AS n FROM client_records").first()?.decode(column: "n", as: Int.self) }
            let afterDry = try await count()
            let applied = try await clients.importFile(file, format: .jsonLines, by: .system(nil))
            #expect(over.refused.first?.reason.contains("more than 100 rows") == true && over.created == 0)
            #expect(dry.created == 50 && afterDry == 0, "a dry run writes nothing")
            #expect(applied.created == dry.created && applied.updated == dry.updated, "the preview says what the import does")

            // An upload past what the form may carry: refused for the role, never read.
            let readOnly = try await OperatorConsoleTests.signIn(app, "rita", role: "read-only")
            let big = String(repeating: "x", count: app.configuration.operators.importMaxBytes * 2 + 100_000)
            let refused = try await readOnly.post("/operator/clients/import", [("format", "jsonl"), ("carried", big)])
            #expect(refused.status == .forbidden && !refused.text.contains("bytes"), "\(refused.status): the role, not the size")
        }
    }

    // MARK: 9. The small ones

    @Test("production: /metrics only behind its token (off without one; asked for without one, refused); the admin API decodes %2B and %20 in a phone")
    func metricsAndAdminPath() async throws {
        let production = ["GATEHOUSE_ENV": "production", "GATEHOUSE_SECRET": String(repeating: "s", count: 40), "GATEHOUSE_ALLOW_DEV_DELIVERY": "true", "GATEHOUSE_HOST": "0.0.0.0"]
        #expect(try GatehouseConfiguration.fromEnvironment(production).metricsEnabled == false)
        let asked = try #require(throws: ConfigurationError.self) {
            try GatehouseConfiguration.fromEnvironment(production.merging(["GATEHOUSE_METRICS": "true"]) { $1 })
        }
        #expect(asked.variable == "GATEHOUSE_METRICS")
        let scraped = try GatehouseConfiguration.fromEnvironment(production.merging(["GATEHOUSE_METRICS_TOKEN": "metrics-token-0123456789"]) { $1 })
        #expect(scraped.metricsEnabled && scraped.metricsToken != nil)
        #expect(try GatehouseConfiguration.fromEnvironment([:]).metricsEnabled, "development keeps them open on loopback")

        try await withApp(.sqlite) { app in
            let key = try #require(try await ConsoleCommands.createKey(configuration: app.configuration, name: "CRM", scopes: ["clients:read,clients:write"], as: nil).key)
            _ = try await app.services.clients.importFile(#"{"phone":"+79123456789","room":"Room 12"}"#, format: .jsonLines, by: .system(nil))
            for written in ["%2B79123456789", "%2B7%20912%20345%2067%2089", "+79123456789"] {
                let read = try await app.v1.get("/admin/v1/clients/\(written)", token: key)
                #expect(read.status == .ok && read.text.contains("Room 12"), "\(written): \(read.status) \(read.text)")
            }
        }
    }
}
