import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import GatehouseServer
import GatehouseTestSupport
import HTTPTypes
import Testing

/// The audit trail (docs/operators.md, "The audit trail"): what touches an account's security or
/// money is kept with its actor, address and request; failed logins are counted, not one row
/// per guess; a person reads their own security events; the export holds no secret.
@Suite("The audit trail")
struct AuditTrailTests {
    @Test("/v1/me/events: my sign-up, sign-ins (three wrong passwords in one counted row), password change and sessions ended, newest first, with address and device; never another's", arguments: TestEngine.once)
    func myEventsShowMySecurityHistory(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.signedUp(email: "ann@example.com", tag: "ann")
            let bob = try await app.v1.signedUp(email: "bob@example.com", tag: "bob")
            for _ in 0..<3 {
                let wrong = try await app.v1.post(V1.Sessions.login.path, json: #"{"identifier":"ann@example.com","password":"not-it-42"}"#)
                #expect(wrong.status == .badRequest)
            }
            let phone = try await app.v1.login("ann@example.com", "secret-91!", device: "Pixel 8")
            let changed = try await app.v1.post(V1.Accounts.changePassword.path, PasswordChange(currentPassword: "secret-91!", newPassword: "Another-pass-7"),
                                                token: phone.token)
            #expect(changed.status == .noContent, "\(changed.text)")
            _ = try await app.v1.login("ann@example.com", "Another-pass-7", device: "Laptop")
            let ended = try await app.v1.delete(V1.Sessions.endOthers.path + "?scope=others", token: phone.token)
            #expect(ended.status == .ok, "\(ended.text)")

            // MUT
            let response = try await app.v1.get(V1.Accounts.myEvents.path, token: phone.token)
            let bobs = try await app.v1.get(V1.Accounts.myEvents.path, token: bob.token)

            // validate
            #expect(response.status == .ok, "\(response.text)")
            let page = try response.decoded(as: SecurityEventPage.self)
            #expect(page.items.map(\.kind) == ["sessions.revoked", "login.succeeded", "password.changed", "login.succeeded", "login.failed", "account.created"])
            let failed = try #require(page.items.first { $0.kind == "login.failed" })
            #expect(failed.count == 3 && failed.actor == "account", "three guesses, one row")
            let laptop = try #require(page.items.first { $0.kind == "login.succeeded" })
            #expect(laptop.device == "Laptop" && laptop.ip != nil && laptop.detail["with"] == "password")
            #expect(page.items.first { $0.kind == "password.changed" }?.detail["how"] == "change")
            #expect(page.items.first?.detail["sessions"] == "1", "the laptop's session ended, the phone's kept")
            #expect(page.nextCursor == nil)
            #expect(ann.account.id != bob.account.id)
            let bobsPage = try bobs.decoded(as: SecurityEventPage.self)
            #expect(bobsPage.items.map(\.kind) == ["account.created"], "only Bob's own")
        }
    }

