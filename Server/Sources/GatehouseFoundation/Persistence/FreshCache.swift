import NIOConcurrencyHelpers

/// Copies of rows that may change, each served from memory for at most `ttl` after it was read,
/// at most `capacity` of them: for a lookup every request of a surface starts with (an app by its
/// key), where the database's answer rarely changes and a round trip is a tenth of the request.
///
/// The database stays the only source of truth: what this instance changes it forgets with
/// `invalidateAll` once the write is done, a change on another instance arrives on the event bus
/// and does the same, and `ttl` bounds the rest (the bus down, a write by another process). A
/// read that started before an invalidation is not kept, so a change is never undone by a
/// lookup racing it. Only found values are kept: a miss (an unknown key) is asked every time, so
/// a new row is seen at once and guessing keys fills nothing. A `ttl` of 0 keeps nothing.
package final class FreshCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct State {
        var entries: [Key: (value: Value, readAt: ContinuousClock.Instant)] = [:]
        var generation: UInt64 = 0
    }

    package let ttl: Duration
    package let capacity: Int
    private let state = NIOLockedValueBox(State())

    package init(ttl: Double, capacity: Int = 10_000) {
        self.ttl = .milliseconds(Int64((max(0, ttl) * 1000).rounded()))
        self.capacity = max(0, capacity)
    }

    package var isEnabled: Bool { ttl > .zero && capacity > 0 }

    /// The value for `key`: a copy younger than `ttl`, else `load`'s (kept when found).
    package func value(_ key: Key, load: () async throws -> Value?) async throws -> Value? {
        guard isEnabled else { return try await load() }
        let now = ContinuousClock.now
        let (fresh, generation) = state.withLockedValue { state -> (Value?, UInt64) in
            guard let entry = state.entries[key] else { return (nil, state.generation) }
            if now - entry.readAt < ttl { return (entry.value, state.generation) }
            state.entries[key] = nil
            return (nil, state.generation)
        }
        if let fresh { return fresh }
        // Its age counts from the start of the read: what it holds may be that old.
        guard let loaded = try await load() else { return nil }
        state.withLockedValue { state in
            guard state.generation == generation else { return }
            if state.entries.count >= capacity { state.entries.removeAll(keepingCapacity: true) }
            state.entries[key] = (loaded, now)
        }
        return loaded
    }

    /// Forgets every copy: after a change here, or one heard of from elsewhere.
    package func invalidateAll() {
        state.withLockedValue { state in
            state.generation &+= 1
            state.entries.removeAll()
        }
    }

    package var count: Int { state.withLockedValue { $0.entries.count } }
}
