import Foundation
import GatehouseFoundation
import GatehouseTestSupport
import SQLKit
import Testing

/// `RateLimiter`: fixed windows in the database, one statement for every budget a request counts against.
@Suite("Rate limiter")
struct RateLimiterTests {
    @Test("budgets counted together in one statement: when one is spent the attempt is refused until its window ends and every hit it made is given back; one budget alone counts the same way", .tags(.engine), arguments: TestEngine.all)
    func budgets_countedTogether_refusalGivesEveryHitBack(engine: TestEngine) async throws {
        try await withMigratedProvider(engine) { provider in
            // setup: 30 s into a 60 s window
            let limiter = RateLimiter(database: provider, clock: GatehouseClock { Date(timeIntervalSince1970: 1_800_000_030) })
            let address = RateLimiter.Budget("test-ip", key: "192.0.2.1", limit: 5)
            let account = RateLimiter.Budget("test-account", key: "someone", limit: 2)
            func hits(_ budget: RateLimiter.Budget) async throws -> Int {
                let bucket = limiter.window(budget.name, key: budget.key, length: 60).bucket
                return try await provider.sql.raw("SELECT hits FROM rate_limit_counters WHERE bucket = \(bind: bucket)")
                    .first(decodingColumn: "hits", as: Int.self) ?? 0
            }

            // MUT: two attempts fit both budgets (in either order); the third spends the account's
            try await limiter.hit([address, account], window: 60)
            try await limiter.hit([account, address], window: 60)
            let refused = await Result(catching: { try await limiter.hit([address, account], window: 60) })
            let afterRefusal = (address: try await hits(address), account: try await hits(account))
            try await limiter.hit([address], window: 60)
            let alone = await Result(catching: { try await limiter.hit(account.name, key: account.key, limit: account.limit, window: 60) })

            // validate
            guard case .failure(let error as GatehouseError) = refused, case .rateLimited(let seconds) = error.kind else {
                Issue.record("the third attempt was not refused: \(refused)")
                return
            }
            #expect(seconds == 30, "until the window's end")
            #expect(afterRefusal.address == 2 && afterRefusal.account == 2, "the refusal gave back both hits: \(afterRefusal)")
            #expect(try await hits(address) == 3, "the address's budget still had room")
            #expect(throws: GatehouseError.self) { try alone.get() }
            #expect(try await hits(account) == 2, "a refused single hit is given back too")
        }
    }
}
