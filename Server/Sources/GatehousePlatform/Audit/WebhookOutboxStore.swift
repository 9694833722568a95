import Foundation
import GatehouseFoundation
import SQLKit

/// The webhooks' side of the outbox: an event fanned out to every enabled endpoint that subscribes to its type, one
/// outbox row each, in the caller's transaction.
struct WebhookOutboxStore: Sendable {
    let database: DatabaseProvider

    func enqueue(_ event: WebhookEvent, on db: (any GatehouseDatabase)?) async throws {
        let sql = db ?? database.db
        let endpoints = try await sql.raw("SELECT id, event_types FROM webhook_endpoints WHERE disabled_at IS NULL").all()
        guard !endpoints.isEmpty else { return }
        let body = event.payload
        for row in endpoints {
            let id = try row.decode(column: "id", as: UUID.self)
            let types = try row.decode(column: "event_types", as: String.self).split(separator: " ").map(String.init)
            guard types.isEmpty ? event.type.inDefault : types.contains(event.type.rawValue) else { continue }
            let endpoint = id.uuidString.lowercased()
            try await sql.raw("""
                INSERT INTO outbox_messages (id, kind, destination, subject, body, status, attempts, next_attempt_at, created_at, ordering_key)
                VALUES (\(bind: OrderedID.make()), 'webhook', \(bind: endpoint), \(bind: event.type.rawValue), \(bind: body), 'pending', 0,
                        \(bind: event.at), \(bind: event.at), \(bind: endpoint + " " + event.account.uuidString.lowercased()))
                """).run()
        }
    }
}
