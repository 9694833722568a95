import FluentKit
import Foundation
import GatehouseAPI
import SQLKit

/// Group commit for transfers (`GroupCommit`; docs/wallet.md, "Group commit"): the transfers
/// that arrive while a batch is being written go in the next one, and a batch is one
/// transaction with a fixed number of statements however many transfers it holds: the
/// recipients and payers in one read (before the transaction), the keys claimed in one insert,
/// the ledger's batch (`Ledger.post(_:)`), the chat messages (`PaymentMessages.post(_:)`), the
/// answers stored in one update and every event in one insert.
///
/// The batch takes the common case and leaves the rest to `WalletService.transferAlone`, after
/// it: a key used before (a retry: replayed there), a refusal (not enough money, a limit, an
/// unknown recipient: said and remembered there), the same key twice in one batch. Whatever
/// the batch answers is what the transfer on its own would have answered.
final class TransferBatcher: Sendable {
    struct Request: Sendable {
        var viewer: AccountSnapshot
        /// Checked by `WalletService.transfer` (comment cleaned, amount positive).
        var input: NewTransfer
        var call: IdempotentCall
    }

    private let commits: GroupCommit<Request, Idempotent<TransferResult>>

    init(core: WalletCore) {
        let service = WalletService(core: core, batched: false)
        commits = GroupCommit(maxBatch: core.settings.transfersPerCommit, concurrency: 2, write: { requests in
            try await service.write(requests)
        }, single: { request in
            try await service.transferAlone(request.viewer, request.input, call: request.call)
        })
    }

    func submit(_ request: Request) async throws -> Idempotent<TransferResult> {
        try await commits.submit(request)
    }
}

extension WalletService {
    /// One batch of transfers: a transaction for those it can answer, `alone` for the rest.
    fileprivate func write(_ requests: [TransferBatcher.Request]) async throws -> [BatchOutcome<Idempotent<TransferResult>>] {
        var outcomes = [BatchOutcome<Idempotent<TransferResult>>](repeating: .alone, count: requests.count)

        // 1. Whom each pays and the payers' wallets, in one read. A transfer the read cannot settle
        //    (nobody by that name, no wallet, an unverified phone, over the limit, to oneself, a
        //    key twice in the batch) goes alone, where it claims its key first and is refused.
        let keys = requests.map { try? PartyKey($0.input.to, field: "to", defaultCountryCode: core.defaultCountryCode) }
        let found = try await resolve(keys.compactMap { $0 }, with: Array(Set(requests.map(\.viewer.id))))
        var candidates: [(index: Int, payer: WalletRow, payee: WalletRow)] = []
        var seen: Set<KeyRef> = []
        for (index, request) in requests.enumerated() {
            guard let key = keys[index] ?? nil, let payee = found.named[key], let payer = found.mine[request.viewer.id],
                  (try? checkTransfer(request.viewer, from: payer, to: payee, amount: request.input.amount)) != nil,
                  seen.insert(request.call.ref).inserted
            else { continue }
            candidates.append((index, payer, payee))
        }
        guard !candidates.isEmpty else { return outcomes }
        let settled = candidates

        let answered = try await core.events.write { tx, recorder -> [(index: Int, result: TransferResult, answer: StoredAnswer)] in
            // 2. The keys: a key used before is not claimed (its call replays it alone).
            let claimed = try await core.keys.claimNew(settled.map { requests[$0.index].call }, on: tx)
            let mine = settled.filter { claimed.contains(requests[$0.index].call.ref) }
            guard !mine.isEmpty else { return [] }

            // 3. The chats (made hidden where missing), before the wallets: every payment takes them in this order.
            let chats = try await core.dialogs.chats(between: mine.map { ($0.payer.account, $0.payee.account) }, on: tx)

            // 4. The money. A refused movement gives its key back and goes alone, which says why.
            var writes = CombinedWrites()
            let results = try await core.ledger.post(mine.map { c in
                Ledger.Movement(kind: .transfer, debit: c.payer.id, credit: c.payee.id, amount: requests[c.index].input.amount,
                                comment: requests[c.index].input.comment, request: nil)
            }, dailyLimit: settings.dailyLimit, on: tx, into: &writes)
            var posted: [(index: Int, payer: WalletRow, payee: WalletRow, posting: Ledger.Posting)] = []
            var refused: [IdempotentCall] = []
            for (c, result) in zip(mine, results) {
                switch result {
                case .success(let posting): posted.append((c.index, c.payer, c.payee, posting))
                case .failure: refused.append(requests[c.index].call)
                }
            }
            core.keys.release(refused, into: &writes)

            // 5. The chat messages, the answers and the events; every write above and here in one go.
            _ = try core.dialogs.post(posted.map { p in
                PaymentMessages.Post(note: PaymentNote(kind: .transfer, amount: requests[p.index].input.amount, transferId: p.posting.id,
                                                       requestId: nil, requestKind: nil),
                                     comment: requests[p.index].input.comment, author: p.payer.account, other: p.payee.account)
            }, in: chats, into: &writes, recorder)
            var answers: [(call: IdempotentCall, answer: StoredAnswer)] = []
            var answered: [(index: Int, result: TransferResult, answer: StoredAnswer)] = []
            for p in posted {
                let request = requests[p.index]
                let transfer = Transfer(id: p.posting.id, kind: .transfer, from: p.payer.party, to: p.payee.party, amount: request.input.amount,
                                        comment: request.input.comment, requestId: nil, createdAt: p.posting.createdAt)
                let result = TransferResult(transfer: transfer, balance: p.posting.debitBalance)
                let body = try V1JSON.encoder.encode(result)
                recorder.add(.walletTransfer, to: p.payer.account, encoded: body)
                try recorder.add(.walletTransfer, to: p.payee.account, TransferResult(transfer: transfer, balance: p.posting.creditBalance))
                let answer = StoredAnswer(status: request.call.successStatus, body: body)
                answers.append((request.call, answer))
                answered.append((p.index, result, answer))
            }
            core.keys.complete(answers, into: &writes)
            try await writes.run(on: tx as! any SQLDatabase)
            return answered
        }
        for (index, result, answer) in answered { outcomes[index] = .done(.success(.fresh(result, answer: answer))) }
        return outcomes
    }
}
