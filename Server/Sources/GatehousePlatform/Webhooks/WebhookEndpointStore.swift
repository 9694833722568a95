import Foundation
import GatehouseFoundation
import SQLKit

/// The `webhook_endpoints` table: every query of it (the fan-out's read is the audit trail's, `WebhookOutboxStore`).
struct WebhookEndpointStore: Sendable {
    let database: DatabaseProvider

    struct Row: Sendable {
        var endpoint: WebhookEndpoint
        var secretSealed: String
        var previousSealed: String?
        var previousUntil: Date?
    }

    func insert(_ endpoint: WebhookEndpoint, secretSealed: String, on tx: any GatehouseDatabase) async throws {
        try await tx.raw("""
            INSERT INTO webhook_endpoints (id, url, description, event_types, secret_sealed, created_at, created_by)
            VALUES (\(bind: endpoint.id), \(bind: endpoint.url), \(bind: endpoint.description), \(bind: endpoint.eventTypes.joined(separator: " ")),
                    \(bind: secretSealed), \(bind: endpoint.createdAt), \(bind: endpoint.createdBy))
            """).run()
    }

    func enabledCount() async throws -> Int {
        try await database.db.raw("SELECT COUNT(*) AS n FROM webhook_endpoints WHERE disabled_at IS NULL").first(decodingColumn: "n", as: Int.self) ?? 0
    }

    func all() async throws -> [WebhookEndpoint] {
        try await database.db.raw("\(unsafeRaw: Self.columns) ORDER BY created_at, id").all().map { try Self.row($0).endpoint }
    }

    func find(_ id: UUID) async throws -> Row? {
        try await database.db.raw("\(unsafeRaw: Self.columns) WHERE id = \(bind: id)").first().map(Self.row)
    }

    func disable(_ id: UUID, at now: Date, on tx: any GatehouseDatabase) async throws -> String? {
        try await tx.raw("UPDATE webhook_endpoints SET disabled_at = \(bind: now) WHERE id = \(bind: id) AND disabled_at IS NULL RETURNING url")
            .first(decodingColumn: "url", as: String.self)
    }

    /// The new secret in place; the one it replaces still signs until `previousUntil`.
    func rotate(_ id: UUID, secretSealed: String, previousUntil: Date, on tx: any GatehouseDatabase) async throws -> Bool {
        try await !tx.raw("""
            UPDATE webhook_endpoints SET previous_secret_sealed = secret_sealed, previous_until = \(bind: previousUntil), secret_sealed = \(bind: secretSealed)
            WHERE id = \(bind: id) AND disabled_at IS NULL RETURNING id
            """).all().isEmpty
    }

    private static let columns = "SELECT id, url, description, event_types, secret_sealed, previous_secret_sealed, previous_until, created_at, created_by, disabled_at FROM webhook_endpoints"

    private static func row(_ row: any SQLRow) throws -> Row {
        let types = try row.decode(column: "event_types", as: String.self).split(separator: " ").map(String.init)
        return Row(endpoint: WebhookEndpoint(id: try row.decode(column: "id", as: UUID.self), url: try row.decode(column: "url", as: String.self),
                                             description: try row.decode(column: "description", as: String?.self), eventTypes: types,
                                             createdAt: try row.decode(column: "created_at", as: Date.self),
                                             createdBy: try row.decode(column: "created_by", as: String?.self),
                                             disabledAt: try row.decode(column: "disabled_at", as: Date?.self)),
                   secretSealed: try row.decode(column: "secret_sealed", as: String.self),
                   previousSealed: try row.decode(column: "previous_secret_sealed", as: String?.self),
                   previousUntil: try row.decode(column: "previous_until", as: Date?.self))
    }
}

/// The endpoints' table (docs/webhooks.md). Never edit a migration that has landed: add the next.
package struct M032CreateWebhookEndpoints: SQLMigration {
    package var name: String { "032_CreateWebhookEndpoints" }
    package func prepare(on database: any GatehouseDatabase) async throws {
        try await database.schema("webhook_endpoints")
            .field("id", .uuid, .identifier(auto: false))
            .field("url", .string, .required)
            .field("description", .string)
            // Space-separated event types; empty: every type.
            .field("event_types", .string, .required)
            // Sealed with GATEHOUSE_SECRET: the database alone cannot sign.
            .field("secret_sealed", .string, .required)
            .field("previous_secret_sealed", .string)
            .field("previous_until", .datetime)
            .field("created_at", .datetime, .required)
            .field("created_by", .string)
            .field("disabled_at", .datetime)
            .create()
    }
    package func revert(on database: any GatehouseDatabase) async throws {
        try await database.schema("webhook_endpoints").delete()
    }
    package init() {}
}
