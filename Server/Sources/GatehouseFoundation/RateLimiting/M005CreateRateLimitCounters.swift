import FluentKit
import Foundation
import SQLKit

/// The rate limiter's counters. Never edit a migration that has landed: add the next.
package struct M005CreateRateLimitCounters: SQLMigration {
    package var name: String { "005_CreateRateLimitCounters" }
    package func prepare(on database: any GatehouseDatabase) async throws {
        try await database.create(table: "rate_limit_counters")
            .column("bucket", type: .text, .primaryKey(autoIncrement: false))
            .column("hits", type: .bigint, .notNull)
            // Unix seconds: an integer compares the same way on every engine.
            .column("expires_epoch", type: .bigint, .notNull)
            .run()
        try await database.create(index: "ix_rate_limit_expires").on("rate_limit_counters").column("expires_epoch").run()
    }
    package func revert(on database: any GatehouseDatabase) async throws {
        try await database.drop(table: "rate_limit_counters").run()
    }

    package init() {

    }
}
