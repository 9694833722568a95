import FluentKit
import Foundation
import SQLKit

/// The outbox's table. Never edit a migration that has landed: add the next.
package struct M004CreateOutboxMessages: SQLMigration {
    package var name: String { "004_CreateOutboxMessages" }
    package func prepare(on database: any GatehouseDatabase) async throws {
        try await database.schema("outbox_messages")
            .id()
            .field("kind", .string, .required)
            .field("destination", .string, .required)
            .field("subject", .string)
            .field("body", .string, .required)
            .field("code", .string)
            .field("status", .string, .required)
            .field("attempts", .int, .required)
            .field("next_attempt_at", .datetime, .required)
            .field("claimed_until", .datetime)
            .field("last_error", .string)
            .field("created_at", .datetime, .required)
            .field("sent_at", .datetime)
            .field("channel", .string)
            .create()
        try await database.create(index: "ix_outbox_due").on("outbox_messages").column("status").column("next_attempt_at").run()
        try await database.create(index: "ix_outbox_destination").on("outbox_messages").column("destination").column("created_at").run()
    }
    package func revert(on database: any GatehouseDatabase) async throws {
        try await database.schema("outbox_messages").delete()
    }

    package init() {

    }
}

/// Webhooks keep their order per account and endpoint: `ordering_key` (the endpoint and the account) holds a delivery
/// back while an earlier one of the same key is still pending.
package struct M031OutboxOrdering: SQLMigration {
    package var name: String { "031_OutboxOrdering" }
    package func prepare(on database: any GatehouseDatabase) async throws {
        try await database.schema("outbox_messages").field("ordering_key", .string).update()
        try await database.create(index: "ix_outbox_ordering").on("outbox_messages").column("ordering_key").column("status").run()
    }
    package func revert(on database: any GatehouseDatabase) async throws {
        try await database.drop(index: "ix_outbox_ordering").run()
        try await database.schema("outbox_messages").deleteField("ordering_key").update()
    }
    package init() {}
}
