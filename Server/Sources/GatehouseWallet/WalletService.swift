import FluentKit
import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehouseMessenger
import GatehousePlatform

/// Wallets and transfers (docs/wallet.md): attaching a wallet to a verified phone, the balance
/// and history, finding whom a phone, tag or email pays, sending money, and the operator's top-up.
package struct WalletService: WalletConcept {
    package let database: DatabaseProvider
    package let clock: GatehouseClock
    package let settings: GatehouseConfiguration.Wallet
    let rateLimiter: RateLimiter
    package let events: EventLog
    package let ledger: Ledger
    /// The chat messages that show payments.
    let dialogs: PaymentMessages
    package let directory: WalletDirectory
    let writes: IdempotentWrites
    /// Where credits and reversals are recorded (`audit()` is the ledger's own check).
    let auditLog: AuditLog
    /// Whether the server has a payment provider for top-ups (what `WalletInfo.topUps` tells the app).
    let topUpsOn: Bool
    /// Group commit for transfers: every transfer goes through it, a batch of one when it comes
    /// alone or `GATEHOUSE_WALLET_TRANSFERS_PER_COMMIT` is 1. Nil only in the service the batcher
    /// itself writes with.
    private(set) var batcher: TransferBatcher?
    /// The wallets of the batches being written one statement at a time (`writeTransfers`).
    let inFlight = WalletsInFlight()

    var store: WalletStore { directory.store }

    /// Remembers a refusal as the answer to its Idempotency-Key, so a retry of the same intent gets
    /// the same problem document; answers the one stored first when a concurrent retry won.
    package func rememberRefusal(_ call: IdempotentCall, _ answer: StoredAnswer) async throws -> StoredAnswer? {
        try await writes.remember(call, answer, on: database.db)
    }

    package init(database: DatabaseProvider, clock: GatehouseClock, settings: GatehouseConfiguration.Wallet, rateLimiter: RateLimiter, events: EventLog,
                 ledger: Ledger, dialogs: PaymentMessages, directory: WalletDirectory, writes: IdempotentWrites, audit: AuditLog, topUpsOn: Bool) {
        self.database = database
        self.clock = clock
        self.settings = settings
        self.rateLimiter = rateLimiter
        self.events = events
        self.ledger = ledger
        self.dialogs = dialogs
        self.directory = directory
        self.writes = writes
        self.auditLog = audit
        self.topUpsOn = topUpsOn
        self.batcher = nil
        // The batcher writes with this service as it is now, without a batcher of its own.
        self.batcher = TransferBatcher(writer: self)
    }

    // MARK: - the wallet

    /// Attaches my wallet to my verified phone; answers it and whether it is new.
    package func attach(_ account: AccountSnapshot) async throws -> (WalletInfo, created: Bool) {
        try requireVerifiedPhone(account)
        guard account.username != nil else {
            throw GatehouseError(.conflict, .tagRequired, LocalizedText("error.tagRequired.wallet"))
        }
        let created = try await store.createWallet(id: OrderedID.make(), account: account.id, phone: account.phone, now: clock.now())
        return (try await info(account), created)
    }

    /// My wallet.
    package func info(_ account: AccountSnapshot) async throws -> WalletInfo {
        let wallet = try await requireWallet(of: account.id)
        return WalletInfo(id: wallet.id, phone: account.phone ?? wallet.phone ?? "", currency: V1.Wallet.currency, balance: wallet.balance, createdAt: wallet.createdAt,
                          topUps: topUpsOn)
    }

    /// My wallet's movements, newest first.
    package func transactions(_ account: UUID, cursor: String?, limit: Int?) async throws -> WalletTransactionPage {
        let wallet = try await requireWallet(of: account)
        let size = min(max(limit ?? 50, 1), 200)
        var before: UUID?
        if let parts = try PageCursor.read(cursor, parts: 1) {
            guard let after = UUID(uuidString: parts[0]) else { throw PageCursor.invalid }
            before = after
        }
        // The newest page from the primary (it must show the balance just answered); older pages tolerate a little
        // lag, as the messenger's history does: a read replica's when there is one.
        let rows = before == nil
            ? try await store.movements(wallet: wallet.id, before: nil, limit: size + 1)
            : try await database.reading(for: account) { db in try await store.movements(wallet: wallet.id, before: before, limit: size + 1, on: db) }
        let people = try await parties(Set(rows.compactMap(\.otherAccount)))
        let page = rows.prefix(size)
        let items = page.map { row in
            WalletTransaction(id: row.transaction, kind: TransferKind(rawValue: row.kind) ?? .transfer, amount: row.amount,
                              counterparty: row.otherAccount.flatMap { people[$0] }, comment: row.comment, requestId: row.request,
                              balanceAfter: row.balanceAfter, createdAt: row.createdAt)
        }
        let next = rows.count > size ? page.last.map { PageCursor.make([$0.entry.uuidString]) } : nil
        return WalletTransactionPage(items: items, nextCursor: next)
    }

    /// Whom a reference pays: to show their name before paying. Counted against a budget, as it
    /// tells a phone's owner.
    package func recipient(viewer: UUID, _ reference: PartyReference) async throws -> WalletParty {
        try await rateLimiter.hit("wallet-lookups", key: viewer.uuidString, limit: settings.lookupsPerHour, window: 3_600)
        return try await resolve(reference, field: "to").party
    }

    // MARK: - transfers

    /// Sends money from my wallet: with the transfers that arrive with it in one transaction, or
    /// as a batch of one (`TransferBatcher`); what a batch does not settle goes `transferAlone`.
    package func transfer(_ viewer: AccountSnapshot, _ input: NewTransfer, call: IdempotentCall) async throws -> Idempotent<TransferResult> {
        var input = input
        input.comment = try cleanComment(input.comment)
        try requirePositive(input.amount)
        guard let batcher else { preconditionFailure("the batcher's own service sends no transfer") }
        return try await batcher.submit(TransferBatcher.Request(viewer: viewer, input: input, payee: try? directory.key(input.to, field: "to"), call: call))
    }

    /// A transfer the batch does not settle, in a transaction of its own (`input` checked by
    /// `transfer`): a retry (replayed), a refusal (said and remembered), a payee whose privacy
    /// decides. Its money moves through the same `Ledger` code as a batch's.
    package func transferAlone(_ viewer: AccountSnapshot, _ input: NewTransfer, call: IdempotentCall) async throws -> Idempotent<TransferResult> {
        try await writes.run(call) { tx, recorder in
            // The recipient and my wallet in one read.
            let (theirs, own) = try await resolve(input.to, field: "to", with: viewer.id, on: tx)
            guard let mine = own else { throw GatehouseError.notFound(.walletNotFound, "error.walletNotFound") }
            try checkTransfer(viewer, to: theirs, amount: input.amount)
            try await dialogs.checkMayPost(from: viewer.id, to: theirs.account, on: tx)
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
              requestKind: MoneyRequestKind? = nil, note: PaymentNote.Kind, on tx: any GatehouseDatabase, _ recorder: EventRecorder) async throws -> TransferResult {
        // The chat and its message first, then the wallets: the order a group commit takes them in
        // (`TransferBatcher`). A transfer that locked the wallets first and then waited for the
        // chat's row, while a batch held that row and waited for the wallets, was a deadlock.
        let id = OrderedID.make()
        _ = try await dialogs.post([PaymentMessages.Post(note: PaymentNote(kind: note, amount: amount, transferId: id, requestId: request, requestKind: requestKind),
                                                          comment: comment, author: payer.account, other: payee.account)], on: tx, recorder)
        let posting = try await ledger.post(Ledger.Movement(id: id, kind: kind, debit: payer.id, credit: payee.id, amount: amount, comment: comment,
                                                                 request: request), dailyLimit: settings.dailyLimit, on: tx)
        let transfer = Transfer(id: posting.id, kind: kind, from: payer.party, to: payee.party, amount: amount, comment: comment, requestId: request, createdAt: posting.createdAt)
        try recorder.add(.walletTransfer, to: payer.account, TransferResult(transfer: transfer, balance: posting.debitBalance))
        try recorder.add(.walletTransfer, to: payee.account, TransferResult(transfer: transfer, balance: posting.creditBalance), push: true)
        return TransferResult(transfer: transfer, balance: posting.debitBalance)
    }

    /// One transfer of mine (404 for anyone else's).
    package func transfer(_ id: UUID, viewer: UUID) async throws -> Transfer {
        guard let row = try await store.transfer(id, viewer: viewer) else { throw GatehouseError.notFound(.transferNotFound, "error.transferNotFound") }
        let people = try await parties(Set([row.payer, row.payee].compactMap { $0 }))
        guard let payee = row.payee, let to = people[payee] else { throw GatehouseError.notFound(.transferNotFound, "error.transferNotFound") }
        return Transfer(id: id, kind: TransferKind(rawValue: row.kind) ?? .transfer, from: row.payer.flatMap { people[$0] }, to: to,
                        amount: row.amount, comment: row.comment, requestId: row.request, createdAt: row.createdAt)
    }

    // MARK: - the operator

    /// Credits the wallet of a verified phone from the system wallet (`gatehouse wallet credit`):
    /// where a deployment's payment provider would put money in. `reference` (the provider's
    /// payment id) makes it idempotent: a second credit with the same reference answers the first
    /// and moves nothing; with another phone or amount it is refused.
    package func credit(phone raw: String, amount: Int64, reason: String?, reference: String? = nil,
                        by actor: AuditActor = .system(nil), origin: AuditOrigin = AuditOrigin()) async throws -> TransferResult {
        try requirePositive(amount)
        let comment = try cleanComment(reason)
        // Read before the transaction, so that its first statement is a write: on SQLite a
        // transaction that reads first cannot wait for another process's writer (the server's),
        // it fails at once with "database is locked".
        let wallet: WalletRow
        do {
            wallet = try await resolve(PartyReference(phone: raw), field: "phone")
        } catch let error as GatehouseError where error.code == .recipientNotFound {
            // The operator named a phone, not "a phone, tag or email": say which.
            throw GatehouseError(.notFound, .recipientNotFound, LocalizedText("error.creditPhoneNotFound", [String(raw.prefix(32))]), field: "phone")
        }
        if let reference, let earlier = try await credited(reference) {
            guard earlier.transfer.to.id == wallet.account, earlier.transfer.amount == amount else {
                throw GatehouseError(.unprocessable, .idempotencyKeyReused, LocalizedText("error.creditReferenceReused", [reference]))
            }
            return earlier
        }
        return try await events.write { tx, recorder in
            let posting = try await ledger.post(Ledger.Movement(kind: .topup, debit: Ledger.systemWalletID, credit: wallet.id, amount: amount,
                                                                     comment: comment, reference: reference), dailyLimit: nil, on: tx)
            let transfer = Transfer(id: posting.id, kind: .topup, from: nil, to: wallet.party, amount: amount, comment: comment,
                                    requestId: nil, createdAt: posting.createdAt)
            let result = TransferResult(transfer: transfer, balance: posting.creditBalance)
            try recorder.add(.walletTransfer, to: wallet.account, result, push: true)
            var detail = ["amount_kopecks": String(amount), "transfer": posting.id.uuidString.lowercased()]
            if let comment { detail["reason"] = comment }
            if let reference { detail["reference"] = reference }
            try await auditLog.record(
                AuditEvent(.walletCredited, by: actor, account: wallet.account, origin: origin, detail: detail), on: tx)
            return result
        }
    }

    /// Reverses a top-up of the account (an operator's action): its amount goes back to the system
    /// wallet in one balanced movement (`reversal`, the reason its comment), with its event, in one
    /// transaction. Idempotent: a top-up is reversed at most once (its reversal's reference is the
    /// top-up's id); asking again answers the first reversal. Refused when the wallet no longer
    /// holds the amount. The reversal's id and the balance after it.
    package func reverse(topUp id: UUID, of account: UUID, reason: String, by actor: AuditActor, origin: AuditOrigin = AuditOrigin()) async throws -> (reversal: UUID, balance: Int64, repeated: Bool) {
        let comment = try cleanComment(reason)
        guard let row = try await store.transfer(id, viewer: account), row.kind == TransferKind.topup.rawValue, row.payee == account else {
            throw GatehouseError.notFound(.transferNotFound, "error.transferNotFound")
        }
        let wallet = try await requireWallet(of: account)
        let reference = "reversal:" + id.uuidString.lowercased()
        if let earlier = try await store.reversal(reference: reference) {
            return (earlier.id, earlier.balanceAfter, true)
        }
        do {
            return try await events.write { tx, recorder in
                let posting = try await ledger.post(Ledger.Movement(kind: .reversal, debit: wallet.id, credit: Ledger.systemWalletID, amount: row.amount,
                                                                         comment: comment, reference: reference), dailyLimit: nil, on: tx)
                var detail = ["amount_kopecks": String(row.amount), "transfer": id.uuidString.lowercased(), "reversal": posting.id.uuidString.lowercased()]
                if let comment { detail["reason"] = comment }
                try await auditLog.record(
                    AuditEvent(.walletReversed, by: actor, account: account, origin: origin, detail: detail), on: tx)
                return (posting.id, posting.debitBalance, false)
            }
        } catch let refusal as Ledger.Refusal {
            throw Ledger.error(for: refusal)
        } catch where error.isConstraintViolation {
            // Reversed by a concurrent request: answer that one.
            guard let earlier = try await store.reversal(reference: reference) else { throw error }
            return (earlier.id, earlier.balanceAfter, true)
        }
    }

    /// The top-up made with an outside reference, with the balance it left.
    private func credited(_ reference: String) async throws -> TransferResult? {
        guard let credit = try await store.credit(reference: reference) else { return nil }
        let transfer = try await self.transfer(credit.transfer, viewer: credit.account)
        return TransferResult(transfer: transfer, balance: credit.balanceAfter)
    }

    /// The ledger's own check (`gatehouse wallet audit`): empty when every invariant holds.
    package func audit() async throws -> [String] {
        try await ledger.audit(on: database.db)
    }
}
