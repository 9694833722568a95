import FluentKit
import Foundation
import GatehouseAPI
import SQLKit

/// Finding people, and my privacy setting.
struct PeopleService: MessengerConcept {
    let core: MessengerCore

    /// People whose first name, last name or tag starts with the query (any case, any accents),
    /// by last name, me excluded; `cursor` continues a previous page.
    func search(viewer: UUID, query: String?, cursor: String?, limit: Int?) async throws -> PeoplePage {
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

    func person(_ id: UUID, viewer: UUID) async throws -> Person {
        try await visiblePerson(id, seenBy: viewer)
    }

    func privacy(of account: UUID) async throws -> PrivacySettings {
        let raw = try await database.sql.raw("SELECT who_can_message FROM messenger_people WHERE account_id = \(bind: account)")
            .first(decodingColumn: "who_can_message", as: String.self)
        return PrivacySettings(whoCanMessageMe: raw.flatMap(MessagingAudience.init(rawValue:)) ?? .everyone)
    }

    func updatePrivacy(of account: UUID, _ update: PrivacyUpdate) async throws -> PrivacySettings {
        if let audience = update.whoCanMessageMe {
            try await database.sql.raw("UPDATE messenger_people SET who_can_message = \(bind: audience.rawValue) WHERE account_id = \(bind: account)").run()
        }
        return try await privacy(of: account)
    }
}
