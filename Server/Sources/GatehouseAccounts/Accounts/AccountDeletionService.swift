import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform

/// What an app built on accounts does when one is deleted (docs/security.md, "Account deletion").
/// The composition root hands every app's participant to `AccountDeletionService`, so a new app
/// joins deletion by writing one, not by the accounts knowing it.
package protocol AccountDeletionParticipant: Sendable {
    /// Refuses the deletion while the app holds something the person must settle first (money in
    /// a wallet, apps in use), with the problem that says what. Read in the request's transaction.
    func checkDeletable(_ account: UUID, on db: any GatehouseDatabase) async throws
    /// Erases the app's personal data of an account whose grace period ended, in the erasure's
    /// transaction; what other people keep (messages in their chats, the ledger, documents they
    /// hold) stays, under the anonymous account.
    func erase(_ account: UUID, now: Date, on tx: any GatehouseDatabase) async throws
    /// What the request itself sets going, in its transaction (the identities' revocations at their providers).
    func deletionRequested(_ account: UUID, now: Date, on tx: any GatehouseDatabase) async throws
}

extension AccountDeletionParticipant {
    package func deletionRequested(_ account: UUID, now: Date, on tx: any GatehouseDatabase) async throws {}
}

/// Deleting an account (Apple's App Store Review Guideline 5.1.1(v); GDPR's right to erasure):
/// asked with the current password, every session ends and every way in but a password login
/// stops at once; a password login within the grace period cancels it; after it the personal data
/// is erased, by the accounts and by every app's participant, in one transaction per account.
package struct AccountDeletionService: Sendable {
    package let store: AccountStore
    package let database: DatabaseProvider
    package let clock: GatehouseClock
    package let sessions: SessionService
    package let participants: [any AccountDeletionParticipant]
    /// How long after the request the data is erased (`GATEHOUSE_ACCOUNT_DELETION_GRACE_SECONDS`).
    package let grace: TimeInterval
    /// Accounts erased per maintenance run, each in its own transaction.
    package let batch: Int
    package let passwords: PasswordChanges
    package let audit: AuditLog

    package init(store: AccountStore, database: DatabaseProvider, clock: GatehouseClock, sessions: SessionService, passwords: PasswordChanges,
                 audit: AuditLog, participants: [any AccountDeletionParticipant], grace: TimeInterval, batch: Int = 50) {
        self.store = store
        self.passwords = passwords
        self.audit = audit
        self.database = database
        self.clock = clock
        self.sessions = sessions
        self.participants = participants
        self.grace = grace
        self.batch = batch
    }

    /// Asks for the deletion of a signed-in account: the current password (against the login
    /// budget), then every app's check; then the request is written and every session ends, in one
    /// transaction. Asking again answers the date already set.
    package func request(accountID: UUID, currentPassword: String?, origin: RequestOrigin? = nil) async throws -> AccountDeletion {
        let account = try await store.accountRow(id: accountID)
        try await passwords.requireCurrentPassword(currentPassword, of: account)
        return try await start(accountID, by: .account(accountID), origin: origin?.audit ?? AuditOrigin(), detail: [:])
    }

    /// The same deletion asked by a person whose account has no password, proven by a fresh sign-in with one of its
    /// identities (`SocialSignIn.reauthenticate`, already checked and spent).
    package func request(accountID: UUID, reauthenticatedWith provider: String, origin: RequestOrigin) async throws -> AccountDeletion {
        _ = try await store.accountRow(id: accountID)
        return try await start(accountID, by: .account(accountID), origin: origin.audit, detail: ["proof": provider])
    }

    /// The same deletion asked by the business (the admin API), with its reason: every app's check, the request, every
    /// session ended, in one transaction. The owner's password login within the grace period still cancels it.
    package func request(accountID: UUID, reason: String, by actor: AuditActor, origin: AuditOrigin) async throws -> AccountDeletion {
        _ = try await store.accountRow(id: accountID)
        return try await start(accountID, by: actor, origin: origin, detail: ["reason": reason])
    }

    private func start(_ accountID: UUID, by actor: AuditActor, origin: AuditOrigin, detail: [String: String]) async throws -> AccountDeletion {
        let now = clock.now()
        let requested = try await database.db.withTransaction { tx -> Date in
            for participant in participants { try await participant.checkDeletable(accountID, on: tx) }
            let requested = try await store.requestDeletion(accountID, at: now, on: tx)
            for participant in participants { try await participant.deletionRequested(accountID, now: now, on: tx) }
            try await sessions.revokeAll(accountID: accountID, on: tx)
            try await audit.record(AuditEvent(.accountDeletionRequested, by: actor, account: accountID, origin: origin, detail: detail), on: tx)
            return requested
        }
        return AccountDeletion(erasureAt: requested.addingTimeInterval(grace))
    }

    /// Erases the accounts whose grace period has ended (maintenance; safe on several instances at
    /// once: an account is erased once, whoever takes it first). Returns how many it erased.
    @discardableResult
    package func eraseDue() async throws -> Int {
        let now = clock.now()
        var erased = 0
        for id in try await store.deletionsDue(before: now.addingTimeInterval(-grace), limit: batch) {
            let done = try await database.db.withTransaction { tx -> Bool in
                // Taken in the transaction that erases: a login that cancelled a moment ago wins.
                guard try await store.takeForErasure(id, requestedBefore: now.addingTimeInterval(-grace), at: now, on: tx) else { return false }
                for participant in participants { try await participant.erase(id, now: now, on: tx) }
                try await store.eraseAccount(id, on: tx)
                try await sessions.revokeAll(accountID: id, on: tx)
                // What is left to say: the account is gone (and the business's systems hear it: docs/webhooks.md).
                try await audit.record(AuditEvent(.accountErased, by: .system(nil), account: id), on: tx)
                return true
            }
            if done { erased += 1 }
        }
        return erased
    }
}
