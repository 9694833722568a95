import FluentKit
import Foundation
import GatehouseAccounts
import GatehouseFoundation

/// The messenger's part in deleting an account (docs/security.md, "Account deletion"): nothing to
/// settle first; at erasure the person leaves search, their friendships, blocks, hidden-message
/// marks, uploads they never sent and their realtime events go. Their messages stay in the other
/// people's chats, shown as a deleted account's (`Person.deleted`).
package struct MessengerDeletion: AccountDeletionParticipant {
    package let store: MessengerStore

    package init(store: MessengerStore) {
        self.store = store
    }

    package func checkDeletable(_ account: UUID, on db: any GatehouseDatabase) async throws {}

    package func erase(_ account: UUID, now: Date, on tx: any GatehouseDatabase) async throws {
        try await store.eraseAccount(account, on: tx)
    }
}
