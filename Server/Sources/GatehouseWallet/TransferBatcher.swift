import FluentKit
import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehouseMessenger
import NIOCore

/// Group commit for transfers (`GroupCommit`; docs/wallet.md, "Group commit"): the transfers
/// that arrive while a batch is being written go in the next one, and a batch is one
/// transaction with a fixed number of statements however many transfers it holds: the
/// recipients (with their privacy and whether they have a push device) and payers in one read
/// (before the transaction), the keys claimed in one insert, then before the wallets are locked
/// the chats, movements and messages (`PaymentMessages`, `Ledger.record`) and the recipients'
/// pushes (`EventLog.pushNow`), and under the locks the wallets and the events' counters in one
/// statement (`Ledger.post(_:at:dailyLimit:raising:on:into:)`), then the balances, entries,
/// answers, events and notifications in one statement.
///
/// Every transfer comes here, alone or not: a transfer that arrives alone (or with
/// `GATEHOUSE_WALLET_TRANSFERS_PER_COMMIT=1`) is a batch of one through the same code. The batch
/// takes the common case and leaves the rest to `WalletService.transferAlone`, after it: a key used before (a retry: replayed there), a refusal as read (not enough money, a
/// limit, an unknown recipient: said and remembered there), a recipient who restricts their
/// messages (their privacy decides there), the same key twice in one batch; a
/// refusal found under the locks sends the whole batch there. Whatever the batch answers is
/// what the transfer on its own would have answered.
package final class TransferBatcher: Sendable {
    package struct Request: Sendable {
        package var viewer: AccountSnapshot
        /// Checked by `WalletService.transfer` (comment cleaned, amount positive).
        package var input: NewTransfer
        package var call: IdempotentCall

        package init(viewer: AccountSnapshot, input: NewTransfer, call: IdempotentCall) {
            self.viewer = viewer
            self.input = input
            self.call = call
        }
    }

    private let commits: GroupCommit<Request, Idempotent<TransferResult>>

    /// `service` writes the batches (it has no batcher of its own).
    init(writer service: WalletService) {
        commits = GroupCommit(maxBatch: service.settings.transfersPerCommit, concurrency: service.settings.commitWriters, database: service.database, write: { requests in
            try await service.writeTransfers(requests)
        }, single: { request in
            try await service.transferAlone(request.viewer, request.input, call: request.call)
        })
    }

    package func submit(_ request: Request) async throws -> Idempotent<TransferResult> {
        try await commits.submit(request)
    }
}

