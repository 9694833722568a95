import FluentKit
import Logging
import NIOCore
import NIOPosix
import SQLKit

/// What `DatabaseProvider.db` hands out once the database has been shut down: every query fails
/// with `DatabaseClosedError`. Work that outlives the database (which shutdown's order is meant to
/// prevent) then ends in an error its caller logs, never in a crash of the whole process. Its
/// futures run on the shared event loop group, which is never shut down, so they always complete.
struct ClosedDatabase: Database, SQLDatabase {
    let context: DatabaseContext
    let dialect: any SQLDialect

    init(configuration: any DatabaseConfiguration, dialect: any SQLDialect, logger: Logger) {
        self.context = DatabaseContext(configuration: configuration, logger: logger, eventLoop: MultiThreadedEventLoopGroup.singleton.any())
        self.dialect = dialect
    }

    var logger: Logger { context.logger }
    var eventLoop: any EventLoop { context.eventLoop }
    var inTransaction: Bool { false }

    private func failed<T>() -> EventLoopFuture<T> { eventLoop.makeFailedFuture(DatabaseClosedError()) }

    func execute(query: DatabaseQuery, onOutput: @escaping @Sendable (any DatabaseOutput) -> Void) -> EventLoopFuture<Void> { failed() }
    func execute(schema: DatabaseSchema) -> EventLoopFuture<Void> { failed() }
    func execute(enum: DatabaseEnum) -> EventLoopFuture<Void> { failed() }
    func transaction<T>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> { failed() }
    func withConnection<T>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> { failed() }
    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> { failed() }
}

struct DatabaseClosedError: Error, CustomStringConvertible {
    var description: String { "the database has been shut down" }
}
