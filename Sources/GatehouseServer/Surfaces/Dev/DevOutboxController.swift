import FluentKit
import Foundation
import GatehouseAPI
import Hummingbird

/// `GET /dev/outbox?to=DEST`: the development outbox as JSON, newest first, standing in for a
/// phone and a mailbox. Registered only in development mode.
struct DevOutboxController: Sendable {
    let services: GatehouseServices

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        router.get(RouterPath(DevAPI.Path.outbox)) { request, _ -> Response in
            // Destinations as typed work too: phones are normalised like everywhere else.
            let to = request.uri.queryParameters.get("to").map { raw in
                raw.contains("@") ? raw.trimmingCharacters(in: .whitespaces).lowercased()
                    : (PhoneNumber.normalize(raw, defaultCountryCode: services.configuration.defaultCountryCode) ?? raw)
            }
            let limit = request.uri.queryParameters.get("last").flatMap(Int.init).map { min(max($0, 1), 500) } ?? 50
            let messages = try await OutboxQuery.recent(database: services.database, to: to, limit: limit)
            return try JSONResponse.make(messages)
        }
    }
}

/// Reads the outbox for `/dev/outbox` and `gatehouse outbox`.
public enum OutboxQuery {
    static func recent(database: DatabaseProvider, to: String?, limit: Int) async throws -> [DevOutboxMessage] {
        var query = OutboxMessageModel.query(on: database.db)
        if let to, !to.isEmpty { query = query.filter(\.$destination == to) }
        return try await query.sort(\.$createdAt, .descending).sort(\.$id, .descending).limit(limit).all().map { row in
            DevOutboxMessage(channel: row.kind, to: row.destination, subject: row.subject, body: row.body, code: row.code,
                             createdAt: WireDates.iso8601String(from: row.createdAt))
        }
    }
}
