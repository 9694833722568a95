import FluentKit
import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation

/// The wallet's part in deleting an account (docs/security.md, "Account deletion"): a wallet that
/// holds money refuses it until the balance is paid out (the money is the person's, and nobody
/// could reach it after); at erasure the wallet forgets its phone, the person's open money
/// requests are cancelled and their idempotency keys go. The ledger's movements stay: a movement
/// is the other party's history too, and an auditor's.
package struct WalletDeletion: AccountDeletionParticipant {
    package let store: WalletStore

    package init(store: WalletStore) {
        self.store = store
    }

    package func checkDeletable(_ account: UUID, on db: any GatehouseDatabase) async throws {
        guard let balance = try await store.balance(of: account, on: db), balance != 0 else { return }
        throw GatehouseError(.conflict, .walletNotEmpty, LocalizedText("error.walletNotEmpty", [Kopecks.format(balance, grouping: " ")]))
    }

    package func erase(_ account: UUID, now: Date, on tx: any GatehouseDatabase) async throws {
        try await store.eraseAccount(account, now: now, on: tx)
    }
}
