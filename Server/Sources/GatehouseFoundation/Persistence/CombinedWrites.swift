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
    /// The statements (their places in `statements`) whose rows `run` counts.
    private var counted: [Int] = []
    /// Expressions the statement selects once its writes are done (`pg_notify` calls).
    package private(set) var selected: [SQLQueryString] = []

    package init(for sql: any SQLDatabase) {
        postgres = sql.isPostgres
    }

    package mutating func add(_ statement: SQLQueryString) {
        statements.append(statement)
    }

    /// A write whose rows `run` counts (its statement ends in `RETURNING`): how many it inserted
    /// or updated, for a caller that must know whether all of them were (an insert `ON CONFLICT
    /// DO NOTHING` that claims keys). Answered by `run`, in the order added.
    package mutating func addCounted(_ statement: SQLQueryString) {
        counted.append(statements.count)
        statements.append(statement)
    }

    /// An expression to evaluate with the writes (PostgreSQL: the statement's own select list).
    package mutating func select(_ expression: SQLQueryString) {
        selected.append(expression)
    }

    /// `prepared`: on PostgreSQL, as a prepared statement (`PreparedStatements`), for the hot paths
    /// (group commits); false runs it as a plain statement, whose rows postgres-nio reads without
    /// an async sequence (see `PreparedStatements`, "A closing connection"). Answers the counted
    /// writes' rows (`addCounted`), in the order they were added.
    @discardableResult
    package func run(on sql: any SQLDatabase, prepared: Bool = true) async throws -> [Int] {
        if postgres, statements.count + selected.count > 1 || !counted.isEmpty {
            let counts = counted.enumerated().map { "(SELECT count(*) FROM w\(unsafeRaw: String($0.element))) AS c\(unsafeRaw: String($0.offset))" as SQLQueryString }
            let expressions = counts + selected
            let select: SQLQueryString = expressions.isEmpty ? "SELECT 1" : "SELECT \(expressions.joined(separator: ", "))"
            let parts = statements.enumerated().map { "w\(unsafeRaw: String($0.offset)) AS (\($0.element))" as SQLQueryString }
            let combined: SQLQueryString = parts.isEmpty ? select : "WITH \(parts.joined(separator: ", ")) \(select)"
            let rows = prepared ? try await sql.preparedRows(combined) : try await sql.raw(combined).all()
            guard !counted.isEmpty else { return [] }
            guard let row = rows.first else { throw CombinedWritesError.noRow }
            return try counted.indices.map { Int(try row.decode(column: "c\($0)", as: Int64.self)) }
        }
        var counts: [Int] = []
        for (index, statement) in statements.enumerated() {
            if counted.contains(index) { counts.append(try await sql.raw(statement).all().count) } else { try await sql.raw(statement).run() }
        }
        if !selected.isEmpty { try await sql.raw("SELECT \(selected.joined(separator: ", "))").run() }
        return counts
    }
}

/// The combined statement answered no row (it always selects one).
package enum CombinedWritesError: Error {
    case noRow
}
