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
import Testing

/// The operator console's forms over HTTP (docs/operators.md, "The console"), for what the browser
/// walk does not reach: the confirmation link and recovery code sent by support, unbinding a
/// client record for good, retrying a dead message, and the refusals of each role.
@Suite("The operator console's actions")
struct OperatorConsoleTests {
    /// An operator signed in: the cookie to send and the forms' CSRF token.
    struct Desk {
        let app: TestHarness
        let cookie: String
        let csrf: String

        func post(_ path: String, _ fields: [(String, String)], csrf send: Bool = true) async throws -> TestResponse {
            try await app.postForm(path, (send ? [("csrf", csrf)] : []) + fields, headers: [.cookie: cookie])
        }

        func get(_ path: String) async throws -> TestResponse {
            try await app.client.execute(uri: path, method: .get, headers: [.cookie: cookie])
        }
    }

    static func signIn(_ app: TestHarness, _ name: String, role: String) async throws -> Desk {
        let made = try await ConsoleCommands.createOperator(configuration: app.configuration, name: name, role: role, password: "Operator-pass-1", as: nil)
        let code = TOTP(secret: try #require(Base32.decode(made.secret))).code(at: app.clock.now)
        let (token, session) = try await app.services.operators.signIn(name: name, password: "Operator-pass-1", code: code, ip: nil, device: nil, requestID: nil)
        return Desk(app: app, cookie: "gh_operator=\(token)", csrf: session.csrf)
    }

    @Test("the actions the document offers on an account are the server's operator actions on one account: all of them, and only the three others left out")
    func accountActions_areTheServers() {
        let actions = Set(ServerPages.OperatorConsole.accountActions)
        #expect(actions.allSatisfy { OperatorAction(rawValue: $0) != nil }, "\(actions)")
        #expect(Set(OperatorAction.allCases.map(\.rawValue)).subtracting(actions) == ["view", "import-clients", "retry-message"])
    }

    @Test("support resends the confirmation link and sends a recovery code (never seeing it), each with its reason in the trail; read-only may not; a form without its token changes nothing", arguments: TestEngine.once)
    func messagesToThePerson(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup: an /api account whose email is not confirmed, with a verified phone
            try await app.registerPhoneAccount(email: "ivan@example.com")
            let id = try #require(try await app.services.login.findAccount(identifier: "+79123456789")?.id).uuidString.lowercased()
            let support = try await Self.signIn(app, "bob", role: "support")
            let reader = try await Self.signIn(app, "carol", role: "read-only")
            let mailsBefore = try await app.v1.messages(to: "ivan@example.com").count
            let smsBefore = try await app.v1.messages(to: "+79123456789").count

            // MUT
            let noToken = try await support.post("/operator/accounts/\(id)/resend-confirmation", [("reason", "asked by phone")], csrf: false)
            let readOnly = try await reader.post("/operator/accounts/\(id)/resend-confirmation", [("reason", "asked by phone")])
            let noReason = try await support.post("/operator/accounts/\(id)/resend-confirmation", [("reason", "  ")])
            let resent = try await support.post("/operator/accounts/\(id)/resend-confirmation", [("reason", "asked by phone")])
            let recovery = try await support.post("/operator/accounts/\(id)/send-recovery-code", [("reason", "forgot the password")])
            let page = try await support.get("/operator/accounts/\(id)")

            // validate
            #expect(noToken.status == .forbidden && readOnly.status == .forbidden && noReason.status == .badRequest)
            #expect(resent.status == .seeOther && resent.headers[.location] == "/operator/accounts/\(id)?done=resend-confirmation")
            #expect(recovery.status == .seeOther, "\(recovery.text)")
            #expect(try await app.v1.messages(to: "ivan@example.com").count == mailsBefore + 1, "one confirmation link, for the refused forms none")
            let sms = try await app.v1.messages(to: "+79123456789")
            #expect(sms.count == smsBefore + 1, "the code went to the verified phone (the email is not confirmed)")
            let code = try #require(sms.first?.code)
            #expect(!page.text.contains(code), "the operator never sees the code")
            let events = try await app.services.audit.events(AuditLog.Query(kinds: [.confirmationResent, .recoveryRequested]))
            #expect(events.map(\.kind) == ["recovery.requested", "confirmation.resent"])
            #expect(events.allSatisfy { $0.actorType == "operator" && $0.actorID == "bob" })
            #expect(events.first?.detail["reason"] == "forgot the password" && events.last?.detail["reason"] == "asked by phone")
        }
    }

