import FluentKit
import Foundation
import GatehouseFoundation
import SQLKit

/// The wallet's tables (docs/wallet.md, "The ledger"): wallets with their balances, the ledger's
/// transactions and their entries, money requests, remembered idempotency keys, and the column
/// that makes a chat message a wallet message.
package struct M013CreateWallet: SQLMigration {
    package var name: String { "013_CreateWallet" }

    package func prepare(on database: any GatehouseDatabase) async throws {
        // A person's wallet (one per account) or the system wallet money is issued from. The
        // balance is kept in step with the entries under the row's lock; a person's never drops
        // below zero, and the database refuses a write that would make it (the last line of defence).
        try await database.schema("wallets")
            .field("id", .uuid, .identifier(auto: false))
            .field("account_id", .uuid, .references("accounts", "id"))
            .field("kind", .string, .required)
            .field("phone", .string)
            .field("currency", .string, .required)
            .field("balance", .int64, .required)
            // What the wallet paid out on `paid_day` (days since 1970, UTC): the daily limit's counter.
            .field("paid_day", .int64, .required, .sql(.default(0)))
            .field("paid_today", .int64, .required, .sql(.default(0)))
            .field("created_at", .datetime, .required)
            .unique(on: "account_id", name: "uq_wallets_account")
            .constraint(.constraint(.custom(SQLRaw("CHECK (kind = 'system' OR balance >= 0)")), name: "ck_wallets_balance"))
            .create()

        // One movement: always exactly two entries that sum to zero.
        try await database.schema("ledger_transactions")
            .field("id", .uuid, .identifier(auto: false))
            .field("kind", .string, .required)
            .field("debit_wallet_id", .uuid, .required, .references("wallets", "id"))
            .field("credit_wallet_id", .uuid, .required, .references("wallets", "id"))
            .field("amount", .int64, .required)
            .field("comment", .string)
            .field("request_id", .uuid)
            // A top-up's reference from outside (a payment provider's payment id): at most one movement each.
            .field("reference", .string)
            .field("created_at", .datetime, .required)
            .unique(on: "reference", name: "uq_ledger_transactions_reference")
            .constraint(.constraint(.custom(SQLRaw("CHECK (amount > 0 AND debit_wallet_id <> credit_wallet_id)")), name: "ck_ledger_transactions_amount"))
            .create()
        try await database.schema("ledger_entries")
            .field("id", .uuid, .identifier(auto: false))
            .field("transaction_id", .uuid, .required, .references("ledger_transactions", "id"))
            .field("wallet_id", .uuid, .required, .references("wallets", "id"))
            .field("amount", .int64, .required)
            .field("balance_after", .int64, .required)
            .field("created_at", .datetime, .required)
            .create()
        // A wallet's history page, and its payouts of the last day (the daily limit).
        try await database.create(index: "ix_ledger_entries_wallet").on("ledger_entries").column("wallet_id").column("id").run()
        try await database.create(index: "ix_ledger_entries_wallet_time").on("ledger_entries").column("wallet_id").column("created_at").run()
        try await database.create(index: "ix_ledger_entries_transaction").on("ledger_entries").column("transaction_id").run()

        try await database.schema("money_requests")
            .field("id", .uuid, .identifier(auto: false))
            .field("kind", .string, .required)
            .field("state", .string, .required)
            .field("requester_id", .uuid, .required, .references("accounts", "id"))
            .field("payer_id", .uuid, .required, .references("accounts", "id"))
            .field("amount", .int64, .required)
            .field("comment", .string)
            .field("created_at", .datetime, .required)
            .field("updated_at", .datetime, .required)
            .field("expires_at", .datetime, .required)
            .field("payment_id", .uuid, .references("ledger_transactions", "id"))
            .field("repayment_id", .uuid, .references("ledger_transactions", "id"))
            .constraint(.constraint(.custom(SQLRaw("CHECK (amount > 0)")), name: "ck_money_requests_amount"))
            .create()
        try await database.create(index: "ix_money_requests_requester").on("money_requests").column("requester_id").column("id").run()
        try await database.create(index: "ix_money_requests_payer").on("money_requests").column("payer_id").column("id").run()

        // The first answer to each (account, key), replayed to a retry (docs/wallet.md, "Idempotency").
        try await database.schema("idempotency_keys")
            .field("account_id", .uuid, .required, .references("accounts", "id", onDelete: .cascade))
            .field("key", .string, .required)
            .field("fingerprint", .string, .required)
            .field("status", .int, .required)
            .field("body", .string, .required)
            .field("created_at", .datetime, .required)
            .compositeIdentifier(over: "account_id", "key")
            .create()
        try await database.create(index: "ix_idempotency_keys_created").on("idempotency_keys").column("created_at").run()

        try await database.schema("messages").field("payment", .string).update()

        // The system wallet: where top-ups come from (its balance is minus all money issued).
        try await database.raw("""
            INSERT INTO wallets (id, kind, currency, balance, created_at)
            VALUES (\(bind: Ledger.systemWalletID), 'system', 'RUB', 0, \(bind: Date()))
            """).run()
    }

    package func revert(on database: any GatehouseDatabase) async throws {
        try await database.schema("messages").deleteField("payment").update()
        for table in ["idempotency_keys", "money_requests", "ledger_entries", "ledger_transactions", "wallets"] {
            try await database.schema(table).delete()
        }
    }

    package init() {

    }
}

