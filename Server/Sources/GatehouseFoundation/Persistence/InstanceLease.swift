import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOPosix
import PostgresKit
import PostgresNIO
import ServiceLifecycle
import SQLKit
#if canImport(Glibc)
import Glibc
#endif

/// The database's instance lease: what stops `gatehouse restore` from replacing a database under a running server
/// (docs/deploy.md, "Backup and restore"). Every server and every command that opens the database holds it
/// *shared* for as long as it runs; restore takes it *alone*, and so refuses while anything holds it, naming what
/// does, and a server or command started during a restore refuses to start.
///
/// - SQLite: `flock(2)` on `<database>.lock` beside the file (a file of its own, never removed: restore replaces the
///   database's file, so a lock on that file would be a lock on the old one). `LOCK_SH` / `LOCK_EX`, never waiting.
/// - PostgreSQL: a session-level advisory lock on a connection of its own (`pg_try_advisory_lock_shared` /
///   `pg_try_advisory_lock`), keyed by the schema, so deployments in two schemas of one database do not block each
///   other. That connection must reach PostgreSQL itself or a session-pooling PgBouncer: a transaction-pooling
///   pooler does not keep a session's locks.
///
/// Both end with the process (a server killed with -9 holds nothing) or its connection. A PostgreSQL restart drops
/// every session's locks: a server takes its lease again as soon as the database is back (`keep`), and stops if a
/// restore took it meanwhile.
package final class InstanceLease: @unchecked Sendable {
    package enum Mode: Sendable {
        /// A server or a command: any number at once.
        case shared
        /// `gatehouse restore`: alone.
        case exclusive
    }

    /// The lease is held the other way: a restore is running (`shared` refused) or something uses the database
    /// (`exclusive` refused). The description says what, and what to do.
    package struct Refused: Error, CustomStringConvertible {
        package var description: String
    }

    private let mode: Mode
    private let logger: Logger
    /// SQLite: the lock file's descriptor.
    private let descriptor: Int32?
    /// PostgreSQL: what to connect with, the lock's two keys, and the connection that holds it.
    private let postgres: (configuration: PostgresConnection.Configuration, keys: (Int32, Int32))?
    private let connection = NIOLockedValueBox<PostgresConnection?>(nil)
    private let released = NIOLockedValueBox(false)

    /// What the database is, for messages: `SQLite /var/lib/gatehouse/gatehouse.sqlite`, `PostgreSQL db.internal:5432/gatehouse`.
    package let databaseName: String

    private init(mode: Mode, logger: Logger, descriptor: Int32?, postgres: (PostgresConnection.Configuration, (Int32, Int32))?,
                 databaseName: String) {
        self.mode = mode
        self.logger = logger
        self.descriptor = descriptor
        self.postgres = postgres.map { (configuration: $0.0, keys: $0.1) }
        self.databaseName = databaseName
    }

    /// Takes the lease or throws `Refused` at once (never waits for it).
    package static func take(_ mode: Mode, on location: GatehouseConfiguration.DatabaseLocation, logger: Logger) async throws -> InstanceLease {
        switch location {
        case .sqlite(let path):
            let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
            let name = ReadableError.name(of: location)
            let lockPath = absolute + ".lock"
            let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else {
                throw Refused(description: "cannot open \(lockPath) (\(String(cString: strerror(errno)))): the lease every instance of \(name) takes lives there")
            }
            if flock(descriptor, (mode == .shared ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0 {
                let holders = Self.flockHolders(descriptor: descriptor)
                Glibc.close(descriptor)
                throw Refused(description: refusal(mode, name: name, holders: holders.map { "process \($0)" }))
            }
            return InstanceLease(mode: mode, logger: logger, descriptor: descriptor, postgres: nil, databaseName: name)
        case .postgres(let url, let searchPath):
            var configuration = try PostgresAddress.configuration(url).coreConfiguration
            let name = ReadableError.name(of: location)
            // What restore names when it is refused: `pg_stat_activity` shows it for this connection.
            let role = mode == .shared ? "serving" : "restoring"
            configuration.options.additionalStartupParameters.append(
                ("application_name", String("gatehouse \(role) pid \(getpid()) on \(ProcessInfo.processInfo.hostName)".prefix(63))))
            let keys = Self.keys(schema: searchPath)
            let lease = InstanceLease(mode: mode, logger: logger, descriptor: nil, postgres: (configuration, keys), databaseName: name)
            let connection = try await lease.connect()
            let locked: Bool
            do {
                locked = try await lease.lock(on: connection)
            } catch {
                await close(connection)
                throw error
            }
            guard locked else {
                let holders = (try? await lease.holders(on: connection)) ?? []
                await close(connection)
                throw Refused(description: refusal(mode, name: name, holders: holders))
            }
            lease.connection.withLockedValue { $0 = connection }
            return lease
        }
    }

    /// Gives the lease back (also when the process ends).
    package func release() async {
        // The connection is taken in the same critical section that marks the lease released (see `keep`).
        let (was, held) = released.withLockedValue { isReleased -> (Bool, PostgresConnection?) in
            defer { isReleased = true }
            return (isReleased, connection.withLockedValue { let c = $0; $0 = nil; return c })
        }
        guard !was else { return }
        if let descriptor {
            flock(descriptor, LOCK_UN)
            Glibc.close(descriptor)
        }
        if let connection = held {
            await Self.close(connection)
        }
    }

    /// A server's lease on PostgreSQL for as long as it runs: checks its connection every `interval`, and when the
    /// database was restarted (the connection and with it the lock are gone) takes it again. Throws `Refused` when a
    /// restore holds it by then: this instance must not go on writing into a database being replaced. Returns when
    /// the lease is released. On SQLite, waits for the release (a lock file's lock never ends on its own).
    package func keep(interval: Duration = .seconds(2)) async throws {
        while !released.withLockedValue({ $0 }) && !Task.isCancelled {
            try? await Task.sleep(for: interval)
            guard postgres != nil, !released.withLockedValue({ $0 }) else { continue }
            if let current = connection.withLockedValue({ $0 }) {
                do {
                    _ = try await current.query("SELECT 1", logger: logger).collect()
                    continue
                } catch {
                    // Stopping (the query was cancelled with this task): `release` closes the connection.
                    if released.withLockedValue({ $0 }) || Task.isCancelled { return }
                    logger.warning("instance lease: connection to \(databaseName) lost, taking the lease again",
                                   metadata: ["error": "\(String(reflecting: error))"])
                    connection.withLockedValue { $0 = nil }
                    await Self.close(current)
                }
            }
            do {
                let fresh = try await connect()
                let locked: Bool
                do {
                    locked = try await lock(on: fresh)
                } catch {
                    await Self.close(fresh)
                    throw error
                }
                guard locked else {
                    let holders = (try? await holders(on: fresh)) ?? []
                    await Self.close(fresh)
                    throw Refused(description: "\(databaseName) is being restored (\(holders.joined(separator: ", "))) while this "
                                  + "instance was away from it: stopping, so that it writes nothing into the restored database")
                }
                // Stored under the `released` lock: a `release` that ran meanwhile would never see it, and close it.
                let stored = released.withLockedValue { isReleased in
                    guard !isReleased, !Task.isCancelled else { return false }
                    connection.withLockedValue { $0 = fresh }
                    return true
                }
                if !stored { await Self.close(fresh); return }
                logger.notice("instance lease: taken again on \(databaseName)")
            } catch let refused as Refused {
                throw refused
            } catch {
                // Still away: the next round tries again.
            }
        }
    }

    // MARK: PostgreSQL

    /// Closes `connection` and waits for it, also in a cancelled task (the async `close` may give up at once there,
    /// and a connection released unclosed is a crash in postgres-nio's debug builds).
    private static func close(_ connection: PostgresConnection) async {
        let closing: EventLoopFuture<Void> = connection.close()
        try? await closing.get()
    }

    private func connect() async throws -> PostgresConnection {
        try await PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.any(), configuration: postgres!.configuration,
                                             id: 0, logger: logger).get()
    }

    private func lock(on connection: PostgresConnection) async throws -> Bool {
        let (a, b) = postgres!.keys
        let query: PostgresQuery = mode == .shared ? "SELECT pg_try_advisory_lock_shared(\(a), \(b))" : "SELECT pg_try_advisory_lock(\(a), \(b))"
        for try await row in try await connection.query(query, logger: logger) {
            return try row.decode(Bool.self)
        }
        return false
    }

    /// Who holds the lock, as `pg_stat_activity` shows them.
    private func holders(on connection: PostgresConnection) async throws -> [String] {
        let (a, b) = postgres!.keys
        let query: PostgresQuery = """
            SELECT coalesce(a.application_name, ''), coalesce(host(a.client_addr), 'a local socket'), a.pid
            FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.classid::bigint = \(Int64(UInt32(bitPattern: a)))
              AND l.objid::bigint = \(Int64(UInt32(bitPattern: b)))
              AND l.objsubid = 2 AND l.granted AND l.pid <> pg_backend_pid()
            """
        var found: [String] = []
        for try await (name, address, pid) in try await connection.query(query, logger: logger).decode((String, String, Int32).self) {
            found.append((name.isEmpty ? "a connection" : name) + " from \(address) (backend \(pid))")
        }
        return found
    }

    /// The lock's keys: "Gate" and the schema's FNV-1a hash (0 without a schema).
    private static func keys(schema: String?) -> (Int32, Int32) {
        var hash: UInt32 = 0
        if let schema {
            hash = 2_166_136_261
            for byte in schema.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        }
        return (0x4761_7465, Int32(bitPattern: hash))
    }

    // MARK: SQLite

    /// The processes holding a `flock` on the descriptor's file, from `/proc/locks` (Linux); empty elsewhere.
    private static func flockHolders(descriptor: Int32) -> [Int32] {
        var status = stat()
        guard fstat(descriptor, &status) == 0, let table = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return [] }
        let inode = ":\(status.st_ino)"
        var pids: [Int32] = []
        for line in table.split(separator: "\n") where line.contains("FLOCK") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            // "1: FLOCK  ADVISORY  READ 1234 fd:01:5678 0 EOF" (a blocked request carries "->" first).
            guard let device = fields.first(where: { $0.filter { $0 == ":" }.count == 2 }), device.hasSuffix(inode),
                  let index = fields.firstIndex(of: device), index > 0, let pid = Int32(fields[index - 1]) else { continue }
            if !pids.contains(pid) { pids.append(pid) }
        }
        return pids
    }

    private static func refusal(_ mode: Mode, name: String, holders: [String]) -> String {
        let who = holders.isEmpty ? "" : " (\(holders.joined(separator: ", ")))"
        switch mode {
        case .exclusive:
            return "\(name) is in use\(who): stop every gatehouse instance and command using it (e.g. `systemctl stop "
                + "'gatehouse@*'`), then run restore again; nothing was changed"
        case .shared:
            return "\(name) is being restored\(who): start again once the restore has finished"
        }
    }
}

