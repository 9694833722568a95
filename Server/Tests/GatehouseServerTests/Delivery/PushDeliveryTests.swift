import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehouseServer
import GatehouseTestSupport
import HTTPTypes
import Testing

/// Pushes end to end (docs/push.md): written into the outbox with what causes them, coalesced,
/// delivered to the local APNs and FCM peers (`Support/push_peers.py`); a token the service
/// refuses removes its device; the person's language, previews and mutes are honoured.
@Suite("Push: what is pushed, through the outbox")
struct PushDeliveryTests {
    static let apnsToken = String(repeating: "0123456789abcdef", count: 4)

    func configure(_ c: inout GatehouseConfiguration, _ peers: PushPeers) throws {
        c.delivery.push.apns = try peers.apns()
        c.delivery.push.fcm = try peers.fcm()
        c.delivery.push.caFile = peers.caFile
        c.delivery.push.coalesceWindow = 2
    }

    /// Moves the clock past the coalescing window and lets the deliverer send what is due (the
    /// background deliverer may be sending some already: waits until none due is left pending).
    /// First every queued push is composed, before the clock moves: a push lane composes before it
    /// sends, and the background lane must not find a push due between its composing and its
    /// sending because the test's clock jumped (on a real clock that gap is a few milliseconds).
    func deliver(_ app: TestHarness, advance: TimeInterval = 3) async {
        await app.services.deliverer.deliverDue(kind: .push)
        app.clock.advance(by: advance)
        for _ in 0..<200 {
            await app.services.deliverer.deliverDue(kind: .push)
            let rows = (try? await app.services.operatorOutbox.recent(to: nil, limit: 1_000)) ?? []
            if !rows.contains(where: { $0.kind == "push" && $0.status == "pending" && $0.nextAttemptAt <= app.clock.now }) { return }
            try? await Task.sleep(for: .milliseconds(25))
        }
    }

    @Test("a burst of 100 messages to an idle person is one push per device, the last text with the right badge; in Russian on the FCM device; a friend request and money too", .tags(.engine), arguments: TestEngine.all)
    func burstCoalesces(engine: TestEngine) async throws {
        let peers = try await PushPeers.start()
        defer { peers.stop() }
        try await withApp(engine, configure: { try? configure(&$0, peers) }) { app in
            // setup: Ann has an iPhone (APNs) and an Android phone in Russian (FCM)
            let ann = try await app.v1.person("ann", first: "Ann", last: "Lee")
            let bob = try await app.v1.person("bob", first: "Bob", last: "Ray")
            let phone = try await app.v1.login("ann@example.com", "secret-91!")
            _ = try await app.v1.post(V1.Accounts.registerDevice.path, DeviceRegistration(platform: .apns, token: Self.apnsToken, bundleId: peers.bundleID), token: ann.token)
            _ = try await app.v1.post(V1.Accounts.registerDevice.path, DeviceRegistration(platform: .fcm, token: "android-ann", language: "ru"), token: phone.token)
            try await app.v1.befriend(bob, ann)
            await deliver(app)
            let chat = try await app.v1.openChat(bob, with: ann)

            // MUT: 100 messages within one second of the server's clock
            for i in 1...100 {
                try await app.v1.send("message \(i)", in: chat.id, by: bob)
                app.clock.advance(by: 0.01)
            }
            await deliver(app)

            // validate
            let received = peers.received()
            #expect(received.allSatisfy { $0["ok"] as? Bool == true }, "\(received.filter { $0["ok"] as? Bool != true })")
            let apns = received.filter { $0["service"] as? String == "apns" }
            let fcm = received.filter { $0["service"] as? String == "fcm" }
            // Bob's friend request, then the burst: one push each per device.
            #expect(apns.count == 2 && fcm.count == 2, "\(apns.count) APNs, \(fcm.count) FCM")
            let request = try #require(apns.first?["payload"] as? [String: Any])
            #expect(((request["aps"] as? [String: Any])?["alert"] as? [String: String])?["body"] == "Bob Ray wants to be your friend")
            let burst = try #require(apns.last?["payload"] as? [String: Any])
            let aps = try #require(burst["aps"] as? [String: Any])
            #expect((aps["alert"] as? [String: String]) == ["title": "Bob Ray", "body": "message 100"])
            // Ids as the JSON answers write them: an app that compares them as strings matches.
            #expect(aps["badge"] as? Int == 1 && aps["thread-id"] as? String == chat.id.uuidString)
            #expect(burst["kind"] as? String == "message" && burst["chat"] as? String == chat.id.uuidString)
            #expect(try await app.v1.get(V1.Messenger.chats.path, token: ann.token).text.contains("\"\(chat.id.uuidString)\""), "the chat list writes the same string")
            let android = try #require(fcm.last?["message"] as? [String: Any])
            #expect((android["notification"] as? [String: String])?["body"] == "message 100")
            let friend = try #require(fcm.first?["message"] as? [String: Any])
            #expect((friend["notification"] as? [String: String])?["body"] == "Bob Ray хочет добавить вас в друзья", "the device's language")
            let history = try await app.v1.history(chat.id, for: ann)
            #expect(history.items.last?.text == "message 100" && history.hasMoreBefore, "every message is there; only the pushes coalesced")
        }
    }

