import FluentKit
import Foundation
import GatehouseAPI

/// Reads the outbox for `/dev/outbox` and `gatehouse outbox`.
public enum OutboxQuery {
    package static func recent(database: DatabaseProvider, to: String?, limit: Int) async throws -> [DevOutboxMessage] {
        var query = OutboxMessageModel.query(on: database.db)
        if let to, !to.isEmpty { query = query.filter(\.$destination == to) }
        return try await query.sort(\.$createdAt, .descending).sort(\.$id, .descending).limit(limit).all().map { row in
            DevOutboxMessage(channel: row.kind, to: row.destination, subject: row.subject, body: row.body, code: row.code,
                             createdAt: WireDates.iso8601String(from: row.createdAt))
        }
    }
}
