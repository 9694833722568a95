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
