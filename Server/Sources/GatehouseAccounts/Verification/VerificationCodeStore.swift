import FluentKit
import Foundation
import GatehouseFoundation
import SQLKit

/// The statements of `verification_codes` that Fluent cannot say: an attempt taken under the row's condition, a code
/// spent once.
package struct VerificationCodeStore: Sendable {
    package let database: DatabaseProvider

    package init(database: DatabaseProvider) {
        self.database = database
    }

    /// Takes one attempt of a live code with attempts left: the attempts made, this one included; nil when none is
    /// left (or the code was used meanwhile).
    package func takeAttempt(_ id: UUID) async throws -> Int? {
        try await database.db.raw("""
            UPDATE verification_codes SET attempts = attempts + 1
            WHERE id = \(bind: id) AND attempts < max_attempts AND consumed_at IS NULL
            RETURNING attempts
            """).first(decodingColumn: "attempts", as: Int.self)
    }

    /// Marks the code used: false when someone used it first.
    package func consume(_ id: UUID, at now: Date, on db: any GatehouseDatabase) async throws -> Bool {
        try await !db.raw("UPDATE verification_codes SET consumed_at = \(bind: now) WHERE id = \(bind: id) AND consumed_at IS NULL RETURNING id")
            .all().isEmpty
    }
}
