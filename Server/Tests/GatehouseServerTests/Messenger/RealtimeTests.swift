import Foundation
import GatehouseAPI
import GatehouseServer
import GatehouseTestSupport
import HTTPTypes
import HummingbirdTesting
import HummingbirdWSClient
import HummingbirdWSTesting
import NIOConcurrencyHelpers
import NIOCore
import NIOWebSocket
import Testing

/// The frames one realtime socket received, in order.
final class ReceivedFrames: Sendable {
    private let frames = NIOLockedValueBox<[RealtimeFrame]>([])
    private let raw = NIOLockedValueBox<[String]>([])

    func add(_ text: String) {
        raw.withLockedValue { $0.append(text) }
        if let frame = try? V1.decoder.decode(RealtimeFrame.self, from: Data(text.utf8)) { frames.withLockedValue { $0.append(frame) } }
    }

    var all: [RealtimeFrame] { frames.withLockedValue { $0 } }
    var texts: [String] { raw.withLockedValue { $0 } }
    var events: [RealtimeEvent] { all.compactMap { if case .event(let event) = $0 { event } else { nil } } }
    var ready: Int64? { all.lazy.compactMap { if case .ready(let seq) = $0 { seq } else { nil } }.first }
}

extension TestHarness {
    /// Opens `/v1/realtime` (token in the header unless `firstFrame`), reads every frame into
    /// `frames` while `body` runs (cut short when the server closes), and answers the server's close
/// frame (nil when the client closed).
    @discardableResult
    func realtime(token: String?, since: Int64? = nil, firstFrame: String? = nil, frames: ReceivedFrames = ReceivedFrames(),
                  _ body: @escaping @Sendable (ReceivedFrames) async throws -> Void) async throws -> WebSocketCloseFrame? {
        var headers: HTTPFields = [:]
        if let token, firstFrame == nil { headers[.authorization] = "Bearer \(token)" }
        let path = V1.Realtime.path + (since.map { "?since=\($0)" } ?? "")
        return try await client.ws(path, configuration: .init(additionalHeaders: headers)) { inbound, outbound, _ in
            if let firstFrame { try await outbound.write(.text(firstFrame)) }
            // Whichever ends first ends the other: the body, or the server closing the socket.
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for try await message in inbound.messages(maxSize: 1 << 20) {
                        if case .text(let text) = message { frames.add(text) }
                    }
                }
                group.addTask { try await body(frames) }
                do {
                    try await group.next()
                } catch is CancellationError {}
                group.cancelAll()
            }
        }
    }
}

@Suite("Messenger: realtime")
struct RealtimeTests {
    typealias M = V1.Messenger

