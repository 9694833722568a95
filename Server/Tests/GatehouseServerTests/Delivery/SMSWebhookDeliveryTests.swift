import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehouseServer
import GatehouseTestSupport
import HTTPTypes
import Testing

/// The `sms-http` channel against a real local HTTP receiver, including a gateway that is down.
@Suite("Delivery: SMS through an HTTP gateway")
struct SMSWebhookDeliveryTests {
    func configureGateway(_ c: inout GatehouseConfiguration, port: Int) {
        c.delivery.smsChannel = .smsHTTP
        c.delivery.smsHTTP.url = "http://127.0.0.1:\(port)/api/send?sender=Gatehouse&to={{to}}"
        c.delivery.smsHTTP.headers = [("Authorization", "Key test-key"), ("X-Tenant", "t1")]
        c.delivery.smsHTTP.contentType = "application/json"
        c.delivery.smsHTTP.bodyTemplate = #"{"phone":"{{to}}","message":"{{text}}","otp":"{{code}}"}"#
    }

    @Test("the templated request reaches the gateway with headers, escaped JSON and the code", .tags(.engine), arguments: TestEngine.all)
    func sms_isPostedToTheGateway(engine: TestEngine) async throws {
        let gateway = HTTPReceiver()
        let port = try await gateway.start()
        defer { Task { await gateway.stop() } }
        try await withApp(engine, configure: { configureGateway(&$0, port: port) }) { app in
            // MUT
            let response = try await app.postForm(PhoneAccountsAPI.Path.sendSMS, [("phone", "+79123456789")], headers: [.acceptLanguage: "en"])

            // validate
            #expect(response.status == .ok)
            let requests = gateway.received
            #expect(requests.count == 1)
            let request = try #require(requests.first)
            #expect(request.method == "POST")
            #expect(request.uri == "/api/send?sender=Gatehouse&to=%2B79123456789")
            #expect(gateway.header(request, "Authorization") == "Key test-key")
            #expect(gateway.header(request, "X-Tenant") == "t1")
            #expect(gateway.header(request, "Content-Type") == "application/json")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(request.body.utf8)) as? [String: String])
            let code = try #require(json["otp"])
            #expect(json["phone"] == "+79123456789")
            #expect(json["message"] == "Your Gatehouse code is \(code)")
            let row = try #require(try await OutboxMessageModel.query(on: app.services.database.db).first())
            #expect(row.status == "sent" && row.channel == "sms-http" && row.attempts == 1)
        }
    }

    @Test("placeholders in the URL are percent-encoded, Russian text included", .tags(.engine), arguments: TestEngine.all)
    func sms_urlPlaceholders_areEscaped(engine: TestEngine) async throws {
        let gateway = HTTPReceiver()
        let port = try await gateway.start()
        defer { Task { await gateway.stop() } }
        try await withApp(engine, configure: {
            $0.delivery.smsChannel = .smsHTTP
            $0.delivery.smsHTTP.method = "GET"
            $0.delivery.smsHTTP.url = "http://127.0.0.1:\(port)/send?to={{to}}&text={{text}}"
        }) { app in
            let response = try await app.postForm(PhoneAccountsAPI.Path.sendSMS, [("phone", "+79123456789")])   // Russian by default
            #expect(response.status == .ok)
            let uri = try #require(gateway.received.first?.uri)
            let isASCII = uri.unicodeScalars.allSatisfy { $0.isASCII }
            #expect(isASCII, "\(uri)")
            let code = try await app.latestCode(to: "+79123456789")
            let text = try #require(URLComponents(string: uri)?.queryItems?.first { $0.name == "text" }?.value)
            #expect(text == "Ваш код Gatehouse: \(code)")
            #expect(uri.hasPrefix("/send?to=%2B79123456789&text="))
        }
    }

    @Test("a gateway's refusal is a 400 with the gateway's text", .tags(.engine), arguments: TestEngine.all)
    func sms_refusedByGateway_is400WithItsText(engine: TestEngine) async throws {
        let gateway = HTTPReceiver(status: .badRequest, answer: "Invalid destination number")
        let port = try await gateway.start()
        defer { Task { await gateway.stop() } }
        try await withApp(engine, configure: { configureGateway(&$0, port: port) }) { app in
            let response = try await app.postForm(PhoneAccountsAPI.Path.sendSMS, [("phone", "+79123456789")])
            #expect(response.status == .badRequest)
            #expect(response.errorCode == GatehouseErrorCode.deliveryFailed.rawValue)
            #expect(response.text.contains("Invalid destination number"))
            let row = try #require(try await OutboxMessageModel.query(on: app.services.database.db).first())
            #expect(row.status == "failed")
        }
    }

