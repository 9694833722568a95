import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import SQLKit

/// Finding people, and my privacy setting.
package struct PeopleService: MessengerConcept {
    package let core: MessengerCore

    /// People whose first name, last name or tag starts with the query (any case, any accents),
    /// by last name, me excluded; `cursor` continues a previous page.
    package func search(viewer: UUID, query: String?, cursor: String?, limit: Int?) async throws -> PeoplePage {
        let size = pageSize(limit)
        var conditions: [SQLQueryString] = ["p.tag_key IS NOT NULL", "a.id <> \(bind: viewer)"]
        if let match = PeopleIndex.matching(query) { conditions.append(match) }
        if let after = try PageCursor.read(cursor, parts: 2) {
            guard let id = UUID(uuidString: after[1]) else { throw PageCursor.invalid }
            conditions.append("(p.sort_name > \(bind: after[0]) OR (p.sort_name = \(bind: after[0]) AND a.id > \(bind: id)))")
        }
        let rows = try await database.sql.raw("""
            SELECT \(PersonLoader.columns), p.sort_name FROM messenger_people p JOIN accounts a ON a.id = p.account_id
            \(PersonLoader.joins(viewer: viewer))
            WHERE \(conditions.joined(separator: " AND "))
            ORDER BY p.sort_name, a.id LIMIT \(literal: size + 1)
            """).all()
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
        let raw = try await database.sql.raw("SELECT who_can_message FROM messenger_people WHERE account_id = \(bind: account)")
            .first(decodingColumn: "who_can_message", as: String.self)
        return PrivacySettings(whoCanMessageMe: raw.flatMap(MessagingAudience.init(rawValue:)) ?? .everyone)
    }

    package func updatePrivacy(of account: UUID, _ update: PrivacyUpdate) async throws -> PrivacySettings {
        if let audience = update.whoCanMessageMe {
            try await database.sql.raw("UPDATE messenger_people SET who_can_message = \(bind: audience.rawValue) WHERE account_id = \(bind: account)").run()
        }
        return try await privacy(of: account)
    }

    // MARK: Blocks

    /// Blocks a person I can see (404 otherwise); blocking twice is once. At most
    /// `GATEHOUSE_MESSENGER_BLOCKS_PER_ACCOUNT` (409 `too_many_blocks` above).
    package func block(viewer: UUID, person: UUID) async throws {
        _ = try await visiblePerson(person, seenBy: viewer, field: "personId")
        // Others blocked already: blocking someone blocked is once, whatever the limit.
        let count = try await database.sql.raw("SELECT COUNT(*) AS n FROM messenger_blocks WHERE account_id = \(bind: viewer) AND blocked_id <> \(bind: person)")
            .first(decodingColumn: "n", as: Int.self) ?? 0
        guard count < settings.blocksPerAccount else {
            throw GatehouseError.conflict(.tooManyBlocks, "error.tooManyBlocks", String(settings.blocksPerAccount))
        }
        try await database.sql.raw("""
            INSERT INTO messenger_blocks (account_id, blocked_id, created_at) VALUES (\(bind: viewer), \(bind: person), \(bind: clock.now()))
            ON CONFLICT (account_id, blocked_id) DO NOTHING
            """).run()
    }

    package func unblock(viewer: UUID, person: UUID) async throws {
        _ = try await visiblePerson(person, seenBy: viewer, field: "personId")
        try await database.sql.raw("DELETE FROM messenger_blocks WHERE account_id = \(bind: viewer) AND blocked_id = \(bind: person)").run()
    }

    /// The people I blocked, newest first (one page: the list is bounded).
    package func blocked(viewer: UUID) async throws -> PeoplePage {
        let ids = try await database.sql.raw("""
            SELECT blocked_id FROM messenger_blocks WHERE account_id = \(bind: viewer) ORDER BY created_at DESC, blocked_id
            """).all().map { try $0.decode(column: "blocked_id", as: UUID.self) }
        var items: [Person] = []
        for id in ids { if let person = try await people.person(id, seenBy: viewer) { items.append(person) } }
        return PeoplePage(items: items, nextCursor: nil)
    }

    package init(core: MessengerCore) {
        self.core = core
    }
}
