import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
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

/// Webhooks (docs/webhooks.md): account events reach the business's endpoint signed on the Standard Webhooks format,
/// checked by its reference library (`standardwebhooks` on PyPI) in a receiver of its own (`webhook_receiver.py`).
@Suite("Webhooks")
struct WebhookTests {
    struct Received: Decodable {
        var id: String?
        var timestamp: String?
        var type: String?
        var accountId: String?
        var changed: [String]?
        var data: [String: JSONValue]?
        var verifiedWith: [Int]
        var answered: Int
        var refused: String?
    }

    static func received(_ receiver: PythonPeer) async throws -> [Received] {
        let (data, _) = try await URLSession.shared.data(from: URL(string: receiver.base + "/_test/received")!)
        return try JSONDecoder().decode([Received].self, from: data)
    }

    static func control(_ receiver: PythonPeer, _ path: String, _ json: String) async throws {
        var request = URLRequest(url: URL(string: receiver.base + path)!)
        request.httpMethod = "POST"
        request.httpBody = Data(json.utf8)
        _ = try await URLSession.shared.data(for: request)
    }

    /// Waits (up to 20 s) until `condition` holds of what the receiver got.
    static func until(_ receiver: PythonPeer, _ what: String, _ condition: ([Received]) -> Bool) async throws -> [Received] {
        let deadline = Date().addingTimeInterval(20)
        var last: [Received] = []
        while Date() < deadline {
            last = try await received(receiver)
            if condition(last) { return last }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("the receiver never got \(what): \(last.map { "\($0.type ?? "?") \($0.answered)" })")
        return last
    }

    /// Waits (up to 20 s) until the delivery of `account`'s event has been tried `attempts` times and its failure
    /// written: only then does moving the clock make its next attempt due.
    static func tried(_ app: TestHarness, endpoint: UUID, key: String, attempts: Int) async throws {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let items = try await app.v1.get(AdminAPI.webhookDeliveries.path(id: endpoint) + "?state=pending", token: key).decoded(as: AdminWebhookDeliveryList.self).items
            if items.contains(where: { $0.attempts >= attempts }) { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("no pending delivery was tried \(attempts) times")
    }

    static func configure(_ configuration: inout GatehouseConfiguration) {
        configuration.delivery.webhooks.allowHTTP = true
        configuration.delivery.webhooks.allowPrivateAddresses = true
        configuration.delivery.webhooks.retrySchedule = [5, 60]
    }

    @Test("an endpoint that is down hears every account event once it is back, each account's in the order they happened, each verified by the reference library; a forged or stale request is refused by it; a delivery given up on is retried by the admin API and arrives", .tags(.engine), arguments: TestEngine.all)
    func downThenBack(engine: TestEngine) async throws {
        let receiver = try await PythonPeer.start("webhook_receiver.py", [], hint: " (is standardwebhooks installed in the test venv?)")
        defer { receiver.stop() }
        try await withApp(engine, configure: Self.configure) { app in
            // setup
            let (_, key) = try await app.services.adminKeys.create(name: "crm", scopes: [.webhooksWrite, .accountsWrite], by: .system("test"))
            let made = try await app.v1.post(AdminAPI.createWebhook.path, AdminWebhookCreation(url: receiver.base + "/hook", description: "CRM"), token: key)
            #expect(made.status == .created, "\(made.text)")
            let endpoint = try made.decoded(as: AdminWebhookSecret.self)
            try await Self.control(receiver, "/_test/secrets", #"{"secrets": ["\#(endpoint.secret)"]}"#)
            try await Self.control(receiver, "/_test/status", #"{"status": 503}"#)

            // MUT: events while the endpoint is down
            func create(_ email: String) async throws -> UUID {
                let response = try await app.v1.post(AdminAPI.createAccount.path, AdminAccountCreation(email: email, emailVerified: true, password: "Long-enough-1!"), token: key)
                return try response.decoded(as: AdminAccount.self).id
            }
            let ann = try await create("ann@example.com")
            _ = try await app.v1.patch(AdminAPI.updateAccount.path(id: ann), AdminAccountChange(firstName: "Ann"), token: key)
            _ = try await app.v1.post(AdminAPI.lockAccount.path(id: ann), AdminReason(reason: "a chargeback"), token: key)
            let bob = try await create("bob@example.com")
            _ = try await app.v1.post(AdminAPI.unlockAccount.path(id: ann), AdminReason(reason: "settled"), token: key)
            let whileDown = try await Self.until(receiver, "the first attempts") { got in Set(got.compactMap(\.id)).count >= 2 }
            try await Self.tried(app, endpoint: endpoint.endpoint.id, key: key, attempts: 1)
            try await Task.sleep(for: .milliseconds(300))
            let heldBack = try await Self.received(receiver)
            let pending = try await app.v1.get(AdminAPI.webhookDeliveries.path(id: endpoint.endpoint.id) + "?state=pending", token: key)

            // validate: one attempt at the first event of each account, the rest held back behind it
            #expect(whileDown.allSatisfy { $0.answered == 503 && $0.verifiedWith == [0] })
            #expect(Set(heldBack.compactMap(\.type)) == ["account.created"] && Set(heldBack.compactMap(\.accountId)) == [ann.uuidString.lowercased(), bob.uuidString.lowercased()],
                    "\(heldBack.map { "\($0.type ?? "?") \($0.accountId ?? "?")" })")
            let queued = try pending.decoded(as: AdminWebhookDeliveryList.self).items
            #expect(queued.count == 5 && queued.contains { $0.attempts == 1 && $0.lastError?.contains("503") == true }, "\(pending.text)")

            // MUT: back up; the first retry is due
            try await Self.control(receiver, "/_test/status", #"{"status": 204}"#)
            app.clock.advance(by: 6)
            let all = try await Self.until(receiver, "every event delivered") { got in got.filter { $0.answered == 204 }.count >= 5 }

            // validate: each account's events in order, each once, each signed for the endpoint's secret
            let delivered = all.filter { $0.answered == 204 }
            #expect(delivered.count == 5 && Set(delivered.compactMap(\.id)).count == 5, "each delivery once")
            #expect(delivered.filter { $0.accountId == ann.uuidString.lowercased() }.compactMap(\.type)
                    == ["account.created", "account.updated", "account.locked", "account.unlocked"])
            #expect(delivered.filter { $0.accountId == bob.uuidString.lowercased() }.compactMap(\.type) == ["account.created"])
            let retriedIDs = Set(whileDown.compactMap(\.id))
            #expect(retriedIDs.isSubset(of: Set(delivered.compactMap(\.id))), "a retry keeps its webhook-id, for the receiver to drop repeats")

            // MUT: what a forger or a replayer sends is refused by the library
            let body = #"{"data":{"accountId":"\#(ann.uuidString.lowercased())"},"timestamp":"2026-01-01T00:00:00.000Z","type":"account.erased"}"#
            let secretBytes = Array(Data(base64Encoded: String(endpoint.secret.dropFirst("whsec_".count)))!)
            func post(id: String, timestamp: Int, signature: String) async throws -> Int {
                var request = URLRequest(url: URL(string: receiver.base + "/hook")!)
                request.httpMethod = "POST"
                request.httpBody = Data(body.utf8)
                request.setValue(id, forHTTPHeaderField: "webhook-id")
                request.setValue(String(timestamp), forHTTPHeaderField: "webhook-timestamp")
                request.setValue(signature, forHTTPHeaderField: "webhook-signature")
                return (try await URLSession.shared.data(for: request)).1.asHTTP
            }
            let now = Int(Date().timeIntervalSince1970)
            let forged = try await post(id: "msg_forged", timestamp: now, signature: StandardWebhooks.signature(id: "msg_forged", timestamp: now, body: body,
                                                                                                              keys: [Array("not the secret".utf8)]))
            let stale = try await post(id: "msg_stale", timestamp: now - 600, signature: StandardWebhooks.signature(id: "msg_stale", timestamp: now - 600, body: body,
                                                                                                                keys: [secretBytes]))
            let genuine = try await post(id: "msg_genuine", timestamp: now, signature: StandardWebhooks.signature(id: "msg_genuine", timestamp: now, body: body,
                                                                                                               keys: [secretBytes]))
            let refusals = try await Self.received(receiver).filter { $0.refused != nil }.compactMap(\.refused)

            // validate
            #expect(forged == 400 && stale == 400 && genuine == 204, "the library checks what Gatehouse's signature says: \(forged) \(stale) \(genuine)")
            #expect(refusals.contains("No matching signature found") && refusals.contains("Message timestamp too old"), "\(refusals)")

            // MUT: a delivery given up on (down past the schedule), then retried
            try await Self.control(receiver, "/_test/status", #"{"status": 500}"#)
            let carol = try await create("carol@example.com")
            try await Self.tried(app, endpoint: endpoint.endpoint.id, key: key, attempts: 1)
            app.clock.advance(by: 6)
            try await Self.tried(app, endpoint: endpoint.endpoint.id, key: key, attempts: 2)
            app.clock.advance(by: 61)
            _ = try await Self.until(receiver, "carol's last attempt") { got in got.filter { $0.accountId == carol.uuidString.lowercased() }.count >= 3 }
            var dead: [AdminWebhookDelivery] = []
            for _ in 0..<100 where dead.isEmpty {
                dead = try await app.v1.get(AdminAPI.webhookDeliveries.path(id: endpoint.endpoint.id) + "?state=failed", token: key).decoded(as: AdminWebhookDeliveryList.self).items
                if dead.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
            }
            try await Self.control(receiver, "/_test/status", #"{"status": 200}"#)
            let deadID = try #require(dead.first?.id)
            let retried = try await app.v1.send(.post, AdminAPI.retryWebhookDelivery.path(id: deadID), token: key)
            let again = try await app.v1.send(.post, AdminAPI.retryWebhookDelivery.path(id: deadID), token: key)
            let arrived = try await Self.until(receiver, "carol's retried event") { got in got.contains { $0.accountId == carol.uuidString.lowercased() && $0.answered == 200 } }

            // validate
            #expect(dead.count == 1 && dead.first?.attempts == 3 && dead.first?.type == "account.created", "\(dead)")
            #expect(retried.status == .noContent, "\(retried.text)")
            try expectProblem(again, .notFound, .deliveryNotFound)  // queued already: not one given up on
            #expect(arrived.filter { $0.accountId == carol.uuidString.lowercased() }.compactMap(\.id).count == 4)
            let audited = try await app.services.audit.events(AuditLog.Query(kinds: [.webhookEndpointCreated, .outboxRetried]))
            #expect(audited.map(\.kind) == ["outbox.retried", "webhook_endpoint.created"] && audited.allSatisfy { $0.actorType == "admin_key" })
        }
    }

    @Test("a rotated secret: both sign during the overlap, so a receiver on either verifies; after it only the new one; a disabled endpoint hears nothing more; an endpoint subscribed to some types hears only those", arguments: TestEngine.once)
    func rotationAndFilters(engine: TestEngine) async throws {
        let receiver = try await PythonPeer.start("webhook_receiver.py", [], hint: " (is standardwebhooks installed in the test venv?)")
        defer { receiver.stop() }
        try await withApp(engine, configure: Self.configure) { app in
            // setup
            let (_, key) = try await app.services.adminKeys.create(name: "crm", scopes: [.webhooksWrite, .accountsWrite], by: .system("test"))
            let all = try await app.v1.post(AdminAPI.createWebhook.path, AdminWebhookCreation(url: receiver.base + "/hook"), token: key).decoded(as: AdminWebhookSecret.self)
            let deletions = try await app.v1.post(AdminAPI.createWebhook.path, AdminWebhookCreation(url: receiver.base + "/hook?deletions", eventTypes: ["account.locked"]), token: key)
                .decoded(as: AdminWebhookSecret.self)
            let rotated = try await app.v1.send(.post, AdminAPI.rotateWebhookSecret.path(id: all.endpoint.id), token: key).decoded(as: AdminWebhookSecret.self)
            try await Self.control(receiver, "/_test/secrets", #"{"secrets": ["\#(all.secret)", "\#(rotated.secret)", "\#(deletions.secret)"]}"#)

            // MUT
            let id = try await app.v1.post(AdminAPI.createAccount.path, AdminAccountCreation(email: "ann@example.com", emailVerified: true), token: key)
                .decoded(as: AdminAccount.self).id
            let first = try await Self.until(receiver, "the creation") { $0.count >= 1 }
            app.clock.advance(by: 86_401)
            _ = try await app.v1.post(AdminAPI.lockAccount.path(id: id), AdminReason(reason: "a chargeback"), token: key)
            let second = try await Self.until(receiver, "the lock, twice") { $0.count >= 3 }
            let disabled = try await app.v1.delete(AdminAPI.disableWebhook.path(id: all.endpoint.id), token: key)
            let list = try await app.v1.get(AdminAPI.webhooks.path, token: key).decoded(as: AdminWebhookList.self)
            _ = try await app.v1.post(AdminAPI.unlockAccount.path(id: id), AdminReason(reason: "settled"), token: key)
            try await Task.sleep(for: .milliseconds(500))
            let third = try await Self.received(receiver)

            // validate
            #expect(first.first?.type == "account.created" && first.first?.verifiedWith == [0, 1], "old and new secret both verify during the overlap: \(first.map(\.verifiedWith))")
            let locks = second.filter { $0.type == "account.locked" }
            #expect(locks.count == 2 && Set(locks.map(\.verifiedWith)) == [[1], [2]], "after the overlap only the new secret; the filtered endpoint hears its type: \(locks.map(\.verifiedWith))")
            #expect(disabled.status == .noContent && list.items.first { $0.id == all.endpoint.id }?.disabledAt != nil)
            #expect(third.count == 3, "nothing for the disabled endpoint, nothing of an unsubscribed type: \(third.map { $0.type ?? "?" })")
        }
    }

    @Test("every door tells the endpoint: a sign-up on /v1, a name changed by its owner, a deletion asked through the admin API and the erasure after the grace period; a refused change tells nothing; sign-ins only an endpoint that names session.created hears", arguments: TestEngine.once)
    func everyDoor(engine: TestEngine) async throws {
        let receiver = try await PythonPeer.start("webhook_receiver.py", [], hint: " (is standardwebhooks installed in the test venv?)")
        defer { receiver.stop() }
        try await withApp(engine, configure: Self.configure) { app in
            // setup
            let (_, key) = try await app.services.adminKeys.create(name: "crm", scopes: [.webhooksWrite, .accountsWrite], by: .system("test"))
            let endpoint = try await app.v1.post(AdminAPI.createWebhook.path, AdminWebhookCreation(url: receiver.base + "/hook"), token: key).decoded(as: AdminWebhookSecret.self)
            let sessions = try await app.v1.post(AdminAPI.createWebhook.path, AdminWebhookCreation(url: receiver.base + "/hook?sessions", eventTypes: ["session.created"]), token: key)
                .decoded(as: AdminWebhookSecret.self)
            try await Self.control(receiver, "/_test/secrets", #"{"secrets": ["\#(endpoint.secret)", "\#(sessions.secret)"]}"#)

            // MUT
            let ann = try await app.v1.signedUp(email: "ann@example.com", tag: "ann")
            let id = try await app.v1.me(ann.token).id
            let renamed = try await app.v1.patch(V1.Accounts.updateProfile.path, json: #"{"firstName": "Annie"}"#, token: ann.token)
            _ = try await app.v1.login("ann@example.com", "secret-91!")
            let taken = try await app.v1.post(AdminAPI.createAccount.path, AdminAccountCreation(email: "someone@example.com", tag: "ann"), token: key)
            _ = try await app.v1.post(AdminAPI.deleteAccount.path(id: id), AdminReason(reason: "asked by letter"), token: key)
            app.clock.advance(by: app.configuration.limits.accountDeletionGrace + 1)
            let erased = try await app.services.accountDeletion.eraseDue()
            let got = try await Self.until(receiver, "the sign-up, the rename, the sign-in, the deletion and the erasure") { $0.count >= 5 }

            // validate
            #expect(renamed.status == .ok, "\(renamed.text)")
            try expectProblem(taken, .conflict, .tagTaken)
            #expect(erased == 1)
            let main = got.filter { $0.verifiedWith == [0] }
            #expect(main.map(\.type) == ["account.created", "account.updated", "account.deletion_requested", "account.erased"]
                    && main.allSatisfy { $0.accountId == id.uuidString.lowercased() && $0.answered == 204 }, "\(got.map { "\($0.type ?? "?") \($0.verifiedWith)" })")
            #expect(main.first { $0.type == "account.updated" }?.changed == ["firstName"])
            #expect(got.filter { $0.verifiedWith == [1] }.map(\.type) == ["session.created"], "only the endpoint that named it hears a sign-in")
        }
    }

    @Test("a paid top-up is one wallet.topup.succeeded with its id, amount and transfer, though the provider's page is posted twice; an operator's credit by hand is not a top-up", arguments: TestEngine.once)
    func topUpSucceeded(engine: TestEngine) async throws {
        let receiver = try await PythonPeer.start("webhook_receiver.py", [], hint: " (is standardwebhooks installed in the test venv?)")
        defer { receiver.stop() }
        try await withApp(engine, configure: Self.configure) { app in
            // setup
            let (_, key) = try await app.services.adminKeys.create(name: "billing", scopes: [.webhooksWrite], by: .system("test"))
            let endpoint = try await app.v1.post(AdminAPI.createWebhook.path, AdminWebhookCreation(url: receiver.base + "/hook", eventTypes: ["wallet.topup.succeeded"]),
                                                 token: key).decoded(as: AdminWebhookSecret.self)
            try await Self.control(receiver, "/_test/secrets", #"{"secrets": ["\#(endpoint.secret)"]}"#)
            let ann = try await app.v1.walletHolder("ann", phone: "+79160000001")
            let started = try await app.v1.post(V1.Wallet.createTopUp.path, NewTopUp(amount: 12_345), token: ann.token, headers: app.v1.idempotencyHeaders("t-1"))
                .decoded(as: TopUp.self)
            let path = try #require(started.confirmationUrl.flatMap { URL(string: $0)?.path })

            // MUT: paid twice through the local provider's page, then a credit by an operator
            for _ in 0..<2 {
                _ = try await app.v1.post(path, body: ByteBuffer(string: "id=\(path.split(separator: "/").last ?? "")"), contentType: "application/x-www-form-urlencoded")
            }
            let account = try await app.v1.me(ann.token).id
            _ = try await app.services.wallet.wallets.credit(phone: "+79160000001", amount: 500, reason: "goodwill")
            let got = try await Self.until(receiver, "the top-up") { !$0.isEmpty }
            try await Task.sleep(for: .milliseconds(300))

            // validate
            let all = try await Self.received(receiver)
            #expect(all.count == 1 && got.first?.type == "wallet.topup.succeeded" && got.first?.verifiedWith == [0], "\(all.map { $0.type ?? "?" })")
            let data = try #require(got.first?.data)
            #expect(data["accountId"] == .string(account.uuidString.lowercased()) && data["topupId"] == .string(started.id.uuidString.lowercased()))
            #expect(data["amountKopecks"] == .integer(12_345) && data["transferId"] != nil, "\(data)")
        }
    }

    @Test("a receiver's answer is not trusted: a redirect is not followed, one slower than GATEHOUSE_WEBHOOK_TIMEOUT_SECONDS is a failure, a mebibyte of answer is read only to its cap (a 2xx is delivered; a 5xx's error keeps its first bytes)", arguments: TestEngine.once)
    func untrustedAnswers(engine: TestEngine) async throws {
        let receiver = try await PythonPeer.start("webhook_receiver.py", [], hint: " (is standardwebhooks installed in the test venv?)")
        defer { receiver.stop() }
        try await withApp(engine, configure: { Self.configure(&$0); $0.delivery.webhooks.timeout = 1 }) { app in
            // setup
            let (_, key) = try await app.services.adminKeys.create(name: "crm", scopes: [.webhooksWrite, .accountsWrite], by: .system("test"))
            var endpoints: [String: UUID] = [:]
            for path in ["/redirect", "/slow", "/big?200", "/big?500"] {
                endpoints[path] = try await app.v1.post(AdminAPI.createWebhook.path, AdminWebhookCreation(url: receiver.base + path), token: key)
                    .decoded(as: AdminWebhookSecret.self).endpoint.id
            }

            // MUT: one account, told to the four
            let made = try await app.v1.post(AdminAPI.createAccount.path, AdminAccountCreation(email: "ann@example.com", emailVerified: true, password: "Long-enough-1!"), token: key)
            #expect(made.status == .created, "\(made.text)")
            func delivery(_ path: String) async throws -> AdminWebhookDelivery? {
                let deadline = Date().addingTimeInterval(20)
                while Date() < deadline {
                    let items = try await app.v1.get(AdminAPI.webhookDeliveries.path(id: endpoints[path]!), token: key).decoded(as: AdminWebhookDeliveryList.self).items
                    if let done = items.first(where: { $0.attempts >= 1 || $0.deliveredAt != nil }) { return done }
                    try await Task.sleep(for: .milliseconds(50))
                }
                return nil
            }

            // validate
            let redirected = try #require(try await delivery("/redirect"))
            #expect(redirected.deliveredAt == nil && redirected.lastError?.contains("answered 307") == true, "\(redirected)")
            let slow = try #require(try await delivery("/slow"))
            #expect(slow.deliveredAt == nil && slow.lastError?.contains("did not answer") == true, "\(slow)")
            let big = try #require(try await delivery("/big?200"))
            #expect(big.deliveredAt != nil && big.state == .sent, "\(big)")
            let failed = try #require(try await delivery("/big?500"))
            #expect(failed.deliveredAt == nil && (failed.lastError?.contains("the endpoint answered 500: xxxx") ?? false) && (failed.lastError?.count ?? .max) < 1_000,
                    "\(failed.lastError?.prefix(80) ?? "-") (\(failed.lastError?.count ?? 0) characters)")
            #expect(try await Self.received(receiver).isEmpty, "/hook was never reached through the redirect")
        }
    }

    @Test("where a webhook may go: https at a public address; http, loopback, private, link-local, carrier-grade NAT, mapped and multicast addresses, and credentials in the URL are refused by name; past GATEHOUSE_WEBHOOK_MAX_ENDPOINTS refused; a key without webhooks:write is 403", arguments: TestEngine.once)
    func addressRules(engine: TestEngine) async throws {
        for (address, isPublic) in [("8.8.8.8", true), ("127.0.0.1", false), ("10.1.2.3", false), ("172.20.0.1", false), ("192.168.1.1", false), ("169.254.169.254", false),
                                  ("100.64.0.1", false), ("0.0.0.0", false), ("224.0.0.1", false), ("2606:4700::1111", true), ("::1", false), ("::ffff:127.0.0.1", false),
                                  ("fd00::1", false), ("fe80::1", false), ("ff02::1", false), ("64:ff9b::a00:1", false), ("2002:a00:1::", false)] {
            let bytes = try #require(WebhookAddress.literal(address), "\(address)")
            #expect(WebhookAddress.isPublic(bytes) == isPublic, "\(address)")
        }
        try await withApp(engine, configure: { $0.delivery.webhooks.maxEndpoints = 1 }) { app in
            let (_, key) = try await app.services.adminKeys.create(name: "crm", scopes: [.webhooksWrite], by: .system("test"))
            let (_, other) = try await app.services.adminKeys.create(name: "other", scopes: [.accountsRead], by: .system("test"))
            for url in ["http://hooks.example.com/x", "https://127.0.0.1/x", "https://[::1]/x", "https://169.254.169.254/latest/meta-data", "https://10.0.0.7/x",
                        "https://user:pass@8.8.8.8/x", "ftp://8.8.8.8/x", "not a url"] {
                try expectProblem(try await app.v1.post(AdminAPI.createWebhook.path, AdminWebhookCreation(url: url), token: key), .badRequest, .invalidParameter)
            }
            try expectProblem(try await app.v1.post(AdminAPI.createWebhook.path, AdminWebhookCreation(url: "https://8.8.8.8/x", eventTypes: ["account.exploded"]), token: key),
                              .badRequest, .invalidParameter)
            try expectProblem(try await app.v1.get(AdminAPI.webhooks.path, token: other), .forbidden, .insufficientScope)
            try expectProblem(try await app.v1.delete(AdminAPI.disableWebhook.path(id: UUID()), token: key), .notFound, .webhookNotFound)
            let made = try await app.v1.post(AdminAPI.createWebhook.path, AdminWebhookCreation(url: "https://8.8.8.8/hooks"), token: key)
            let tooMany = try await app.v1.post(AdminAPI.createWebhook.path, AdminWebhookCreation(url: "https://8.8.4.4/hooks"), token: key)
            let problem = try expectProblem(tooMany, .badRequest, .invalidParameter)
            #expect(problem.detail.contains("GATEHOUSE_WEBHOOK_MAX_ENDPOINTS"), "\(tooMany.text)")
            let secret = try made.decoded(as: AdminWebhookSecret.self).secret
            #expect(made.status == .created && secret.hasPrefix("whsec_") && Data(base64Encoded: String(secret.dropFirst(6)))?.count == 32, "\(made.text)")
        }
    }
}

extension URLResponse {
    fileprivate var asHTTP: Int { (self as? HTTPURLResponse)?.statusCode ?? 0 }
}
