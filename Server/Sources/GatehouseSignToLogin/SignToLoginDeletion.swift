import FluentKit
import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation

/// Sign To Login's part in deleting an account (docs/security.md, "Account deletion"): an owner of
/// an enabled app is refused until they disable it (its users sign in through it); at erasure the
/// person's signatures go, and the documents they signed keep the signing under a deleted
/// account's name.
package struct SignToLoginDeletion: AccountDeletionParticipant {
    package let store: SignToLoginStore
    package let accounts: AccountStore

    package init(store: SignToLoginStore, accounts: AccountStore) {
        self.store = store
        self.accounts = accounts
    }

    package func checkDeletable(_ account: UUID, on db: any GatehouseDatabase) async throws {
        guard try await store.ownsEnabledApp(account, on: db) else { return }
        throw GatehouseError(.conflict, .appsEnabled, LocalizedText("error.appsEnabled"))
    }

    package func erase(_ account: UUID, now: Date, on tx: any GatehouseDatabase) async throws {
        let email = try await accounts.row(id: account, on: tx)?.email
        try await store.eraseAccount(account, email: email, on: tx)
    }
}
