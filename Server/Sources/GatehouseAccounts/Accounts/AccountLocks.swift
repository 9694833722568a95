import FluentKit
import Foundation
import GatehouseFoundation
import GatehousePlatform

/// Locking an account (an operator's action, docs/operators.md): a locked account's sessions end
/// and no new one opens on any surface (`SessionService.create` refuses with `account_locked`)
/// until it is unlocked. The refusal is said only after the password, code or signature was
/// right: to a guesser a locked account looks like any other.
package struct AccountLocks: Sendable {
    package let database: DatabaseProvider
    package let clock: GatehouseClock
    package let store: AccountStore
    package let sessions: SessionService
    package let audit: AuditLog

    package init(database: DatabaseProvider, clock: GatehouseClock, store: AccountStore, sessions: SessionService, audit: AuditLog) {
        self.database = database
        self.clock = clock
        self.store = store
        self.sessions = sessions
        self.audit = audit
    }

    /// The lock on an account: when and why, or nil.
    package struct Lock: Sendable, Equatable {
        package var at: Date
        package var reason: String
    }

    package func lock(of accountID: UUID) async throws -> Lock? {
        try await store.lock(of: accountID).map { Lock(at: $0.at, reason: $0.reason) }
    }

    /// Locks the account and ends its sessions, with the reason in the audit trail, in one
    /// transaction; false when it was locked already (nothing changes, nothing is recorded).
    package func lock(_ accountID: UUID, reason: String, by actor: AuditActor, origin: AuditOrigin) async throws -> Bool {
        let now = clock.now()
        return try await database.db.withTransaction { tx in
            guard try await store.setLock(accountID, reason: reason, at: now, on: tx) else { return false }
            let ended = try await sessions.revokeAll(accountID: accountID, on: tx)
            try await audit.record(AuditEvent(.accountLocked, by: actor, account: accountID, origin: origin,
                                                    detail: ["reason": reason, "sessions": String(ended)]), on: tx)
            return true
        }
    }

    /// Unlocks the account, with the reason in the audit trail; false when it was not locked.
    package func unlock(_ accountID: UUID, reason: String, by actor: AuditActor, origin: AuditOrigin) async throws -> Bool {
        let now = clock.now()
        return try await database.db.withTransaction { tx in
            guard try await store.clearLock(accountID, at: now, on: tx) else { return false }
            try await audit.record(AuditEvent(.accountUnlocked, by: actor, account: accountID, origin: origin,
                                                    detail: ["reason": reason]), on: tx)
            return true
        }
    }
}