    @Test("events reach both members' sockets in order, numbered per account without gaps", .tags(.engine), arguments: TestEngine.all)
    func events_reachBothSides(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.person("ann")
            let bob = try await app.v1.person("bob")
            let chat = try await app.v1.openChat(ann, with: bob)
            let bobFrames = ReceivedFrames()

            // MUT
            try await app.realtime(token: ann.token) { annFrames in
                try await app.realtime(token: bob.token, frames: bobFrames) { _ in
                    #expect(await eventually { annFrames.ready != nil && bobFrames.ready != nil })
                    let m1 = try await app.v1.send("one", in: chat.id, by: ann)
                    _ = try await app.v1.post(app.v1.path(M.markRead, chat.id), ReadMark(upTo: m1.id), token: bob.token)
                    try await app.v1.send("two", in: chat.id, by: bob)
                    _ = try await app.v1.patch(app.v1.path(M.edit, m1.id), EditMessage(text: "one!"), token: ann.token)
                    _ = try await app.v1.delete(app.v1.path(M.deleteMessage, m1.id) + "?for=everyone", token: ann.token)
                    #expect(await eventually { annFrames.events.count == 5 && bobFrames.events.count == 5 })
                }
                // validate
                for frames in [annFrames, bobFrames] {
                    let events = frames.events
                    #expect(events.map(\.kind) == [.messageCreated, .chatRead, .messageCreated, .messageUpdated, .messageDeleted])
                    let first = try #require(events.first?.seq)
                    #expect(events.map(\.seq) == Array(first..<first + 5), "gap-free, increasing")
                    #expect(frames.ready == first - 1)
                }
                guard case .message(let annsCopy) = annFrames.events[0].payload, case .message(let bobsCopy) = bobFrames.events[0].payload,
                      case .read(let read) = annFrames.events[1].payload
                else { Issue.record("events of the wrong kinds: \(annFrames.events.map(\.kind))"); return }
                #expect(annsCopy.text == "one" && annsCopy.clientMessageId != nil, "the author's copy carries the client id")
                #expect(bobsCopy.id == annsCopy.id && bobsCopy.clientMessageId == nil, "the other's does not")
                #expect(read.accountId == bob.id && read.lastReadMessageId == annsCopy.id)
                // The frame on the wire: keys sorted, exactly type, seq, data.
                let raw = try #require(bobFrames.texts.first { $0.contains("message.created") })
                #expect(raw.hasPrefix(#"{"data":{"#) && raw.hasSuffix(#","type":"message.created"}"#))
            }
        }
    }

    @Test("the first frame may carry the token; a bad token closes with 4001; a missing auth frame times out with 4001", .tags(.engine), arguments: TestEngine.all)
    func auth_byFirstFrame(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.messenger.realtimeAuthTimeout = .seconds(1.5) }) { app in
            // setup
            let ann = try await app.v1.person("ann")

            // MUT
            let good = ReceivedFrames()
            try await app.realtime(token: ann.token, firstFrame: #"{"type":"auth","token":"\#(ann.token)"}"#, frames: good) { frames in
                #expect(await eventually { frames.ready != nil })
            }
            let badHeader = try await app.realtime(token: "nonsense") { _ in try await Task.sleep(for: .seconds(30)) }
            let badFrame = try await app.realtime(token: "x", firstFrame: #"{"type":"auth","token":"nonsense"}"#) { _ in try await Task.sleep(for: .seconds(30)) }
            let silent = try await app.realtime(token: nil) { _ in try await Task.sleep(for: .seconds(30)) }

            // validate
            #expect(good.ready == 0)
            for close in [badHeader, badFrame, silent] {
                #expect(close?.closeCode == .unknown(V1.Realtime.CloseCode.unauthorized), "\(String(describing: close))")
            }
        }
    }

    @Test("resume with ?since: what was missed, once, in order, then live; too old a point answers resync", .tags(.engine), arguments: TestEngine.all)
    func resume_andResync(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.person("ann")
            let bob = try await app.v1.person("bob")
            let chat = try await app.v1.openChat(ann, with: bob)
            let seen = ReceivedFrames()
            try await app.realtime(token: bob.token, since: 0, frames: seen) { frames in
                try await app.v1.send("1", in: chat.id, by: ann)
                try await app.v1.send("2", in: chat.id, by: ann)
                #expect(await eventually { frames.events.count == 2 })
            }
            let last = try #require(seen.events.last?.seq)

            // MUT: three more while away, then back from where we were; one more while connected.
            for text in ["3", "4", "5"] { try await app.v1.send(text, in: chat.id, by: ann) }
            let resumed = ReceivedFrames()
            try await app.realtime(token: bob.token, since: last, frames: resumed) { frames in
                #expect(await eventually { frames.events.count == 3 })
                try await app.v1.send("6", in: chat.id, by: ann)
                #expect(await eventually { frames.events.count == 4 })
            }

            // validate
            let texts = resumed.events.compactMap { if case .message(let m) = $0.payload { m.text } else { nil } }
            #expect(texts == ["3", "4", "5", "6"])
            #expect(resumed.events.map(\.seq) == Array(last + 1...last + 4))
            #expect(resumed.ready == last + 3)

            // Events past the retention are gone: resuming from before them is a resync.
            app.clock.advance(by: app.configuration.messenger.eventRetention + 1)
            try await app.services.realtime.log.purgeExpired()
            let again = try await app.v1.login("bob", "secret-91!")   // the old session has expired meanwhile
            let stale = ReceivedFrames()
            try await app.realtime(token: again.token, since: 1, frames: stale) { frames in
                #expect(await eventually { frames.all.count >= 2 })
            }
            #expect(stale.all.prefix(2) == [.ready(seq: last + 4), .resync(seq: last + 4)])
            #expect(stale.events.isEmpty)
        }
    }

    @Test("a run of edits keeps one copy of the message: earlier message.updated become message.superseded, numbers gap-free", .tags(.engine), arguments: TestEngine.all)
    func edits_supersedeEarlierEdits(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.person("ann")
            let bob = try await app.v1.person("bob")
            let chat = try await app.v1.openChat(ann, with: bob)
            let message = try await app.v1.send("draft", in: chat.id, by: ann)
            let other = try await app.v1.send("other", in: chat.id, by: ann)
            let start = try await app.services.realtime.log.bounds(of: bob.id).last

            // MUT: three edits of one message (4 KB each) and one of another, while Bob is away
            let big = String(repeating: "x", count: 4_000)
            for n in 0..<3 { _ = try await app.v1.patch(app.v1.path(M.edit, message.id), EditMessage(text: "\(big) \(n)"), token: ann.token) }
            _ = try await app.v1.patch(app.v1.path(M.edit, other.id), EditMessage(text: "other!"), token: ann.token)
            let resumed = ReceivedFrames()
            try await app.realtime(token: bob.token, since: start, frames: resumed) { frames in
                #expect(await eventually { frames.events.count == 4 })
            }

            // validate
            #expect(resumed.events.map(\.seq) == Array(start + 1...start + 4), "gap-free")
            #expect(resumed.events.map(\.kind) == [.messageSuperseded, .messageSuperseded, .messageUpdated, .messageUpdated])
            #expect(resumed.events.prefix(2).allSatisfy { $0.payload == .superseded(SupersededEdit(chatId: chat.id, messageId: message.id)) })
            let texts = resumed.events.compactMap { if case .message(let m) = $0.payload { m.text } else { nil } }
            #expect(texts == ["\(big) 2", "other!"], "the newest edit of each, once")
            #expect(resumed.texts.filter { $0.contains("message.superseded") }.allSatisfy { $0.utf8.count < 200 })
        }
    }

    @Test("a revoked session closes its realtime socket with 4002", .tags(.engine), arguments: TestEngine.all)
    func revokedSession_closesSocket(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.person("ann")

            // MUT
            let close = try await app.realtime(token: ann.token) { frames in
                #expect(await eventually { frames.ready != nil })
                #expect(try await app.v1.delete(V1.Sessions.logout.path, token: ann.token).status == .noContent)
                try await Task.sleep(for: .seconds(30))  // ended by the server's close
            }

            // validate
            #expect(close?.closeCode == .unknown(V1.Realtime.CloseCode.sessionEnded), "\(String(describing: close))")
        }
    }

    @Test("a session that expires closes its realtime socket with 4002", .tags(.engine), arguments: TestEngine.all)
    func expiredSession_closesSocket(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.limits.sessionTTL = 1 }) { app in
            // setup
            let ann = try await app.v1.person("ann")

            // MUT: the session lives one second (by the server's clock); the socket stays open meanwhile.
            let close = try await app.realtime(token: ann.token) { frames in
                #expect(await eventually { frames.ready != nil })
                try await Task.sleep(for: .seconds(30))  // ended by the server's close
            }

            // validate
            #expect(close?.closeCode == .unknown(V1.Realtime.CloseCode.sessionEnded), "\(String(describing: close))")
        }
    }

    @Test("a profile change reaches those who see the person", .tags(.engine), arguments: TestEngine.all)
    func profileUpdated_reachesAcquaintances(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.person("ann")
            let bob = try await app.v1.person("bob")
            let cat = try await app.v1.person("cat")
            _ = try await app.v1.openChat(bob, with: ann)

            // MUT
            let renamed = try await app.v1.patch(V1.Accounts.updateProfile.path, ProfileUpdate(firstName: "Anna"), token: ann.token)

            // validate
            #expect(renamed.status == .ok)
            let bobs = try await app.services.realtime.log.events(of: bob.id, after: 0, limit: 10)
            #expect(bobs.map(\.kind) == ["profile.updated"])
            #expect(bobs.first?.data.contains(#""firstName":"Anna""#) == true)
            #expect(try await app.services.realtime.log.events(of: cat.id, after: 0, limit: 10).isEmpty, "a stranger hears nothing")
            let found = try await app.v1.get(V1.Messenger.people.path + "?q=anna", token: cat.token).decoded(as: PeoplePage.self)
            #expect(found.items.map(\.id) == [ann.id], "the search knows the new name")
        }
    }

    @Test("two instances on PostgreSQL: a message sent on one reaches a socket on the other", .tags(.engine))
    func acrossInstances() async throws {
        guard TestEngine.all.contains(.postgres) else { return }
        try await withApp(.postgres) { first in
            try await withSecondInstance(of: first) { second in
                #expect(await eventually { first.services.bus.isConnected && second.services.bus.isConnected })
                let ann = try await first.v1.person("ann")
                let bob = try await first.v1.person("bob")
                let chat = try await first.v1.openChat(ann, with: bob)
                let received = ReceivedFrames()
                try await second.realtime(token: bob.token, frames: received) { frames in
                    #expect(await eventually { frames.ready != nil })
                    try await first.v1.send("across", in: chat.id, by: ann)
                    #expect(await eventually { frames.events.count == 1 })
                }
                guard case .message(let message)? = received.events.first?.payload else { Issue.record("no message event"); return }
                #expect(message.text == "across")
            }
        }
    }
}
