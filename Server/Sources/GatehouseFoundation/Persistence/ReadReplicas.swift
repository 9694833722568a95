import Foundation
import Logging
import Metrics
import NIOConcurrencyHelpers
import SQLKit

/// PostgreSQL streaming replicas that serve the reads which tolerate a little lag
/// (`GATEHOUSE_DATABASE_REPLICA_URLS`, docs/deploy.md, "Read replicas"): people search, the
/// friends and chat lists, history pages. Everything else, and every read inside a transaction,
/// stays on the primary.
///
/// - **Lag, measured.** Every `interval` the primary's WAL position is sampled and each replica's
///   replayed position read; a replica's lag is how long ago the primary was at a position the
///   replica has not replayed yet (counted from the sample before it, so never under-estimated by
///   more than nothing). A replica more than `maxLag` behind, or that did not answer its check, or
///   that is no longer replaying (promoted), serves nothing until a check says otherwise. A replica
///   starts unused: a process that never checks (a command) reads the primary.
/// - **Read your writes.** A person who just asked for a change (any request but GET and HEAD with
///   their session, `pin`) reads the primary for `pinFor` (never shorter than `maxLag`), on this
///   instance. A balancer that keeps a token on one instance (docs/deploy.md) makes that hold for
///   the whole fleet; a request that lands on another instance still reads a replica at most
///   `maxLag` behind.
/// - **Skipped, never waited for.** A read that fails on a replica (it went away) is read again on
///   the primary at once, and the replica is taken out until its next check passes; a refusal of
///   the application's (`GatehouseError`) is the answer wherever it came from.
package final class ReadReplicas: Sendable {
    package struct Settings: Sendable {
        package var maxLag: Double
        package var pinFor: Double
        package var interval: Double = 0.25

        package init(maxLag: Double, pinFor: Double, interval: Double = 0.25) {
            self.maxLag = maxLag
            self.pinFor = max(pinFor, maxLag)
            self.interval = interval
        }
    }

    /// What the replicas served: reads on a replica, reads on the primary that a replica could have
    /// served (none usable, or the person pinned), and reads a failing replica handed back.
    package struct Counts: Sendable, Equatable {
        package var replica = 0
        package var primary = 0
        package var fellBack = 0
    }

    package let members: [DatabaseProvider]
    package let settings: Settings
    private let logger: Logger
    private let usable: NIOLockedValueBox<[Bool]>
    private let measured: NIOLockedValueBox<[Double?]>
    /// `gatehouse_replica_lag_seconds` and `gatehouse_replica_serving` (1 or 0), by `replica` (1, 2, …).
    private let lagGauges: [Gauge]
    private let servingGauges: [Gauge]
    private let pins = NIOLockedValueBox<[UUID: ContinuousClock.Instant]>([:])
    private let turn = NIOLockedValueBox(0)
    private let tally = NIOLockedValueBox(Counts())

    package init(members: [DatabaseProvider], settings: Settings, logger: Logger) {
        self.members = members
        self.settings = settings
        self.logger = logger
        self.usable = NIOLockedValueBox([Bool](repeating: false, count: members.count))
        self.measured = NIOLockedValueBox([Double?](repeating: nil, count: members.count))
        self.lagGauges = members.indices.map { Gauge(label: "gatehouse_replica_lag_seconds", dimensions: [("replica", String($0 + 1))]) }
        self.servingGauges = members.indices.map { Gauge(label: "gatehouse_replica_serving", dimensions: [("replica", String($0 + 1))]) }
    }

    package var counts: Counts { tally.withLockedValue { $0 } }

    /// Whether each replica serves reads now.
    package var serving: [Bool] { usable.withLockedValue { $0 } }

    /// Each replica's lag at its last check, in seconds: nil when it did not answer,
    /// infinite when it is further behind than the samples kept (`maxLag` + 10 s).
    package var lags: [Double?] { measured.withLockedValue { $0 } }

    /// `account` just asked for a change: its reads go to the primary for `pinFor`.
    package func pin(_ account: UUID) {
        let now = ContinuousClock.now
        let until = now + .milliseconds(Int64(settings.pinFor * 1000))
        pins.withLockedValue { pins in
            pins[account] = until
            if pins.count > 50_000 { pins = pins.filter { $0.value > now } }
        }
    }

    private func isPinned(_ account: UUID?) -> Bool {
        guard let account else { return false }
        return pins.withLockedValue { ($0[account] ?? .now) > .now }
    }

    /// A replica for `account`'s read, in turn among those serving; nil for the primary.
    private func choose(for account: UUID?) -> Int? {
        guard !isPinned(account) else { return nil }
        let serving = usable.withLockedValue { usable in usable.indices.filter { usable[$0] } }
        guard !serving.isEmpty else { return nil }
        return turn.withLockedValue { turn in
            turn &+= 1
            return serving[Int(UInt(bitPattern: turn) % UInt(serving.count))]
        }
    }

    /// `body` on a replica that may serve `account`'s read, or on `primary`.
    package func reading<T>(for account: UUID?, primary: any GatehouseDatabase, _ body: (any GatehouseDatabase) async throws -> T) async throws -> T {
        if let index = choose(for: account) {
            do {
                let value = try await body(members[index].db)
                tally.withLockedValue { $0.replica += 1 }
                return value
            } catch let refusal as GatehouseError {
                throw refusal
            } catch {
                usable.withLockedValue { $0[index] = false }
                logger.warning("read replica \(index + 1) failed a read; reading the primary, and the replica is out until its next check passes",
                               metadata: ["error": "\(String(reflecting: error).prefix(300))"])
                tally.withLockedValue { $0.fellBack += 1 }
                return try await body(primary)
            }
        }
        tally.withLockedValue { $0.primary += 1 }
        return try await body(primary)
    }

    /// Checks every replica each `interval` until cancelled.
    package func watch(primary: DatabaseProvider) async {
        var samples: [(at: ContinuousClock.Instant, position: UInt64)] = []
        let window = Duration.milliseconds(Int64((settings.maxLag + 10) * 1000))
        let bound = Duration.milliseconds(Int64(max(settings.interval * 4, 1) * 1000))
        while !Task.isCancelled {
            let now = ContinuousClock.now
            if let position = await Self.position(of: primary, "pg_current_wal_lsn()", within: bound) {
                samples.append((now, position))
            }
            samples.removeAll { now - $0.at > window }
            for (index, member) in members.enumerated() {
                let replayed = await Self.position(of: member, "pg_last_wal_replay_lsn()", within: bound)
                let lag = replayed.map { Self.lag(replayed: $0, samples: samples, now: now) }
                let serves = lag.map { $0 <= settings.maxLag } ?? false
                measured.withLockedValue { $0[index] = lag }
                if let lag, lag.isFinite { lagGauges[index].record(lag) }
                servingGauges[index].record(serves ? 1 : 0)
                let was = usable.withLockedValue { usable in
                    defer { usable[index] = serves }
                    return usable[index]
                }
                if was != serves {
                    if serves {
                        logger.info("read replica \(index + 1) serves reads", metadata: ["lag_s": "\(lag ?? 0)"])
                    } else {
                        logger.warning("read replica \(index + 1) serves no reads: \(lag.map { "\($0) s behind (GATEHOUSE_REPLICA_MAX_LAG_SECONDS is \(settings.maxLag))" } ?? "it does not answer, or no longer replays")")
                    }
                }
            }
            try? await Task.sleep(for: .milliseconds(Int64(settings.interval * 1000)))
        }
    }

    /// Seconds since the primary was at a position `replayed` does not reach: measured from the last
    /// sample the replica had replayed, so at worst one interval more than the truth; infinite when
    /// no sample in the window is reached.
    package static func lag(replayed: UInt64, samples: [(at: ContinuousClock.Instant, position: UInt64)], now: ContinuousClock.Instant) -> Double {
        guard let first = samples.firstIndex(where: { $0.position > replayed }) else { return 0 }
        guard first > 0 else { return .infinity }
        let since = now - samples[first - 1].at
        return Double(since.components.seconds) + Double(since.components.attoseconds) / 1e18
    }

    /// A WAL position as PostgreSQL writes it (`16/B374D848`) as a number.
    package static func position(_ text: String) -> UInt64? {
        let parts = text.split(separator: "/")
        guard parts.count == 2, let high = UInt64(parts[0], radix: 16), let low = UInt64(parts[1], radix: 16), high <= 0xFFFF_FFFF, low <= 0xFFFF_FFFF else { return nil }
        return high << 32 | low
    }

    /// `function`'s WAL position on `database`, or nil when it fails, is null or takes longer than
    /// `bound`. Not a task group: a group waits for its query, and a query to a replica cut off by
    /// the network answers only at its deadline; the check must not.
    private static func position(of database: DatabaseProvider, _ function: String, within bound: Duration) async -> UInt64? {
        let waiting = NIOLockedValueBox<CheckedContinuation<UInt64?, Never>?>(nil)
        return await withCheckedContinuation { continuation in
            waiting.withLockedValue { $0 = continuation }
            let finish: @Sendable (UInt64?) -> Void = { value in
                waiting.withLockedValue { pending in
                    pending?.resume(returning: value)
                    pending = nil
                }
            }
            Task {
                let row = try? await database.sql.raw("SELECT \(unsafeRaw: function)::text AS position").first()
                let text = (try? row?.decode(column: "position", as: String?.self)) ?? nil
                finish(text.flatMap(Self.position))
            }
            Task {
                try? await Task.sleep(for: bound)
                finish(nil)
            }
        }
    }
}