/// The index of a wallet's entries by time served the daily limit's first version, a sum over the
/// day's payouts; the limit is a counter on the wallet's row now (`Ledger.post`), and the index
/// only cost every entry an insert.
package struct M014DropLedgerEntriesByTime: SQLMigration {
    package var name: String { "014_DropLedgerEntriesByTime" }

    package func prepare(on database: any GatehouseDatabase) async throws {
        try await database.drop(index: "ix_ledger_entries_wallet_time").run()
    }

    package func revert(on database: any GatehouseDatabase) async throws {
        try await database.create(index: "ix_ledger_entries_wallet_time").on("ledger_entries").column("wallet_id").column("created_at").run()
    }

    package init() {

    }
}

/// Top-ups through a payment provider (docs/wallet.md, "Money in"): one row per payment the
/// person started, with the key that made it (a retried `POST` answers the same top-up), the
/// provider's payment, and what was credited and refunded of it. The money itself is in the ledger.
package struct M024CreateTopUps: SQLMigration {
    package var name: String { "024_CreateTopUps" }

    package func prepare(on database: any GatehouseDatabase) async throws {
        try await database.schema("wallet_topups")
            .field("id", .uuid, .identifier(auto: false))
            .field("account_id", .uuid, .required, .references("accounts", "id"))
            .field("wallet_id", .uuid, .required, .references("wallets", "id"))
            .field("provider", .string, .required)
            // The provider's payment (a Checkout Session): unknown until the provider answers.
            .field("provider_payment_id", .string)
            // What a refund names (Stripe's payment intent), known once paid.
            .field("payment_intent", .string)
            .field("amount", .int64, .required)
            .field("currency", .string, .required)
            .field("state", .string, .required)
            .field("confirmation_url", .string)
            .field("idempotency_key", .string, .required)
            .field("fingerprint", .string, .required)
            .field("transfer_id", .uuid, .references("ledger_transactions", "id"))
            .field("refunded", .int64, .required, .sql(.default(0)))
            .field("created_at", .datetime, .required)
            .field("updated_at", .datetime, .required)
            .field("paid_at", .datetime)
            .unique(on: "account_id", "idempotency_key", name: "uq_wallet_topups_key")
            .unique(on: "provider", "provider_payment_id", name: "uq_wallet_topups_payment")
            .constraint(.constraint(.custom(SQLRaw("CHECK (amount > 0 AND refunded >= 0 AND refunded <= amount)")), name: "ck_wallet_topups_amount"))
            .create()
        try await database.create(index: "ix_wallet_topups_account").on("wallet_topups").column("account_id").column("created_at").run()
        try await database.create(index: "ix_wallet_topups_intent").on("wallet_topups").column("payment_intent").run()
        try await database.create(index: "ix_wallet_topups_transfer").on("wallet_topups").column("transfer_id").run()
    }

    package func revert(on database: any GatehouseDatabase) async throws {
        try await database.schema("wallet_topups").delete()
    }

    package init() {

    }
}
