import SQLKit

/// Writes that do not read one another's effects (inserts and updates of different rows), sent
/// as one statement on PostgreSQL (each a data-modifying `WITH` part: one round trip, however
/// many) and one by one on SQLite, whose writer is in process. A group commit collects its
/// writes here so that the rows it locks are held for one round trip, not one per table.
struct CombinedWrites {
    private(set) var statements: [SQLQueryString] = []

    mutating func add(_ statement: SQLQueryString) {
        statements.append(statement)
    }

    func run(on sql: any SQLDatabase) async throws {
        if sql.dialect.name == "postgresql", statements.count > 1 {
            let parts = statements.enumerated().map { "w\(unsafeRaw: String($0.offset)) AS (\($0.element))" as SQLQueryString }
            try await sql.raw("WITH \(parts.joined(separator: ", ")) SELECT 1").run()
        } else {
            for statement in statements { try await sql.raw(statement).run() }
        }
    }
}