/// A server's lease for its life (`gatehouse serve`): `take` runs before the migrations, so a server started during a
/// restore refuses to start; the keeper is the application's first service, so it is the last to stop and the lease
/// is given back only after the database has been closed. When `keep` finds a restore holding the lease, the keeper
/// throws and the whole server stops.
///
/// A server may start while PostgreSQL is away (it then answers 503 on `/health` until the database does): `take`
/// then only says so, and the keeper takes the lease as soon as the database answers, or stops the server if a
/// restore took it first.
package final class InstanceLeaseKeeper: Service, @unchecked Sendable {
    private let location: GatehouseConfiguration.DatabaseLocation
    private let logger: Logger
    private let lease = NIOLockedValueBox<InstanceLease?>(nil)
    /// PostgreSQL was away when `take` ran: the keeper takes the lease when it is back.
    private let pending = NIOLockedValueBox(false)

    package init(location: GatehouseConfiguration.DatabaseLocation, logger: Logger) {
        self.location = location
        self.logger = logger
    }

    /// Takes the lease (throws `InstanceLease.Refused` during a restore).
    package func take() async throws {
        do {
            let taken = try await InstanceLease.take(.shared, on: location, logger: logger)
            lease.withLockedValue { $0 = taken }
        } catch let refused as InstanceLease.Refused {
            throw refused
        } catch {
            guard case .postgres = location else { throw error }
            let reason = ReadableError.from(error, database: location)?.description ?? "\(error)"
            logger.warning("instance lease: not taken yet (\(reason)); it is taken as soon as the database answers")
            pending.withLockedValue { $0 = true }
        }
    }

    /// Gives the lease back (`run` does when the application stops).
    package func release() async {
        await lease.withLockedValue({ $0 })?.release()
    }

    package func run() async throws {
        // Cancelled when the application stops (this service last): the waits below end at once, not at their next tick.
        try await cancelWhenGracefulShutdown {
            // Until the server's prelude has taken it, or, PostgreSQL away, until the database is back.
            var held = self.lease.withLockedValue { $0 }
            while held == nil, !Task.isCancelled {
                if self.pending.withLockedValue({ $0 }) {
                    do {
                        let taken = try await InstanceLease.take(.shared, on: self.location, logger: self.logger)
                        self.lease.withLockedValue { $0 = taken }
                        self.pending.withLockedValue { $0 = false }
                        self.logger.notice("instance lease: taken on \(taken.databaseName)")
                    } catch let refused as InstanceLease.Refused {
                        self.logger.critical("\(refused.description)")
                        throw refused
                    } catch {
                        try? await Task.sleep(for: .milliseconds(500))
                    }
                } else {
                    try? await Task.sleep(for: .milliseconds(20))
                }
                held = self.lease.withLockedValue { $0 }
            }
            guard let held else { return }
            do {
                try await held.keep()
            } catch let refused as InstanceLease.Refused {
                self.logger.critical("\(refused.description)")
                throw refused
            }
        }
        await release()
    }
}
