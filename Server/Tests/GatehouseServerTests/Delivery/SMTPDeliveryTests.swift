import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehouseServer
import GatehouseTestSupport
import Testing

/// Confirmation mail through the outbox and the `smtp` channel, against a real SMTP server
/// (aiosmtpd) with STARTTLS and AUTH, including a mail server that is down.
@Suite("Delivery: email through SMTP")
struct SMTPDeliveryTests {
    typealias P = PhoneAccountsAPI.Path

    func configureSMTP(_ c: inout GatehouseConfiguration, port: Int) throws {
        c.delivery.emailChannel = .smtp
        c.delivery.emailFrom = "no-reply@gatehouse.test"
        c.delivery.smtp.host = "127.0.0.1"
        c.delivery.smtp.port = port
        c.delivery.smtp.security = "starttls"
        c.delivery.smtp.username = "gatehouse"
        c.delivery.smtp.password = "mail-secret"
        c.delivery.smtp.caFile = try SMTPTestServer.certificates.get().caCertificate
        c.delivery.smtp.timeoutSeconds = 5
    }

    @Test("the confirmation mail arrives over STARTTLS with AUTH, in the account's language, and its link confirms", .tags(.engine), arguments: TestEngine.all)
    func confirmationMail_isDeliveredOverSMTP(engine: TestEngine) async throws {
        let server = try await SMTPTestServer.start(mode: .startTLS, authUser: "gatehouse", authPassword: "mail-secret")
        defer { server.stop() }
        try await withApp(engine, configure: { try! configureSMTP(&$0, port: server.port) }) { app in
            try await app.registerPhoneAccount(email: "mila@example.com")
            let token = try await app.login("+79123456789", "secret-91!")

            // MUT
            #expect(try await app.postForm(P.sendConfirm, [], token: token).status == .ok)
            try await waitUntil { try server.receivedMessages().count == 1 }

            // validate
            let mail = try #require(try server.receivedMessages().first)
            #expect(mail.rcptTos == ["mila@example.com"])
            #expect(mail.tls)
            #expect(mail.authUser == "gatehouse")
            #expect(mail.decodedHeader("Subject") == "Подтвердите адрес электронной почты")
            #expect(mail.header("From")?.contains("no-reply@gatehouse.test") == true)
            let range = try #require(mail.body.range(of: "http://gatehouse.test/api/users/confirm?id="))
            let link = String(mail.body[range.upperBound...].prefix { !$0.isWhitespace })
            #expect(try await app.get("\(P.confirm)?id=\(link)").status == .ok)
            #expect(try await app.user(token).isConfirmed == false)   // opening the link changes nothing
            #expect(try await app.postForm(P.confirm, [("id", link)]).status == .ok)
            #expect(try await app.user(token).isConfirmed)
        }
    }

    @Test("with the mail server down the outbox keeps the mail and delivers it when the server is back, exactly once", .tags(.engine), arguments: TestEngine.all)
    func confirmationMail_serverDown_isDeliveredLaterExactlyOnce(engine: TestEngine) async throws {
        // setup: a free port with nothing listening
        let probe = try await SMTPTestServer.start(mode: .startTLS, authUser: "gatehouse", authPassword: "mail-secret")
        let port = probe.port
        await probe.stopAndWait()
        try await withApp(engine, configure: { try! configureSMTP(&$0, port: port) }) { app in
            try await app.registerPhoneAccount(email: "mila@example.com")
            let token = try await app.login("+79123456789", "secret-91!")
            #expect(try await app.postForm(P.sendConfirm, [], token: token).status == .ok)
            let db = app.services.database.db
            try await waitUntil { try await OutboxMessageModel.query(on: db).filter(\.$kind == "email").first()?.attempts == 1 }
            var row = try #require(try await OutboxMessageModel.query(on: db).filter(\.$kind == "email").first())
            #expect(row.status == "pending")

            // MUT: the server comes back on the same port; the retry is due after the backoff
            let server = try await SMTPTestServer.start(mode: .startTLS, authUser: "gatehouse", authPassword: "mail-secret", port: port)
            defer { server.stop() }
            app.clock.advance(by: app.configuration.delivery.retryBaseDelay + 1)
            await app.services.deliverer.deliverDue()
            // The background loop may have claimed the retry first: wait for whichever sent it.
            try await waitUntil { try await OutboxMessageModel.query(on: db).filter(\.$kind == "email").first()?.status == "sent" }
            await app.services.deliverer.deliverDue()

            // validate
            #expect(try server.receivedMessages().count == 1)
            row = try #require(try await OutboxMessageModel.query(on: db).filter(\.$kind == "email").first())
            #expect(row.status == "sent" && row.attempts == 2 && row.channel == "smtp")
        }
    }

    @Test("a mailbox the server refuses (550) is marked failed, not retried forever", .tags(.engine), arguments: TestEngine.all)
    func mail_rejectedPermanently_isMarkedFailed(engine: TestEngine) async throws {
        let server = try await SMTPTestServer.start(mode: .startTLS, authUser: "gatehouse", authPassword: "mail-secret", failMode: "rcpt-550")
        defer { server.stop() }
        try await withApp(engine, configure: { try! configureSMTP(&$0, port: server.port) }) { app in
            try await app.registerPhoneAccount(email: "nobody@example.com")
            let token = try await app.login("+79123456789", "secret-91!")
            #expect(try await app.postForm(P.sendConfirm, [], token: token).status == .ok)
            let db = app.services.database.db
            try await waitUntil { try await OutboxMessageModel.query(on: db).filter(\.$kind == "email").first()?.status == "failed" }
            let row = try #require(try await OutboxMessageModel.query(on: db).filter(\.$kind == "email").first())
            #expect(row.attempts == 1)
            #expect(row.lastError?.contains("550") == true)
            #expect(row.lastError?.contains("mail-secret") == false)
        }
    }
}

/// Polls a condition the background deliverer will make true (it runs on its own task).
func waitUntil(timeout: Duration = .seconds(10), _ condition: @Sendable () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(25))
    }
    Issue.record("condition not met within \(timeout)")
}
