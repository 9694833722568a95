import Foundation
import GatehouseFoundation
import SQLKit

/// The webhooks' side of the outbox: an event fanned out to every enabled endpoint that subscribes to its type, one
/// outbox row each, in the caller's transaction.
struct WebhookOutboxStore: Sendable {
    let database: DatabaseProvider

    /// Events in their order, with one read of the endpoints and one statement for their rows.
    func enqueue(_ events: [WebhookEvent], on db: (any GatehouseDatabase)?) async throws {
        guard !events.isEmpty else { return }
        let sql = db ?? database.db
        let endpoints = try await sql.raw("SELECT id, event_types FROM webhook_endpoints WHERE disabled_at IS NULL").all().map { row in
            (id: try row.decode(column: "id", as: UUID.self).uuidString.lowercased(),
             types: try row.decode(column: "event_types", as: String.self).split(separator: " ").map(String.init))
        }
        guard !endpoints.isEmpty else { return }
        var rows: [SQLQueryString] = []
        for event in events {
            let body = event.payload
            for endpoint in endpoints where endpoint.types.isEmpty ? event.type.inDefault : endpoint.types.contains(event.type.rawValue) {
                rows.append("""
                    (\(bind: OrderedID.make()), 'webhook', \(bind: endpoint.id), \(bind: event.type.rawValue), \(bind: body), 'pending', 0,
                     \(bind: event.at), \(bind: event.at), \(bind: endpoint.id + " " + event.account.uuidString.lowercased()))
                    """)
            }
        }
        // At most 500 rows a statement: eight bound values each stays inside either engine's limit on parameters.
        for start in stride(from: 0, to: rows.count, by: 500) {
            try await sql.raw("""
                INSERT INTO outbox_messages (id, kind, destination, subject, body, status, attempts, next_attempt_at, created_at, ordering_key)
                VALUES \(rows[start..<min(start + 500, rows.count)].joined(separator: ", "))
                """).run()
        }
    }
}
