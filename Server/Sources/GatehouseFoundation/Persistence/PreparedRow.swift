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
        if let (kind, optional) = Self.kind(of: T.self), cells.contains(column) {
            let cell = cells[column]
            switch kind {
            case .uuid: return try Self.read(UUID.self, cell, optional: optional)
            case .string where !cell.dataType.isUserDefined: return try Self.read(String.self, cell, optional: optional)
            case .int64: return try Self.read(Int64.self, cell, optional: optional)
            case .int: return try Self.read(Int.self, cell, optional: optional)
            case .int32: return try Self.read(Int32.self, cell, optional: optional)
            case .bool: return try Self.read(Bool.self, cell, optional: optional)
            case .date: return try Self.read(Date.self, cell, optional: optional)
            case .double where cell.dataType != .numeric: return try Self.read(Double.self, cell, optional: optional)
            case .string, .double: break
            }
        }
        return try row.sql().decode(column: column, as: T.self)
    }

    private enum Kind { case uuid, string, int64, int, int32, bool, date, double }

    /// The types read directly, each with its optional: found by identity, in a list made once
    /// (asking for `Optional<V>`'s metadata at each call cost as much as it saved).
    private static let kinds: [(type: ObjectIdentifier, kind: Kind, optional: Bool)] = [
        (ObjectIdentifier(UUID.self), .uuid, false), (ObjectIdentifier(UUID?.self), .uuid, true),
        (ObjectIdentifier(String.self), .string, false), (ObjectIdentifier(String?.self), .string, true),
        (ObjectIdentifier(Int64.self), .int64, false), (ObjectIdentifier(Int64?.self), .int64, true),
        (ObjectIdentifier(Int.self), .int, false), (ObjectIdentifier(Int?.self), .int, true),
        (ObjectIdentifier(Int32.self), .int32, false), (ObjectIdentifier(Int32?.self), .int32, true),
        (ObjectIdentifier(Bool.self), .bool, false), (ObjectIdentifier(Bool?.self), .bool, true),
        (ObjectIdentifier(Date.self), .date, false), (ObjectIdentifier(Date?.self), .date, true),
        (ObjectIdentifier(Double.self), .double, false), (ObjectIdentifier(Double?.self), .double, true),
    ]

    private static func kind(of type: Any.Type) -> (Kind, optional: Bool)? {
        let id = ObjectIdentifier(type)
        for entry in kinds where entry.type == id { return (entry.kind, entry.optional) }
        return nil
    }

    /// `cell` as `V`, or as `V?` when `optional`; `T` is that type (`kind(of:)` said so). Inlined
    /// into each case above, where `V` is known: PostgresNIO's decoding is then specialised for it
    /// and `V?` needs no metadata made at run time (a profile of transfers found both under this
    /// function when it was not inlined).
    @inline(__always)
    private static func read<V: PostgresDecodable, T>(_: V.Type, _ cell: PostgresCell, optional: Bool) throws -> T {
        guard optional else { return unsafeBitCast(try cell.decode(V.self, context: .default), to: T.self) }
        let value: V? = cell.bytes == nil ? nil : try cell.decode(V.self, context: .default)
        return unsafeBitCast(value, to: T.self)
    }
}
