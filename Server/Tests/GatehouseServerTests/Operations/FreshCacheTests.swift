import Foundation
import GatehouseFoundation
import NIOConcurrencyHelpers
import Testing

/// The copies of apps by key (`GATEHOUSE_APP_CACHE_SECONDS`): a found value served for at most its
/// time to live, a miss never kept, and an invalidation never undone by a read that started before it.
@Suite("A cache of fresh copies")
struct FreshCacheTests {
    @Test("a found value is served from memory until its time runs out; a miss is asked every time; a time of 0 keeps nothing")
    func keepsFoundValuesForTheirTime() async throws {
        let cache = FreshCache<String, Int>(ttl: 0.2)
        let reads = NIOLockedValueBox(0)
        func value(_ key: String, _ answer: Int?) async throws -> Int? {
            try await cache.value(key) { reads.withLockedValue { $0 += 1 }; return answer }
        }
        #expect(try await value("a", 1) == 1)
        #expect(try await value("a", 2) == 1, "a copy, not the database's new answer")
        #expect(reads.withLockedValue { $0 } == 1)
        #expect(try await value("missing", nil) == nil)
        #expect(try await value("missing", 3) == 3, "a miss was not kept: a new row is seen at once")
        try await Task.sleep(for: .milliseconds(250))
        #expect(try await value("a", 4) == 4, "older than its time: read again")

        let off = FreshCache<String, Int>(ttl: 0)
        #expect(try await off.value("a") { 1 } == 1)
        #expect(try await off.value("a") { 2 } == 2 && off.count == 0)
    }

    @Test("invalidating drops every copy, and a read that started before it keeps nothing; at its capacity it starts over")
    func invalidationWinsOverARacingRead() async throws {
        let cache = FreshCache<String, Int>(ttl: 60, capacity: 3)
        #expect(try await cache.value("a") { 1 } == 1)
        cache.invalidateAll()
        #expect(try await cache.value("a") { 2 } == 2, "forgotten")

        // A read under way when the row changes: its old answer is returned to its caller but not kept.
        let racing = try await cache.value("b") {
            cache.invalidateAll()
            return 10
        }
        #expect(racing == 10)
        #expect(try await cache.value("b") { 11 } == 11, "the racing read's answer was not kept")

        for key in ["c", "d", "e"] { _ = try await cache.value(key) { 0 } }
        #expect(cache.count <= 3)
    }
}
