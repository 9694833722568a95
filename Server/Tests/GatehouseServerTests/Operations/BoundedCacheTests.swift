import Foundation
import GatehouseFoundation
import Testing

/// The prepared signature models' cache (`GATEHOUSE_SIGNATURE_MODEL_CACHE`): never more than its
/// capacity, the oldest stored goes first, a capacity of 0 keeps nothing.
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
