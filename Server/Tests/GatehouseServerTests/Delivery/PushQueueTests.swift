import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import GatehouseServer
import GatehouseTestSupport
import Logging
import NIOConcurrencyHelpers
import SQLKit
import Testing

/// The queue between what causes a push and its composition (docs/push.md, "When a push is written"):
/// what is queued is composed once, by one composer however many run, in order; a row that keeps
/// failing is dropped without holding the others back; a stale one is dropped unsent; a change
/// rolled back queues nothing.
@Suite("Push: the queue between a change and its push")
struct PushQueueTests {
    /// Records what it is asked to compose; fails for the accounts in `failing`; waits `pause` in each batch.
    final class RecordingPusher: EventPusher, Sendable {
        let composed = NIOLockedValueBox<[(account: UUID, data: String, at: Date)]>([])
        let failing: Set<UUID>
        let pause: Duration
        init(failing: Set<UUID> = [], pause: Duration = .zero) {
            self.failing = failing
            self.pause = pause
        }
        func push(_ pushes: [QueuedPush], on tx: any GatehouseDatabase) async throws {
            if pause > .zero { try await Task.sleep(for: pause) }
            if let bad = pushes.first(where: { failing.contains($0.event.account) }) { throw Failed(account: bad.event.account) }
            composed.withLockedValue { $0 += pushes.map { ($0.event.account, $0.event.data, $0.queuedAt) } }
        }
        struct Failed: Error { let account: UUID }
    }

    static func queue(_ app: TestHarness, _ events: [PendingEvent]) async throws {
        let db = app.services.database.db
        try await db.raw(PushQueue.insert(events, at: app.clock.now, postgres: db.isPostgres)).run()
    }

    static func left(_ app: TestHarness) async throws -> Int {
        try await app.services.database.sql.raw("SELECT count(*) AS n FROM push_queue").first(decodingColumn: "n", as: Int.self) ?? -1
    }

    @Test("each queued push is composed once, in order, with when it was queued; a row that keeps failing is tried as often as configured (four here) and dropped while the others go through; one older than the configured age (an hour here) is dropped unsent", .tags(.engine), arguments: TestEngine.all)
    func composedOnce_badRowDropped_staleDropped(engine: TestEngine) async throws {
        // Push off in this process (production, no keys): its own push lane composes nothing, the test's composer all.
        try await withApp(engine, configure: {
            $0.environment = .production
            $0.delivery.push.queueMaxAttempts = 4
            $0.delivery.push.queueMaxAge = 3_600
        }) { app in
            // setup: three pushes for Ann, one for a poisoned account between them, and one queued two hours ago
            let (ann, poisoned, old) = (UUID(), UUID(), UUID())
            let queuedAt = app.clock.now
            try await Self.queue(app, [PendingEvent(account: ann, kind: .messageCreated, data: "1")])
            try await Self.queue(app, [PendingEvent(account: poisoned, kind: .messageCreated, data: "x")])
            try await Self.queue(app, (2...3).map { PendingEvent(account: ann, kind: .messageCreated, data: "\($0)") })
            let db = app.services.database.db
            try await db.raw(PushQueue.insert([PendingEvent(account: old, kind: .messageCreated, data: "old")],
                                              at: app.clock.now.addingTimeInterval(-2 * 3_600), postgres: db.isPostgres)).run()
            let pusher = RecordingPusher(failing: [poisoned])
            let composition = PushComposition(database: app.services.database, clock: app.clock.gatehouseClock, pusher: pusher,
                                              settings: app.configuration.delivery.push, logger: Logger(label: "test"))

            // MUT: the push lane's rounds
            var leftAfter: [Int] = []
            for _ in 0..<4 {
                await composition.composeAll()
                leftAfter.append(try await Self.left(app))
            }

            // validate
            let composed = pusher.composed.withLockedValue { $0 }
            #expect(composed.map(\.data) == ["1", "2", "3"], "Ann's three, once each, in order: \(composed.map(\.data))")
            #expect(composed.allSatisfy { $0.account == ann && abs($0.at.timeIntervalSince(queuedAt)) < 1 })
            #expect(leftAfter == [1, 1, 1, 0], "the poisoned row stays for four attempts, then goes: \(leftAfter)")
        }
    }

