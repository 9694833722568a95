import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform

/// Finding people, and my privacy setting.
package struct PeopleService: MessengerConcept {
    package let clock: GatehouseClock
    package let settings: GatehouseConfiguration.Messenger
    package let people: PersonLoader
    package let store: MessengerStore

    /// People whose first name, last name or tag starts with the query (any case, any accents),
    /// by last name, me excluded; `cursor` continues a previous page.
    package func search(viewer: UUID, query: String?, cursor: String?, limit: Int?) async throws -> PeoplePage {
        let size = pageSize(limit)
        var after: (sortName: String, id: UUID)?
        if let parts = try PageCursor.read(cursor, parts: 2) {
            guard let id = UUID(uuidString: parts[1]) else { throw PageCursor.invalid }
            after = (parts[0], id)
        }
        let rows = try await store.people(viewer: viewer, matching: PeopleIndex.matching(query), after: after, limit: size + 1)
        let page = rows.prefix(size)
        let items = try page.map { try people.decode($0, viewer: viewer) }
        var next: String?
        if rows.count > size, let last = page.last {
            next = PageCursor.make([try last.decode(column: "sort_name", as: String.self), try last.decode(column: "person_id", as: UUID.self).uuidString])
        }
        return PeoplePage(items: items, nextCursor: next)
    }

    package func person(_ id: UUID, viewer: UUID) async throws -> Person {
        try await visiblePerson(id, seenBy: viewer)
    }

    package func privacy(of account: UUID) async throws -> PrivacySettings {
        let raw = try await store.whoCanMessage(account)
        return PrivacySettings(whoCanMessageMe: raw.flatMap(MessagingAudience.init(rawValue:)) ?? .everyone)
    }

    package func updatePrivacy(of account: UUID, _ update: PrivacyUpdate) async throws -> PrivacySettings {
        if let audience = update.whoCanMessageMe {
            try await store.setWhoCanMessage(account, audience.rawValue)
        }
        return try await privacy(of: account)
    }

    // MARK: Blocks

    /// Blocks a person I can see (404 otherwise); blocking twice is once. At most
    /// `GATEHOUSE_MESSENGER_BLOCKS_PER_ACCOUNT` (409 `too_many_blocks` above).
    package func block(viewer: UUID, person: UUID) async throws {
        _ = try await visiblePerson(person, seenBy: viewer, field: "personId")
        // Others blocked already: blocking someone blocked is once, whatever the limit.
        let count = try await store.blockCount(viewer: viewer, except: person)
        guard count < settings.blocksPerAccount else {
            throw GatehouseError.conflict(.tooManyBlocks, "error.tooManyBlocks", String(settings.blocksPerAccount))
        }
        try await store.block(viewer: viewer, person: person, now: clock.now())
    }

    package func unblock(viewer: UUID, person: UUID) async throws {
        _ = try await visiblePerson(person, seenBy: viewer, field: "personId")
        try await store.unblock(viewer: viewer, person: person)
    }

    /// The people I blocked, newest first (one page: the list is bounded).
    package func blocked(viewer: UUID) async throws -> PeoplePage {
        let ids = try await store.blocked(viewer: viewer)
        var items: [Person] = []
        for id in ids { if let person = try await people.person(id, seenBy: viewer) { items.append(person) } }
        return PeoplePage(items: items, nextCursor: nil)
    }

    package init(clock: GatehouseClock, settings: GatehouseConfiguration.Messenger, people: PersonLoader, store: MessengerStore) {
        self.clock = clock
        self.settings = settings
        self.people = people
        self.store = store
    }
}
