import Foundation
import GatehouseFoundation
import Logging

/// What every operator command (`gatehouse apps …`, `gatehouse wallet …`) does around its work:
/// the server's services built from the configuration, the database migrated first (unless
/// `GATEHOUSE_AUTO_MIGRATE=false`), shut down afterwards whatever happens, and a refusal turned
/// into the command's own error with its English text.
package enum OperatorCommands {
    package static func withServices<T, Failure: Error>(_ configuration: GatehouseConfiguration, failure: (String) -> Failure,
                                                _ body: (GatehouseServices) async throws -> T) async throws -> T {
        var logger = Logger(label: "gatehouse")
        logger.logLevel = .warning
        let services = try GatehouseServices(configuration: configuration, logger: logger)
        do {
            if configuration.runMigrationsOnStart { try await services.migrate() } else { try await services.database.prepareEngine() }
            let result = try await body(services)
            await services.shutdownOutsideApplication()
            return result
        } catch let error as GatehouseError {
            await services.shutdownOutsideApplication()
            throw failure(error.message.render(.en))
        } catch {
            await services.shutdownOutsideApplication()
            throw error
        }
    }
}
