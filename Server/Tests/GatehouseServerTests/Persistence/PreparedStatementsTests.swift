import FluentKit
import Foundation
import GatehouseFoundation
import GatehouseServer
import GatehouseTestSupport
import Logging
import SQLKit
import Testing

@Suite("Prepared statements and row sets")
struct PreparedStatementsTests {
    @Test("rows given as a RowSet (NULLs included), inserted and updated by key, read with = ANY come back as written, a bind without a binary form runs unprepared, prepared on PostgreSQL under their slot, in and out of a transaction", .tags(.engine), arguments: TestEngine.all)
    func rowSetsRoundTrip(engine: TestEngine) async throws {
        // setup
        try await withMigratedProvider(engine) { provider in
            try await provider.run(statement: "CREATE TABLE probe (id UUID NOT NULL, note TEXT, amount BIGINT NOT NULL, at TIMESTAMPTZ NOT NULL)")
            let sql = provider.sql
            let postgres = sql.isPostgres
            let now = Date(timeIntervalSince1970: 1_790_000_000)
            @Sendable func rows(_ ids: [UUID], _ notes: [String?], _ amounts: [Int64]) -> RowSet {
                var rows = RowSet(count: ids.count)
                rows.add("id", "uuid", ids)
                rows.add("note", "text", notes)
                rows.add("amount", "bigint", amounts)
                return rows
            }
            let first = (0..<3).map { _ in UUID() }, second = (0..<2).map { _ in UUID() }

            // MUT: three rows outside a transaction, two inside one (the same statement's text, so its slot)
            _ = try await sql.preparedRows(rows(first, ["a", nil, "c'; --"], [1, -2, 3]).insert(into: "probe", constants: [("at", "\(bind: now)")], postgres: postgres))
            let prepared = try await provider.db.withTransaction { tx -> [String] in
                _ = try await tx.preparedRows(rows(second, [nil, "e"], [4, 5]).insert(into: "probe", constants: [("at", "\(bind: now)")], postgres: postgres))
                guard postgres else { return [] }
                return try await tx.raw("SELECT name FROM pg_prepared_statements").all().map { try $0.decode(column: "name", as: String.self) }
            }
            // ... and two of them changed by their ids (a note to NULL, another note and amount)
            var changes = RowSet(count: 2)
            changes.add("id", "uuid", [first[0], second[1]])
            changes.add("note", "text", [nil, "f"] as [String?])
            changes.add("amount", "bigint", [10, 50] as [Int64])
            _ = try await sql.preparedRows(changes.update("probe", matching: ["id"], postgres: postgres))
            // a bind with no binary form (JSON) runs unprepared, and still answers
            struct Tag: Codable, Sendable { var n: Int }
            let unprepared = try await sql.preparedRows("SELECT COUNT(*) AS n FROM probe WHERE \(bind: Tag(n: 1)) IS NOT NULL")
            #expect(try unprepared.first?.decode(column: "n", as: Int.self) == 5)
            let read = try await sql.preparedRows("SELECT id, note, amount, at FROM probe WHERE \(SQLQueryString.isAny("id", first + second, postgres: postgres))")

            // validate
            var found: [UUID: (String?, Int64, Date)] = [:]
            for row in read {
                found[try row.decode(column: "id", as: UUID.self)] = (try row.decode(column: "note", as: String?.self), try row.decode(column: "amount", as: Int64.self),
                                                                      try row.decode(column: "at", as: Date.self))
            }
            #expect(found.count == 5)
            #expect(zip(first + second, [nil, nil, "c'; --", nil, "f"] as [String?]).allSatisfy { found[$0.0]?.0 == $0.1 })
            #expect(zip(first + second, [10, -2, 3, 4, 50] as [Int64]).allSatisfy { found[$0.0]?.1 == $0.1 })
            #expect(found.values.allSatisfy { $0.2 == now })
            if postgres {
                // the insert's text has its slot, and the connection prepared it under that slot's name
                var serializer = SQLSerializer(database: sql)
                rows(second, [nil, "e"], [4, 5]).insert(into: "probe", constants: [("at", "\(bind: now)")], postgres: true).serialize(to: &serializer)
                let slot = try #require(PreparedStatements.slot(for: serializer.sql))
                #expect(PreparedStatements.slot(for: serializer.sql) == slot)
                #expect(prepared.contains("gatehouse_\(slot)"))
            }
        }
    }

