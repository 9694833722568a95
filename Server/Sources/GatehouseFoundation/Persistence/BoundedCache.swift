import NIOConcurrencyHelpers

/// An in-process cache of values that never change under their key (a row that is replaced
/// gets a new key), holding at most `capacity` of them: the oldest stored goes first. Safe from
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
        }
    }

    package var count: Int { state.withLockedValue { $0.values.count } }
}
