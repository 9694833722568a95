import FluentKit
import Logging
import NIOCore
import NIOPosix
import SQLKit

/// What `DatabaseProvider.db` hands out once the database has been shut down: every query fails
/// with `DatabaseClosedError`. Work that outlives the database (which shutdown's order is meant to
/// prevent) then ends in an error its caller logs, never in a crash of the whole process. Its
/// futures run on the shared event loop group, which is never shut down, so they always complete.
package struct ClosedDatabase: GatehouseDatabase {
    package let context: DatabaseContext
    package let dialect: any SQLDialect

    package init(configuration: any DatabaseConfiguration, dialect: any SQLDialect, logger: Logger) {
        self.context = DatabaseContext(configuration: configuration, logger: logger, eventLoop: MultiThreadedEventLoopGroup.singleton.any())
        self.dialect = dialect
    }

    package var logger: Logger { context.logger }
    package var eventLoop: any EventLoop { context.eventLoop }
    package var inTransaction: Bool { false }

    private func failed<T>() -> EventLoopFuture<T> { eventLoop.makeFailedFuture(DatabaseClosedError()) }

    package func execute(query: DatabaseQuery, onOutput: @escaping @Sendable (any DatabaseOutput) -> Void) -> EventLoopFuture<Void> { failed() }
    package func execute(schema: DatabaseSchema) -> EventLoopFuture<Void> { failed() }
    package func execute(enum: DatabaseEnum) -> EventLoopFuture<Void> { failed() }
    package func transaction<T>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> { failed() }
    package func withConnection<T>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> { failed() }
    package func withTransaction<T: Sendable>(onLoop: Bool, _ body: @escaping @Sendable (any GatehouseDatabase) async throws -> T) async throws -> T {
        throw DatabaseClosedError()
    }
    package func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> { failed() }
}

package struct DatabaseClosedError: Error, CustomStringConvertible {
    package var description: String { "the database has been shut down" }
}
