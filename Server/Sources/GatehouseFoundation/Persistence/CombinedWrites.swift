import FluentKit
import SQLKit

/// Writes that do not read one another's effects (inserts and updates of different rows), sent
/// as one statement on PostgreSQL (each a data-modifying `WITH` part: one round trip, however
/// many) and one by one on SQLite, whose writer is in process. A group commit collects its
/// writes here so that the rows it locks are held for one round trip, not one per table.
package struct CombinedWrites {
    /// Whether they go to PostgreSQL: the statements are written for the engine (`RowSet`).
    package let postgres: Bool
    package private(set) var statements: [SQLQueryString] = []
    /// Expressions the statement selects once its writes are done (`pg_notify` calls).
    package private(set) var selected: [SQLQueryString] = []

    package init(for sql: any SQLDatabase) {
        postgres = sql.isPostgres
    }

    package mutating func add(_ statement: SQLQueryString) {
        statements.append(statement)
    }

    /// An expression to evaluate with the writes (PostgreSQL: the statement's own select list).
    package mutating func select(_ expression: SQLQueryString) {
        selected.append(expression)
    }

    /// `prepared`: on PostgreSQL, as a prepared statement (`PreparedStatements`), for the hot paths
    /// (group commits); false runs it as a plain statement, whose rows postgres-nio reads without
    /// an async sequence (see `PreparedStatements`, "A closing connection").
    package func run(on sql: any SQLDatabase, prepared: Bool = true) async throws {
        let select: SQLQueryString = selected.isEmpty ? "SELECT 1" : "SELECT \(selected.joined(separator: ", "))"
        if postgres, statements.count + selected.count > 1 {
            let parts = statements.enumerated().map { "w\(unsafeRaw: String($0.offset)) AS (\($0.element))" as SQLQueryString }
            let combined: SQLQueryString = parts.isEmpty ? select : "WITH \(parts.joined(separator: ", ")) \(select)"
            if prepared { _ = try await sql.preparedRows(combined) } else { _ = try await sql.raw(combined).all() }
        } else {
            for statement in statements { try await sql.raw(statement).run() }
            if !selected.isEmpty { try await sql.raw(select).run() }
        }
    }
}
