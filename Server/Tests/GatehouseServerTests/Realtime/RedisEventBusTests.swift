import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import GatehouseServer
import GatehouseTestSupport
import NIOConcurrencyHelpers
import NIOCore
import Testing

/// The Redis event bus (`GATEHOUSE_EVENT_BUS=redis://…`) against a real `redis-server`: the same
/// contract as PostgreSQL's bus (EventBusTests), and what a Redis that goes away does to it.
@Suite("Event bus on Redis")
struct RedisEventBusTests {
    // MARK: The protocol

    @Test("RESP: commands written as arrays of bulk strings; every reply type read, whole or not at all; a broken stream refused")
    func resp() throws {
        var out = ByteBufferAllocator().buffer(capacity: 64)
        RESP.command(["PUBLISH", "ch", "héllo"], into: &out)
        #expect(out.readString(length: out.readableBytes) == "*3\r\n$7\r\nPUBLISH\r\n$2\r\nch\r\n$6\r\nhéllo\r\n")

        let stream = "+OK\r\n-ERR wrong\r\n:42\r\n$5\r\nhello\r\n$-1\r\n*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$0\r\n\r\n*2\r\n*1\r\n:1\r\n*-1\r\n"
        var buffer = ByteBuffer(string: stream)
        var values: [RESPValue] = []
        while let value = try RESP.read(from: &buffer) { values.append(value) }
        #expect(values == [.simple("OK"), .error("ERR wrong"), .integer(42), .bulk(Array("hello".utf8)), .null,
                           .array([.bulk(Array("message".utf8)), .bulk(Array("ch".utf8)), .bulk([])]),
                           .array([.array([.integer(1)]), .null])])
        #expect(buffer.readableBytes == 0)

        // Every cut of a value leaves it unread, to be read whole once the rest arrives.
        let whole = Array("*2\r\n$5\r\nhello\r\n:7\r\n".utf8)
        for cut in 1..<whole.count {
            var partial = ByteBuffer(bytes: whole[..<cut])
            #expect(try RESP.read(from: &partial) == nil, "cut at \(cut)")
            #expect(partial.readableBytes == cut, "nothing consumed at \(cut)")
        }
        for broken in ["?x\r\n", ":12a\r\n", "$-5\r\n", "$3\r\nabcde\r\n", "*-2\r\n", "$99999999999\r\n"] {
            var bad = ByteBuffer(string: broken)
            #expect(throws: RESP.DecodingError.self, "\(broken)") { _ = try RESP.read(from: &bad) }
        }
        var deep = ByteBuffer(string: String(repeating: "*1\r\n", count: 40) + ":1\r\n")
        #expect(throws: RESP.DecodingError.self) { _ = try RESP.read(from: &deep) }
    }

    @Test("GATEHOUSE_EVENT_BUS: database by default; a redis:// address with its password and database; anything else refused at start")
    func configuration() throws {
        #expect(try GatehouseConfiguration.fromEnvironment([:]).eventBusURL == nil)
        #expect(try GatehouseConfiguration.fromEnvironment(["GATEHOUSE_EVENT_BUS": "database"]).eventBusURL == nil)
        let url = "redis://gh:s%40cret@redis.internal:6380/2"
        #expect(try GatehouseConfiguration.fromEnvironment(["GATEHOUSE_EVENT_BUS": url]).eventBusURL == url)
        #expect(RESPConnection.Address(url: url) == RESPConnection.Address(url: url))
        let address = try #require(RESPConnection.Address(url: url))
        #expect(address.host == "redis.internal" && address.port == 6380 && address.user == "gh" && address.password == "s@cret" && address.database == 2)
        #expect(RESPConnection.Address(url: "redis://localhost")?.port == 6379)
        for wrong in ["http://redis:6379", "redis://", "redis://h/x", "nats://h"] {
            #expect(throws: ConfigurationError.self, "\(wrong)") { try GatehouseConfiguration.fromEnvironment(["GATEHOUSE_EVENT_BUS": wrong]) }
        }
    }

    // MARK: The bus

    @Test("an event published on one instance reaches the subscribers of its topic and account on the other, and no one else; 300 packed events in order; a session revoked on one instance is refused on the other at once", .tags(.engine))
    func acrossInstances() async throws {
        guard TestEngine.all.contains(.postgres) else { return }
        try await RedisServer.with { redis in
            try await withApp(.postgres, configure: { $0.eventBusURL = redis.url; $0.limits.sessionCacheTTL = 60 }) { first in
                try await withSecondInstance(of: first) { second in
                    #expect(first.services.bus is RedisEventBus && second.services.bus is RedisEventBus)
                    #expect(await eventually { first.services.bus.isConnected && second.services.bus.isConnected })
                    let ann = UUID()
                    let annOnly = Received(), everyone = Received(), otherTopic = Received()
                    let s1 = second.services.bus.subscribe(topic: "test.a", account: ann) { annOnly.add($0) }
                    let s2 = second.services.bus.subscribe(topic: "test.a", account: nil) { everyone.add($0) }
                    let s3 = second.services.bus.subscribe(topic: "test.b", account: nil) { otherTopic.add($0) }
                    let events = (0..<300).map { i in BusEvent(topic: "test.a", account: i % 2 == 0 ? ann : UUID(), body: "\(i) \"q\" \\ é " + String(repeating: "x", count: i * 13 % 900)) }
                    try await first.services.bus.publish(events, on: nil)
                    #expect(await eventually { everyone.all.count == events.count })
                    #expect(everyone.all == events, "in order, escapes and all")
                    #expect(annOnly.all == events.filter { $0.account == ann })
                    #expect(otherTopic.all.isEmpty)
                    withExtendedLifetime((s1, s2, s3)) {}

                    // The session cache follows the bus: a revocation on the first is refused on the second.
                    let session = try await first.v1.signedUp(email: "redis@example.com")
                    #expect(try await second.v1.me(session.token).firstName == "Ann")
                    let revoked = try await first.v1.delete(V1.Sessions.logout.path, token: session.token)
                    #expect(revoked.status == .noContent)
                    #expect(await eventually { (try? await second.v1.get(V1.Accounts.me.path, token: session.token).status) == .unauthorized },
                            "the second instance still serves a session revoked on the first")
                }
            }
        }
    }

    @Test("Redis killed and started again: the listeners are down meanwhile (publishes are dropped, never an error), come back with a gap, and hear events again", arguments: TestEngine.once)
    func redisRestarts(engine: TestEngine) async throws {
        try await RedisServer.with { redis in
            try await withApp(engine, configure: { $0.eventBusURL = redis.url }) { app in
                let bus = app.services.bus
                #expect(await eventually { bus.isConnected })
                let received = Received()
                let subscription = bus.subscribe(topic: "test.r", account: nil) { received.add($0) }
                let gaps = NIOLockedValueBox(0)
                bus.onGap { gaps.withLockedValue { $0 += 1 } }
                try await bus.publish(BusEvent(topic: "test.r", body: "before"))
                #expect(await eventually { received.all.map(\.body) == ["before"] })

                redis.kill()
                #expect(await eventually { !bus.isConnected }, "the listener sees Redis go")
                try await bus.publish(BusEvent(topic: "test.r", body: "while down"))   // logged and dropped, not thrown

                try await redis.restart()
                #expect(await eventually { bus.isConnected && gaps.withLockedValue { $0 } >= 1 }, "back, through a gap")
                try await bus.publish(BusEvent(topic: "test.r", body: "after"))
                #expect(await eventually { received.all.map(\.body).last == "after" })
                #expect(received.all.map(\.body) == ["before", "after"])
                withExtendedLifetime(subscription) {}
            }
        }
    }

    @Test("Redis that stops answering (its process stopped, its connections open): while it answers the listener stays on its connection; once its PING goes unanswered for GATEHOUSE_EVENT_BUS_SILENCE_SECONDS it connects again, through a gap, and hears events", arguments: TestEngine.once)
    func silentRedis_listenerConnectsAgain(engine: TestEngine) async throws {
        try await RedisServer.with { redis in
            try await withApp(engine, configure: { $0.eventBusURL = redis.url; $0.eventBusSilence = 1 }) { app in
                let bus = app.services.bus
                #expect(await eventually { bus.isConnected })
                let received = Received()
                let subscription = bus.subscribe(topic: "test.s", account: nil) { received.add($0) }
                let gaps = NIOLockedValueBox(0)
                bus.onGap { gaps.withLockedValue { $0 += 1 } }
                // While Redis answers, two silences go by on the same connection.
                try await Task.sleep(for: .milliseconds(2_500))
                #expect(gaps.withLockedValue { $0 } == 0, "a Redis that answers its PING is no silence")

                // Stopped, not killed: the listener's connection stays open and nothing comes on it, as with a
                // half-open connection; without the PING it would carry on, deaf, once Redis answers again.
                let pid = try #require(redis.pid)
                #expect(kill(pid, SIGSTOP) == 0)
                defer { kill(pid, SIGCONT) }
                try await Task.sleep(for: .seconds(3))
                #expect(kill(pid, SIGCONT) == 0)
                #expect(await eventually(within: .seconds(10)) { bus.isConnected && gaps.withLockedValue { $0 } >= 1 },
                        "the silent listener connected again, through a gap")
                try await bus.publish(BusEvent(topic: "test.s", body: "after"))
                #expect(await eventually { received.all.map(\.body) == ["after"] })
                withExtendedLifetime(subscription) {}
            }
        }
    }

    @Test("realtime across instances on the Redis bus: a message sent through one instance reaches the recipient's socket on the other; what was sent while Redis was down arrives after it is back, in order, with no gap", .tags(.engine))
    func realtimeAcrossInstances() async throws {
        guard TestEngine.all.contains(.postgres) else { return }
        try await RedisServer.with { redis in
            try await withApp(.postgres, configure: { $0.eventBusURL = redis.url }) { first in
                try await withSecondInstance(of: first) { second in
                    #expect(await eventually { first.services.bus.isConnected && second.services.bus.isConnected })
                    let ann = try await first.v1.person("ann")
                    let bob = try await first.v1.person("bob")
                    let chat = try await first.v1.openChat(ann, with: bob)
                    let received = ReceivedFrames()
                    try await second.realtime(token: bob.token, frames: received) { frames in
                        #expect(await eventually { frames.ready != nil })
                        try await first.v1.send("over Redis", in: chat.id, by: ann)
                        #expect(await eventually { frames.events.count == 1 })

                        // Redis goes: the send is committed and its announcement dropped; Redis back, the
                        // listener's gap makes the socket read what it missed from the database.
                        redis.kill()
                        #expect(await eventually { !second.services.bus.isConnected })
                        try await first.v1.send("while Redis was down", in: chat.id, by: ann)
                        try await redis.restart()
                        #expect(await eventually { first.services.bus.isConnected && second.services.bus.isConnected })
                        try await first.v1.send("after", in: chat.id, by: ann)
                        #expect(await eventually { frames.events.count == 3 })
                    }
                    let texts = received.events.compactMap { event -> String? in
                        if case .message(let message) = event.payload { return message.text }
                        return nil
                    }
                    #expect(texts == ["over Redis", "while Redis was down", "after"])
                    #expect(received.events.map(\.seq) == received.events.map(\.seq).sorted() && Set(received.events.map(\.seq)).count == 3)
                }
            }
        }
    }
}
