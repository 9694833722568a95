import Foundation
import PostgresNIO
import SQLKit

/// Rows a statement takes as data, for the statements of a group commit (docs/performance.md,
/// "Wallet transfers"). On PostgreSQL they go as one array per column, `unnest($1::uuid[], …)`:
/// the statement's text, its parsing and its plan stay the same size however many rows a batch
/// holds, and it has a bind per column, not one per cell. On SQLite, whose writer is in process,
/// they are `VALUES` rows as before.
package struct RowSet {
    package let count: Int
    private var names: [String] = []
    private var arrays: [SQLQueryString] = []
    private var cells: [(Int) -> SQLQueryString] = []

    package init(count: Int) {
        self.count = count
    }

    /// A column: its name, its SQL type (`uuid`, `text`, `bigint`, `timestamptz`, `boolean`) and a
    /// value per row.
    package mutating func add<T: Encodable & Sendable>(_ name: String, _ type: String, _ values: [T]) {
        precondition(values.count == count, "a value per row")
        names.append(name)
        arrays.append("\(bind: values)::\(unsafeRaw: type)[]")
        cells.append { "\(bind: values[$0])" }
    }

    /// A column whose values may be NULL.
    package mutating func add<T: PostgresArrayEncodable & PostgresNonThrowingEncodable & Encodable & Sendable>(_ name: String, _ type: String, _ values: [T?]) {
        precondition(values.count == count, "a value per row")
        names.append(name)
        arrays.append("\(bind: NullableArray(elements: values))::\(unsafeRaw: type)[]")
        cells.append { "\(bind: values[$0])" }
    }

    /// The column names, in order.
    package var columns: SQLQueryString { "\(unsafeRaw: names.joined(separator: ", "))" }

    /// PostgreSQL: the rows as a table, `unnest(…) AS alias(columns)`.
    package func table(_ alias: String) -> SQLQueryString {
        "unnest(\(arrays.joined(separator: ", "))) AS \(unsafeRaw: alias)(\(columns))"
    }

    /// `INSERT INTO table (columns, constants) …`: the rows, each with the same `constants`
    /// (a name and an expression).
    package func insert(into table: String, constants: [(String, SQLQueryString)] = [], postgres: Bool) -> SQLQueryString {
        let names = (self.names + constants.map(\.0)).joined(separator: ", ")
        if postgres {
            let extra = constants.map { ", \($0.1)" as SQLQueryString }.joined()
            return "INSERT INTO \(unsafeRaw: table) (\(unsafeRaw: names)) SELECT r.*\(extra) FROM \(self.table("r"))"
        }
        return "INSERT INTO \(unsafeRaw: table) (\(unsafeRaw: names)) VALUES \(values(constants.map(\.1)))"
    }

    /// `UPDATE table SET …` from the rows: each row's other columns written to the table's row
    /// whose `keys` columns equal its own (on SQLite the rows are a `WITH` table of `VALUES`), and
    /// only where `unless` (a condition on the table's row and `r`'s) does not hold.
    package func update(_ table: String, matching keys: [String], unless: String? = nil, postgres: Bool) -> SQLQueryString {
        let sets = names.filter { !keys.contains($0) }.map { "\($0) = r.\($0)" }.joined(separator: ", ")
        let match = keys.map { "\(table).\($0) = r.\($0)" }.joined(separator: " AND ") + (unless.map { " AND NOT (\($0))" } ?? "")
        let update: SQLQueryString = "UPDATE \(unsafeRaw: table) SET \(unsafeRaw: sets) FROM \(postgres ? self.table("r") : "r") WHERE \(unsafeRaw: match)"
        return postgres ? update : "WITH r(\(columns)) AS (VALUES \(values([]))) \(update)"
    }

    /// SQLite: the rows as `(?, …), …`, each ending with `constants`.
    private func values(_ constants: [SQLQueryString]) -> SQLQueryString {
        (0..<count).map { row -> SQLQueryString in "(\((cells.map { $0(row) } + constants).joined(separator: ", ")))" }.joined(separator: ", ")
    }
}

extension SQLQueryString {
    /// `column` is one of `values`: `= ANY($1)` on PostgreSQL (one bind, one plan however many),
    /// `IN (?, …)` elsewhere.
    package static func isAny<T: Encodable & Sendable>(_ column: SQLQueryString, _ values: [T], postgres: Bool) -> SQLQueryString {
        postgres ? "\(column) = ANY(\(bind: values))" : "\(column) IN (\(binds: values))"
    }

    /// The columns `(first, second)` are one of the id `pairs`: on PostgreSQL against the pairs as two
    /// arrays (one text, one plan however many), `(first = ? AND second = ?) OR …` elsewhere.
    package static func isAnyPair(_ first: String, _ second: String, _ pairs: [(UUID, UUID)], postgres: Bool) -> SQLQueryString {
        guard postgres else {
            return pairs.map { "(\(unsafeRaw: first) = \(bind: $0.0) AND \(unsafeRaw: second) = \(bind: $0.1))" as SQLQueryString }
                .joined(separator: " OR ")
        }
        var rows = RowSet(count: pairs.count)
        rows.add("first", "uuid", pairs.map(\.0))
        rows.add("second", "uuid", pairs.map(\.1))
        return "(\(unsafeRaw: first), \(unsafeRaw: second)) IN (SELECT q.first, q.second FROM \(rows.table("q")))"
    }
}

extension SQLDatabase {
    package var isPostgres: Bool { dialect.name == "postgresql" }
}
