import FluentKit
import Foundation
import SQLKit

/// Fixed-window counters in the database, so every instance behind a load balancer sees the
/// same budget (docs/architecture.md: nothing shared lives only in process memory).
package struct RateLimiter: Sendable {
    package let database: DatabaseProvider
    package let clock: GatehouseClock

    package struct Window: Sendable {
        package var bucket: String
        package var expiresEpoch: Int64
        package var retryAfter: TimeInterval
    }

    package func window(_ name: String, key: String, length: TimeInterval) -> Window {
        let now = clock.now().timeIntervalSince1970
        let length = max(1, length)
        let index = Int64((now / length).rounded(.down))
        let end = Double(index + 1) * length
        return Window(bucket: "\(name):\(key):\(index)", expiresEpoch: Int64(end.rounded(.up)), retryAfter: end - now)
    }

    /// Counts one hit and throws `rateLimited` (counting nothing) when the budget of `limit` is
    /// already spent. With `db` a transaction, the hit is part of it (and goes if it rolls back).
    package func hit(_ name: String, key: String, limit: Int, window length: TimeInterval, messageKey: String = "error.rateLimited",
             on db: (any GatehouseDatabase)? = nil) async throws {
        try await hit([Budget(name, key: key, limit: limit)], window: length, messageKey: messageKey, on: db)
    }

    /// A budget one request counts against: its name, whose it is (an address, an account) and how
    /// many hits a window allows.
    package struct Budget: Sendable {
        package var name: String
        package var key: String
        package var limit: Int

        package init(_ name: String, key: String, limit: Int) {
            self.name = name
            self.key = key
            self.limit = limit
        }
    }

    /// Counts one hit against each budget in one statement (their rows locked in bucket order) and,
    /// when any of them is already spent, gives every one of these hits back and throws
    /// `rateLimited` with the latest of the spent windows' ends: a refused attempt never ran, so it
    /// takes no slot. Otherwise refusals would outlive the attempts a budget gives back (successful
    /// logins), and a burst of right passwords would lock an account for the rest of its window.
    package func hit(_ budgets: [Budget], window length: TimeInterval, messageKey: String = "error.rateLimited",
             on db: (any GatehouseDatabase)? = nil) async throws {
        guard !budgets.isEmpty else { return }
        let counted = budgets.map { (budget: $0, window: window($0.name, key: $0.key, length: length)) }.sorted { $0.window.bucket < $1.window.bucket }
        let sql = db ?? database.db
        let values = counted.map { "(\(bind: $0.window.bucket), 1, \(bind: $0.window.expiresEpoch))" as SQLQueryString }
        var hits: [String: Int] = [:]
        for row in try await sql.raw("""
            INSERT INTO rate_limit_counters (bucket, hits, expires_epoch) VALUES \(values.joined(separator: ", "))
            ON CONFLICT (bucket) DO UPDATE SET hits = rate_limit_counters.hits + 1
            RETURNING bucket, hits
            """).all() {
            hits[try row.decode(column: "bucket", as: String.self)] = try row.decode(column: "hits", as: Int.self)
        }
        let spent = counted.filter { (hits[$0.window.bucket] ?? 1) > $0.budget.limit }
        guard let latest = spent.map(\.window.retryAfter).max() else { return }
        try? await release(counted.map { ($0.budget.name, $0.budget.key) }, window: length, on: db)
        throw GatehouseError.rateLimited(.rateLimited, retryAfter: latest, messageKey)
    }

    /// Counts several hits for several keys at once (in key order, the order their rows are locked
    /// in); answers, per key, how many of its hits fit the budget and when the window ends. The hits
    /// that do not fit are given back: a refused attempt takes no slot.
    package func hit(_ name: String, counts: [String: Int], limit: Int, window length: TimeInterval,
             on db: any GatehouseDatabase) async throws -> [String: (allowed: Int, retryAfter: Double)] {
        let counting = counting(name, counts: counts, limit: limit, window: length, postgres: db.isPostgres)
        var after: [String: Int] = [:]
        for row in try await db.raw(counting.statement).all() {
            after[try row.decode(column: "bucket", as: String.self)] = try row.decode(column: "hits", as: Int.self)
        }
        let answer = counting.fits(after: after)
        for key in counts.keys.sorted() where answer[key]!.allowed < counts[key]! {
            try await db.raw("UPDATE rate_limit_counters SET hits = hits - \(bind: counts[key]! - answer[key]!.allowed) WHERE bucket = \(bind: counting.windows[key]!.bucket)").run()
        }
        return answer
    }

    /// Several keys' hits as one statement that adds them (in key order) and answers `bucket, hits`
    /// (the counts after): what `hit(_:counts:…)` runs, for a caller that runs it among its own
    /// writes (a send's group commit, `MessageWriter`) and reads its answer with `fits`. Its text is
    /// the same for any number of keys on PostgreSQL (`RowSet`).
    package struct Counting: Sendable {
        package let counts: [String: Int]
        package let windows: [String: Window]
        package let limit: Int
        package let statement: SQLQueryString

        /// Per key, how many of its hits fit the budget and when its window ends, from the counts
        /// after the statement (bucket → hits).
        package func fits(after: [String: Int]) -> [String: (allowed: Int, retryAfter: Double)] {
            var answer: [String: (allowed: Int, retryAfter: Double)] = [:]
            for (key, count) in counts {
                let w = windows[key]!
                let before = (after[w.bucket] ?? count) - count
                answer[key] = (max(0, min(count, limit - before)), w.retryAfter)
            }
            return answer
        }

        /// The same rule as a condition on the statement's answer, for a statement that must fail
        /// rather than keep hits over the budget (`StatementCheck`): every key's count after the
        /// statement, read from its `WITH` part `part`, is within `limit` — which is `fits` allowing
        /// all of every key's hits.
        package func allFit(part: String) -> SQLQueryString {
            "NOT EXISTS (SELECT 1 FROM \(unsafeRaw: part) WHERE \(unsafeRaw: part).hits > \(bind: limit))"
        }
    }

    package func counting(_ name: String, counts: [String: Int], limit: Int, window length: TimeInterval, postgres: Bool) -> Counting {
        let keys = counts.keys.sorted()
        let windows = Dictionary(uniqueKeysWithValues: keys.map { ($0, window(name, key: $0, length: length)) })
        var rows = RowSet(count: keys.count)
        rows.add("bucket", "text", keys.map { windows[$0]!.bucket })
        rows.add("hits", "bigint", keys.map { Int64(counts[$0]!) })
        rows.add("expires_epoch", "bigint", keys.map { windows[$0]!.expiresEpoch })
        return Counting(counts: counts, windows: windows, limit: limit, statement: """
            \(rows.insert(into: "rate_limit_counters", postgres: postgres))
            ON CONFLICT (bucket) DO UPDATE SET hits = rate_limit_counters.hits + excluded.hits
            RETURNING bucket, hits
            """)
    }

    /// Gives back one hit (an attempt that turned out to be allowed, such as a successful login).
    package func release(_ name: String, key: String, window length: TimeInterval, on db: (any GatehouseDatabase)? = nil) async throws {
        let w = window(name, key: key, length: length)
        try await (db ?? database.db).raw("UPDATE rate_limit_counters SET hits = hits - 1 WHERE bucket = \(bind: w.bucket) AND hits > 0").run()
    }

    /// Gives back one hit of each budget, in one statement.
    package func release(_ budgets: [(name: String, key: String)], window length: TimeInterval, on db: (any GatehouseDatabase)? = nil) async throws {
        guard !budgets.isEmpty else { return }
        let buckets = budgets.map { window($0.name, key: $0.key, length: length).bucket }
        try await (db ?? database.db).raw("""
            UPDATE rate_limit_counters SET hits = hits - 1
            WHERE bucket IN (\(buckets.map { "\(bind: $0)" as SQLQueryString }.joined(separator: ", "))) AND hits > 0
            """).run()
    }

    package func purgeExpired() async throws {
        let now = Int64(clock.now().timeIntervalSince1970)
        try await database.sql.raw("DELETE FROM rate_limit_counters WHERE expires_epoch < \(bind: now)").run()
    }

    package init(database: DatabaseProvider, clock: GatehouseClock) {
        self.database = database
        self.clock = clock
    }
}