    @Test("previews off: 'New message' without sender or text; a muted chat pushes nothing; the author's own devices get nothing", .tags(.engine), arguments: TestEngine.all)
    func previewsAndMutes(engine: TestEngine) async throws {
        let peers = try await PushPeers.start()
        defer { peers.stop() }
        try await withApp(engine, configure: { try? configure(&$0, peers) }) { app in
            // setup
            let ann = try await app.v1.person("ann")
            let bob = try await app.v1.person("bob", first: "Bob", last: "Ray")
            let cat = try await app.v1.person("cat", first: "Cat", last: "Fox")
            _ = try await app.v1.post(V1.Accounts.registerDevice.path, DeviceRegistration(platform: .fcm, token: "android-ann"), token: ann.token)
            _ = try await app.v1.post(V1.Accounts.registerDevice.path, DeviceRegistration(platform: .fcm, token: "android-bob"), token: bob.token)
            let settings = try await app.v1.patch(V1.Accounts.updateNotificationSettings.path, NotificationSettingsUpdate(previews: false), token: ann.token)
            let withBob = try await app.v1.openChat(bob, with: ann)
            let withCat = try await app.v1.openChat(cat, with: ann)
            let muted = try await app.v1.patch(app.v1.path(V1.Messenger.updateChat, withCat.id), ChatUpdate(mutedUntil: app.clock.now.addingTimeInterval(3_600)), token: ann.token)

            // MUT
            try await app.v1.send("my PIN is 1234", in: withBob.id, by: bob)
            try await app.v1.send("from a muted chat", in: withCat.id, by: cat)
            await deliver(app)

            // validate
            let saved = try settings.decoded(as: NotificationSettings.self)
            #expect(settings.status == .ok && saved.previews == false)
            #expect(muted.status == .ok, "\(muted.text)")
            let pushes = peers.received().filter { $0["service"] as? String == "fcm" }
            #expect(pushes.count == 1, "\(pushes.map { $0["message"] ?? "" })")
            let message = try #require(pushes.first?["message"] as? [String: Any])
            #expect(message["token"] as? String == "android-ann")
            #expect((message["notification"] as? [String: String]) == ["title": "Messenger", "body": "New message"])
            #expect(!String(describing: pushes).contains("1234") && !String(describing: pushes).contains("Bob"), "nothing of the message leaves")
        }
    }

