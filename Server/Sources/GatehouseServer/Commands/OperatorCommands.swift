import Foundation
import GatehouseFoundation
import Logging

/// What every operator command (`gatehouse apps …`, `gatehouse wallet …`) does around its work:
/// the database opened as `openExisting` opens it, the server's services built from the configuration, the database
/// migrated first (unless `GATEHOUSE_AUTO_MIGRATE=false`), shut down afterwards whatever happens, and a refusal turned
/// into the command's own error with its English text.
package enum OperatorCommands {
    package static func withServices<T, Failure: Error>(_ configuration: GatehouseConfiguration, failure: (String) -> Failure,
                                                _ body: (GatehouseServices) async throws -> T) async throws -> T {
        var logger = Logger(label: "gatehouse")
        logger.logLevel = .warning
        return try await DatabaseCommand.withExisting(configuration, logger: logger) { services in
            do {
                if configuration.runMigrationsOnStart { try await services.migrate() } else { try await services.database.prepareEngine() }
                return try await body(services)
            } catch let error as GatehouseError {
                throw failure(error.message.render(.en))
            }
        }
    }
}

/// How every command but `serve` and `migrate` opens the database (docs/operators.md, "Which database"):
/// - it must exist already: run from another folder, a command would otherwise make a new, empty SQLite file there
///   (or migrate an empty PostgreSQL database) and answer from it, as if every account were gone;
/// - it is named on standard error (`gatehouse: SQLite /var/lib/gatehouse/gatehouse.sqlite`), so the person sees
///   which one was used, and `--json` output on standard output stays JSON;
/// - the instance lease is held shared while the command runs: a command refuses during a restore, and a restore
///   refuses while a command runs.
package enum DatabaseCommand {
    /// The database is not there: nothing was made.
    package struct Missing: Error, CustomStringConvertible {
        package var description: String
    }

    /// The line every command writes on standard error before it answers: which database it opened.
    package static func announce(_ lease: InstanceLease) {
        FileHandle.standardError.write(Data("gatehouse: \(lease.databaseName)\n".utf8))
    }

    package static func withExisting<T>(_ configuration: GatehouseConfiguration, logger: Logger,
                                        _ body: (GatehouseServices) async throws -> T) async throws -> T {
        if case .sqlite(let path) = configuration.database {
            let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
            guard FileManager.default.fileExists(atPath: absolute) else {
                throw Missing(description: "no database at \(absolute) (DATABASE_URL, relative to the current folder "
                              + "\(FileManager.default.currentDirectoryPath)): run the command where the server runs, set "
                              + "DATABASE_URL to its file, or make a new one with `gatehouse migrate`; nothing was created")
            }
        }
        let lease = try await InstanceLease.take(.shared, on: configuration.sessionDatabase, logger: logger)
        announce(lease)
        let services: GatehouseServices
        do {
            services = try GatehouseServices(configuration: configuration, logger: logger)
        } catch {
            await lease.release()
            throw error
        }
        do {
            guard try await services.database.isMigrated() else {
                throw Missing(description: "\(lease.databaseName) holds no gatehouse database (no migrations table): check "
                              + "DATABASE_URL, or make one with `gatehouse migrate`; nothing was created")
            }
            let result = try await body(services)
            await services.shutdownOutsideApplication()
            await lease.release()
            return result
        } catch {
            await services.shutdownOutsideApplication()
            await lease.release()
            throw error
        }
    }
}