    @Test("two composers at once (two instances' push lanes) compose every row exactly once", .tags(.engine), arguments: TestEngine.all)
    func twoComposers_eachRowOnce(engine: TestEngine) async throws {
        try await withApp(engine, configure: {
            $0.environment = .production
            $0.databasePoolSize = 8
            $0.delivery.push.queueBatch = 50
        }) { app in
            // setup: 500 pushes
            let accounts = (0..<500).map { _ in UUID() }
            try await Self.queue(app, accounts.enumerated().map { PendingEvent(account: $1, kind: .messageCreated, data: "\($0)") })
            let pusher = RecordingPusher(pause: .milliseconds(20))
            let one = PushComposition(database: app.services.database, clock: app.clock.gatehouseClock, pusher: pusher,
                                      settings: app.configuration.delivery.push, logger: Logger(label: "test"))
            let other = one

            // MUT
            async let a = one.composeAll()
            async let b = other.composeAll()
            let (taken, takenToo) = await (a, b)

            // validate
            let composed = pusher.composed.withLockedValue { $0 }.map(\.account)
            #expect(composed.count == 500 && Set(composed) == Set(accounts), "\(composed.count) composed")
            #expect(taken + takenToo == 500)
            #expect(try await Self.left(app) == 0)
        }
    }

    @Test("a send to someone with a phone queues its push with the message; a retry of it (written the general way after its statement failed) queues nothing, and the push is composed once", .tags(.engine), arguments: TestEngine.all)
    func retryQueuesNothing(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup: a chat with a message in it, and Bob's phone
            let (ann, bob) = (try await app.v1.person("ann"), try await app.v1.person("bob"))
            let chat = try await app.v1.openChat(ann, with: bob)
            _ = try await app.v1.send("hi there", in: chat.id, by: bob)
            _ = try await app.v1.post(V1.Accounts.registerDevice.path, DeviceRegistration(platform: .fcm, token: "android-bob"), token: bob.token)

            // MUT: a send, its push composed, then its retry
            _ = try await app.v1.send("hello", in: chat.id, by: ann, clientID: "c-1")
            await app.services.deliverer.deliverDue(kind: .push)
            _ = try await app.v1.send("hello", in: chat.id, by: ann, clientID: "c-1")
            let queuedByRetry = try await Self.left(app)
            await app.services.deliverer.deliverDue(kind: .push)

            // validate
            #expect(queuedByRetry == 0, "the retry queued no push")
            let pushes = try await app.services.database.sql.raw("SELECT destination, body FROM outbox_messages WHERE kind = 'push'").all()
            let body = try pushes.first?.decode(column: "body", as: String.self)
            #expect(pushes.count == 1 && body?.contains("hello") == true)
        }
    }

    @Test("a device hears only of what happened once it was there: a friend request made before it was registered is not pushed to it; a message after it is, due its coalescing window after the message, not after the push was composed", .tags(.engine), arguments: TestEngine.all)
    func deviceAfterTheEvent_windowFromTheEvent(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.delivery.push.coalesceWindow = 2 }) { app in
            // setup: Bob asks Ann to be friends (Ann has no phone yet); a second later Ann registers one
            let (ann, bob) = (try await app.v1.person("ann"), try await app.v1.person("bob"))
            let asked = try await app.v1.post(V1.Messenger.requestFriend.path, PersonReference(personId: ann.id), token: bob.token)
            app.clock.advance(by: 1)
            _ = try await app.v1.post(V1.Accounts.registerDevice.path, DeviceRegistration(platform: .fcm, token: "android-ann"), token: ann.token)
            app.clock.advance(by: 1)

            // MUT: the request's push composed; then a message from Bob, composed 1.5 s after it was sent
            await app.services.deliverer.deliverDue(kind: .push)
            let afterRequest = try await app.services.database.sql.raw("SELECT count(*) AS n FROM outbox_messages WHERE kind = 'push'")
                .first(decodingColumn: "n", as: Int.self)
            let chat = try await app.v1.openChat(bob, with: ann)
            let sentAt = app.clock.now
            _ = try await app.v1.send("hello", in: chat.id, by: bob)
            app.clock.advance(by: 1.5)
            await app.services.deliverer.deliverDue(kind: .push)

            // validate
            #expect(asked.status == .ok || asked.status == .created, "\(asked.text)")
            #expect(afterRequest == 0, "no push for the request made before the device")
            let rows = try await app.services.database.sql.raw("SELECT body, next_attempt_at FROM outbox_messages WHERE kind = 'push'").all()
            let body = try rows.first?.decode(column: "body", as: String.self)
            #expect(rows.count == 1 && body?.contains("hello") == true, "\(rows.count) pushes")
            let due = try #require(try rows.first?.decode(column: "next_attempt_at", as: Date.self))
            #expect(abs(due.timeIntervalSince(sentAt.addingTimeInterval(2))) < 0.01, "due 2 s after the message: \(due) for a message at \(sentAt)")
        }
    }
}
