import FluentKit
import Foundation
import GatehouseFoundation
import GatehousePlatform
import NIOConcurrencyHelpers

/// A short-lived, in-process cache of authenticated sessions and their accounts (as snapshots,
/// without password hashes), so a burst of reads with one token costs one database lookup per
/// `ttl` instead of two queries per request.
///
/// The database stays the only source of truth (docs/architecture.md): what an entry answers
/// reflects every change committed more than `ttl` ago (0.5 s by default, never more than 1 s).
/// What this instance changes it forgets at once: revoking a session or writing an account drops
/// that account's entries, so a client reads its own writes. A change made on another instance
/// arrives as an event on the bus and is forgotten then (`follow`).
///
/// An entry is fresh while it was read less than `ttl` ago, or while the bus has proven, less than
/// `ttl` ago, that every event committed since the entry was read has been dispatched here
/// (`EventBus.deliveredThrough`): no event dropped it, so nothing about it changed until then. It
/// then lives up to `maxAge` (30 s by default): the bound for a change no event tells of (an
/// `UPDATE` typed by hand). A bus that cannot prove its delivery (SQLite's, Redis's), or stops
/// proving it, leaves `ttl` the bound (docs/decisions.md, "ninth look").
package final class SessionCache: @unchecked Sendable {
    package typealias Value = (session: AuthenticatedSession, account: AccountSnapshot)

    package struct Entry {
        package var session: AuthenticatedSession
        package var account: AccountSnapshot
        package var storedAt: ContinuousClock.Instant
    }

    package let ttl: Duration
    /// How long an entry may live while the bus proves it missed nothing (no longer than `ttl` when not above it).
    package let maxAge: Duration
    package let capacity: Int
    /// Where proof of delivery comes from (`follow`).
    private let proofs = NIOLockedValueBox<(any EventBus)?>(nil)
    private let lock = NIOLock()
    private var entries: [String: Entry] = [:]
    private var tokensByAccount: [UUID: Set<String>] = [:]
    /// Lookups under way, so a burst of requests with one token after its entry expired makes
    /// one database round trip, not one each.
    private var loading: [String: Task<Value?, any Error>] = [:]
    /// Bumped by every invalidation: a lookup that started before one does not store what it
    /// read, so a revocation on this instance is never undone by a lookup racing it.
    private var generation: UInt64 = 0
    /// Its subscription to the event bus (`follow`).
    package var subscription: BusSubscription?

    package init(ttl: TimeInterval, maxAge: TimeInterval = 0, capacity: Int = 100_000) {
        self.ttl = .milliseconds(Int64((ttl * 1000).rounded()))
        self.maxAge = max(self.ttl, .milliseconds(Int64((maxAge * 1000).rounded())))
        self.capacity = capacity
    }

    /// How often a bus must prove its delivery for entries to outlive `ttl` (half of it: a proof
    /// is then never older than `ttl` while the bus keeps up); zero when they cannot.
    package var heartbeat: Duration { isEnabled && maxAge > ttl ? ttl / 2 : .zero }

    /// The moment before which every change's event has reached this instance, if the bus says so.
    private var proof: ContinuousClock.Instant? {
        guard maxAge > ttl else { return nil }
        return proofs.withLockedValue { $0 }?.deliveredThrough
    }

    package var isEnabled: Bool { ttl > .zero }

    /// The entry for a token hash while it is fresh (`isFresh`).
    package func lookup(tokenHash: String) -> Value? {
        guard isEnabled else { return nil }
        let now = ContinuousClock.now, proof = proof
        return lock.withLock { freshLocked(tokenHash: tokenHash, now: now, proof: proof) }
    }

    /// The fresh entry, or the result of `load` (shared with every concurrent caller for the same
    /// token), which is kept while it is fresh when it found a session.
    package func value(tokenHash: String, load: @escaping @Sendable () async throws -> Value?) async throws -> Value? {
        guard isEnabled else { return try await load() }
        let now = ContinuousClock.now, proof = proof
        enum Found { case fresh(Value), loading(Task<Value?, any Error>) }
        let found: Found = lock.withLock {
            if let fresh = freshLocked(tokenHash: tokenHash, now: now, proof: proof) {
                return .fresh(fresh)
            }
            if let running = loading[tokenHash] { return .loading(running) }
            let startedAt = generation
            // An entry's age counts from the start of its lookup: what it holds may be that old.
            let task = Task<Value?, any Error> {
                do {
                    let value = try await load()
                    self.finish(tokenHash: tokenHash, value: value, generation: startedAt, readAt: now)
                    return value
                } catch {
                    self.finish(tokenHash: tokenHash, value: nil, generation: startedAt, readAt: now)
                    throw error
                }
            }
            loading[tokenHash] = task
            return .loading(task)
        }
        switch found {
        case .fresh(let value): return value
        case .loading(let task): return try await task.value
        }
    }

    package func store(tokenHash: String, session: AuthenticatedSession, account: AccountSnapshot) {
        guard isEnabled else { return }
        lock.withLock { storeLocked(tokenHash: tokenHash, session: session, account: account) }
    }

    /// Forgets everything (the event bus may have missed events).
    package func invalidateAll() {
        guard isEnabled else { return }
        lock.withLock {
            generation &+= 1
            entries.removeAll()
            tokensByAccount.removeAll()
        }
    }

    /// Forgets every session of the account: after a revocation or a change to the account.
    package func invalidate(accountID: UUID) {
        guard isEnabled else { return }
        lock.withLock {
            generation &+= 1
            guard let hashes = tokensByAccount.removeValue(forKey: accountID) else { return }
            for hash in hashes { entries.removeValue(forKey: hash) }
        }
    }

    private func finish(tokenHash: String, value: Value?, generation startedAt: UInt64, readAt: ContinuousClock.Instant) {
        lock.withLock {
            loading.removeValue(forKey: tokenHash)
            if let value, generation == startedAt {
                storeLocked(tokenHash: tokenHash, session: value.session, account: value.account, at: readAt)
            }
        }
    }

    private func freshLocked(tokenHash: String, now: ContinuousClock.Instant, proof: ContinuousClock.Instant?) -> Value? {
        guard let entry = entries[tokenHash] else { return nil }
        guard isFresh(entry, now: now, proof: proof) else {
            removeLocked(tokenHash: tokenHash, accountID: entry.session.accountID)
            return nil
        }
        return (entry.session, entry.account)
    }

    /// Read less than `ttl` ago, or known unchanged until less than `ttl` ago (the bus's proof is
    /// later than the read, and no event has dropped the entry since), and younger than `maxAge`.
    private func isFresh(_ entry: Entry, now: ContinuousClock.Instant, proof: ContinuousClock.Instant?) -> Bool {
        let knownAt = proof.map { max($0, entry.storedAt) } ?? entry.storedAt
        return now - knownAt < ttl && now - entry.storedAt < maxAge
    }

    private func storeLocked(tokenHash: String, session: AuthenticatedSession, account: AccountSnapshot, at readAt: ContinuousClock.Instant = .now) {
        let now = ContinuousClock.now
        if entries.count >= capacity { evictLocked(now: now, proof: proof) }
        entries[tokenHash] = Entry(session: session, account: account, storedAt: readAt)
        tokensByAccount[session.accountID, default: []].insert(tokenHash)
    }

    private func removeLocked(tokenHash: String, accountID: UUID) {
        entries.removeValue(forKey: tokenHash)
        tokensByAccount[accountID]?.remove(tokenHash)
        if tokensByAccount[accountID]?.isEmpty == true { tokensByAccount.removeValue(forKey: accountID) }
    }

    /// Full: drop what has expired; if everything is fresh (a flood of distinct tokens), start over.
    private func evictLocked(now: ContinuousClock.Instant, proof: ContinuousClock.Instant?) {
        for (hash, entry) in entries where !isFresh(entry, now: now, proof: proof) {
            removeLocked(tokenHash: hash, accountID: entry.session.accountID)
        }
        if entries.count >= capacity {
            entries.removeAll(keepingCapacity: true)
            tokensByAccount.removeAll(keepingCapacity: true)
        }
    }
}

