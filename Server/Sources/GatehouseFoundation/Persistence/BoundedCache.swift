import NIOConcurrencyHelpers

/// An in-process cache of values that never change under their key (a row that is replaced
/// gets a new key), or that their user checks before relying on them and forgets (`remove`) when
/// the check fails, holding at most `capacity` of them: the oldest stored goes first. Safe from
/// any thread; a capacity of 0 keeps nothing.
package final class BoundedCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct State {
        var values: [Key: Value] = [:]
        /// Keys in the order they were stored, from `head` on (older ones were evicted or replaced).
        var order: [Key] = []
        var head = 0
    }

    package let capacity: Int
    private let state = NIOLockedValueBox(State())

    package init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    package func value(_ key: Key) -> Value? {
        state.withLockedValue { $0.values[key] }
    }

    package func insert(_ value: Value, for key: Key) {
        guard capacity > 0 else { return }
        state.withLockedValue { state in
            if state.values.updateValue(value, forKey: key) != nil { return }
            state.order.append(key)
            while state.values.count > capacity, state.head < state.order.count {
                state.values[state.order[state.head]] = nil
                state.head += 1
            }
            // Compact the order now and then, so it never grows past twice the capacity.
            if state.head > capacity {
                state.order.removeFirst(state.head)
                state.head = 0
            }
            // Keys removed and stored again leave places behind: keep each stored key's latest.
            if state.order.count - state.head > 2 * capacity {
                var seen = Set<Key>()
                var kept: [Key] = []
                for key in state.order[state.head...].reversed() where state.values[key] != nil && seen.insert(key).inserted {
                    kept.append(key)
                }
                state.order = kept.reversed()
                state.head = 0
            }
        }
    }

    /// Forgets `keys` (their places in the order stay, so one stored again may go a little early).
    package func remove(_ keys: [Key]) {
        state.withLockedValue { state in
            for key in keys { state.values[key] = nil }
        }
    }

    package var count: Int { state.withLockedValue { $0.values.count } }

    /// Places the eviction order holds: never much more than twice the capacity, however many keys
    /// are removed and stored again.
    package var places: Int { state.withLockedValue { $0.order.count - $0.head } }
}
