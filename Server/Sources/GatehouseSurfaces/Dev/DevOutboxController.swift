import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import Hummingbird

/// `GET /dev/outbox?to=DEST`: the development outbox as JSON, newest first, standing in for a
/// phone, a mailbox and a push device (`to` its id). Registered only in development mode.
package struct DevOutboxController: Sendable {
    package let database: DatabaseProvider
    package let defaultCountryCode: String

    package func addRoutes(to router: Router<GatehouseRequestContext>) {
        router.get(RouterPath(DevAPI.Path.outbox)) { request, _ -> Response in
            // Destinations as typed work too: phones are normalised like everywhere else, and a
            // push device's id (a push's destination) in either case.
            let to = request.uri.queryParameters.get("to").map { raw in
                UUID(uuidString: raw).map { $0.uuidString.lowercased() } ?? PhoneNumber.destination(raw, defaultCountryCode: defaultCountryCode)
            }
            let limit = request.uri.queryParameters.get("last").flatMap(Int.init).map { min(max($0, 1), 500) } ?? 50
            let messages = try await OutboxQuery.recent(database: database, to: to, limit: limit)
            return try JSONResponse.make(messages)
        }
    }

    package init(database: DatabaseProvider, defaultCountryCode: String) {
        self.database = database
        self.defaultCountryCode = defaultCountryCode
    }
}