    @Test("/v1/me/events pages by cursor, and refuses a cursor that is not one", arguments: TestEngine.once)
    func myEventsPage(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.signedUp(email: "ann@example.com", tag: "ann")
            for device in ["A", "B", "C"] { _ = try await app.v1.login("ann", "secret-91!", device: device) }

            // MUT
            let first = try await app.v1.get(V1.Accounts.myEvents.path + "?limit=2", token: ann.token).decoded(as: SecurityEventPage.self)
            let cursor = try #require(first.nextCursor)
            let second = try await app.v1.get(V1.Accounts.myEvents.path + "?limit=2&cursor=\(cursor)", token: ann.token).decoded(as: SecurityEventPage.self)
            let bad = try await app.v1.get(V1.Accounts.myEvents.path + "?cursor=nonsense!", token: ann.token)
            let anonymous = try await app.v1.get(V1.Accounts.myEvents.path)

            // validate
            #expect(first.items.map(\.device) == ["C", "B"])
            #expect(second.items.map(\.kind) == ["login.succeeded", "account.created"] && second.items.first?.device == "A")
            #expect(second.nextCursor == nil)
            #expect(bad.status == .badRequest, "\(bad.text)")
            #expect(anonymous.status == .unauthorized)
        }
    }

    @Test("the export: every kind recorded by sign-up, logins, recovery, email and phone changes, app keys and a wallet credit, with its actor and request id, and no password, code, token or key in it", arguments: TestEngine.once)
    func exportHoldsEventsAndNoSecret(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let password = "Very-secret-pass-1"
            let ann = try await app.v1.signedUp(email: "ann@example.com", tag: "ann", password: password)
            let wrong = try await app.v1.post(V1.Sessions.login.path, json: #"{"identifier":"ann","password":"Guessed-Wrong-99"}"#,
                                              headers: [HTTPField.Name("X-Request-Id")!: "req-guess-1"])
            #expect(wrong.status == .badRequest)
            let session = try await app.v1.login("ann", password)
            let recovery = try await app.v1.post(V1.Accounts.recoveryCode.path, CodeRequest(email: "ann@example.com"))
            #expect(recovery.status == .accepted, "\(recovery.text)")
            let recoveryCode = try await app.v1.code(sentTo: "ann@example.com")
            let emailChange = try await app.v1.post(V1.Accounts.requestEmailChange.path, EmailChangeRequest(email: "ann.new@example.com", currentPassword: password),
                                                    token: session.token)
            #expect(emailChange.status == .accepted, "\(emailChange.text)")
            let emailCode = try await app.v1.code(sentTo: "ann.new@example.com")
            let verified = try await app.v1.post(V1.Accounts.verifyEmailChange.path, CodeVerification(code: emailCode), token: session.token)
            #expect(verified.status == .ok, "\(verified.text)")
            let holder = try await app.v1.walletHolder("bob", phone: "+79991234567")
            _ = try await app.services.wallet.wallets.credit(phone: "+79991234567", amount: 50_000, reason: "refund of order 17", reference: "psp-1",
                                                      by: .system("alice"))
            let created = try await app.v1.post(V1.Apps.create.path, NewApp(name: "Signer", bundleId: "com.acme.signer", email: "dev@acme.example"),
                                                token: session.token)
            #expect(created.status == .created, "\(created.text)")
            let key = try created.decoded(as: AppWithKey.self).apiKey

            // MUT
            var lines: [String] = []
            let count = try await AuditCommands.export(configuration: app.configuration, since: Date(timeIntervalSince1970: 0), until: nil,
                                                       account: nil, kinds: []) { lines.append($0) }

            // validate
            #expect(count == lines.count)
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            let events = try lines.map { try decoder.decode(AuditCommands.Line.self, from: Data($0.utf8)) }
            let kinds = Set(events.map(\.kind))
            for kind in ["account.created", "login.failed", "login.succeeded", "recovery.requested", "email.changed", "phone.changed",
                         "wallet.credited", "app.created"] {
                #expect(kinds.contains(kind), "\(kind) in \(kinds.sorted())")
            }
            let credit = try #require(events.first { $0.kind == "wallet.credited" })
            #expect(credit.actorType == "system" && credit.actorId == "alice" && credit.accountId == holder.id)
            #expect(credit.detail["amount_kopecks"] == "50000" && credit.detail["reason"] == "refund of order 17" && credit.detail["reference"] == "psp-1")
            let guess = try #require(events.first { $0.kind == "login.failed" })
            #expect(guess.requestId == "req-guess-1" && guess.accountId == ann.account.id)
            let email = try #require(events.first { $0.kind == "email.changed" })
            #expect(email.detail["from"] == "a…@example.com" && email.detail["to"] == "a…@example.com")
            let text = lines.joined(separator: "\n")
            for secret in [password, "Guessed-Wrong-99", recoveryCode, emailCode, session.token, ann.token, holder.token, key] {
                #expect(!text.contains(secret), "a secret in the export")
            }
            #expect(!text.contains("ann.new@example.com") && !text.contains("+79991234567"), "addresses are masked")
        }
    }

    @Test("gatehouse accounts: show finds an account by phone, login or id with its sessions and events; revoke-sessions needs a reason, ends every session (the next request is 401) and is in the trail as the system on behalf of --as", arguments: TestEngine.once)
    func operatorCommands(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.signedUp(phone: "+79123456789", tag: "ann")
            let laptop = try await app.v1.login("ann", "secret-91!", device: "Laptop")

            // MUT
            let byPhone = try await AccountCommands.show(configuration: app.configuration, query: "8 912 345-67-89")
            let byTag = try await AccountCommands.show(configuration: app.configuration, query: "@ann")
            let byID = try await AccountCommands.show(configuration: app.configuration, query: ann.account.id.uuidString)
            await #expect(throws: AccountCommands.Failure.self) {
                try await AccountCommands.revokeSessions(configuration: app.configuration, query: "ann", reason: "  ", as: "alice")
            }
            await #expect(throws: AccountCommands.Failure.self) {
                try await AccountCommands.show(configuration: app.configuration, query: "nobody@example.com")
            }
            let ended = try await AccountCommands.revokeSessions(configuration: app.configuration, query: "ann", reason: "phone reported stolen", as: "alice")
            let after = try await app.v1.get(V1.Accounts.me.path, token: laptop.token)

            // validate
            #expect(byPhone.id == ann.account.id && byTag.id == ann.account.id && byID.id == ann.account.id)
            #expect(byPhone.sessions.count == 2 && byPhone.sessions.contains { $0.device == "Laptop" })
            #expect(byPhone.events.map(\.kind) == ["login.succeeded", "account.created"])
            #expect(ended == 2)
            #expect(after.status == .unauthorized)
            let revoked = try #require(try await app.services.audit.events(AuditLog.Query(account: ann.account.id, kinds: [.sessionsRevoked])).first)
            #expect(revoked.actorType == "system" && revoked.actorID == "alice" && revoked.detail["reason"] == "phone reported stolen")
            #expect(revoked.detail["sessions"] == "2")
        }
    }

    @Test("failed logins of an unknown identifier are counted without it; events older than the retention go", arguments: TestEngine.once)
    func unknownFailuresAndRetention(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.audit.retention = 30 * 86_400 }) { app in
            // setup
            for _ in 0..<2 {
                _ = try await app.v1.post(V1.Sessions.login.path, json: #"{"identifier":"typed-my-password-here","password":"x-1234567"}"#)
            }
            _ = try await app.v1.signedUp(email: "ann@example.com", tag: "ann")
            let failures = try await app.services.audit.events(AuditLog.Query(kinds: [.loginFailed]))
            // The next window (GATEHOUSE_AUDIT_FAILURE_WINDOW_SECONDS, an hour) counts in a row of its own.
            app.clock.advance(by: app.configuration.audit.failureWindow)
            _ = try await app.v1.post(V1.Sessions.login.path, json: #"{"identifier":"typed-my-password-here","password":"x-1234567"}"#)
            let windows = try await app.services.audit.events(AuditLog.Query(kinds: [.loginFailed])).map(\.count)

            // MUT
            app.clock.advance(by: 31 * 86_400)
            _ = try await app.v1.login("ann", "secret-91!")
            try await app.services.audit.purgeExpired()
            let kept = try await app.services.audit.events(AuditLog.Query())

            // validate
            #expect(failures.count == 1 && failures[0].count == 2 && failures[0].account == nil && failures[0].actorType == "anonymous")
            #expect(windows == [1, 2], "a new window, a new row; the old one keeps its count")
            #expect(!failures[0].detail.values.contains { $0.contains("typed-my-password-here") })
            #expect(kept.map(\.kind) == ["login.succeeded"], "only the event within the retention is left")
        }
    }
}
