import FluentKit
import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import SQLKit

/// The search keys and the public card of every account (`messenger_people`), kept in step with
/// `accounts` by `PeopleIndexUpkeep`, which sees every save of an account.
package enum PeopleIndex {
    /// Case and accents folded away: "Ёлкин" and "елкин", "José" and "jose" are the same key.
    package static func fold(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil).lowercased()
    }

    package struct Entry: Sendable, Equatable {
        package var tagKey: String?
        package var firstKey: String
        package var lastKey: String
        package var fullKey: String
        package var reverseKey: String
        package var sortName: String
        /// What others see of the person; a change is a `profile.updated` event.
        package var card: String
    }

    package static func entry(tag: String?, firstName: String?, lastName: String?, avatarID: UUID?) -> Entry {
        let first = fold(firstName ?? "").trimmingCharacters(in: .whitespaces)
        let last = fold(lastName ?? "").trimmingCharacters(in: .whitespaces)
        let card = [firstName ?? "", lastName ?? "", tag ?? "", avatarID?.uuidString ?? ""].joined(separator: "\u{1F}")
        return Entry(
            tagKey: tag.map(fold), firstKey: first, lastKey: last,
            fullKey: "\(first) \(last)", reverseKey: "\(last) \(first)",
            // "Фамилия Имя" order, then the tag so that equal names stay stable.
            sortName: "\(last) \(first) \(tag.map(fold) ?? "")", card: card
        )
    }

    package static func entry(_ account: AccountModel) -> Entry {
        entry(tag: account.username, firstName: account.firstName, lastName: account.lastName, avatarID: account.avatarID)
    }

    /// Writes the account's entry (nothing when its card is unchanged: the keys follow from the
    /// card's fields); answers the card it replaced (nil for a new entry).
    @discardableResult
    package static func upsert(_ accountID: UUID, _ entry: Entry, on sql: any SQLDatabase) async throws -> String? {
        let previous = try await sql.raw("SELECT card FROM messenger_people WHERE account_id = \(bind: accountID)")
            .first(decodingColumn: "card", as: String.self)
        if previous == entry.card { return previous }
        try await sql.raw("""
            INSERT INTO messenger_people (account_id, tag_key, first_key, last_key, full_key, reverse_key, sort_name, card, who_can_message)
            VALUES (\(bind: accountID), \(bind: entry.tagKey), \(bind: entry.firstKey), \(bind: entry.lastKey), \(bind: entry.fullKey),
                    \(bind: entry.reverseKey), \(bind: entry.sortName), \(bind: entry.card), \(bind: MessagingAudience.everyone.rawValue))
            ON CONFLICT (account_id) DO UPDATE SET tag_key = excluded.tag_key, first_key = excluded.first_key,
                last_key = excluded.last_key, full_key = excluded.full_key, reverse_key = excluded.reverse_key,
                sort_name = excluded.sort_name, card = excluded.card
            """).run()
        return previous
    }

    /// New accounts' entries in one statement (an import's batch).
    package static func insert(_ entries: [(UUID, Entry)], on sql: any SQLDatabase) async throws {
        guard !entries.isEmpty else { return }
        let rows = entries.map { id, entry -> SQLQueryString in
            """
            (\(bind: id), \(bind: entry.tagKey), \(bind: entry.firstKey), \(bind: entry.lastKey), \(bind: entry.fullKey), \(bind: entry.reverseKey),
             \(bind: entry.sortName), \(bind: entry.card), \(bind: MessagingAudience.everyone.rawValue))
            """
        }
        try await sql.raw("""
            INSERT INTO messenger_people (account_id, tag_key, first_key, last_key, full_key, reverse_key, sort_name, card, who_can_message)
            VALUES \(rows.joined(separator: ", "))
            """).run()
    }

    /// Every account without an entry gets one (the migration that adds the messenger).
    package static func backfill(on sql: any SQLDatabase) async throws {
        struct Row: Decodable {
            var id: UUID
            var username: String?
            var first_name: String?
            var last_name: String?
            var avatar_id: UUID?
        }
        let rows = try await sql.raw("""
            SELECT a.id, a.username, a.first_name, a.last_name, a.avatar_id FROM accounts a
            WHERE NOT EXISTS (SELECT 1 FROM messenger_people p WHERE p.account_id = a.id)
            """).all(decoding: Row.self)
        for row in rows {
            try await upsert(row.id, entry(tag: row.username, firstName: row.first_name, lastName: row.last_name, avatarID: row.avatar_id), on: sql)
        }
    }

    /// A search as SQL: the query's words each prefix one of the name keys, or the whole query
    /// prefixes the tag (a leading `@` ignored). Nil for an empty query.
    package static func matching(_ query: String?, alias p: String = "p") -> SQLQueryString? {
        // Control characters match nothing a person is called (and PostgreSQL refuses a NUL in text).
        let visible = query.map { String(String.UnicodeScalarView($0.unicodeScalars.filter { $0.properties.generalCategory != .control })) }
        guard var text = visible?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty else { return nil }
        if text.hasPrefix("@") { text.removeFirst() }
        let folded = fold(String(text.prefix(100)))
        guard !folded.isEmpty else { return nil }
        let pattern = escapeLike(folded) + "%"
        let wordPattern = "% " + escapeLike(folded) + "%"
        return """
            (\(ident: p).tag_key LIKE \(bind: pattern) ESCAPE '\\' OR \(ident: p).full_key LIKE \(bind: pattern) ESCAPE '\\' \
            OR \(ident: p).reverse_key LIKE \(bind: pattern) ESCAPE '\\' OR \(ident: p).full_key LIKE \(bind: wordPattern) ESCAPE '\\')
            """
    }

    package static func escapeLike(_ text: String) -> String {
        var out = ""
        for ch in text {
            if ch == "%" || ch == "_" || ch == "\\" { out.append("\\") }
            out.append(ch)
        }
        return out
    }
}

/// Keeps `messenger_people` in step with `accounts`, in the same transaction as the save, and
/// tells the people who can see a person that their card changed (`profile.updated`).
package struct PeopleIndexUpkeep: AsyncModelMiddleware, AccountUpkeep {
    package let events: EventLog
    package let people: PersonLoader

    package func create(model: AccountModel, on db: any Database, next: any AnyAsyncModelResponder) async throws {
        try await next.create(model, on: db)
        guard let id = model.id else { return }
        try await PeopleIndex.upsert(id, PeopleIndex.entry(model), on: DeadlineDatabase.adopting(db))
    }

    package func created(_ accounts: [AccountModel], on tx: any GatehouseDatabase) async throws {
        try await PeopleIndex.insert(accounts.compactMap { account in account.id.map { ($0, PeopleIndex.entry(account)) } }, on: tx)
    }

    package func update(model: AccountModel, on db: any Database, next: any AnyAsyncModelResponder) async throws {
        try await next.update(model, on: db)
        guard let id = model.id else { return }
        let db = DeadlineDatabase.adopting(db)
        let entry = PeopleIndex.entry(model)
        let previous = try await PeopleIndex.upsert(id, entry, on: db)
        guard previous != nil, previous != entry.card, model.username != nil else { return }
        var pending: [PendingEvent] = []
        for viewer in try await people.acquaintances(of: id, on: db) {
            guard let person = try await people.person(id, seenBy: viewer, on: db) else { continue }
            let data = String(decoding: try V1.encoder.encode(person), as: UTF8.self)
            pending.append(PendingEvent(account: viewer, kind: .profileUpdated, data: data))
        }
        try await events.append(pending, on: db)
    }

    package init(events: EventLog, people: PersonLoader) {
        self.events = events
        self.people = people
    }
}
