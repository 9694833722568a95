import FluentKit
import Foundation
import NIOConcurrencyHelpers

/// A short-lived, in-process cache of authenticated sessions and their accounts, so a burst of
/// reads with one token costs one database round trip per `ttl` instead of two per request.
///
/// The database stays the only source of truth (DESIGN.md §2): an entry is a copy at most `ttl`
/// old (0.5 s by default, never more than 1 s). What this instance changes it forgets at once:
/// revoking a session or writing an account drops that account's entries, so a client reads
/// its own writes. A change made on another instance is seen here within `ttl`, which is the
/// bound on how long a session revoked elsewhere can still be used (docs/decisions.md).
final class SessionCache: @unchecked Sendable {
    struct Entry {
        var session: AuthenticatedSession
        /// Never handed out: callers get a copy, so no request can change what others read.
        var account: AccountModel
        var storedAt: ContinuousClock.Instant
    }

    let ttl: Duration
    let capacity: Int
    private let lock = NIOLock()
    private var entries: [String: Entry] = [:]
    private var tokensByAccount: [UUID: Set<String>] = [:]

    init(ttl: TimeInterval, capacity: Int = 100_000) {
        self.ttl = .milliseconds(Int64((ttl * 1000).rounded()))
        self.capacity = capacity
    }

    var isEnabled: Bool { ttl > .zero }

    /// The entry for a token hash while it is younger than `ttl`.
    func lookup(tokenHash: String) -> (session: AuthenticatedSession, account: AccountModel)? {
        guard isEnabled else { return nil }
        let now = ContinuousClock.now
        return lock.withLock {
            guard let entry = entries[tokenHash] else { return nil }
            guard now - entry.storedAt < ttl else {
                removeLocked(tokenHash: tokenHash, accountID: entry.session.accountID)
                return nil
            }
            return (entry.session, entry.account)
        }
    }

    func store(tokenHash: String, session: AuthenticatedSession, account: AccountModel) {
        guard isEnabled else { return }
        let now = ContinuousClock.now
        lock.withLock {
            if entries.count >= capacity { evictLocked(now: now) }
            entries[tokenHash] = Entry(session: session, account: account, storedAt: now)
            tokensByAccount[session.accountID, default: []].insert(tokenHash)
        }
    }

    /// Forgets every session of the account: after a revocation or a change to the account.
    func invalidate(accountID: UUID) {
        guard isEnabled else { return }
        lock.withLock {
            guard let hashes = tokensByAccount.removeValue(forKey: accountID) else { return }
            for hash in hashes { entries.removeValue(forKey: hash) }
        }
    }

    func removeAll() {
        lock.withLock {
            entries.removeAll()
            tokensByAccount.removeAll()
        }
    }

    private func removeLocked(tokenHash: String, accountID: UUID) {
        entries.removeValue(forKey: tokenHash)
        tokensByAccount[accountID]?.remove(tokenHash)
        if tokensByAccount[accountID]?.isEmpty == true { tokensByAccount.removeValue(forKey: accountID) }
    }

    /// Full: drop what has expired; if everything is fresh (a flood of distinct tokens), start over.
    private func evictLocked(now: ContinuousClock.Instant) {
        for (hash, entry) in entries where now - entry.storedAt >= ttl {
            removeLocked(tokenHash: hash, accountID: entry.session.accountID)
        }
        if entries.count >= capacity {
            entries.removeAll(keepingCapacity: true)
            tokensByAccount.removeAll(keepingCapacity: true)
        }
    }
}

/// Drops an account's cached sessions whenever Fluent writes or deletes the account, on any
/// code path, so nothing that changes an account can forget to.
struct AccountCacheInvalidation: AsyncModelMiddleware {
    let cache: SessionCache

    func update(model: AccountModel, on db: any Database, next: any AnyAsyncModelResponder) async throws {
        try await next.update(model, on: db)
        if let id = model.id { cache.invalidate(accountID: id) }
    }

    func delete(model: AccountModel, force: Bool, on db: any Database, next: any AnyAsyncModelResponder) async throws {
        try await next.delete(model, force: force, on: db)
        if let id = model.id { cache.invalidate(accountID: id) }
    }
}

extension AccountModel {
    /// A detached copy for one request to read. Every stored field is copied; a field added to
    /// the model must be added here (the cache tests compare a cached read with a fresh one).
    func detachedCopy() -> AccountModel {
        let copy = AccountModel()
        copy.id = id
        copy.phone = phone
        copy.phoneVerifiedAt = phoneVerifiedAt
        copy.email = email
        copy.emailConfirmedAt = emailConfirmedAt
        copy.pendingEmail = pendingEmail
        copy.username = username
        copy.usernameKey = usernameKey
        copy.passwordHash = passwordHash
        copy.firstName = firstName
        copy.lastName = lastName
        copy.middleName = middleName
        copy.birthday = birthday
        copy.locale = locale
        copy.fcmToken = fcmToken
        copy.avatarID = avatarID
        copy.createdAt = createdAt
        copy.updatedAt = updatedAt
        copy.$id.exists = true
        return copy
    }
}
