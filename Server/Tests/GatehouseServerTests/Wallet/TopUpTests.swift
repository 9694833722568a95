import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import GatehouseServer
import GatehouseTestSupport
import GatehouseWallet
import HTTPTypes
import NIOCore
import Testing

/// Money in through a payment provider (docs/wallet.md, "Money in"): against `stripe_peer.py`, a
/// local Stripe that creates Checkout Sessions and refunds and signs its notifications as Stripe
/// documents; and through the local provider of development mode.
@Suite("Wallet: top-ups through a payment provider")
struct TopUpTests {
    typealias W = V1.Wallet

    func startTopUp(_ amount: Int64, by someone: Someone, _ app: TestHarness, key: String = UUID().uuidString,
                    sourceLocation: SourceLocation = #_sourceLocation) async throws -> TopUp {
        let response = try await app.v1.post(W.createTopUp.path, NewTopUp(amount: amount), token: someone.token, headers: app.v1.idempotencyHeaders(key))
        #expect(response.status == .created, "top-up: \(response.text)", sourceLocation: sourceLocation)
        return try response.decoded(as: TopUp.self)
    }

    func topUp(_ id: UUID, of someone: Someone, _ app: TestHarness) async throws -> TopUp {
        try await app.v1.get(W.topUp.path.replacingOccurrences(of: "{id}", with: id.uuidString), token: someone.token).decoded(as: TopUp.self)
    }

    func audit(_ kind: AuditKind, _ app: TestHarness) async throws -> [AuditRecord] {
        try await app.services.audit.events(AuditLog.Query(kinds: [kind]))
    }

    func session(of topUp: TopUp, _ peer: StripePeer) async throws -> String {
        let requests = try await peer.requests().filter { $0["path"] as? String == "/v1/checkout/sessions" }
        let form = try #require(requests.last?["form"] as? [String: String])
        #expect(form["metadata[gatehouse_topup]"] == topUp.id.uuidString.lowercased())
        return try #require(topUp.confirmationUrl?.split(separator: "/").last.map(String.init))
    }

