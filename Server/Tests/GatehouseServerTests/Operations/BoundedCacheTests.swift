import Foundation
import GatehouseFoundation
import Testing

/// The prepared signature models' cache (`GATEHOUSE_SIGNATURE_MODEL_CACHE`) and the messenger's
/// remembered send contexts (`GATEHOUSE_MESSENGER_SEND_CONTEXTS`): never more than its capacity, the
/// oldest stored goes first, a capacity of 0 keeps nothing, a key removed is forgotten.
@Suite("A bounded cache")
struct BoundedCacheTests {
    @Test("holds at most its capacity, drops the oldest first, replaces a key in place, and keeps nothing at 0")
    func capacityAndOrder() {
        let cache = BoundedCache<Int, String>(capacity: 3)
        for i in 1...3 { cache.insert("v\(i)", for: i) }
        cache.insert("v2 again", for: 2)
        #expect(cache.count == 3 && cache.value(2) == "v2 again")

        cache.insert("v4", for: 4)
        #expect(cache.count == 3)
        #expect(cache.value(1) == nil, "the oldest went")
        #expect(cache.value(2) == "v2 again" && cache.value(3) == "v3" && cache.value(4) == "v4")

        for i in 5...1_000 { cache.insert("v\(i)", for: i) }
        #expect(cache.count == 3 && cache.value(998) == "v998" && cache.value(1_000) == "v1000" && cache.value(997) == nil)

        let none = BoundedCache<Int, String>(capacity: 0)
        none.insert("x", for: 1)
        #expect(none.count == 0 && none.value(1) == nil)
    }

    @Test("forgets what is removed, and stays bounded however often the same keys are removed and stored again")
    func removeAndStoreAgain() {
        let cache = BoundedCache<Int, String>(capacity: 4)
        for i in 1...4 { cache.insert("v\(i)", for: i) }
        cache.remove([2, 3, 99])
        #expect(cache.count == 2 && cache.value(2) == nil && cache.value(3) == nil && cache.value(1) == "v1" && cache.value(4) == "v4")

        // a send context that keeps missing: removed and stored again, over and over, while the cache is never full
        for round in 0..<100_000 {
            cache.remove([2])
            cache.insert("v2 \(round)", for: 2)
        }
        #expect(cache.value(2) == "v2 99999" && cache.value(1) == "v1" && cache.value(4) == "v4", "nothing else was pushed out")
        #expect(cache.places <= 2 * cache.capacity + 1, "the order holds \(cache.places) places")

        for i in 10...20 { cache.insert("v\(i)", for: i) }
        #expect(cache.count == 4 && cache.value(20) == "v20" && cache.value(17) == "v17" && cache.value(16) == nil && cache.value(2) == nil)
    }

    @Test("safe from many threads at once")
    func concurrentUse() async {
        let cache = BoundedCache<Int, Int>(capacity: 100)
        await withTaskGroup(of: Void.self) { group in
            for t in 0..<8 {
                group.addTask {
                    for i in 0..<2_000 {
                        cache.insert(i * 8 + t, for: i * 8 + t)
                        _ = cache.value(i)
                    }
                }
            }
        }
        #expect(cache.count == 100)
    }
}