    @Test("a token APNs calls unregistered (410) or FCM UNREGISTERED removes its device and ends the message; a 429 is retried after Retry-After, then sent; money received is pushed", .tags(.engine), arguments: TestEngine.all)
    func refusalsAndRetries(engine: TestEngine) async throws {
        let peers = try await PushPeers.start()
        defer { peers.stop() }
        try await withApp(engine, configure: { try? configure(&$0, peers) }) { app in
            // setup
            let ann = try await app.v1.person("ann")
            let bob = try await app.v1.person("bob", first: "Bob", last: "Ray")
            let second = try await app.v1.login("ann@example.com", "secret-91!")
            let third = try await app.v1.login("ann@example.com", "secret-91!")
            _ = try await app.v1.post(V1.Accounts.registerDevice.path, DeviceRegistration(platform: .apns, token: "dead" + Self.apnsToken.dropFirst(4), bundleId: peers.bundleID), token: ann.token)
            _ = try await app.v1.post(V1.Accounts.registerDevice.path, DeviceRegistration(platform: .fcm, token: "gone-ann"), token: second.token)
            _ = try await app.v1.post(V1.Accounts.registerDevice.path, DeviceRegistration(platform: .fcm, token: "quota-ann"), token: third.token)
            let chat = try await app.v1.openChat(bob, with: ann)

            // MUT
            try await app.v1.send("hello", in: chat.id, by: bob)
            await deliver(app)
            let devicesAfter = try await app.v1.get(V1.Accounts.devices.path, token: ann.token).decoded(as: PushDeviceList.self)
            let afterFirst = peers.received().filter { ($0["message"] as? [String: Any])?["token"] as? String == "quota-ann" }.count
            await deliver(app, advance: 6)

            // validate
            #expect(devicesAfter.items.map(\.tokenHint) == ["ta-ann"], "the 410 and UNREGISTERED devices are gone: \(devicesAfter.items)")
            #expect(afterFirst == 1, "429 once")
            let quota = peers.received().filter { ($0["message"] as? [String: Any])?["token"] as? String == "quota-ann" }
            #expect(quota.count == 2, "retried after Retry-After, then sent")
            let rows = try await app.services.operatorOutbox.recent(to: nil).filter { $0.kind == "push" }
            #expect(rows.filter { $0.status == "failed" }.count == 2 && rows.filter { $0.status == "sent" }.count == 1, "\(rows.map { ($0.status, $0.lastError ?? "") })")
        }
    }

    @Test("money: a top-up, a transfer received and a money request asked and declined are pushed to the one they concern, once (not again as the chat's payment note)", .tags(.engine), arguments: TestEngine.all)
    func money(engine: TestEngine) async throws {
        let peers = try await PushPeers.start()
        defer { peers.stop() }
        try await withApp(engine, configure: { try? configure(&$0, peers) }) { app in
            // setup
            let ann = try await app.v1.walletHolder("ann", phone: "+79990000001")
            let bob = try await app.v1.walletHolder("bob", phone: "+79990000002")
            _ = try await app.v1.post(V1.Accounts.registerDevice.path, DeviceRegistration(platform: .fcm, token: "android-ann"), token: ann.token)
            _ = try await app.v1.post(V1.Accounts.registerDevice.path, DeviceRegistration(platform: .fcm, token: "android-bob"), token: bob.token)

            // MUT
            _ = try await app.services.wallet.wallets.credit(phone: "+79990000002", amount: 100_000, reason: "card top-up")
            await deliver(app)
            _ = try await app.v1.paid(25_050, to: ann, by: bob, comment: "concert")
            await deliver(app)
            let request = try await app.v1.ask(10_000, from: bob, by: ann)
            await deliver(app)
            let declined = try await app.v1.act(V1.Wallet.decline, on: request.id, by: bob)
            await deliver(app)

            // validate
            #expect(declined.status == .ok, "\(declined.text)")
            func bodies(_ token: String) -> [String] {
                peers.received().compactMap { entry -> String? in
                    guard let message = entry["message"] as? [String: Any], message["token"] as? String == token else { return nil }
                    return (message["notification"] as? [String: String])?["body"]
                }
            }
            #expect(bodies("android-bob") == ["Your wallet was topped up with 1 000.00 ₽", "Ann Smith asks you for 100.00 ₽"], "\(bodies("android-bob"))")
            #expect(bodies("android-ann") == ["Bob Smith sent you 250.50 ₽", "Bob Smith declined your request for 100.00 ₽"], "\(bodies("android-ann"))")
        }
    }
}
