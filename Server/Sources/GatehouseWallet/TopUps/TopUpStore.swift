import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import SQLKit

/// A top-up as kept (`wallet_topups`).
package struct TopUpRow: Sendable {
    package enum State: String, Sendable { case pending, paid, expired }
    package var id: UUID
    package var account: UUID
    package var wallet: UUID
    package var provider: String
    package var payment: String?
    package var paymentIntent: String?
    package var amount: Int64
    package var currency: String
    package var state: State
    package var confirmationURL: String?
    package var key: String
    package var fingerprint: String
    package var transfer: UUID?
    package var refunded: Int64
    package var createdAt: Date
    package var paidAt: Date?
}

/// The top-ups' queries.
package struct TopUpStore: Sendable {
    package let database: DatabaseProvider

    private func sql(_ db: (any GatehouseDatabase)?) -> any SQLDatabase { db ?? database.db }

    private static let columns = """
        id, account_id, wallet_id, provider, provider_payment_id, payment_intent, amount, currency, state, confirmation_url,
        idempotency_key, fingerprint, transfer_id, refunded, created_at, paid_at
        """

    private static func row(_ row: any SQLRow) throws -> TopUpRow {
        TopUpRow(
            id: try row.decode(column: "id", as: UUID.self), account: try row.decode(column: "account_id", as: UUID.self),
            wallet: try row.decode(column: "wallet_id", as: UUID.self), provider: try row.decode(column: "provider", as: String.self),
            payment: try row.decode(column: "provider_payment_id", as: String?.self),
            paymentIntent: try row.decode(column: "payment_intent", as: String?.self), amount: try row.decode(column: "amount", as: Int64.self),
            currency: try row.decode(column: "currency", as: String.self),
            state: TopUpRow.State(rawValue: try row.decode(column: "state", as: String.self)) ?? .pending,
            confirmationURL: try row.decode(column: "confirmation_url", as: String?.self), key: try row.decode(column: "idempotency_key", as: String.self),
            fingerprint: try row.decode(column: "fingerprint", as: String.self), transfer: try row.decode(column: "transfer_id", as: UUID?.self),
            refunded: try row.decode(column: "refunded", as: Int64.self), createdAt: try row.decode(column: "created_at", as: Date.self),
            paidAt: try row.decode(column: "paid_at", as: Date?.self)
        )
    }

    private func one(_ query: SQLQueryString, on db: (any GatehouseDatabase)? = nil) async throws -> TopUpRow? {
        try await sql(db).raw(query).first().map(Self.row)
    }

    package func topUp(_ id: UUID, of account: UUID) async throws -> TopUpRow? {
        try await one("SELECT \(unsafeRaw: Self.columns) FROM wallet_topups WHERE id = \(bind: id) AND account_id = \(bind: account)")
    }

    package func topUp(id: UUID) async throws -> TopUpRow? {
        try await one("SELECT \(unsafeRaw: Self.columns) FROM wallet_topups WHERE id = \(bind: id)")
    }

    package func topUp(account: UUID, key: String) async throws -> TopUpRow? {
        try await one("SELECT \(unsafeRaw: Self.columns) FROM wallet_topups WHERE account_id = \(bind: account) AND idempotency_key = \(bind: key)")
    }

    package func topUp(provider: String, payment: String) async throws -> TopUpRow? {
        try await one("SELECT \(unsafeRaw: Self.columns) FROM wallet_topups WHERE provider = \(bind: provider) AND provider_payment_id = \(bind: payment)")
    }

    package func topUp(provider: String, paymentIntent: String) async throws -> TopUpRow? {
        try await one("SELECT \(unsafeRaw: Self.columns) FROM wallet_topups WHERE provider = \(bind: provider) AND payment_intent = \(bind: paymentIntent)")
    }

    /// The top-up that made a wallet movement, of that account.
    package func topUp(transfer: UUID, of account: UUID) async throws -> TopUpRow? {
        try await one("SELECT \(unsafeRaw: Self.columns) FROM wallet_topups WHERE transfer_id = \(bind: transfer) AND account_id = \(bind: account)")
    }

    /// Whose wallet a top-up movement credited (nil when the movement is not a top-up).
    package func account(ofTopUp transfer: UUID) async throws -> UUID? {
        let row = try await sql(nil).raw("""
            SELECT w.account_id FROM ledger_transactions t JOIN wallets w ON w.id = t.credit_wallet_id
            WHERE t.id = \(bind: transfer) AND t.kind = 'topup'
            """).first()
        return try row?.decode(column: "account_id", as: UUID?.self)
    }

    package func insert(_ row: TopUpRow) async throws {
        try await sql(nil).raw("""
            INSERT INTO wallet_topups (id, account_id, wallet_id, provider, amount, currency, state, idempotency_key, fingerprint, refunded, created_at, updated_at)
            VALUES (\(bind: row.id), \(bind: row.account), \(bind: row.wallet), \(bind: row.provider), \(bind: row.amount), \(bind: row.currency),
                    \(bind: row.state.rawValue), \(bind: row.key), \(bind: row.fingerprint), 0, \(bind: row.createdAt), \(bind: row.createdAt))
            """).run()
    }

    /// The provider's payment and page, once it answered (the same answer again changes nothing).
    package func setCheckout(_ id: UUID, payment: String, url: String, now: Date) async throws {
        try await sql(nil).raw("""
            UPDATE wallet_topups SET provider_payment_id = \(bind: payment), confirmation_url = \(bind: url), updated_at = \(bind: now)
            WHERE id = \(bind: id) AND state = 'pending'
            """).run()
    }

    /// Marks a pending (or expired: the provider's word wins) top-up paid; false when it was paid before.
    package func markPaid(_ id: UUID, paymentIntent: String?, now: Date, on tx: any GatehouseDatabase) async throws -> Bool {
        try await sql(tx).raw("""
            UPDATE wallet_topups SET state = 'paid', payment_intent = \(bind: paymentIntent), confirmation_url = NULL, paid_at = \(bind: now), updated_at = \(bind: now)
            WHERE id = \(bind: id) AND state <> 'paid' RETURNING id
            """).first() != nil
    }

    package func setTransfer(_ id: UUID, transfer: UUID, on tx: any GatehouseDatabase) async throws {
        try await sql(tx).raw("UPDATE wallet_topups SET transfer_id = \(bind: transfer) WHERE id = \(bind: id)").run()
    }

    /// A pending top-up whose page expired; false when it was not pending.
    package func markExpired(_ id: UUID, now: Date) async throws -> Bool {
        try await sql(nil).raw("""
            UPDATE wallet_topups SET state = 'expired', confirmation_url = NULL, updated_at = \(bind: now)
            WHERE id = \(bind: id) AND state = 'pending' RETURNING id
            """).first() != nil
    }

    /// Counts a refund against a paid top-up; false when it would refund more than was paid.
    package func addRefund(_ id: UUID, amount: Int64, now: Date, on tx: any GatehouseDatabase) async throws -> Bool {
        try await sql(tx).raw("""
            UPDATE wallet_topups SET refunded = refunded + \(bind: amount), updated_at = \(bind: now)
            WHERE id = \(bind: id) AND state = 'paid' AND refunded + \(bind: amount) <= amount RETURNING id
            """).first() != nil
    }
}