    @Test("with the gateway down the outbox keeps the SMS and delivers it once the gateway is back, exactly once", .tags(.engine), arguments: TestEngine.all)
    func sms_gatewayDown_isDeliveredLaterExactlyOnce(engine: TestEngine) async throws {
        // setup: learn a free port, then take the gateway down
        let gateway = HTTPReceiver()
        let port = try await gateway.start()
        await gateway.stop()
        try await withApp(engine, configure: { configureGateway(&$0, port: port) }) { app in
            let response = try await app.postForm(PhoneAccountsAPI.Path.sendSMS, [("phone", "+79123456789")])
            #expect(response.status == .ok, "a transient failure is not the client's problem: \(response.text)")
            let db = app.services.database.db
            var row = try #require(try await OutboxMessageModel.query(on: db).first())
            #expect(row.status == "pending" && row.attempts == 1)
            #expect(row.lastError?.contains("unreachable") == true)

            // MUT: the gateway comes back; the retry is due after the backoff
            try await gateway.start(port: port)
            await app.services.deliverer.deliverDue()
            #expect(gateway.received.isEmpty, "not before the backoff")
            app.clock.advance(by: app.configuration.delivery.retryBaseDelay + 1)
            await app.services.deliverer.deliverDue()
            // The background loop may have claimed the retry first: wait for whichever sent it.
            try await waitUntil { try await OutboxMessageModel.query(on: db).first()?.status == "sent" }
            await app.services.deliverer.deliverDue()

            // validate
            #expect(gateway.received.count == 1)
            row = try #require(try await OutboxMessageModel.query(on: db).first())
            #expect(row.status == "sent" && row.attempts == 2)
            let code = try await app.latestCode(to: "+79123456789")
            #expect(gateway.received.first?.body.contains(code) == true)
        }
        await gateway.stop()
    }
}

/// The outbox's claims (`OutboxDeliverer`): a claim takes twenty due messages at once, and a message is tried only in
/// the first half of its claim, so that a slow service never has one sent after its claim ran out — when another
/// instance's deliverer (here the background one beside the test's) may claim and send it too.
@Suite("Delivery: claims against a slow gateway")
struct OutboxClaimTests {
    @Test("four SMS through a gateway that takes 1.5 s each, with claims of 4 s: the messages a claim cannot try in its first half are let go and claimed anew; each reaches the gateway once", .tags(.engine), arguments: TestEngine.all)
    func slowGateway_eachMessageOnce(engine: TestEngine) async throws {
        let gateway = HTTPReceiver(delay: .milliseconds(1_500))
        let port = try await gateway.start()
        defer { Task { await gateway.stop() } }
        try await withApp(engine, configure: {
            $0.delivery.smsChannel = .smsHTTP
            $0.delivery.smsHTTP.url = "http://127.0.0.1:\(port)/send?to={{to}}"
            // The longest attempt 2 s: a claim lasts 4 s.
            $0.delivery.smsHTTP.timeoutSeconds = 2
            $0.delivery.smtp.timeoutSeconds = 1
            $0.delivery.push.timeoutSeconds = 1
            $0.delivery.webhooks.timeout = 1
            $0.delivery.claimFloor = 0
            $0.delivery.pollInterval = .milliseconds(200)
        }) { app in
            // setup: four SMS due at once
            let phones = (1...4).map { "+7916000000\($0)" }
            for phone in phones {
                try await app.services.outbox.enqueue(OutgoingMessage(kind: .sms, destination: phone, subject: nil, body: "hello", code: nil),
                                                      on: app.services.database.db)
            }
            #expect(app.services.deliverer.claimDuration == 4)

            // MUT: the server's clock kept with real time (claims expire by it), and a second deliverer beside the
            // background one, as another instance's, looking every 100 ms
            let clock = app.clock
            let deliverer = app.services.deliverer
            let ticking = Task {
                while !Task.isCancelled {
                    try await Task.sleep(for: .milliseconds(100))
                    clock.advance(by: 0.1)
                }
            }
            let other = Task {
                while !Task.isCancelled {
                    await deliverer.deliverDue(kind: .sms)
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
            for _ in 0..<100 where gateway.received.count < 4 { try await Task.sleep(for: .milliseconds(100)) }
            try await Task.sleep(for: .seconds(3))  // time for a second send of any of them to arrive
            other.cancel()
            ticking.cancel()

            // validate
            let sent = gateway.received.map(\.uri)
            #expect(sent.count == 4 && Set(sent).count == 4, "each once: \(sent)")
            let rows = try await OutboxMessageModel.query(on: app.services.database.db).all()
            #expect(rows.allSatisfy { $0.status == "sent" && $0.attempts == 1 }, "\(rows.map { ($0.status, $0.attempts) })")
        }
    }
}
