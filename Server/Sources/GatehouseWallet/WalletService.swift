import FluentKit
import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehouseMessenger
import GatehousePlatform
import SQLKit

/// Wallets and transfers (docs/wallet.md): attaching a wallet to a verified phone, the balance
/// and history, finding whom a phone, tag or email pays, sending money, and the operator's top-up.
package struct WalletService: WalletConcept {
    package let core: WalletCore
    /// Group commit for transfers (nil: every transfer on its own, the batcher's own fallback).
    package let batcher: TransferBatcher?

    /// Remembers a refusal as the answer to its Idempotency-Key, so a retry of the same intent gets
    /// the same problem document; answers the one stored first when a concurrent retry won.
    package func rememberRefusal(_ call: IdempotentCall, _ answer: StoredAnswer) async throws -> StoredAnswer? {
        try await core.keys.remember(call, answer, on: core.database.db)
    }

    package init(core: WalletCore, batched: Bool = true) {
        self.core = core
        self.batcher = batched && core.settings.transfersPerCommit > 1 ? TransferBatcher(core: core) : nil
    }

    // MARK: - the wallet

    /// Attaches my wallet to my verified phone; answers it and whether it is new.
    package func attach(_ account: AccountSnapshot) async throws -> (WalletInfo, created: Bool) {
        try requireVerifiedPhone(account)
        guard account.username != nil else {
            throw GatehouseError(.conflict, .tagRequired, LocalizedText("error.tagRequired.wallet"))
        }
        let id = OrderedID.make()
        let created = try await sql(database.db).raw("""
            INSERT INTO wallets (id, account_id, kind, phone, currency, balance, created_at)
            VALUES (\(bind: id), \(bind: account.id), 'person', \(bind: account.phone), \(bind: V1.Wallet.currency), 0, \(bind: clock.now()))
            ON CONFLICT (account_id) DO NOTHING RETURNING id
            """).first() != nil
        return (try await info(account), created)
    }

    /// My wallet.
    package func info(_ account: AccountSnapshot) async throws -> WalletInfo {
        let wallet = try await requireWallet(of: account.id)
        return WalletInfo(id: wallet.id, phone: account.phone ?? wallet.phone ?? "", currency: V1.Wallet.currency, balance: wallet.balance, createdAt: wallet.createdAt)
    }

    /// My wallet's movements, newest first.
    package func transactions(_ account: UUID, cursor: String?, limit: Int?) async throws -> WalletTransactionPage {
        let wallet = try await requireWallet(of: account)
        let size = min(max(limit ?? 50, 1), 200)
        var condition: SQLQueryString = "e.wallet_id = \(bind: wallet.id)"
        if let parts = try PageCursor.read(cursor, parts: 1) {
            guard let after = UUID(uuidString: parts[0]) else { throw PageCursor.invalid }
            condition += " AND e.id < \(bind: after)"
        }
        let rows = try await sql(database.db).raw("""
            SELECT e.id AS entry_id, e.amount AS entry_amount, e.balance_after, t.id, t.kind, t.comment, t.request_id, t.created_at,
                   other.account_id AS other_account
            FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id
            JOIN wallets other ON other.id = CASE WHEN t.debit_wallet_id = e.wallet_id THEN t.credit_wallet_id ELSE t.debit_wallet_id END
            WHERE \(condition) ORDER BY e.id DESC LIMIT \(literal: size + 1)
            """).all()
        let others = Set(try rows.compactMap { try $0.decode(column: "other_account", as: UUID?.self) })
        let people = try await parties(others)
        var items: [WalletTransaction] = []
        var last: UUID?
        for row in rows.prefix(size) {
            last = try row.decode(column: "entry_id", as: UUID.self)
            items.append(WalletTransaction(
                id: try row.decode(column: "id", as: UUID.self),
                kind: TransferKind(rawValue: try row.decode(column: "kind", as: String.self)) ?? .transfer,
                amount: try row.decode(column: "entry_amount", as: Int64.self),
                counterparty: try row.decode(column: "other_account", as: UUID?.self).flatMap { people[$0] },
                comment: try row.decode(column: "comment", as: String?.self), requestId: try row.decode(column: "request_id", as: UUID?.self),
                balanceAfter: try row.decode(column: "balance_after", as: Int64.self), createdAt: try row.decode(column: "created_at", as: Date.self)
            ))
        }
        let next = rows.count > size ? last.map { PageCursor.make([$0.uuidString]) } : nil
        return WalletTransactionPage(items: items, nextCursor: next)
    }

    /// Whom a reference pays: to show their name before paying. Counted against a budget, as it
    /// tells a phone's owner.
    package func recipient(viewer: UUID, _ reference: PartyReference) async throws -> WalletParty {
        try await core.rateLimiter.hit("wallet-lookups", key: viewer.uuidString, limit: settings.lookupsPerHour, window: 3_600)
        return try await resolve(reference, field: "to").party
    }

    // MARK: - transfers

    /// Sends money from my wallet: with the transfers that arrive with it in one transaction
    /// (`TransferBatcher`), or on its own.
    package func transfer(_ viewer: AccountSnapshot, _ input: NewTransfer, call: IdempotentCall) async throws -> Idempotent<TransferResult> {
        var input = input
        input.comment = try cleanComment(input.comment)
        try requirePositive(input.amount)
        if let batcher { return try await batcher.submit(TransferBatcher.Request(viewer: viewer, input: input, call: call)) }
        return try await transferAlone(viewer, input, call: call)
    }

    /// One transfer in a transaction of its own (`input` checked by `transfer`).
    package func transferAlone(_ viewer: AccountSnapshot, _ input: NewTransfer, call: IdempotentCall) async throws -> Idempotent<TransferResult> {
        try await idempotent(call) { tx, recorder in
            // The recipient and my wallet in one read.
            let (theirs, own) = try await resolve(input.to, field: "to", with: viewer.id, on: tx)
            guard let mine = own else { throw GatehouseError.notFound(.walletNotFound, "error.walletNotFound") }
            try checkTransfer(viewer, to: theirs, amount: input.amount)
            try await core.dialogs.checkMayPost(from: viewer.id, to: theirs.account, on: tx)
            return try await move(.transfer, from: mine, to: theirs, amount: input.amount, comment: input.comment, request: nil,
                                  note: .transfer, on: tx, recorder)
        }
    }

    /// What a transfer from `viewer`'s wallet to `payee` must meet: a verified phone, an amount
    /// within the limit, somebody else.
    package func checkTransfer(_ viewer: AccountSnapshot, to payee: WalletRow, amount: Int64) throws {
        try requireVerifiedPhone(viewer)
        try checkAmount(amount)
        guard payee.account != viewer.id else {
            throw GatehouseError(.unprocessable, .notYourself, LocalizedText("error.payYourself"), field: "to")
        }
    }

    /// Moves money between two people's wallets in `tx`, posts the chat message that shows it
    /// (`note`, authored by the payer) and tells both: answers the transfer with the payer's balance.
    package func move(_ kind: TransferKind, from payer: WalletRow, to payee: WalletRow, amount: Int64, comment: String?, request: UUID?,
              requestKind: MoneyRequestKind? = nil, note: PaymentNote.Kind, on tx: any Database, _ recorder: EventRecorder) async throws -> TransferResult {
        // The chat first, then the wallets: the order a group commit takes them in.
        let chats = try await core.dialogs.chats(between: [(payer.account, payee.account)], on: tx)
        let posting = try await core.ledger.post(kind: kind, debit: payer.id, credit: payee.id, amount: amount, comment: comment, request: request,
                                                 dailyLimit: settings.dailyLimit, on: tx)
        let transfer = Transfer(id: posting.id, kind: kind, from: payer.party, to: payee.party, amount: amount, comment: comment, requestId: request, createdAt: posting.createdAt)
        try await core.dialogs.post([PaymentMessages.Post(note: PaymentNote(kind: note, amount: amount, transferId: posting.id, requestId: request, requestKind: requestKind),
                                                          comment: comment, author: payer.account, other: payee.account)], in: chats, on: tx, recorder)
        try recorder.add(.walletTransfer, to: payer.account, TransferResult(transfer: transfer, balance: posting.debitBalance))
        try recorder.add(.walletTransfer, to: payee.account, TransferResult(transfer: transfer, balance: posting.creditBalance))
        return TransferResult(transfer: transfer, balance: posting.debitBalance)
    }

    /// One transfer of mine (404 for anyone else's).
    package func transfer(_ id: UUID, viewer: UUID) async throws -> Transfer {
        guard let row = try await sql(database.db).raw("""
            SELECT t.id, t.kind, t.amount, t.comment, t.request_id, t.created_at, d.account_id AS payer, c.account_id AS payee
            FROM ledger_transactions t JOIN wallets d ON d.id = t.debit_wallet_id JOIN wallets c ON c.id = t.credit_wallet_id
            WHERE t.id = \(bind: id) AND (d.account_id = \(bind: viewer) OR c.account_id = \(bind: viewer))
            """).first() else { throw GatehouseError.notFound(.transferNotFound, "error.transferNotFound") }
        let payer = try row.decode(column: "payer", as: UUID?.self)
        let payee = try row.decode(column: "payee", as: UUID?.self)
        let people = try await parties(Set([payer, payee].compactMap { $0 }))
        guard let payee, let to = people[payee] else { throw GatehouseError.notFound(.transferNotFound, "error.transferNotFound") }
        return Transfer(
            id: id, kind: TransferKind(rawValue: try row.decode(column: "kind", as: String.self)) ?? .transfer, from: payer.flatMap { people[$0] }, to: to,
            amount: try row.decode(column: "amount", as: Int64.self), comment: try row.decode(column: "comment", as: String?.self),
            requestId: try row.decode(column: "request_id", as: UUID?.self), createdAt: try row.decode(column: "created_at", as: Date.self)
        )
    }

    // MARK: - the operator

    /// Credits the wallet of a verified phone from the system wallet (`gatehouse wallet credit`):
    /// where a deployment's payment provider would put money in. `reference` (the provider's
    /// payment id) makes it idempotent: a second credit with the same reference answers the first
    /// and moves nothing; with another phone or amount it is refused.
    package func credit(phone raw: String, amount: Int64, reason: String?, reference: String? = nil) async throws -> TransferResult {
        try requirePositive(amount)
        let comment = try cleanComment(reason)
        // Read before the transaction, so that its first statement is a write: on SQLite a
        // transaction that reads first cannot wait for another process's writer (the server's),
        // it fails at once with "database is locked".
        let wallet = try await resolve(PartyReference(phone: raw), field: "phone")
        if let reference, let earlier = try await credited(reference) {
            guard earlier.transfer.to.id == wallet.account, earlier.transfer.amount == amount else {
                throw GatehouseError(.unprocessable, .idempotencyKeyReused, LocalizedText("error.creditReferenceReused", [reference]))
            }
            return earlier
        }
        return try await core.events.write { tx, recorder in
            let posting = try await core.ledger.post(kind: .topup, debit: Ledger.systemWalletID, credit: wallet.id, amount: amount, comment: comment,
                                                     request: nil, dailyLimit: nil, reference: reference, on: tx)
            let transfer = Transfer(id: posting.id, kind: .topup, from: nil, to: wallet.party, amount: amount, comment: comment,
                                    requestId: nil, createdAt: posting.createdAt)
            let result = TransferResult(transfer: transfer, balance: posting.creditBalance)
            try recorder.add(.walletTransfer, to: wallet.account, result)
            return result
        }
    }

    /// The top-up made with an outside reference, with the balance it left.
    private func credited(_ reference: String) async throws -> TransferResult? {
        guard let row = try await sql(database.db).raw("""
            SELECT t.id, e.balance_after, w.account_id FROM ledger_transactions t
            JOIN ledger_entries e ON e.transaction_id = t.id AND e.wallet_id = t.credit_wallet_id JOIN wallets w ON w.id = t.credit_wallet_id
            WHERE t.reference = \(bind: reference)
            """).first() else { return nil }
        let transfer = try await self.transfer(try row.decode(column: "id", as: UUID.self), viewer: try row.decode(column: "account_id", as: UUID.self))
        return TransferResult(transfer: transfer, balance: try row.decode(column: "balance_after", as: Int64.self))
    }

    /// The ledger's own check (`gatehouse wallet audit`): empty when every invariant holds.
    package func audit() async throws -> [String] {
        try await core.ledger.audit(on: database.db)
    }
}
