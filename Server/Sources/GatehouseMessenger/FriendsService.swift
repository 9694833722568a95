import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform

/// Friendships: one row per pair, a request (requester → addressee) until accepted.
/// Every change is written with its events to both people in one transaction.
package struct FriendsService: MessengerConcept {
    package let clock: GatehouseClock
    package let settings: GatehouseConfiguration.Messenger
    package let rateLimiter: RateLimiter
    package let events: EventLog
    package let people: PersonLoader
    package let store: MessengerStore

    package typealias Sort = FriendsSort

    /// My friends (by name or tag) and the requests to and from me (newest first), filtered by `query`.
    package func overview(viewer: UUID, sort: Sort, query: String?) async throws -> FriendsOverview {
        let rows = try await store.related(viewer: viewer, matching: PeopleIndex.matching(query), byTag: sort == .tag)
        var friends: [Person] = [], incoming: [Person] = [], outgoing: [Person] = []
        for row in rows {
            let person = try people.decode(row, viewer: viewer)
            switch person.relation {
            case .friend: friends.append(person)
            case .incoming: incoming.append(person)
            case .outgoing: outgoing.append(person)
            case .none: break
            }
        }
        // A request's id is time-ordered (UUIDv7): newest first is the greatest id first.
        let newestFirst = { (a: Person, b: Person) in (a.requestId?.uuidString ?? "") > (b.requestId?.uuidString ?? "") }
        return FriendsOverview(friends: friends, incoming: incoming.sorted(by: newestFirst), outgoing: outgoing.sorted(by: newestFirst))
    }

    /// Asks `target` to be my friend. Asking again changes nothing; asking someone who asked me
    /// makes us friends. Answers the person as I now see them.
    package func request(viewer: UUID, target: UUID) async throws -> Person {
        guard target != viewer else { throw GatehouseError(.invalidInput, .notYourself, LocalizedText("error.notYourself"), field: "personId") }
        _ = try await visiblePerson(target, seenBy: viewer, field: "personId")
        try await rateLimiter.hit("friend-requests", key: viewer.uuidString, limit: settings.friendRequestsPerDay, window: 86_400)
        return try await events.write { tx, recorder in
            let pair = ordered(viewer, target)
            let now = clock.now()
            var row = try await store.friendship(pair, on: tx)
            if row == nil {
                // Somebody who blocked me hears nothing from me, a friend request included.
                if try await isBlocked(viewer, by: target, on: tx) { throw Self.messagingNotAllowed }
                // A new request tells the target: a request/cancel cycle to one person is budgeted per
                // day on its own, or it would queue two events per cycle for them up to the daily cap.
                try await rateLimiter.hit("friend-requests-to", key: "\(viewer):\(target)", limit: settings.friendRequestsPerPersonPerDay,
                                               window: 86_400, on: tx)
                let inserted = try await store.insertRequest(pair: pair, from: viewer, to: target, now: now, on: tx)
                if inserted {
                    try await tell(recorder, .friendRequested, viewer, about: target, on: tx)
                    try await tell(recorder, .friendRequested, target, about: viewer, push: true, on: tx)
                    return try await visiblePerson(target, seenBy: viewer, on: tx)
                }
                row = try await store.friendship(pair, on: tx)  // the other side asked at the same moment
            }
            if let row, row.state == FriendshipState.pending.rawValue, row.requester == target {
                try await becomeFriends(row.id, viewer, target, recorder, on: tx)
            }
            return try await visiblePerson(target, seenBy: viewer, on: tx)
        }
    }

    /// Accepts a request to me.
    package func accept(viewer: UUID, request id: UUID) async throws -> Person {
        try await events.write { tx, recorder in
            guard let row = try await store.friendship(id: id, on: tx), row.state == FriendshipState.pending.rawValue, row.addressee == viewer else {
                throw GatehouseError.notFound(.requestNotFound, "error.requestNotFound")
            }
            try await becomeFriends(row.id, viewer, row.requester, recorder, on: tx)
            return try await visiblePerson(row.requester, seenBy: viewer, on: tx)
        }
    }

    /// Declines a request to me.
    package func decline(viewer: UUID, request id: UUID) async throws {
        try await end(viewer: viewer, reason: .declined) { row in
            row.id == id && row.state == FriendshipState.pending.rawValue && row.addressee == viewer
        } find: { tx in try await store.friendship(id: id, on: tx) }
    }

    /// Cancels my request.
    package func cancel(viewer: UUID, request id: UUID) async throws {
        try await end(viewer: viewer, reason: .cancelled) { row in
            row.id == id && row.state == FriendshipState.pending.rawValue && row.requester == viewer
        } find: { tx in try await store.friendship(id: id, on: tx) }
    }

    /// Ends our friendship.
    package func remove(viewer: UUID, person: UUID) async throws {
        _ = try await visiblePerson(person, seenBy: viewer)
        try await end(viewer: viewer, reason: .removed, notFound: GatehouseError.notFound(.notFriends, "error.notFriends")) { row in
            row.state == FriendshipState.friends.rawValue
        } find: { tx in try await store.friendship(ordered(viewer, person), on: tx) }
    }

    // MARK: - rows

    package typealias Row = MessengerStore.Friendship

    private func becomeFriends(_ id: UUID, _ viewer: UUID, _ other: UUID, _ recorder: EventRecorder, on tx: any GatehouseDatabase) async throws {
        guard try await store.accept(id, now: clock.now(), on: tx) else { return }
        try await tell(recorder, .friendAccepted, viewer, about: other, on: tx)
        try await tell(recorder, .friendAccepted, other, about: viewer, push: true, on: tx)
    }

    /// Deletes the friendship `find` reads when `matches` holds, telling both people.
    private func end(viewer: UUID, reason: FriendRemoval.Reason,
                     notFound: GatehouseError = .notFound(.requestNotFound, "error.requestNotFound"),
                     matches: @escaping @Sendable (Row) -> Bool,
                     find: @escaping @Sendable (any GatehouseDatabase) async throws -> Row?) async throws {
        try await events.write { tx, recorder in
            guard let row = try await find(tx), matches(row), row.requester == viewer || row.addressee == viewer else { throw notFound }
            guard try await store.deleteFriendship(row.id, state: row.state, on: tx) else { throw notFound }
            let other = row.other(than: viewer)
            try recorder.add(.friendRemoved, to: viewer, FriendRemoval(personId: other, reason: reason))
            try recorder.add(.friendRemoved, to: other, FriendRemoval(personId: viewer, reason: reason))
        }
    }

    /// Records `kind` for `recipient` with `subject` as the recipient now sees them.
    private func tell(_ recorder: EventRecorder, _ kind: RealtimeEventKind, _ recipient: UUID, about subject: UUID, push: Bool = false,
                      on tx: any GatehouseDatabase) async throws {
        guard let person = try await people.person(subject, seenBy: recipient, on: tx) else { return }
        try recorder.add(kind, to: recipient, person, push: push)
    }

    package init(clock: GatehouseClock, settings: GatehouseConfiguration.Messenger, rateLimiter: RateLimiter, events: EventLog,
                 people: PersonLoader, store: MessengerStore) {
        self.clock = clock
        self.settings = settings
        self.rateLimiter = rateLimiter
        self.events = events
        self.people = people
        self.store = store
    }
}
