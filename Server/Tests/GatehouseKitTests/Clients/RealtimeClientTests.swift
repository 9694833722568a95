import Foundation
import GatehouseAPI
import GatehouseKit
import GatehouseTestSupport
import Testing

/// `RealtimeClient` against a live server: events in order, resume after a stop, the end of the session.
@Suite("GatehouseKit: the realtime client")
struct RealtimeClientTests {
    /// The next `count` updates that are events, within a bound.
    func events(_ iterator: inout AsyncStream<RealtimeUpdate>.Iterator, _ count: Int) async -> [RealtimeEvent] {
        var found: [RealtimeEvent] = []
        while found.count < count, let update = await iterator.next() {
            if case .event(let event) = update { found.append(event) }
        }
        return found
    }

    @Test("events arrive in order; after a stop, a new client from lastSeq gets exactly what it missed")
    func eventsAndResume() async throws {
        try await withLiveServer { server in
            // setup
            let (_, ann, _) = try await server.messengerUser("ann.rt")
            let (bobAccounts, _, bobID) = try await server.messengerUser("bob.rt")
            let chat = try await ann.openChat(with: bobID)
            let first = RealtimeClient(core: bobAccounts.core)
            var updates = first.updates().makeAsyncIterator()
            guard case .connected? = await updates.next() else { Issue.record("no connected update"); return }

            // MUT
            for text in ["one", "two"] { _ = try await ann.send(text, in: chat.id) }
            let live = await events(&updates, 2)
            await first.stop()
            for text in ["three", "four"] { _ = try await ann.send(text, in: chat.id) }
            let resumed = RealtimeClient(core: bobAccounts.core, since: first.lastSeq)
            var later = resumed.updates().makeAsyncIterator()
            let missed = await events(&later, 2)
            await resumed.stop()

            // validate
            func texts(_ events: [RealtimeEvent]) -> [String] { events.compactMap { if case .message(let m) = $0.payload { m.text } else { nil } } }
            #expect(texts(live) == ["one", "two"])
            #expect(texts(missed) == ["three", "four"])
            #expect(missed.map(\.seq) == [live[1].seq + 1, live[1].seq + 2])
            #expect(resumed.lastSeq == live[1].seq + 2)
        }
    }

    @Test("a logout elsewhere ends the session: the client says sessionEnded and stops")
    func sessionEnds() async throws {
        try await withLiveServer { server in
            // setup
            let (accounts, _, _) = try await server.messengerUser("cat.rt")
            let other = server.accountsClient(store: InMemorySessionStore())
            _ = try await other.login(identifier: "cat.rt", password: "Secret-42!")
            let client = RealtimeClient(core: accounts.core, backoff: .init(delays: [.milliseconds(50)]))
            var updates = client.updates().makeAsyncIterator()
            guard case .connected? = await updates.next() else { Issue.record("no connected update"); return }

            // MUT: the other device ends every session but its own.
            _ = try await other.endOtherSessions()

            // validate
            var seen: [RealtimeUpdate] = []
            while let update = await updates.next() { seen.append(update) }
            #expect(seen.last == .sessionEnded, "\(seen)")
            #expect(accounts.session == nil, "the ended session is forgotten")
        }
    }
}
