import FluentKit
import Foundation
import GatehouseFoundation
import GatehousePlatform

/// The outbox as operators see it (docs/operators.md, "The console"): what was sent to an address,
/// its delivery state, attempts and last error, never its body or code; a message that failed for
/// good can be queued again, with the operator's reason in the audit trail.
package struct OperatorOutbox: Sendable {
    package let database: DatabaseProvider
    package let clock: GatehouseClock
    package let outbox: Outbox

    package init(database: DatabaseProvider, clock: GatehouseClock, outbox: Outbox) {
        self.database = database
        self.clock = clock
        self.outbox = outbox
    }

    package struct Entry: Sendable, Equatable {
        package var id: UUID
        package var kind: String
        package var to: String
        package var subject: String?
        package var status: String
        package var attempts: Int
        package var lastError: String?
        package var createdAt: Date
        package var sentAt: Date?
        package var nextAttemptAt: Date

        package var failed: Bool { status == OutboxMessageModel.Status.failed.rawValue }
    }

    /// The newest messages, to `destination` when given.
    package func recent(to destination: String?, limit: Int = 100) async throws -> [Entry] {
        var query = OutboxMessageModel.query(on: database.db)
        if let destination { query = query.filter(\.$destination == destination) }
        return try await query.sort(\.$createdAt, .descending).sort(\.$id, .descending).limit(limit).all().map { row in
            Entry(id: row.id!, kind: row.kind, to: row.destination, subject: row.subject, status: row.status, attempts: row.attempts,
                  lastError: row.lastError.map { String($0.prefix(200)) }, createdAt: row.createdAt, sentAt: row.sentAt,
                  nextAttemptAt: row.nextAttemptAt)
        }
    }

    /// A webhook endpoint's newest deliveries (at most 100), of one status when given: what the admin API and
    /// `gatehouse webhooks deliveries` show.
    package func webhookDeliveries(endpoint: UUID, status: OutboxMessageModel.Status? = nil) async throws -> [Entry] {
        try await recent(to: endpoint.uuidString.lowercased(), limit: 100)
            .filter { entry in entry.kind == OutgoingMessage.Kind.webhook.rawValue && (status.map { entry.status == $0.rawValue } ?? true) }
    }

    /// Queues a webhook delivery given up on again, with its event; false when the id is no such delivery (another
    /// kind of message is the console's to retry, not a webhook key's).
    package func retryWebhook(_ id: UUID, reason: String, by actor: AuditActor, origin: AuditOrigin) async throws -> Bool {
        guard let entry = try await entry(id), entry.kind == OutgoingMessage.Kind.webhook.rawValue else { return false }
        return try await retry(id, reason: reason, by: actor, origin: origin)
    }

    /// One message, or nil.
    package func entry(_ id: UUID) async throws -> Entry? {
        try await OutboxMessageModel.find(id, on: database.db).map { row in
            Entry(id: row.id!, kind: row.kind, to: row.destination, subject: row.subject, status: row.status, attempts: row.attempts,
                  lastError: row.lastError.map { String($0.prefix(200)) }, createdAt: row.createdAt, sentAt: row.sentAt,
                  nextAttemptAt: row.nextAttemptAt)
        }
    }

    /// Queues a message that failed for good again, with its event; false when it is not one.
    package func retry(_ id: UUID, reason: String, by actor: AuditActor, origin: AuditOrigin) async throws -> Bool {
        let retried = try await database.db.withTransaction { tx -> Bool in
            guard let destination = try await outbox.retryFailed(id, on: tx) else { return false }
            try await AuditLog(database: database, clock: clock).record(AuditEvent(
                .outboxRetried, by: actor, account: nil, origin: origin,
                detail: ["message": id.uuidString.lowercased(), "to": maskedForAudit(destination), "reason": reason]),
                on: tx)
            return true
        }
        if retried { outbox.signal.wake() }
        return retried
    }
}
