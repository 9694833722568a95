import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import GatehouseServer
import GatehouseTestSupport
import HummingbirdTesting
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle
import SQLKit
import Testing

/// Events a test subscriber received.
final class Received: Sendable {
    private let events = NIOLockedValueBox<[BusEvent]>([])
    func add(_ event: BusEvent) { events.withLockedValue { $0.append(event) } }
    var all: [BusEvent] { events.withLockedValue { $0 } }
}

extension NumberedText {
    /// The text with the numbers in their places: what the statement that sends it does with `string_agg`
    /// (`EventLog.inStatement`), written here as the reference the tests compare with.
    func filled(_ number: (Int) -> Int64) -> String {
        var text = pieces[0]
        for (index, hole) in holes.enumerated() { text += String(number(hole)) + pieces[index + 1] }
        return text
    }
}

/// A second server on the same database as `app` (a second instance behind the load balancer).
func withSecondInstance(of app: TestHarness, _ body: @Sendable (TestHarness) async throws -> Void) async throws {
    var logger = Logger(label: "gatehouse-test-2")
    logger.logLevel = .warning
    let services = try GatehouseServices(configuration: app.configuration, dependencies: .init(clock: app.clock.gatehouseClock), logger: logger)
    try await buildApplication(services: services).test(.live) { client in
        try await body(TestHarness(client: client, clock: app.clock, services: services, configuration: app.configuration))
    }
}

