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
}