    @Test("unbinding a client record: the record stays, the account's next logins never bind it again; a read-only operator sees the record but no form", arguments: TestEngine.once)
    func unbindForGood(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            _ = try await app.services.clients.importFile(#"{"phone":"+79123456789","room":"Room 12"}"#, format: .jsonLines, by: .system(nil))
            try await app.registerPhoneAccount(email: nil)
            let id = try #require(try await app.services.login.findAccount(identifier: "+79123456789")?.id)
            let admin = try await Self.signIn(app, "alice", role: "admin")
            let reader = try await Self.signIn(app, "carol", role: "read-only")
            let readerPage = try await reader.get("/operator/accounts/\(id.uuidString.lowercased())")

            // MUT
            let unbound = try await admin.post("/operator/accounts/\(id.uuidString.lowercased())/unbind-client", [("reason", "bound to the wrong person")])
            _ = try await app.login("+79123456789", "secret-91!")
            let again = try await admin.post("/operator/accounts/\(id.uuidString.lowercased())/unbind-client", [("reason", "twice")])

            // validate
            #expect(readerPage.text.contains("Room 12") && !readerPage.text.contains("unbind-reason"), "seen, not offered")
            #expect(unbound.status == .seeOther)
            #expect(try await app.services.clients.record(of: id) == nil, "not bound again by the login")
            #expect(try await app.services.clients.record(phone: "+79123456789")?.room == "Room 12", "the record stays")
            #expect(again.status == .badRequest && again.text.contains("No client record is bound"))
            let event = try #require(try await app.services.audit.events(AuditLog.Query(kinds: [.clientUnbound])).first)
            #expect(event.account == id && event.actorID == "alice" && event.detail["reason"] == "bound to the wrong person")
        }
    }

    @Test("a message that failed for good is queued again by support with a reason; a sent one is not; read-only may not", arguments: TestEngine.once)
    func retryDeadMessage(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup: a message the deliverer gave up on
            try await app.registerPhoneAccount(email: nil)
            let outbox = try await app.services.operatorOutbox.recent(to: "+79123456789")
            let dead = try #require(outbox.first)
            try await app.services.database.sql.raw("UPDATE outbox_messages SET status = 'failed', attempts = 8, last_error = 'gateway said no' WHERE id = \(bind: dead.id)").run()
            let support = try await Self.signIn(app, "bob", role: "support")
            let reader = try await Self.signIn(app, "carol", role: "read-only")
            let listed = try await reader.get("/operator/outbox")

            // MUT
            let refused = try await reader.post("/operator/outbox/\(dead.id.uuidString.lowercased())/retry", [("reason", "gateway fixed")])
            let retried = try await support.post("/operator/outbox/\(dead.id.uuidString.lowercased())/retry", [("reason", "gateway fixed")])
            let twice = try await support.post("/operator/outbox/\(dead.id.uuidString.lowercased())/retry", [("reason", "gateway fixed")])

            // validate
            #expect(listed.text.contains("gateway said no") && !listed.text.contains("/retry\""), "read-only sees the error, no retry form")
            #expect(refused.status == .forbidden)
            #expect(retried.status == .seeOther, "\(retried.text)")
            let after = try #require(try await app.services.operatorOutbox.recent(to: "+79123456789").first { $0.id == dead.id })
            #expect(after.status != "failed" && after.lastError == nil)
            #expect(twice.status == .badRequest, "only a failed message is retried")
            let event = try #require(try await app.services.audit.events(AuditLog.Query(kinds: [.outboxRetried])).first)
            #expect(event.actorID == "bob" && event.detail["reason"] == "gateway fixed" && event.detail["to"] == "+7…89")
        }
    }

    @Test("pages: an unknown account is 404; a search is posted and lands on the account by id; the audit page refuses a filter it cannot read; signed out, every page sends to the sign-in", arguments: TestEngine.once)
    func pagesAndFilters(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.signedUp(email: "ann@example.com", tag: "ann")
            let reader = try await Self.signIn(app, "carol", role: "read-only")

            // MUT
            let unknown = try await reader.get("/operator/accounts/\(UUID().uuidString)")
            let found = try await reader.post("/operator/find", [("query", "ANN@example.com")])
            let nobody = try await reader.post("/operator/find", [("query", "nobody@example.com")])
            let badFilter = try await reader.get("/operator/audit?since=yesterday")
            let filtered = try await reader.get("/operator/audit?kind=account.created&account=\(ann.account.id.uuidString)")
            let anonymous = try await app.client.execute(uri: "/operator/audit", method: .get)

            // validate
            #expect(unknown.status == .notFound)
            #expect(found.status == .seeOther && found.headers[.location] == "/operator/accounts/\(ann.account.id.uuidString.lowercased())")
            #expect(nobody.status == .notFound)
            #expect(badFilter.status == .badRequest && badFilter.text.contains("since is yyyy-mm-dd"))
            let trail = try #require(filtered.text.components(separatedBy: "id=\"trail\"").last)
            #expect(filtered.status == .ok && trail.contains("<td>account.created</td>") && !trail.contains("<td>operator.signed_in</td>"), "\(trail)")
            #expect(anonymous.status == .seeOther && anonymous.headers[.location] == "/operator/login")
        }
    }
}