extension SessionCache {
    /// Keeps the cache in step with other instances: an account changed anywhere is dropped here
    /// when its event arrives, and everything is dropped after a gap in the bus.
    package func follow(_ bus: any EventBus) {
        proofs.withLockedValue { $0 = bus }
        subscription = bus.subscribe(topic: BusTopic.accountChanged, account: nil) { [weak self] event in
            if let account = event.account { self?.invalidate(accountID: account) }
        }
        bus.onGap { [weak self] in self?.invalidateAll() }
    }
}

/// Drops an account's cached sessions whenever Fluent writes or deletes the account, on any
/// code path, so nothing that changes an account can forget to; and tells the other instances
/// (on the writing transaction, so they hear of it when it commits).
package struct AccountCacheInvalidation: AsyncModelMiddleware {
    package let cache: SessionCache
    package let bus: any EventBus

    package func update(model: AccountModel, on db: any Database, next: any AnyAsyncModelResponder) async throws {
        try await next.update(model, on: db)
        if let id = model.id { try await changed(id, on: DeadlineDatabase.adopting(db)) }
    }

    package func delete(model: AccountModel, force: Bool, on db: any Database, next: any AnyAsyncModelResponder) async throws {
        try await next.delete(model, force: force, on: db)
        if let id = model.id { try await changed(id, on: DeadlineDatabase.adopting(db)) }
    }

    private func changed(_ id: UUID, on db: any GatehouseDatabase) async throws {
        cache.invalidate(accountID: id)
        try await bus.publish(BusEvent(topic: BusTopic.accountChanged, account: id), on: db)
    }

    package init(cache: SessionCache, bus: any EventBus) {
        self.cache = cache
        self.bus = bus
    }
}