    @Test("a Stripe top-up: the session as documented, paid once though notified twice (and twice at once), refused when forged, stale, unknown or of another amount, each refusal audited",
          .tags(.engine), arguments: TestEngine.all)
    func stripeWireWalk(engine: TestEngine) async throws {
        let peer = try await StripePeer.start()
        defer { peer.stop() }
        try await withApp(engine, configure: { peer.configure(&$0) }) { app in
            try await peer.point(atServerPort: try #require(app.client.port), now: app.clock.now)
            let ann = try await app.v1.walletHolder("ann", phone: "+79160000001")

            // MUT: a top-up of 500 ₽, created at "Stripe" with the key retried
            let key = UUID().uuidString
            let started = try await startTopUp(50_000, by: ann, app, key: key)
            let replay = try await app.v1.post(W.createTopUp.path, NewTopUp(amount: 50_000), token: ann.token, headers: app.v1.idempotencyHeaders(key))
            let otherBody = try await app.v1.post(W.createTopUp.path, NewTopUp(amount: 60_000), token: ann.token, headers: app.v1.idempotencyHeaders(key))

            // validate: the session Stripe was asked for
            #expect(started.state == .pending && started.amount == 50_000 && started.currency == "RUB")
            #expect(started.confirmationUrl?.hasPrefix("https://checkout.stripe.com/c/pay/cs_test_") == true)
            let replayed = try replay.decoded(as: TopUp.self)
            #expect(replay.status == .created && replayed == started && replay.headers[HTTPField.Name(W.replayedHeader)!] == "true")
            #expect(otherBody.status == .unprocessableContent && otherBody.text.contains("idempotency_key_reused"))
            let requests = try await peer.requests()
            #expect(requests.count == 1, "the replay did not ask Stripe again")
            let call = try #require(requests.first)
            let headers = try #require(call["headers"] as? [String: String])
            #expect(headers["authorization"] == "Bearer \(peer.secretKey)")
            #expect(headers["idempotency-key"] == "topup-" + started.id.uuidString.lowercased())
            #expect(headers["stripe-version"] == StripeProvider.apiVersion)
            let form = try #require(call["form"] as? [String: String])
            #expect(form["mode"] == "payment" && form["line_items[0][price_data][currency]"] == "rub")
            #expect(form["line_items[0][price_data][unit_amount]"] == "50000" && form["line_items[0][quantity]"] == "1")
            #expect(form["line_items[0][price_data][product_data][name]"] == "Wallet top-up", "in the person's language")
            #expect(form["payment_intent_data[metadata][gatehouse_topup]"] == started.id.uuidString.lowercased())
            #expect(form["success_url"]?.contains("/topup-return?topup=" + started.id.uuidString.lowercased()) == true)
            let session = try await session(of: started, peer)

            // MUT: Ann pays; Stripe notifies, then retries the same event, then twice at once
            let paid = try await peer.control("pay/\(session)")
            let again = try await peer.control("resend")
            async let raceA = peer.control("resend")
            async let raceB = peer.control("resend")
            let race = try await [raceA, raceB]

            // validate: credited once
            #expect(paid["status"] as? Int == 200 && (paid["body"] as? String)?.contains("\"credited\"") == true, "\(paid)")
            #expect(again["status"] as? Int == 200 && (again["body"] as? String)?.contains("already_credited") == true, "\(again)")
            #expect(race.allSatisfy { $0["status"] as? Int == 200 && ($0["body"] as? String)?.contains("already_credited") == true }, "\(race)")
            #expect(try await app.v1.balance(of: ann) == 50_000)
            let done = try await topUp(started.id, of: ann, app)
            #expect(done.state == .paid && done.transferId != nil && done.confirmationUrl == nil)
            let history = try await app.v1.get(W.transactions.path, token: ann.token).decoded(as: WalletTransactionPage.self)
            #expect(history.items.count == 1 && history.items.first?.kind == .topup && history.items.first?.amount == 50_000)
            let credits = try await audit(.walletCredited, app)
            #expect(credits.count == 1 && credits.first?.actorID == "stripe" && credits.first?.detail["reference"] == "stripe:\(session)")

            // MUT: the same event signed with another secret, signed six minutes ago, with no signature
            let last = try await peer.control("last")
            let forged = try await peer.control("send", ["event": last, "secret": "whsec_not_ours"])
            let stale = try await peer.control("send", ["event": last, "timestamp": Int(app.clock.now.timeIntervalSince1970) - 360])
            let unsigned = try await peer.control("send", ["event": last, "header": ""])
            // …a session with our metadata that we never made, and a paid amount that is not the top-up's
            var unknown = last
            var unknownObject = try #require((last["data"] as? [String: Any])?["object"] as? [String: Any])
            unknownObject["id"] = "cs_test_nobody"
            unknown["data"] = ["object": unknownObject]
            let stranger = try await peer.control("send", ["event": unknown])
            let second = try await startTopUp(10_000, by: ann, app)
            let tampered = try await peer.control("pay/\(try await self.session(of: second, peer))", ["amount": 1_000_000])

            // validate: refused (400), nothing moved, each refusal in the audit trail with its reason
            for (answer, reason) in [(forged, "forged_signature"), (stale, "stale_timestamp"), (unsigned, "missing_signature"),
                                     (stranger, "unknown_payment"), (tampered, "amount_mismatch")] {
                #expect(answer["status"] as? Int == 400 && (answer["body"] as? String)?.contains("notification_refused") == true, "\(reason): \(answer)")
            }
            #expect(try await app.v1.balance(of: ann) == 50_000)
            #expect(try await topUp(second.id, of: ann, app).state == .pending)
            let refusals = try await audit(.paymentNotificationRefused, app)
            #expect(Set(refusals.compactMap { $0.detail["reason"] }) == ["forged_signature", "stale_timestamp", "missing_signature", "unknown_payment", "amount_mismatch"])
            let mismatch = try #require(refusals.first { $0.detail["reason"] == "amount_mismatch" })
            #expect(mismatch.account == ann.id && mismatch.detail["expected"] == "10000 rub" && mismatch.detail["received"] == "1000000 rub")

            // MUT: a page abandoned
            let third = try await startTopUp(20_000, by: ann, app)
            let expired = try await peer.control("expire/\(try await self.session(of: third, peer))")
            // validate
            #expect(expired["status"] as? Int == 200)
            #expect(try await topUp(third.id, of: ann, app).state == .expired)
            #expect(try await app.services.wallet.wallets.audit().isEmpty)
        }
    }

    @Test("refunds: an operator's refund goes to Stripe and moves the ledger once (Stripe's notification of it then moves nothing); a refund in Stripe's dashboard moves its part; one beyond what was paid or what the wallet holds moves nothing and is audited",
          .tags(.engine), arguments: TestEngine.all)
    func refunds(engine: TestEngine) async throws {
        let peer = try await StripePeer.start()
        defer { peer.stop() }
        try await withApp(engine, configure: { peer.configure(&$0) }) { app in
            try await peer.point(atServerPort: try #require(app.client.port), now: app.clock.now)
            let ann = try await app.v1.walletHolder("ann", phone: "+79160000001")
            let bob = try await app.v1.walletHolder("bob", phone: "+79160000002")
            let first = try await startTopUp(30_000, by: ann, app)
            _ = try await peer.control("pay/\(try await session(of: first, peer))")
            let second = try await startTopUp(20_000, by: ann, app)
            _ = try await peer.control("pay/\(try await session(of: second, peer))")
            #expect(try await app.v1.balance(of: ann) == 50_000)
            let firstPaid = try await topUp(first.id, of: ann, app)

            // MUT: an operator gives the first back (the console's action), twice
            let given = try await app.services.wallet.topUps.giveBack(transfer: try #require(firstPaid.transferId), of: ann.id, reason: "asked by phone", by: .operator("olga"))
            let givenAgain = try await app.services.wallet.topUps.giveBack(transfer: try #require(firstPaid.transferId), of: ann.id, reason: "asked by phone", by: .operator("olga"))
            // Stripe's `refund.created` for it is sent a moment later.
            #expect(try await eventually { try await peer.control("last")["type"] as? String == "refund.created" })

            // validate
            #expect(given == .refunded && givenAgain == .before)
            let refundCalls = try await peer.requests().filter { $0["path"] as? String == "/v1/refunds" }
            #expect(refundCalls.count == 1)
            let refundForm = try #require(refundCalls.first?["form"] as? [String: String])
            #expect(refundForm["amount"] == "30000" && refundForm["payment_intent"]?.hasPrefix("pi_") == true)
            #expect(try await app.v1.balance(of: ann) == 20_000)
            #expect(try await topUp(first.id, of: ann, app).refunded == 30_000)
            let refunded = try await audit(.walletRefunded, app)
            #expect(refunded.count == 1 && refunded.first?.actorID == "olga" && refunded.first?.detail["reason"] == "asked by phone")
            let echoAgain = try await peer.control("resend")
            #expect((echoAgain["body"] as? String)?.contains("already_refunded") == true, "\(echoAgain)")

            // MUT: a partial refund of the second in Stripe's dashboard, then Ann spends the rest and the rest is refunded too
            let intent = try #require(try await app.services.wallet.topUps.store.topUp(second.id, of: ann.id)?.paymentIntent)
            _ = try await peer.control("refund", ["payment_intent": intent, "amount": 5_000])
            #expect(try await eventually { try await topUp(second.id, of: ann, app).refunded == 5_000 })
            let afterPartial = try await app.v1.balance(of: ann)
            try await app.v1.paid(15_000, to: bob, by: ann)
            _ = try await peer.control("refund", ["payment_intent": intent, "amount": 15_000])
            #expect(try await eventually { try await audit(.walletRefundNotApplied, app).count == 1 })
            // …and a notification of a refund larger than the payment (signed: Stripe's word, but not what we were paid)
            var tooMuch = try await peer.control("last")
            var object = try #require((tooMuch["data"] as? [String: Any])?["object"] as? [String: Any])
            object["id"] = "re_too_much"
            object["amount"] = 90_000
            tooMuch["data"] = ["object": object]
            tooMuch["id"] = "evt_too_much"
            let overRefund = try await peer.control("send", ["event": tooMuch])

            // validate
            #expect(afterPartial == 15_000)
            let annLeft = try await app.v1.balance(of: ann), bobHas = try await app.v1.balance(of: bob)
            #expect(annLeft == 0 && bobHas == 15_000)
            #expect(try await topUp(second.id, of: ann, app).refunded == 5_000, "the unbacked refund was not counted")
            #expect(overRefund["status"] as? Int == 200 && (overRefund["body"] as? String)?.contains("refund_not_applied") == true)
            let notApplied = try await audit(.walletRefundNotApplied, app)
            #expect(Set(notApplied.compactMap { $0.detail["problem"] }) == ["insufficient_funds", "refund_exceeds_payment"], "\(notApplied.map(\.detail))")
            // The books balance: people hold what was paid in minus what went back.
            #expect(try await app.services.wallet.wallets.audit().isEmpty)
        }
    }

    @Test("development: the local provider's page pays a top-up through the same signed path; top-ups off answer 409; limits refuse", arguments: [TestEngine.sqlite])
    func localProvider(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            let ann = try await app.v1.walletHolder("ann", phone: "+79160000001")
            let started = try await startTopUp(12_345, by: ann, app)
            let url = try #require(started.confirmationUrl)
            let path = try #require(URL(string: url)?.path)
            #expect(path.hasPrefix("/dev/payments/cs_local_"))

            // MUT: the page, then its button
            let page = try await app.v1.get(path)
            let payment = String(path.split(separator: "/").last ?? "")
            let paid = try await app.v1.post(path, body: ByteBuffer(string: "id=\(payment)"), contentType: "application/x-www-form-urlencoded")
            let paidAgain = try await app.v1.post(path, body: ByteBuffer(string: "id=\(payment)"), contentType: "application/x-www-form-urlencoded")
            let back = try await app.v1.get("/topup-return?topup=\(started.id)")

            // validate
            #expect(page.status == .ok && page.text.contains("123.45") && page.text.contains("<form method=\"post\""))
            #expect(paid.status == .ok && paid.text.contains("credited"), "\(paid.text)")
            #expect(paidAgain.status == .ok && paidAgain.text.contains("Already paid."), "\(paidAgain.text)")
            #expect(back.status == .ok && back.text.contains("приложение"))
            #expect(try await app.v1.balance(of: ann) == 12_345)
            #expect(try await topUp(started.id, of: ann, app).state == .paid)
            // Nobody outside knows the local provider's secret: a notification from outside is refused.
            let outside = try await app.v1.post("/webhooks/stripe", json: "{}", headers: [HTTPField.Name("Stripe-Signature")!: "t=1,v1=00"])
            #expect(outside.status == .badRequest && outside.text.contains("notification_refused"))

            // Limits: below the least, above the most; someone without a wallet; another's top-up is 404.
            let small = try await app.v1.post(W.createTopUp.path, NewTopUp(amount: 99), token: ann.token, headers: app.v1.idempotencyHeaders(UUID().uuidString))
            let large = try await app.v1.post(W.createTopUp.path, NewTopUp(amount: 15_000_001), token: ann.token, headers: app.v1.idempotencyHeaders(UUID().uuidString))
            let keyless = try await app.v1.post(W.createTopUp.path, NewTopUp(amount: 1_000), token: ann.token)
            let bob = try await app.v1.person("bob")
            let walletless = try await app.v1.post(W.createTopUp.path, NewTopUp(amount: 1_000), token: bob.token, headers: app.v1.idempotencyHeaders(UUID().uuidString))
            let foreign = try await app.v1.get(W.topUp.path.replacingOccurrences(of: "{id}", with: started.id.uuidString), token: bob.token)
            #expect(small.status == .unprocessableContent && small.text.contains("1.00") && large.status == .unprocessableContent)
            #expect(keyless.status == .badRequest && keyless.text.contains("idempotency_key_required"))
            #expect(walletless.status == .notFound && walletless.text.contains("wallet_not_found"))
            #expect(foreign.status == .notFound && foreign.text.contains("topup_not_found"))
        }
        try await withApp(engine, configure: { $0.wallet.topUps.provider = .off }) { app in
            let ann = try await app.v1.walletHolder("ann", phone: "+79160000001")
            let off = try await app.v1.post(W.createTopUp.path, NewTopUp(amount: 1_000), token: ann.token, headers: app.v1.idempotencyHeaders(UUID().uuidString))
            let hook = try await app.v1.post("/webhooks/stripe", json: "{}")
            #expect(off.status == .conflict && off.text.contains("topups_unavailable"))
            #expect(hook.status == .notFound)
        }
    }

    @Test("refused payment notifications are counted per GATEHOUSE_AUDIT_FAILURE_WINDOW_SECONDS: two in one window are one row counted twice, one a window later another row", arguments: [TestEngine.sqlite])
    func refusedNotifications_countedPerConfiguredWindow(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.audit.failureWindow = 60 }) { app in
            // setup: the same refusal, from the same address, three times
            let header: HTTPFields = [HTTPField.Name("Stripe-Signature")!: "t=1,v1=00"]
            // MUT: two within one minute, the third two minutes later
            let first = try await app.v1.post("/webhooks/stripe", json: "{}", headers: header)
            let second = try await app.v1.post("/webhooks/stripe", json: "{}", headers: header)
            app.clock.advance(by: 120)
            let third = try await app.v1.post("/webhooks/stripe", json: "{}", headers: header)
            // validate: with the default hour all three would share one row
            #expect([first, second, third].allSatisfy { $0.status == .badRequest })
            let rows = try await audit(.paymentNotificationRefused, app)
            #expect(rows.map(\.count).sorted() == [1, 2], "\(rows.map(\.count))")
        }
    }

    @Test("top-ups an account may start in a day are counted (429 past GATEHOUSE_TOPUPS_PER_DAY); a retried key is not a new one and still answers", arguments: [TestEngine.sqlite])
    func perDayLimit(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.wallet.topUps.perDay = 2 }) { app in
            let ann = try await app.v1.walletHolder("ann", phone: "+79160000001")
            let first = try await startTopUp(1_000, by: ann, app, key: "k1")
            _ = try await startTopUp(1_000, by: ann, app, key: "k1")  // the same key: the same top-up, not counted
            _ = try await startTopUp(2_000, by: ann, app, key: "k2")
            let third = try await app.v1.post(W.createTopUp.path, NewTopUp(amount: 3_000), token: ann.token, headers: app.v1.idempotencyHeaders("k3"))
            #expect(third.status == .tooManyRequests && third.headers[.retryAfter] != nil, "\(third.text)")
            let replayed = try await app.v1.post(W.createTopUp.path, NewTopUp(amount: 1_000), token: ann.token, headers: app.v1.idempotencyHeaders("k1"))
            let again = try replayed.decoded(as: TopUp.self)
            #expect(replayed.status == .created && again.id == first.id, "a replay still answers past the limit")
        }
    }

    @Test("Stripe's signature header as documented: any of several v1 signatures, v0 ignored, spaces tolerated; the time checked after the signature")
    func signatureHeader() throws {
        let secret = "whsec_test_secret"
        let payload = Data(#"{"id":"evt_1","type":"customer.created","data":{"object":{"id":"cus_1"}}}"#.utf8)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let verifier = StripeNotifications(secret: secret, tolerance: 300)
        let good = StripeNotifications.header(payload: payload, secret: secret, timestamp: 1_800_000_000)
        let v1 = String(good.split(separator: ",")[1].dropFirst(3))
        // Known answer: HMAC-SHA256("whsec_test_secret", "1800000000." + payload), computed independently with Python's hmac.
        #expect(v1 == "b273bdb3cd551a1a02652eb5b28e91e7afee4834a03461e3e832e55dc0df9a83")
        #expect(try verifier.event(payload: payload, header: good, now: now) == .ignored(event: "evt_1", type: "customer.created"))
        #expect(try verifier.event(payload: payload, header: "t=1800000000, v0=abc, v1=\(String(repeating: "0", count: 64)), v1=\(v1)", now: now)
            == .ignored(event: "evt_1", type: "customer.created"))
        #expect(throws: NotificationRefusal.malformedSignature) { try verifier.event(payload: payload, header: "v1=\(v1)", now: now) }
        #expect(throws: NotificationRefusal.forgedSignature) { try verifier.event(payload: payload + Data(" ".utf8), header: good, now: now) }
        #expect(throws: NotificationRefusal.staleTimestamp) { try verifier.event(payload: payload, header: good, now: now.addingTimeInterval(301)) }
        // A wrong signature is refused as forged even when stale.
        #expect(throws: NotificationRefusal.forgedSignature) {
            try verifier.event(payload: payload, header: "t=1,v1=\(v1)", now: now)
        }
    }

    @Test("configuration: Stripe needs its key and webhook secret; the local provider is refused in production; limits read")
    func configuration() throws {
        let base = ["GATEHOUSE_ENV": "development"]
        #expect(try GatehouseConfiguration.fromEnvironment(base).wallet.topUps.provider == .local)
        let stripe = try GatehouseConfiguration.fromEnvironment(base.merging(["GATEHOUSE_STRIPE_SECRET_KEY": "sk_test_1", "GATEHOUSE_STRIPE_WEBHOOK_SECRET": "whsec_1",
                                                                                "GATEHOUSE_TOPUP_MIN_KOPECKS": "500", "GATEHOUSE_TOPUPS_PER_DAY": "3"]) { $1 })
        #expect(stripe.wallet.topUps.provider == .stripe && stripe.wallet.topUps.minAmount == 500 && stripe.wallet.topUps.perDay == 3)
        #expect(throws: ConfigurationError.self) { try GatehouseConfiguration.fromEnvironment(base.merging(["GATEHOUSE_STRIPE_SECRET_KEY": "sk_test_1"]) { $1 }) }
        #expect(throws: ConfigurationError.self) { try GatehouseConfiguration.fromEnvironment(base.merging(["GATEHOUSE_TOPUP_PROVIDER": "stripe"]) { $1 }) }
        let production = ["GATEHOUSE_ENV": "production", "GATEHOUSE_SECRET": String(repeating: "s", count: 40), "GATEHOUSE_ALLOW_DEV_DELIVERY": "true"]
        #expect(try GatehouseConfiguration.fromEnvironment(production).wallet.topUps.provider == .off, "production takes no top-ups until Stripe is set up")
        #expect(throws: ConfigurationError.self) { try GatehouseConfiguration.fromEnvironment(production.merging(["GATEHOUSE_TOPUP_PROVIDER": "local"]) { $1 }) }
    }
}
