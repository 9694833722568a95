import Foundation
import GatehouseFoundation
import Logging
import NIOCore
import NIOPosix
import PostgresKit
import PostgresNIO

// The client's side of a send's database work, for Benchmarks/messenger: what PostgresNIO alone spends to make
// the round trips a plain send makes in Gatehouse (one statement that writes everything, no transaction around it,
// when the chat's context is remembered; `2` adds the memberships' read of a send without one; `3 transaction` is the
// general way's shape: BEGIN, three statements, COMMIT), one send at a time at a steady rate on one connection, with the work on the connection's event loop as Gatehouse's writer
// runs it (the same `EventLoopTaskExecutor`). It prints this process's processor time per send and per round trip
// (from getrusage): what a send's server time is made of below Gatehouse's own layers (its statements' text,
// bindings, rows and the framework between a handler and the connection).
//
//     db-floor URL [rate per second, 400] [seconds, 10] [prepared statements per send, 1] [transaction | none, none]
//
// Benchmarks/messenger/run.sh --crowd runs it after Gatehouse, at the same rate (its `RESULT` line is for that).
let arguments = Array(CommandLine.arguments.dropFirst())
guard let url = arguments.first, var configuration = try? PostgresAddress.configuration(url).coreConfiguration else {
    FileHandle.standardError.write(Data("usage: db-floor postgres://user@host:port/database [rate] [seconds] [statements]\n".utf8))
    exit(64)
}
let rate = arguments.count > 1 ? Double(arguments[1]) ?? 400 : 400
let seconds = arguments.count > 2 ? Double(arguments[2]) ?? 10 : 10
let statements = arguments.count > 3 ? Int(arguments[3]) ?? 1 : 1
let inTransaction = arguments.count > 4 && arguments[4] == "transaction"
configuration.tls = PostgresConnection.Configuration.TLS.disable

struct Lookup: PostgresPreparedStatement {
    static let sql = "SELECT $1::uuid AS id, $2::int8 AS seq, 'a message of about the size people send'::text AS text"
    typealias Row = (UUID, Int64, String)
    var id: UUID
    var seq: Int64
    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(id)
        bindings.append(seq)
        return bindings
    }
    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

func processorSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

let logger = Logger(label: "db-floor")
let loop = MultiThreadedEventLoopGroup.singleton.next()
let connection = try await PostgresConnection.connect(on: loop, configuration: configuration, id: 1, logger: logger).get()
let count = Int(rate * seconds)
func send(_ n: Int) async throws {
    if inTransaction { try await connection.query("BEGIN", logger: logger) }
    for i in 0..<statements {
        for try await _ in try await connection.execute(Lookup(id: UUID(), seq: Int64(n * statements + i)), logger: logger) {}
    }
    if inTransaction { try await connection.query("COMMIT", logger: logger) }
}
let (spent, late) = try await withTaskExecutorPreference(EventLoopTaskExecutor(loop)) {
    for n in 0..<Int(rate) { try await send(n) }  // a second's warm-up: the statements prepared, the pages read
    let start = ContinuousClock.now
    let before = processorSeconds()
    var late = 0
    for n in 0..<count {
        let due = start + .seconds(Double(n) / rate)
        if ContinuousClock.now < due { try await Task.sleep(until: due, clock: .continuous) } else if n > 0 { late += 1 }
        try await send(n)
    }
    return (processorSeconds() - before, late)
}
try await connection.close().get()
let perSend = spent / Double(count) * 1000
let roundTrips = statements + (inTransaction ? 2 : 0)
print(String(format: "db-floor: %d sends at %.0f/s, %d round trips each: %.3f ms of processor time per send, %.1f µs per round trip (%d started late)",
             count, rate, roundTrips, perSend, perSend * 1000 / Double(roundTrips), late))
print(String(format: #"RESULT {"target": "client floor", "rate": %.1f, "round_trips": %d, "sends": %d, "client_ms": %.4f}"#,
             rate, roundTrips, count, perSend))