extension WalletService {
    /// One batch of transfers: a transaction for those it can answer, `alone` for the rest (the
    /// group commit then sends each of those through `transferAlone`).
    package func writeTransfers(_ requests: [TransferBatcher.Request]) async throws -> [BatchOutcome<Idempotent<TransferResult>>] {
        var outcomes = [BatchOutcome<Idempotent<TransferResult>>](repeating: .alone, count: requests.count)

        // 1. Whom each pays and the payers' wallets, in one read. A transfer the read cannot settle
        //    (nobody by that name, no wallet, an unverified phone, over the limit, to oneself, not
        //    enough money or over the day's limit as read, a key twice in the batch) goes alone,
        //    where it claims its key first and is refused.
        let keys = requests.map { try? directory.key($0.input.to, field: "to") }
        //    Payees who do not take messages from everyone are paid alone, where their privacy
        //    decides: whether they do is read in the same statement, and whether they have a push
        //    device (none: no push is written, and no device read in the transaction).
        let found = try await resolve(keys.compactMap { $0 }, with: Array(Set(requests.map(\.viewer.id))),
                                      restricts: PaymentMessages.restricts, hasDevices: PushDevices.exist)
        let now = clock.now()
        var balances: [UUID: Ledger.Balance] = [:]
        for wallet in Array(found.named.values) + Array(found.mine.values) {
            balances[wallet.id] = Ledger.Balance(system: false, balance: wallet.balance, paidDay: wallet.paidDay, paidToday: wallet.paidToday)
        }
        var candidates: [Candidate] = []
        var seen: Set<KeyRef> = []
        for (index, request) in requests.enumerated() {
            guard let key = keys[index] ?? nil, let payee = found.named[key], let payer = found.mine[request.viewer.id],
                  !payee.restricts,
                  (try? checkTransfer(request.viewer, to: payee, amount: request.input.amount)) != nil,
                  balances[payer.id]!.pay(request.input.amount, day: Ledger.day(now), dailyLimit: settings.dailyLimit) == nil,
                  seen.insert(request.call.ref).inserted
            else { continue }
            balances[payee.id]!.receive(request.input.amount)
            candidates.append(Candidate(index: index, request: request, payer: payer, payee: payee))
        }
        guard !candidates.isEmpty else { return outcomes }
        let settled = candidates

        let answered = try await events.write { tx, recorder -> [(index: Int, result: TransferResult, answer: StoredAnswer)] in
            // 2. The keys: a key used before is not claimed (its call replays it alone). First, in a
            //    statement of their own: every transfer, batched or alone, takes its key, then its
            //    chat, then the wallets. (When the claim went with the later writes, a batch held a
            //    chat it had just made while waiting for a key: docs/decisions.md, "eighth look".)
            let claimed = try await writes.keys.claimNew(settled.map(\.request.call), on: tx)
            let mine = settled.filter { claimed.contains($0.request.call.ref) }
            guard !mine.isEmpty else { return [] }

            // 3. What needs no balance, before the wallets are locked: the chats (made hidden where
            //    missing), the movements' rows, the chat messages, the transfers' JSON.
            let chats = try await dialogs.chats(between: mine.map { ($0.payer.account, $0.payee.account) }, on: tx)
            let movements = mine.map { c in
                Ledger.Movement(id: OrderedID.make(), kind: .transfer, debit: c.payer.id, credit: c.payee.id, amount: c.request.input.amount,
                                comment: c.request.input.comment, request: nil)
            }
            var early = CombinedWrites(for: tx)
            ledger.record(movements, at: now, into: &early)
            _ = try dialogs.post(zip(mine, movements).map { c, m in
                PaymentMessages.Post(note: PaymentNote(kind: .transfer, amount: m.amount, transferId: m.id, requestId: nil, requestKind: nil),
                                     comment: m.comment, author: c.payer.account, other: c.payee.account)
            }, in: chats, into: &early, recorder)
            try await early.run(on: tx)
            let transfers = zip(mine, movements).map { c, m in
                let transfer = Transfer(id: m.id, kind: .transfer, from: c.payer.party, to: c.payee.party, amount: m.amount,
                                        comment: m.comment, requestId: nil, createdAt: now)
                return (value: transfer, json: Data(transfer.jsonBuffer.readableBytesView))
            }
            // The payees' pushes, before the locks: they need the transfer, not the balance.
            for (c, transfer) in zip(mine, transfers) where c.payee.hasDevices {
                recorder.push(.walletTransfer, to: c.payee.account, encoded: Self.transferResult(transfer.json, balance: nil))
            }
            try await events.pushNow(recorder, on: tx)

            // 4. The money, under the wallets' locks: the balances, the entries, the answers and
            //    the events. A movement refused now (another transaction spent the money since the
            //    read) fails the batch, and every transfer of it goes alone. The events' counters
            //    are raised with the lock: the messages' events and a `wallet.transfer` to each side.
            var counters = recorder.counts()
            for c in mine { counters[c.payer.account, default: 0] += 1; counters[c.payee.account, default: 0] += 1 }
            var late = CombinedWrites(for: tx)
            let (results, raised) = try await ledger.post(movements, at: now, dailyLimit: settings.dailyLimit, raising: counters, on: tx, into: &late)
            var answers: [(call: IdempotentCall, answer: StoredAnswer)] = []
            var answered: [(index: Int, result: TransferResult, answer: StoredAnswer)] = []
            for ((c, transfer), result) in zip(zip(mine, transfers), results) {
                guard case .success(let posting) = result else { throw BatchRefused() }
                let body = Self.transferResult(transfer.json, balance: posting.debitBalance)
                recorder.add(.walletTransfer, to: c.payer.account, encoded: body)
                recorder.add(.walletTransfer, to: c.payee.account, encoded: Self.transferResult(transfer.json, balance: posting.creditBalance))
                let answer = StoredAnswer(status: c.request.call.successStatus, body: body)
                answers.append((c.request.call, answer))
                answered.append((c.index, TransferResult(transfer: transfer.value, balance: posting.debitBalance), answer))
            }
            writes.keys.complete(answers, into: &late)
            try events.flush(recorder, raised: counters, to: raised, into: &late)
            try await late.run(on: tx)
            return answered
        }
        for (index, result, answer) in answered { outcomes[index] = .done(.success(.fresh(result, answer: answer))) }
        return outcomes
    }

    /// `TransferResult` as `V1.encoder` writes it (keys sorted: `balance`, `transfer`; no
    /// spaces), from the transfer's own JSON: the balance is all that the wallets' locks add, so
    /// the rest is encoded before them. With no balance, `{"transfer": …}`: what a payee's push is
    /// written from before the locks (the push tells the transfer, not the balance).
    package static func transferResult(_ transfer: Data, balance: Int64?) -> Data {
        var object = JSONObjectWriter(capacity: transfer.count + 32)
        if let balance { object.int("balance", balance) }
        object.json("transfer", transfer)
        return Data(object.finish().readableBytesView)
    }
}

/// A transfer a batch takes, with both wallets as read.
private struct Candidate: Sendable {
    var index: Int
    var request: TransferBatcher.Request
    var payer: WalletRow
    var payee: WalletRow
}

/// A movement refused under the wallets' locks: the batch rolls back and its transfers go alone.
private struct BatchRefused: Error {}