    @Test("PostgreSQL: a prepared statement's row reads every column as PostgresKit's own row does, for every type it reads directly and some it does not: values, NULLs, an enum's text, a numeric, bytes, a wrong type, a missing column", .tags(.engine))
    func preparedRowReadsAsPostgresKit() async throws {
        guard TestEngine.all.contains(.postgres) else { return }
        try await withMigratedProvider(.postgres) { provider in
            // setup
            try await provider.run(statement: "CREATE TYPE probe_mood AS ENUM ('calm', 'glad')")
            let sql = provider.sql
            let id = UUID(), at = Date(timeIntervalSince1970: 1_790_000_000.123456)
            let query: SQLQueryString = """
                SELECT \(bind: id)::uuid AS u, NULL::uuid AS nu, \(bind: "тест \"q\" 😀")::text AS t, NULL::text AS nt, 'glad'::probe_mood AS mood,
                       \(bind: Int64(-9_000_000_000))::bigint AS big, 42::int4 AS small, 7::int8 AS i, TRUE AS b, NULL::boolean AS nb,
                       \(bind: at)::timestamptz AS at, NULL::timestamptz AS nat, 1.25::float8 AS d, 2.5::numeric AS num, '\\x01ff'::bytea AS bytes
                """

            // MUT: the same statement prepared (`PreparedRow`) and plain (PostgresKit's row)
            let prepared = try #require(try await sql.preparedRows(query).first)
            let plain = try #require(try await sql.raw(query).all().first)

            // validate: the prepared one is ours, and reads what it should
            #expect(String(describing: type(of: prepared)) == "PreparedRow")
            #expect(try prepared.decode(column: "u", as: UUID.self) == id)
            #expect(try prepared.decode(column: "nu", as: UUID?.self) == nil)
            #expect(try prepared.decode(column: "t", as: String.self) == "тест \"q\" 😀")
            #expect(try prepared.decode(column: "mood", as: String.self) == "glad")
            #expect(try prepared.decode(column: "big", as: Int64.self) == -9_000_000_000)
            #expect(try prepared.decode(column: "at", as: Date.self) == at)
            #expect(try prepared.decode(column: "num", as: Double.self) == 2.5)
            #expect(try prepared.decode(column: "bytes", as: Data.self) == Data([0x01, 0xFF]))
            #expect(throws: (any Error).self) { try prepared.decode(column: "missing", as: UUID.self) }
            #expect(try prepared.decodeNil(column: "missing") && prepared.decodeNil(column: "nt") && !prepared.decodeNil(column: "t"))
            #expect(prepared.allColumns == plain.allColumns)
            // every column as every type: the same value, or a failure on both
            var compared = 0
            func same<T: Decodable & Equatable>(_: T.Type) {
                for column in plain.allColumns {
                    let ours = Result { try prepared.decode(column: column, as: T.self) }
                    let theirs = Result { try plain.decode(column: column, as: T.self) }
                    switch (ours, theirs) {
                    case (.success(let a), .success(let b)): #expect(a == b, "\(column) as \(T.self)"); compared += 1
                    case (.failure, .failure): break
                    default: Issue.record("\(column) as \(T.self): \(ours) here, \(theirs) by PostgresKit")
                    }
                }
            }
            same(UUID.self); same(UUID?.self); same(String.self); same(String?.self); same(Int64.self); same(Int64?.self)
            same(Int.self); same(Int?.self); same(Int32.self); same(Int32?.self); same(Bool.self); same(Bool?.self)
            same(Date.self); same(Date?.self); same(Double.self); same(Double?.self); same(Data.self); same(Int16.self); same(Decimal.self)
            #expect(compared >= 40)
        }
    }
}
