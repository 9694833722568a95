import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import Hummingbird

/// `GET /dev/outbox?to=DEST`: the development outbox as JSON, newest first, standing in for a
/// phone, a mailbox and a push device (`to` its id). Registered only in development mode.
package struct DevOutboxController: Sendable {
    /// The newest messages, to one destination or all (`OutboxQuery.recent`).
    package let recent: @Sendable (_ to: String?, _ limit: Int) async throws -> [DevOutboxMessage]
    package let defaultCountryCode: String

    package func addRoutes(to router: Router<GatehouseRequestContext>) {
        router.route(DevAPI.outbox) { request, _ -> Response in
            // Destinations as typed work too: phones are normalised like everywhere else, and a
            // push device's id (a push's destination) in either case.
            let to = request.uri.queryParameters.get("to").map { raw in
                UUID(uuidString: raw).map { $0.uuidString.lowercased() } ?? PhoneNumber.destination(raw, defaultCountryCode: defaultCountryCode)
            }
            let limit = request.uri.queryParameters.get("last").flatMap(Int.init).map { min(max($0, 1), 500) } ?? 50
            let messages = try await recent(to, limit)
            return try JSONResponse.make(messages)
        }
    }

    package init(recent: @escaping @Sendable (_ to: String?, _ limit: Int) async throws -> [DevOutboxMessage], defaultCountryCode: String) {
        self.recent = recent
        self.defaultCountryCode = defaultCountryCode
    }
}
