import PostgresNIO
import SQLKit

/// A statement that fails itself (PostgreSQL), so that a write with no transaction around it
/// keeps nothing when it finds it cannot finish: plain SQL has no `RAISE`, so the expression casts
/// the words `reason` to a number when `condition` is false, and PostgreSQL answers
/// `invalid input syntax for type bigint: "gatehouse: reason"` (SQLSTATE 22P02). The condition reads
/// the statement's own parts, so it is no constant the planner could fold before the writes.
package enum StatementCheck {
    /// A `bigint` expression: 0 when `condition` holds; the statement's failure when it does not.
    package static func require(_ condition: SQLQueryString, _ reason: String) -> SQLQueryString {
        "CAST(CASE WHEN \(condition) THEN '0' ELSE \(bind: prefix + reason) END AS bigint)"
    }

    /// Whether `error` is the failure `require` wrote for `reason`.
    package static func failed(_ error: any Error, _ reason: String) -> Bool {
        guard let error = error as? PSQLError, error.code == .server, error.serverInfo?[.sqlState] == "22P02" else { return false }
        return error.serverInfo?[.message]?.contains(prefix + reason) ?? false
    }

    private static let prefix = "gatehouse: "
}

/// A part of one statement with no transaction around it (`StatementCheck`): `name AS (statement)`,
/// which the statement runs where it reads it — a union reads its branches one after another, so
/// the parts lock what they lock in the order they are read. `rows`, when given, is the number of
/// rows the part must answer, or the statement fails right there (`counted`).
package struct StatementPart {
    package var name: String
    package var statement: SQLQueryString
    package var rows: Int?

    package init(name: String, statement: SQLQueryString, rows: Int?) {
        (self.name, self.statement, self.rows) = (name, statement, rows)
    }

    /// `name AS (statement)`.
    package var defined: SQLQueryString { "\(unsafeRaw: name) AS (\(statement))" }

    /// The branch of the statement's union that runs the part: its name and the rows it answered,
    /// failing the statement with `reason` unless they are `rows`.
    package func counted(_ reason: String) -> SQLQueryString {
        let count: SQLQueryString = rows.map { StatementCheck.require("count(*) = \(bind: $0)", reason) } ?? "count(*)"
        return "SELECT '\(unsafeRaw: name)' AS part, NULL::uuid AS id, \(count) AS value FROM \(unsafeRaw: name)"
    }
}
