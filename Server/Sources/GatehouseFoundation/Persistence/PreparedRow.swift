import Foundation
import PostgresKit
import SQLKit

/// A row of a prepared statement's answer (`PreparedStatements`), read as PostgresKit reads it but
/// without its generic way for the types rows hold most. PostgresKit decodes each column through
/// `PostgresDataTranslation`: a coding path made of the column's name and index as a string, a
/// run-time cast of the type to `PostgresDecodable`, and the value opened from an existential; a
/// transfer's batch reads a hundred columns that way, and it was 8% of the server's processor
/// time for a saturated run of transfers. Here the types below are recognised by identity and
/// decoded by PostgresNIO directly, as PostgresKit ends up decoding them (its exceptions, a
/// `String` from a user-defined type, a `Double` from a `numeric`, do not take this way); any
/// other type, and a missing column, go through PostgresKit's row as before.
struct PreparedRow: SQLRow {
    let row: PostgresRow
    let cells: PostgresRandomAccessRow

    init(_ row: PostgresRow) {
        self.row = row
        self.cells = PostgresRandomAccessRow(row)
    }

    var allColumns: [String] { cells.map(\.columnName) }

    func contains(column: String) -> Bool { cells.contains(column) }

    func decodeNil(column: String) throws -> Bool {
        !cells.contains(column) || cells[column].bytes == nil
    }

    func decode<T: Decodable>(column: String, as type: T.Type) throws -> T {
        if cells.contains(column), let value = try Self.direct(cells[column], as: T.self) { return value }
        return try row.sql().decode(column: column, as: T.self)
    }

    /// The value, when `T` is one of the types read directly (or its optional); nil otherwise.
    static func direct<T>(_ cell: PostgresCell, as _: T.Type) throws -> T? {
        if let value = try take(UUID.self, cell, as: T.self) { return value }
        if !cell.dataType.isUserDefined, let value = try take(String.self, cell, as: T.self) { return value }
        if let value = try take(Int64.self, cell, as: T.self) { return value }
        if let value = try take(Int.self, cell, as: T.self) { return value }
        if let value = try take(Bool.self, cell, as: T.self) { return value }
        if let value = try take(Date.self, cell, as: T.self) { return value }
        if let value = try take(Int32.self, cell, as: T.self) { return value }
        if cell.dataType != .numeric, let value = try take(Double.self, cell, as: T.self) { return value }
        return nil
    }

    /// `cell` as `V` or `V?` when `T` is one of them (compared by identity: no run-time cast).
    @inline(__always)
    private static func take<V: PostgresDecodable, T>(_: V.Type, _ cell: PostgresCell, as _: T.Type) throws -> T? {
        if T.self == V.self {
            return unsafeBitCast(try cell.decode(V.self, context: .default), to: T.self)
        }
        if T.self == V?.self {
            let value: V? = cell.bytes == nil ? nil : try cell.decode(V.self, context: .default)
            return unsafeBitCast(value, to: T.self)
        }
        return nil
    }
}