@Suite("Event bus")
struct EventBusTests {
    @Test("an event reaches the subscribers of its topic and account, and no one else; a cancelled subscription hears nothing", .tags(.engine), arguments: TestEngine.all)
    func subscriptions(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            let bus = app.services.bus
            #expect(await eventually { bus.isConnected })
            let ann = UUID(), bob = UUID()
            let annOnly = Received(), everyone = Received(), otherTopic = Received(), cancelled = Received()
            let s1 = bus.subscribe(topic: "test.a", account: ann) { annOnly.add($0) }
            let s2 = bus.subscribe(topic: "test.a", account: nil) { everyone.add($0) }
            let s3 = bus.subscribe(topic: "test.b", account: nil) { otherTopic.add($0) }
            let s4 = bus.subscribe(topic: "test.a", account: nil) { cancelled.add($0) }
            s4.cancel()
            try await bus.publish(BusEvent(topic: "test.a", account: ann, body: "1"))
            try await bus.publish(BusEvent(topic: "test.a", account: bob, body: "2"))
            #expect(await eventually { everyone.all.count == 2 })
            #expect(annOnly.all == [BusEvent(topic: "test.a", account: ann, body: "1")])
            #expect(everyone.all.map(\.body).sorted() == ["1", "2"])
            #expect(otherTopic.all.isEmpty)
            #expect(cancelled.all.isEmpty)
            withExtendedLifetime((s1, s2, s3)) {}
        }
    }

    @Test("whom an instance listens for: a topic's subscriber for every account, an account's for its own, no one once cancelled (what the buses ask before reading a body)")
    func subscribersListen() {
        let subscribers = InProcessEventBus().subscribers
        let (ann, bob) = (UUID(), UUID())
        #expect(!subscribers.listens(topic: "t", account: ann))
        let annOnly = subscribers.subscribe(topic: "t", account: ann) { _ in }
        #expect(subscribers.listens(topic: "t", account: ann))
        #expect(!subscribers.listens(topic: "t", account: bob) && !subscribers.listens(topic: "t", account: nil) && !subscribers.listens(topic: "u", account: ann))
        let everyone = subscribers.subscribe(topic: "u", account: nil) { _ in }
        #expect(subscribers.listens(topic: "u", account: bob) && subscribers.listens(topic: "u", account: nil))
        annOnly.cancel()
        everyone.cancel()
        #expect(!subscribers.listens(topic: "t", account: ann) && !subscribers.listens(topic: "u", account: bob))
    }

    @Test("an event too large for NOTIFY is refused, not cut", .tags(.engine), arguments: TestEngine.all)
    func payloadLimit(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            let big = BusEvent(topic: "test.big", body: String(repeating: "x", count: 8_000))
            await #expect(throws: EventBusError.self) { try await app.services.bus.publish(big) }
            let fits = BusEvent(topic: "test.big", body: String(repeating: "x", count: 7_900))
            try await app.services.bus.publish(fits)
        }
    }

    @Test("many events travel packed, in order, escapes and all, each payload within the limit", .tags(.engine), arguments: TestEngine.all)
    func packed(engine: TestEngine) async throws {
        // Bodies that test the hand-written JSON: quotes, backslashes, control characters, DEL, non-ASCII, a frame in a frame.
        let tricky = ["\"q\" \\ \n\r\t \u{01}\u{1F}\u{7F}", "Привет, 💸", #"{"data":{"text":"a\"b"},"seq":7}"#, ""]
        let account = UUID()
        let events = (0..<300).map { i in BusEvent(topic: "test.packed", account: i % 7 == 0 ? nil : account, body: "\(i) " + tricky[i % tricky.count] + String(repeating: "x", count: i * 13 % 900)) }
        let payloads = try EventBusLimits.pack(events)
        #expect(payloads.count > 1 && payloads.count < events.count)
        #expect(payloads.allSatisfy { $0.utf8.count <= EventBusLimits.maxPayloadBytes })
        #expect(payloads.flatMap { EventBusLimits.unpack($0) ?? [] } == events)
        #expect(EventBusLimits.unpack(try EventBusLimits.encode(events[1])) == [events[1]])
        // What nobody here listens to is left out, its body stepped over (escapes and all); the rest read as before.
        let wanted: (String, UUID?) -> Bool = { _, to in to == nil }
        #expect(payloads.flatMap { EventBusLimits.unpack($0, wanted: wanted) ?? [] } == events.filter { $0.account == nil })
        #expect(payloads.allSatisfy { EventBusLimits.unpack($0, wanted: { _, _ in false }) == [] })
        #expect(EventBusLimits.unpack(#"{"t":"a","b":"\u0001\"}"}"#, wanted: { _, _ in false }) == [])
        #expect(EventBusLimits.unpack(#"{"t":"a","b":"\"}"#, wanted: { _, _ in false }) == nil)
        // Not in the shape this version writes (keys in another order, spaces, other escapes): the JSON decoder reads it.
        #expect(EventBusLimits.unpack(#"{ "b": "x\u00e9\/", "a": "\#(account.uuidString.lowercased())", "t": "test.packed" }"#)
                == [BusEvent(topic: "test.packed", account: account, body: "xé/")])
        #expect(EventBusLimits.unpack(#"{ "b": "x", "a": "\#(account.uuidString.lowercased())", "t": "test.packed" }"#, wanted: wanted) == [])
        for broken in [#"[{"t":"a","b":"1"},"#, #"{"t":"a","b":"1"}x"#, #"{"t":"a","a":"not-an-id","b":"1"}"#, #"{"t":"a","b":"\x"}"#] {
            #expect(EventBusLimits.unpack(broken) == nil, "\(broken)")
        }
        try await withApp(engine) { app in
            let bus = app.services.bus
            #expect(await eventually { bus.isConnected })
            let received = Received()
            let subscription = bus.subscribe(topic: "test.packed", account: nil) { received.add($0) }
            try await bus.publish(events, on: nil)
            #expect(await eventually { received.all.count == events.count })
            #expect(received.all == events)
            withExtendedLifetime(subscription) {}
        }
    }

    @Test("an announcement with places for its numbers is, once they are filled in, the announcement written with them: escapes, frames too large to ride along, packing within the limit (the statement's own filling: the one-statement send's test)")
    func numberedAnnouncements() throws {
        let tricky = ["\"q\" \\ \n\r\t \u{01}\u{1F}\u{7F}", "Привет, 💸", #"{"text":"a\"b","seq":7}"#, "", String(repeating: "y", count: 7_200)]
        let accounts = [UUID(), UUID()]
        var templates: [NumberedText] = []
        var expected: [BusEvent] = []
        var numbers: [Int64] = []
        for index in 0..<60 {
            let seq = [1, 42, 9_999_999, Int64.max, -3][index % 5] + Int64(index % 5 == 3 ? 0 : index)
            let data = #"{"text":"# + JSONString.quoted(tricky[index % tricky.count] + String(repeating: "x", count: index * 37 % 500)) + "}"
            let event = StoredEvent(account: accounts[index % 2], seq: seq, kind: "message.created", data: data)
            numbers.append(seq)
            // What `EventLog` announces for a numbered event: its number, and its frame when that fits.
            let body = event.frame.utf8.count < EventLimits.frameInNotification ? "\(seq)\n\(event.frame)" : "\(seq)"
            expected.append(BusEvent(topic: EventLog.topic, account: event.account, body: body))
            let template = EventBusLimits.encode(topic: EventLog.topic, account: event.account,
                                                 body: StoredEvent.busBody(kind: event.kind, data: data, hole: index))
            #expect(template.filled { numbers[$0] } == (try EventBusLimits.encode(expected[index])), "event \(index)")
            #expect(StoredEvent.frame(kind: event.kind, data: data, hole: 0).filled { _ in seq } == event.frame)
            templates.append(template)
        }
        let packed = try EventBusLimits.pack(templates)
        #expect(packed.count > 1 && packed.count < templates.count)
        let filled = packed.map { $0.filled { numbers[$0] } }
        #expect(filled.allSatisfy { $0.utf8.count <= EventBusLimits.maxPayloadBytes })
        #expect(filled.flatMap { EventBusLimits.unpack($0) ?? [] } == expected)
        // A place is reckoned at a number's widest: a text that fits only with short numbers is refused.
        var tooLong = NumberedText(String(repeating: "z", count: EventBusLimits.maxPayloadBytes - 10))
        tooLong.append(number: 0)
        #expect(throws: EventBusError.self) { try EventBusLimits.pack([tooLong]) }
    }

    @Test("PostgreSQL: an event published in a transaction arrives when it commits, never when it rolls back", .tags(.engine))
    func transactional() async throws {
        guard TestEngine.all.contains(.postgres) else { return }
        try await withApp(.postgres) { app in
            let bus = app.services.bus
            #expect(await eventually { bus.isConnected })
            let received = Received()
            let subscription = bus.subscribe(topic: "test.tx", account: nil) { received.add($0) }
            struct Rollback: Error {}
            try? await app.services.database.db.withTransaction { db in
                try await bus.publish(BusEvent(topic: "test.tx", body: "rolled back"), on: db)
                throw Rollback()
            }
            try await app.services.database.db.withTransaction { db in
                try await bus.publish(BusEvent(topic: "test.tx", body: "committed"), on: db)
                // Not before the commit: the listener has had time to hear anything sent so far.
                try await db.raw("SELECT pg_sleep(0.2)").run()
                #expect(received.all.isEmpty)
            }
            #expect(await eventually { !received.all.isEmpty })
            try await bus.publish(BusEvent(topic: "test.tx", body: "marker"))
            #expect(await eventually { received.all.count == 2 })
            #expect(received.all.map(\.body) == ["committed", "marker"])
            withExtendedLifetime(subscription) {}
        }
    }

    @Test("two instances on PostgreSQL: a session revoked on one is refused on the other at once, not after the cache's TTL", .tags(.engine))
    func revocationAcrossInstances() async throws {
        guard TestEngine.all.contains(.postgres) else { return }
        // A minute of cache: only the bus can make the other instance forget in time.
        try await withApp(.postgres, configure: { $0.limits.sessionCacheTTL = 60 }) { first in
            try await withSecondInstance(of: first) { second in
                #expect(await eventually { first.services.bus.isConnected && second.services.bus.isConnected })
                let session = try await first.v1.signedUp(email: "two@example.com")
                #expect(try await second.v1.me(session.token).firstName == "Ann")   // now cached on the second

                // A change on the first is seen on the second.
                let renamed = try await first.v1.patch(V1.Accounts.me.path, ProfileUpdate(firstName: "Anna"), token: session.token)
                #expect(renamed.status == .ok)
                #expect(await eventually { (try? await second.v1.me(session.token).firstName) == "Anna" })

                // A revocation on the first is refused on the second.
                let started = ContinuousClock.now
                let revoked = try await first.v1.delete(V1.Sessions.logout.path, token: session.token)
                #expect(revoked.status == .noContent)
                let refused = await eventually {
                    (try? await second.v1.get(V1.Accounts.me.path, token: session.token).status) == .unauthorized
                }
                #expect(refused, "the second instance still serves a session revoked on the first")
                print("revocation seen by the other instance after \(ContinuousClock.now - started)")
            }
        }
    }

    @Test("two instances on PostgreSQL: an app's key disabled or rotated on one is refused on the other at once, not after the cache's TTL", .tags(.engine))
    func appKeyAcrossInstances() async throws {
        guard TestEngine.all.contains(.postgres) else { return }
        // A minute of cache: only the bus can make the other instance forget in time.
        try await withApp(.postgres, configure: { $0.signature.appCacheTTL = 60 }) { first in
            try await withSecondInstance(of: first) { second in
                #expect(await eventually { first.services.bus.isConnected && second.services.bus.isConnected })
                let apps = first.services.signToLogin.apps
                let (app, key) = try await apps.create(NewApp(name: "Signer", bundleId: "com.acme.signer", email: "dev@acme.example"), owner: nil,
                                                       by: .system(nil))
                @Sendable func answer(_ key: String) async throws -> String? {
                    try await SignatureEndpointsTests.Fixture(app: second, key: key).json("/login/", ["apikey": "\"\(key)\"", "email": "\"a@b.example\""])["res"] as? String
                }
                #expect(try await answer(key) != "1", "the key works on the second")
                #expect(second.services.signToLogin.store.enabledApps.count == 1, "and is kept there")

                // Rotated on the first: the old key is refused on the second, the new one works.
                let (rotated, newKey) = try await apps.rotateKey(app, by: .system(nil))
                #expect(await eventually { (try? await answer(key)) == "1" }, "the second still takes a key rotated on the first")
                #expect(try await answer(newKey) != "1")

                // Disabled on the first: refused on the second.
                _ = try await apps.update(rotated, AppUpdate(enabled: false), by: .system(nil))
                #expect(await eventually { (try? await answer(newKey)) == "1" }, "the second still takes a key disabled on the first")
            }
        }
    }

    @Test("PostgreSQL: while the listener hears its own heartbeats a cached session outlives the TTL (no database read), a revocation on another instance is still refused at once; a listener that stops hearing (its backend stopped) leaves the TTL the bound, and after GATEHOUSE_EVENT_BUS_SILENCE_SECONDS connects again, through a gap", .tags(.engine))
    func provenDelivery_keepsSessionsPastTheTTL() async throws {
        guard TestEngine.all.contains(.postgres) else { return }
        // A TTL of 1 s (a heartbeat every 0.5 s: a loaded machine's notifications keep up), a silence well beyond it.
        try await withApp(.postgres, configure: { $0.limits.sessionCacheTTL = 1; $0.limits.sessionCacheMaxAge = 120; $0.eventBusSilence = 5 }) { first in
            try await withSecondInstance(of: first) { second in
                let bus = try #require(first.services.bus as? PostgresEventBus)
                #expect(await eventually { bus.isConnected && second.services.bus.isConnected })
                let ann = try await first.v1.signedUp(email: "ann@example.com")
                let bob = try await first.v1.signedUp(email: "bob@example.com", tag: "bob")
                let read = ContinuousClock.now
                _ = try await first.v1.me(ann.token)
                _ = try await first.v1.me(bob.token)
                #expect(await eventually { (bus.deliveredThrough.map { $0 > read }) ?? false }, "a heartbeat sent after the reads came back")

                // Past the TTL, a change no event tells of is not seen: the entries are served from memory.
                try await first.services.database.sql.raw("UPDATE accounts SET first_name = 'Changed' WHERE id = \(bind: ann.account.id)").run()
                try await Task.sleep(for: .milliseconds(2_500))
                #expect(try await first.v1.me(ann.token).firstName == "Ann", "served past the TTL, while the bus proves it missed nothing")

                // A revocation on the other instance travels as an event: refused here at once.
                let revoked = try await second.v1.delete(V1.Sessions.logout.path, token: bob.token)
                #expect(revoked.status == .noContent)
                #expect(await eventually(within: .seconds(5)) {
                    (try? await first.v1.get(V1.Accounts.me.path, token: bob.token).status) == .unauthorized
                })

                // The listeners' backends stop (connections gone silent): no heartbeat comes back, the proof
                // ages, and within the TTL the entry is read again.
                let pids = try await first.services.database.sql.raw("""
                    SELECT pid FROM pg_stat_activity WHERE query = \(bind: "LISTEN \"\(bus.channel)\";") AND datname = current_database()
                    """).all().map { try $0.decode(column: "pid", as: Int32.self) }
                #expect(pids.count == 2, "both instances' listeners")
                let gaps = NIOLockedValueBox(0)
                bus.onGap { gaps.withLockedValue { $0 += 1 } }
                let stopped = ContinuousClock.now
                for pid in pids { #expect(kill(pid, SIGSTOP) == 0, "the test stops the listeners' backends") }
                defer { for pid in pids { kill(pid, SIGCONT) } }
                #expect(await eventually(within: .seconds(4)) { (try? await first.v1.me(ann.token).firstName) == "Changed" },
                        "a listener that hears nothing proves nothing")
                #expect(gaps.withLockedValue { $0 } == 0, "read again by the TTL, before the silence made the listener reconnect")

                // Its connection looks open all along; after the silence it connects again (a new backend: the old
                // ones are still stopped), through a gap, and its heartbeats come back.
                #expect(await eventually(within: .seconds(30)) { (bus.deliveredThrough.map { $0 > stopped }) ?? false },
                        "the silent listener connected again")
                #expect(gaps.withLockedValue { $0 } >= 1)
                let bobAgain = try await first.v1.login("bob", "secret-91!")
                _ = try await first.v1.me(bobAgain.token)
                _ = try await second.v1.delete(V1.Sessions.logout.path, token: bobAgain.token)
                #expect(await eventually(within: .seconds(5)) {
                    (try? await first.v1.get(V1.Accounts.me.path, token: bobAgain.token).status) == .unauthorized
                }, "and a revocation on the other instance is refused here")
            }
        }
    }

    @Test("PostgreSQL: heartbeats the database does not take (its pg_notify refused) are no silence: the listener keeps its connection and proves nothing; once they are taken they come back and prove", .tags(.engine))
    func untakenHeartbeats_areNoSilence() async throws {
        guard TestEngine.all.contains(.postgres) else { return }
        let database = try await TestDatabase.make(.postgres)
        guard case .postgres(let url, _) = database.location else { return }
        // A role that may LISTEN but not call pg_notify in this database (a function's privilege is its database's
        // catalog's): every heartbeat is refused by the database, as when the pool cannot reach it.
        let role = "gh_quiet_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
        try await TestDatabase.postgresAdmin(url: url, "CREATE ROLE \(role) LOGIN")
        try await TestDatabase.postgresAdmin(url: url, "REVOKE EXECUTE ON FUNCTION pg_notify(text, text) FROM PUBLIC")
        var parts = try #require(URLComponents(string: url))
        parts.user = role
        parts.password = nil
        let quiet = try #require(parts.string)
        var logger = Logger(label: "untaken-heartbeats")
        logger.logLevel = .warning
        let provider = try DatabaseProvider(location: .postgres(url: quiet), poolSize: 1, threadPool: .singleton, logger: logger)
        provider.markReady()  // nothing to migrate: the bus needs no table
        // A heartbeat every 100 ms; a silence of 1 s, which refused heartbeats outlast three times over in the wait below.
        let bus = PostgresEventBus(database: provider, configuration: try #require(try DatabaseProvider.connection(to: .postgres(url: quiet))),
                                   schema: nil, heartbeat: .milliseconds(100), silence: .seconds(1), logger: logger)
        let group = ServiceGroup(configuration: .init(services: [bus], logger: logger))
        @Sendable func checks() async throws {
            #expect(await eventually { bus.isConnected })
            let listener: @Sendable () async throws -> [Int32] = {
                try await provider.sql.raw("""
                    SELECT pid FROM pg_stat_activity WHERE usename = \(bind: role) AND query = \(bind: "LISTEN \"\(bus.channel)\";")
                    """).all().map { try $0.decode(column: "pid", as: Int32.self) }
            }
            let pids = try await listener()
            #expect(pids.count == 1, "the bus listens")
            let gaps = NIOLockedValueBox(0)
            bus.onGap { gaps.withLockedValue { $0 += 1 } }

            try await Task.sleep(for: .seconds(3))
            #expect(gaps.withLockedValue { $0 } == 0, "no heartbeat was taken, so none is missing: the listener did not reconnect")
            #expect(bus.isConnected)
            #expect(try await listener() == pids, "on the same connection")
            #expect(bus.deliveredThrough == nil, "and nothing is proven: the session cache keeps its TTL")

            // Taken again: the heartbeats come back and prove it hears. (Whether a loaded machine then keeps each one
            // under the silence is the SIGSTOP test's matter, not this one's.)
            try await TestDatabase.postgresAdmin(url: url, "GRANT EXECUTE ON FUNCTION pg_notify(text, text) TO PUBLIC")
            let granted = ContinuousClock.now
            #expect(await eventually(within: .seconds(10)) { (bus.deliveredThrough.map { $0 > granted }) ?? false })
        }
        // The bus stops on the service group's shutdown, whatever the checks did.
        let outcome: Result<Void, any Error> = await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            let outcome: Result<Void, any Error>
            do { try await checks(); outcome = .success(()) } catch { outcome = .failure(error) }
            await group.triggerGracefulShutdown()
            try? await tasks.waitForAll()
            return outcome
        }
        await provider.shutdown()
        // The role is the cluster's: dropped from the test's database, now that none of its connections is left.
        try await TestDatabase.postgresAdmin(url: url, "DROP ROLE IF EXISTS \(role)")
        await database.cleanup()
        try outcome.get()
    }

    @Test("PostgreSQL: a listener that loses its connection reconnects, drops the cache, and hears events again", .tags(.engine))
    func listenerReconnects() async throws {
        guard TestEngine.all.contains(.postgres) else { return }
        try await withApp(.postgres, configure: { $0.limits.sessionCacheTTL = 60 }) { first in
            try await withSecondInstance(of: first) { second in
                let bus = try #require(second.services.bus as? PostgresEventBus)
                #expect(await eventually { first.services.bus.isConnected && bus.isConnected })
                let session = try await first.v1.signedUp(email: "re@example.com")
                _ = try await second.v1.me(session.token)
                let gaps = NIOLockedValueBox(0)
                bus.onGap { gaps.withLockedValue { $0 += 1 } }

                // The database ends the listener's connection (as a restart or a failover would).
                let sql = first.services.database.sql
                let killed = try await sql.raw("""
                    SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
                    WHERE query = \(bind: "LISTEN \"\(bus.channel)\";") AND datname = current_database() AND pid <> pg_backend_pid()
                    """).all()
                #expect(killed.count == 2, "both instances' listeners")
                #expect(await eventually { gaps.withLockedValue { $0 } >= 1 && bus.isConnected }, "reconnected, with a gap")

                let revoked = try await first.v1.delete(V1.Sessions.logout.path, token: session.token)
                #expect(revoked.status == .noContent)
                #expect(await eventually { (try? await second.v1.get(V1.Accounts.me.path, token: session.token).status) == .unauthorized })
            }
        }
    }
}
