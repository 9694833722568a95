import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform

/// What proving an address does to accounts (docs/security.md, "Claims"): a proven address wins
/// over an unproven claim on it, and a spent code saves what it proved with everything that goes
/// with it, in one transaction.
package struct AddressProofs: Sendable {
    package let database: DatabaseProvider
    package let clock: GatehouseClock
    package let store: AccountStore
    package let verification: VerificationService
    package let sessions: SessionService
    package let outbox: Outbox
    package let composer: MessageComposer
    package let audit: AuditLog
    package let binding: ClientBinding

    package init(database: DatabaseProvider, clock: GatehouseClock, store: AccountStore, verification: VerificationService, sessions: SessionService,
                 outbox: Outbox, composer: MessageComposer, audit: AuditLog, binding: ClientBinding) {
        self.database = database
        self.clock = clock
        self.store = store
        self.verification = verification
        self.sessions = sessions
        self.outbox = outbox
        self.composer = composer
        self.audit = audit
        self.binding = binding
    }

    /// Spends a checked code and saves what it proved, in one transaction: an unconfirmed claim
    /// on the proven address elsewhere is dropped, the account's other sessions end (a new way
    /// into the account is a change its other devices must sign in again for), and `notice` is
    /// queued. A unique field taken meanwhile by another account is `conflict`.
    package func spend(_ row: VerificationCodeModel, saving account: AccountModel, claiming destination: Destination,
                       keepingSession: UUID?, notice: OutgoingMessage? = nil, conflict: GatehouseError, audit event: AuditEvent) async throws {
        do {
            try await database.db.withTransaction { tx in
                try await verification.consume(row, on: tx)
                try await dropUnverifiedClaim(on: destination, except: account.id, on: tx)
                try await account.update(on: tx)
                if case .phone = destination { try await binding.followPhone(account, origin: event.origin, on: tx) }
                try await sessions.revokeAll(accountID: account.id!, keeping: keepingSession, on: tx)
                if let notice { try await outbox.enqueue(notice, on: tx) }
                try await audit.record(event, on: tx)
            }
            outbox.signal.wake()
        } catch where error.isConstraintViolation {
            throw conflict
        }
    }

    /// A proven address wins over an unproven claim on it: another account holding `destination`
    /// unconfirmed loses it, inside the caller's transaction, and is told where it can still be
    /// reached (its verified phone or confirmed email). Returns that notice, already queued.
    @discardableResult
    package func dropUnverifiedClaim(on destination: Destination, except accountID: UUID? = nil, on tx: any GatehouseDatabase) async throws -> OutgoingMessage? {
        guard let claimant = try await store.claimant(of: destination, except: accountID, on: tx) else { return nil }
        let notice: OutgoingMessage?
        switch destination {
        case .email(let email):
            claimant.email = nil
            claimant.emailConfirmedAt = nil
            notice = claimant.phoneVerifiedAt != nil ? claimant.phone.map {
                composer.claimLost(to: $0, channel: .sms, address: email, language: claimant.language)
            } : nil
        case .phone(let phone):
            claimant.phone = nil
            claimant.phoneVerifiedAt = nil
            notice = claimant.emailConfirmedAt != nil ? claimant.email.map {
                composer.claimLost(to: $0, channel: .email, address: phone, language: claimant.language)
            } : nil
        }
        claimant.updatedAt = clock.now()
        try await claimant.update(on: tx)
        if case .phone = destination { try await binding.followPhone(claimant, origin: AuditOrigin(), on: tx) }
        if let notice { try await outbox.enqueue(notice, on: tx) }
        return notice
    }
}
