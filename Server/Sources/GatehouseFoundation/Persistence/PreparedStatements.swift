import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresKit
import SQLKit

/// Statements prepared once per connection on PostgreSQL (docs/decisions.md, "Statements whose
/// text is fixed are prepared"), as PgJDBC and pgx do for a statement they see again: PostgreSQL then parses,
/// analyses and plans it once per connection instead of on every call, which for a group commit's
/// statements and a session lookup was a fifth of what the database spent. A statement gets one of
/// `capacity` slots the first time its text is seen, and keeps it; a slot's text never changes, so
/// a connection prepares it once under the slot's name. Only statements whose text is fixed for
/// their shape come here (`SQLDatabase.preparedRows`: binds, `RowSet` arrays, never a list whose
/// length varies); once every slot is taken, or when a bind has no binary encoding, a statement runs
/// unprepared as before.
///
/// A closing connection: a prepared statement's rows come as postgres-nio's async row sequence,
/// and postgres-nio 1.33 stops the process (a `preconditionFailure` in
/// `RowStreamStateMachine.channelReadComplete`) when PostgreSQL closes the connection while such a
/// sequence waits for its reader's demand; a plain statement's rows are read as they come and do
/// not meet it. A CI fault run (PostgreSQL restarted under load) met it once. So only the hot
/// paths' statements (group commits, the session lookup) are prepared; the rest run plain.
package enum PreparedStatements {
    package static let capacity = 64

    private static let registry = NIOLockedValueBox<(slots: [String: Int], texts: [String])>(([:], []))

    /// The slot of a statement's text, given the first time it is seen; nil once all are taken.
    package static func slot(for sql: String) -> Int? {
        registry.withLockedValue { registry in
            if let slot = registry.slots[sql] { return slot }
            guard registry.texts.count < capacity else { return nil }
            registry.texts.append(sql)
            registry.slots[sql] = registry.texts.count - 1
            return registry.texts.count - 1
        }
    }

    package static func text(ofSlot slot: Int) -> String {
        registry.withLockedValue { $0.texts[slot] }
    }

    /// The statement of a slot, with its binds, as PostgresNIO prepares it.
    package struct Slot<let N: Int>: PostgresPreparedStatement {
        package static var name: String { "gatehouse_\(N)" }
        package static var sql: String { PreparedStatements.text(ofSlot: N) }
        package typealias Row = PostgresRow
        package var bindings: PostgresBindings
        package func makeBindings() throws -> PostgresBindings { bindings }
        package func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
    }

    package typealias Runner = @Sendable (PostgresConnection, PostgresBindings, Logger) async throws -> [PostgresRow]

    private static func run<let N: Int>(_: Slot<N>.Type) -> Runner {
        { connection, bindings, logger in
            var rows: [PostgresRow] = []
            for try await row in try await connection.execute(Slot<N>(bindings: bindings), logger: logger) { rows.append(row) }
            return rows
        }
    }

    /// A runner per slot: a slot is a type (PostgresNIO names a prepared statement by its type).
    package static let runners: [Runner] = [
        run(Slot<0>.self),
        run(Slot<1>.self),
        run(Slot<2>.self),
        run(Slot<3>.self),
        run(Slot<4>.self),
        run(Slot<5>.self),
        run(Slot<6>.self),
        run(Slot<7>.self),
        run(Slot<8>.self),
        run(Slot<9>.self),
        run(Slot<10>.self),
        run(Slot<11>.self),
        run(Slot<12>.self),
        run(Slot<13>.self),
        run(Slot<14>.self),
        run(Slot<15>.self),
        run(Slot<16>.self),
        run(Slot<17>.self),
        run(Slot<18>.self),
        run(Slot<19>.self),
        run(Slot<20>.self),
        run(Slot<21>.self),
        run(Slot<22>.self),
        run(Slot<23>.self),
        run(Slot<24>.self),
        run(Slot<25>.self),
        run(Slot<26>.self),
        run(Slot<27>.self),
        run(Slot<28>.self),
        run(Slot<29>.self),
        run(Slot<30>.self),
        run(Slot<31>.self),
        run(Slot<32>.self),
        run(Slot<33>.self),
        run(Slot<34>.self),
        run(Slot<35>.self),
        run(Slot<36>.self),
        run(Slot<37>.self),
        run(Slot<38>.self),
        run(Slot<39>.self),
        run(Slot<40>.self),
        run(Slot<41>.self),
        run(Slot<42>.self),
        run(Slot<43>.self),
        run(Slot<44>.self),
        run(Slot<45>.self),
        run(Slot<46>.self),
        run(Slot<47>.self),
        run(Slot<48>.self),
        run(Slot<49>.self),
        run(Slot<50>.self),
        run(Slot<51>.self),
        run(Slot<52>.self),
        run(Slot<53>.self),
        run(Slot<54>.self),
        run(Slot<55>.self),
        run(Slot<56>.self),
        run(Slot<57>.self),
        run(Slot<58>.self),
        run(Slot<59>.self),
        run(Slot<60>.self),
        run(Slot<61>.self),
        run(Slot<62>.self),
        run(Slot<63>.self)
    ]

    /// The binds in PostgreSQL's binary form, or nil when one has none (it then runs unprepared,
    /// through PostgresKit's own encoding).
    package static func bindings(_ binds: [any Encodable & Sendable]) throws -> PostgresBindings? {
        var bindings = PostgresBindings(capacity: binds.count)
        for bind in binds {
            if (bind as Optional<Any>) == nil {
                bindings.appendNull()
            } else if let value = bind as? any PostgresThrowingDynamicTypeEncodable {
                try bindings.append(value, context: .default)
            } else {
                return nil
            }
        }
        return bindings
    }
}

extension SQLDatabase {
    /// Runs `query`, whose text is fixed for its shape, prepared on PostgreSQL (`PreparedStatements`),
    /// as `raw(query).all()` elsewhere; answers its rows.
    package func preparedRows(_ query: SQLQueryString) async throws -> [any SQLRow] {
        if let database = self as? DeadlineDatabase, let rows = try await database.prepared(query) { return rows }
        return try await raw(query).all()
    }
}

/// An array bind whose elements may be NULL (PostgresNIO's own arrays have none), in PostgreSQL's
/// binary array format: a `RowSet` column of optional values.
package struct NullableArray<Element: PostgresArrayEncodable & PostgresNonThrowingEncodable & Encodable & Sendable>: PostgresNonThrowingEncodable, Encodable, Sendable {
    package var elements: [Element?]

    package static var psqlType: PostgresDataType { Element.psqlArrayType }
    package static var psqlFormat: PostgresFormat { .binary }

    package func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        buffer.writeInteger(elements.isEmpty ? 0 : 1, as: UInt32.self)
        buffer.writeInteger(elements.contains { $0 == nil } ? 1 : 0, as: Int32.self)
        buffer.writeInteger(Element.psqlType.rawValue)
        guard !elements.isEmpty else { return }
        buffer.writeInteger(Int32(elements.count), as: Int32.self)
        buffer.writeInteger(1, as: Int32.self)
        for element in elements {
            guard let element else {
                buffer.writeInteger(-1, as: Int32.self)
                continue
            }
            // Its length, then its value.
            let lengthAt = buffer.writerIndex
            buffer.writeInteger(0, as: Int32.self)
            element.encode(into: &buffer, context: context)
            buffer.setInteger(Int32(buffer.writerIndex - lengthAt - 4), at: lengthAt)
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(elements)
    }
}
