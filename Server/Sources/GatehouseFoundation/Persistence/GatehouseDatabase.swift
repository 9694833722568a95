import FluentKit
import NIOCore
import SQLKit

/// What the server's code talks to its database through: Fluent's models and SQLKit's statements on one handle, so
/// that no store, service or migration ever casts a `Database` to an `SQLDatabase`.
///
/// Where a handle comes from:
/// - `DatabaseProvider.db` (a `DeadlineDatabase`, or a `ClosedDatabase` once the provider is shut down);
/// - `withTransaction(_:)`, whose body gets the transaction as one;
/// - `SQLMigration`, whose `prepare(on:)` and `revert(on:)` get one;
/// - `DeadlineDatabase.adopting(_:)`, the one place where a handle Fluent passes back untyped (a model middleware's)
///   becomes one.
package protocol GatehouseDatabase: Database, SQLDatabase {
    /// `body` in one transaction (a transaction already open: in that one), handed the transaction. `onLoop`: the body
    /// runs on the connection's event loop (`makeFutureWithTaskOnLoop`), where FluentKit's runs in a plain `Task` on
    /// the global pool.
    func withTransaction<T: Sendable>(onLoop: Bool, _ body: @escaping @Sendable (any GatehouseDatabase) async throws -> T) async throws -> T
}

extension GatehouseDatabase {
    /// `body` in one transaction (a transaction already open: in that one), handed the transaction.
    package func withTransaction<T: Sendable>(_ body: @escaping @Sendable (any GatehouseDatabase) async throws -> T) async throws -> T {
        try await withTransaction(onLoop: false, body)
    }
}

/// A migration that writes SQL: Fluent hands every migration an untyped `Database`; this hands it ours.
package protocol SQLMigration: AsyncMigration {
    func prepare(on db: any GatehouseDatabase) async throws
    func revert(on db: any GatehouseDatabase) async throws
}

extension SQLMigration {
    package func prepare(on database: any Database) async throws {
        try await prepare(on: DeadlineDatabase.adopting(database))
    }

    package func revert(on database: any Database) async throws {
        try await revert(on: DeadlineDatabase.adopting(database))
    }
}
