import FluentKit
import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehouseMessenger
import GatehousePlatform
import Metrics
import NIOConcurrencyHelpers
import NIOCore
import SQLKit

/// Group commit for transfers (`GroupCommit`; docs/wallet.md, "Group commit"): the transfers
/// that arrive while a batch is being written go in the next one, and a batch is one
/// transaction with a fixed number of statements however many transfers it holds: the
/// recipients (with their privacy and whether they have a push device) and payers in one read
/// (before the transaction), the keys claimed in one insert, then before the wallets are locked
/// the chats, movements and messages (`PaymentMessages`, `Ledger.record`) and the recipients'
/// pushes queued (`EventLog.pushNow`, `PushQueue`), and under the locks the wallets and the events' counters in one
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
        /// The key the payee is named by (`WalletDirectory.key`); nil for none, or one that is not
        /// well formed (such a transfer goes alone, which says why).
        package var payee: PartyKey?
        package var call: IdempotentCall

        package init(viewer: AccountSnapshot, input: NewTransfer, payee: PartyKey?, call: IdempotentCall) {
            self.viewer = viewer
            self.input = input
            self.payee = payee
            self.call = call
        }
    }

    private let commits: GroupCommit<Request, Idempotent<TransferResult>>

    /// `service` writes the batches (it has no batcher of its own).
    init(writer service: WalletService) {
        commits = GroupCommit(maxBatch: service.settings.transfersPerCommit, concurrency: service.settings.commitWriters,
                              backlog: service.settings.commitBacklog, database: service.database,
                              touches: Self.touches, write: { requests in
            try await service.writeTransfers(requests)
        }, single: { request in
            try await service.transferAlone(request.viewer, request.input, call: request.call)
        })
    }

    /// What a transfer touches, so that batches written at once take disjoint people
    /// (`GroupCommit`'s `touches`): the payer by their id, tag, phone and email, the payee by the
    /// phone, tag or email they are paid by. The same person named two ways in two batches (their
    /// email in one, their tag in the other) is not seen here; the later batch then waits for the
    /// other after its read (`WalletsInFlight`), as before. The payer's tag and email are taken as
    /// stored, which is as they were checked (the tag lower-cased, as its key is): normalising them
    /// again cost 3% of the server's time at half load, and a name stored otherwise would only
    /// miss a conflict that wait catches.
    package static func touches(_ request: Request) -> [Int] {
        let payer = request.viewer
        var keys = [payer.id.hashValue]
        if let tag = payer.username { keys.append(PartyKey.tag(tag.lowercased()).hashValue) }
        if let phone = payer.phone { keys.append(PartyKey.phone(phone).hashValue) }
        if let email = payer.email { keys.append(PartyKey.email(email).hashValue) }
        if let payee = request.payee { keys.append(payee.hashValue) }
        return keys
    }

    package func submit(_ request: Request) async throws -> Idempotent<TransferResult> {
        try await commits.submit(request)
    }
}

extension WalletService {
    /// One batch of transfers: a transaction for those it can answer, `alone` for the rest (the
    /// group commit then sends each of those through `transferAlone`). On PostgreSQL a batch is
    /// first written as one statement with no transaction (`writeAtOnce`; its payees' pushes are
    /// queued by the same statement, `PushQueue`); one that cannot finish that way is then written
    /// in a transaction.
    package func writeTransfers(_ requests: [TransferBatcher.Request]) async throws -> [BatchOutcome<Idempotent<TransferResult>>] {
        var outcomes = [BatchOutcome<Idempotent<TransferResult>>](repeating: .alone, count: requests.count)

        // 1. Whom each pays and the payers' wallets, in one read. A transfer the read cannot settle
        //    (nobody by that name, no wallet, an unverified phone, over the limit, to oneself, not
        //    enough money or over the day's limit as read, a key twice in the batch) goes alone,
        //    where it claims its key first and is refused.
        let keys = requests.map(\.payee)
        guard database.isPostgres else {
            // SQLite: one writer, nothing to wait for.
            let batch = try await read(requests, keys: keys)
            guard !batch.candidates.isEmpty else { return outcomes }
            TransferWays.transaction.increment()
            return try await writeInTransaction(batch.candidates, outcomes: outcomes, at: clock.now())
        }
        // A batch written as one statement waits for this process's batches that share a wallet with
        // it, and takes the balances that the batches finished since its read began left (`WalletsInFlight`).
        let ticket = inFlight.begin()
        var after: [UUID: Ledger.Balance]?
        defer { inFlight.leave(ticket, after: after) }
        var batch = try await read(requests, keys: keys)
        guard !batch.candidates.isEmpty else { return outcomes }
        func wallets() -> Set<UUID> { Set(batch.candidates.flatMap { [$0.payer.id, $0.payee.id] }) }
        guard settings.transfersInOneStatement, inFlight.mayTryOneStatement() else {
            // The transaction's way waits for nobody (its locks do), and tells those that wait for it
            // to read again.
            inFlight.hold(ticket, wallets())
            TransferWays.transaction.increment()
            return try await writeInTransaction(batch.candidates, outcomes: outcomes, at: clock.now())
        }
        func pairs() -> [(UUID, UUID)] { batch.candidates.map { ($0.payer.account, $0.payee.account) } }
        var chats = try await dialogs.existingChats(between: pairs(), on: database.db)
        let left = await inFlight.enter(ticket, wallets())
        if let left {
            if !left.isEmpty { batch = candidates(requests, keys: keys, found: batch.found, read: batch.read.merging(left) { $1 }) }
        } else {
            batch = try await read(requests, keys: keys)
        }
        guard !batch.candidates.isEmpty else { return outcomes }
        // A chat missing as read may have been made by a batch of the same people since (it would fail the statement).
        if left?.isEmpty != true, chats.lackAny(between: pairs()) { chats = try await dialogs.existingChats(between: pairs(), on: database.db) }
        let now = clock.now()
        do {
            let written = try await writeAtOnce(batch, chats: chats, at: now)
            after = written.after
            TransferWays.oneStatement.increment()
            for (index, result, answer) in written.answered { outcomes[index] = .done(.success(.fresh(result, answer: answer))) }
            return outcomes
        } catch is AtOnceMissed {
            TransferWays.again.increment()
            inFlight.statementFailed()
        } catch {
            // A remembered chat may be gone (deleted with one of its people): read them next time.
            if chats.remembered { dialogs.forget(between: pairs()) }
            throw error
        }
        // Still entered: the batches after this one that share a wallet wait for it, then read again.
        return try await writeInTransaction(batch.candidates, outcomes: outcomes, at: now)
    }

    /// The batch as read: its payees and payers (`found`), their wallets' balances, and the
    /// transfers it takes.
    private struct ReadBatch {
        var found: (named: [PartyKey: WalletRow], mine: [UUID: WalletRow])
        var read: [UUID: Ledger.Balance]
        var candidates: [Candidate]
    }

    private func read(_ requests: [TransferBatcher.Request], keys: [PartyKey?]) async throws -> ReadBatch {
        //    Payees who do not take messages from everyone are paid alone, where their privacy
        //    decides: whether they do is read in the same statement, and whether they have a push
        //    device (none: no push is queued).
        let found = try await resolve(keys.compactMap { $0 }, with: Array(Set(requests.map(\.viewer.id))),
                                      restricts: PaymentMessages.restricts, hasDevices: PushDevices.exist)
        var read: [UUID: Ledger.Balance] = [:]
        for wallet in Array(found.named.values) + Array(found.mine.values) {
            read[wallet.id] = Ledger.Balance(system: false, balance: wallet.balance, paidDay: wallet.paidDay, paidToday: wallet.paidToday)
        }
        return candidates(requests, keys: keys, found: found, read: read)
    }

    /// The transfers the batch takes, with the wallets' balances `read`.
    private func candidates(_ requests: [TransferBatcher.Request], keys: [PartyKey?], found: (named: [PartyKey: WalletRow], mine: [UUID: WalletRow]),
                            read: [UUID: Ledger.Balance]) -> ReadBatch {
        let day = Ledger.day(clock.now())
        var balances = read
        var candidates: [Candidate] = []
        var seen: Set<KeyRef> = []
        for (index, request) in requests.enumerated() {
            guard let key = keys[index], let payee = found.named[key], let payer = found.mine[request.viewer.id],
                  !payee.restricts,
                  (try? checkTransfer(request.viewer, to: payee, amount: request.input.amount)) != nil,
                  balances[payer.id]!.pay(request.input.amount, day: day, dailyLimit: settings.dailyLimit) == nil,
                  seen.insert(request.call.ref).inserted
            else { continue }
            balances[payee.id]!.receive(request.input.amount)
            candidates.append(Candidate(index: index, request: request, payer: payer, payee: payee))
        }
        return ReadBatch(found: found, read: read, candidates: candidates)
    }

    /// A batch in one statement with no transaction around it (PostgreSQL): every transfer's key
    /// claimed with its answer, the chats (made or shown where needed) with their newest message,
    /// the messages, the movements, the wallets locked in id order and written where they are still
    /// as read, the entries, the events' counters, events and notifications — the locks in the
    /// order of the transaction's way (keys, chats, wallets, counters: a union reads its parts one
    /// after another). Every balance is worked out before from the read, so the statement fails
    /// (`StatementCheck`), and nothing it wrote stays, when a key was used before, a chat was made
    /// meanwhile or a wallet changed since: `AtOnceMissed`.
    private func writeAtOnce(_ batch: ReadBatch, chats: PaymentMessages.DirectChats, at now: Date) async throws
        -> (answered: [(index: Int, result: TransferResult, answer: StoredAnswer)], after: [UUID: Ledger.Balance]) {
        let settled = batch.candidates
        let recorder = EventRecorder()
        let movements = settled.map { c in
            Ledger.Movement(id: OrderedID.make(), kind: .transfer, debit: c.payer.id, credit: c.payee.id, amount: c.request.input.amount,
                            comment: c.request.input.comment, request: nil)
        }
        let posts = zip(settled, movements).map { c, m in
            PaymentMessages.Post(note: PaymentNote(kind: .transfer, amount: m.amount, transferId: m.id, requestId: nil, requestKind: nil),
                                 comment: m.comment, author: c.payer.account, other: c.payee.account)
        }
        let messages = try dialogs.inStatement(posts, in: chats, recorder)
        guard let money = try ledger.inStatement(movements, read: batch.read, at: now, dailyLimit: settings.dailyLimit) else { throw AtOnceMissed() }
        var answered: [(index: Int, result: TransferResult, answer: StoredAnswer)] = []
        var answers: [(call: IdempotentCall, answer: StoredAnswer)] = []
        for ((c, movement), posting) in zip(zip(settled, movements), money.postings) {
            let transfer = Transfer(id: movement.id, kind: .transfer, from: c.payer.party, to: c.payee.party, amount: movement.amount,
                                    comment: movement.comment, requestId: nil, createdAt: now)
            let json = Data(transfer.jsonBuffer.readableBytesView)
            let body = Self.transferResult(json, balance: posting.debitBalance)
            if c.payee.hasDevices { recorder.push(.walletTransfer, to: c.payee.account, encoded: Self.transferResult(json, balance: nil)) }
            recorder.add(.walletTransfer, to: c.payer.account, encoded: body)
            recorder.add(.walletTransfer, to: c.payee.account, encoded: Self.transferResult(json, balance: posting.creditBalance))
            let answer = StoredAnswer(status: c.request.call.successStatus, body: body)
            answers.append((c.request.call, answer))
            answered.append((c.index, TransferResult(transfer: transfer, balance: posting.debitBalance), answer))
        }
        let counters = recorder.counts()
        let events = try self.events.inStatement(recorder, counters: "c")
        // The locks in the order of the transaction's way: the keys, the chats, the wallets, the counters.
        let parts = [StatementPart(name: "keys", statement: writes.keys.claimsAnswered(answers), rows: answers.count)] + messages.parts + money.parts
        let told: SQLQueryString = events.selected.map { "\nUNION ALL SELECT 'n', NULL, \($0)" } ?? ""
        var raised: [UUID: Int64] = [:]
        do {
            for row in try await database.db.preparedRows("""
                WITH \((parts.map(\.defined) + ["c AS (\(EventLog.raise(counters, postgres: true)))"] + events.parts).joined(separator: ",\n"))
                \(parts.map { $0.counted(Self.missed) }.joined(separator: "\nUNION ALL "))
                UNION ALL SELECT 'c', account_id, last_seq FROM c\(told)
                UNION ALL SELECT 'x', NULL, \(StatementCheck.require(events.written, Self.missed))
                """) where try row.decode(column: "part", as: String.self) == "c" {
                raised[try row.decode(column: "id", as: UUID.self)] = try row.decode(column: "value", as: Int64.self)
            }
        } catch where StatementCheck.failed(error, Self.missed) {
            throw AtOnceMissed()
        }
        dialogs.remember(messages.messages, of: posts)
        await self.events.announce(events, raisedTo: raised)
        return (answered, money.after)
    }

    /// What the one statement of `writeAtOnce` fails with when it cannot finish the batch.
    private static let missed = "a transfer's key was used, a chat made, or a wallet changed since the batch was read"

    /// The transfers `settled` (`candidates`) in one transaction; `outcomes` with theirs.
    private func writeInTransaction(_ settled: [Candidate], outcomes: [BatchOutcome<Idempotent<TransferResult>>], at now: Date) async throws
        -> [BatchOutcome<Idempotent<TransferResult>>] {
        var outcomes = outcomes
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

/// A batch the one statement of `writeAtOnce` did not write: it goes the transaction's way.
private struct AtOnceMissed: Error {}

/// `gatehouse_transfer_batches_total` by `way`: `one_statement` (`writeAtOnce`), `transaction` (a payee with a push
/// device, a chat to make or show, SQLite), and `again` (a batch the one statement could not finish, then written the
/// transaction's way: a key used before, a wallet changed since the read).
private enum TransferWays {
    static let oneStatement = Counter(label: "gatehouse_transfer_batches_total", dimensions: [("way", "one_statement")])
    static let transaction = Counter(label: "gatehouse_transfer_batches_total", dimensions: [("way", "transaction")])
    static let again = Counter(label: "gatehouse_transfer_batches_total", dimensions: [("way", "again")])
}

/// The wallets of the batches this process is writing on PostgreSQL (`writeTransfers`): a batch
/// that shares a wallet with one being written waits for it, and every batch takes, for its
/// wallets, the balances left by the batches that finished since its read began (those their
/// statements wrote), or reads them again when one of those cannot tell (it went the
/// transaction's way). Without it, a batch read while another was being written would nearly
/// always find a wallet changed since its read, and fail its statement. Other processes, and
/// transfers written otherwise (alone, money requests, top-ups), are not known here: the
/// statement's check on every balance covers them.
package final class WalletsInFlight: Sendable {
    /// A batch between its read and its end.
    package struct Ticket: Sendable {
        fileprivate let id: Int
        /// How many batches had finished when its read began.
        fileprivate let since: Int
    }

    private struct Batch {
        var since: Int
        /// Empty until it enters.
        var wallets: Set<UUID> = []
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private struct State {
        var next = 0
        /// Batches finished so far.
        var finished = 0
        var batches: [Int: Batch] = [:]
        /// What the batches that finished while others were between their read and their end left
        /// each wallet at (nil: not known), and when.
        var written: [UUID: (finished: Int, after: Ledger.Balance?)] = [:]
    }

    private let state = NIOLockedValueBox(State())

    /// After a batch's statement failed, the next this many batches go the transaction's way: a load
    /// where most statements would fail (retried keys, money moved by requests and top-ups in the
    /// same wallets) pays a failed statement on one batch in nine at most, and a load where they
    /// rarely fail loses little.
    package static let backOff = 8
    private let skipping = NIOLockedValueBox(0)

    package init() {}

    /// Whether a batch may try the one statement now (`backOff`).
    package func mayTryOneStatement() -> Bool {
        skipping.withLockedValue { skipping in
            guard skipping == 0 else {
                skipping -= 1
                return false
            }
            return true
        }
    }

    /// A batch's statement failed.
    package func statementFailed() {
        skipping.withLockedValue { $0 = Self.backOff }
    }

    /// Before a batch's read. Every ticket is left (`leave`), entered or not.
    package func begin() -> Ticket {
        state.withLockedValue { state in
            let ticket = Ticket(id: state.next, since: state.finished)
            state.next += 1
            state.batches[ticket.id] = Batch(since: ticket.since)
            return ticket
        }
    }

    /// Waits until no other batch that has entered shares a wallet with `wallets`, and enters.
    /// Answers the balances that the batches finished since the ticket's read began left its
    /// wallets at (empty: none wrote them); nil when one of them cannot tell: read them again.
    package func enter(_ ticket: Ticket, _ wallets: Set<UUID>) async -> [UUID: Ledger.Balance]? {
        while true {
            var left: [UUID: Ledger.Balance]?? = .none
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                state.withLockedValue { state in
                    if let (id, _) = state.batches.first(where: { $0.key != ticket.id && !$0.value.wallets.isDisjoint(with: wallets) }) {
                        state.batches[id]!.waiting.append(continuation)
                        return
                    }
                    state.batches[ticket.id]!.wallets = wallets
                    var after: [UUID: Ledger.Balance]? = [:]
                    for wallet in wallets {
                        guard let written = state.written[wallet], written.finished > ticket.since else { continue }
                        guard let balance = written.after else { after = nil; break }
                        after![wallet] = balance
                    }
                    left = .some(after)
                    continuation.resume()
                }
            }
            if case .some(let after) = left { return after }
        }
    }

    /// Registers the wallets a batch writes without waiting for anybody (the transaction's way,
    /// whose locks wait): batches that share one wait for it.
    package func hold(_ ticket: Ticket, _ wallets: Set<UUID>) {
        state.withLockedValue { $0.batches[ticket.id]?.wallets = wallets }
    }

    /// A batch's end: what its statement left its wallets at (nil: not known, or it wrote none).
    package func leave(_ ticket: Ticket, after: [UUID: Ledger.Balance]?) {
        let waiting = state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
            guard let batch = state.batches.removeValue(forKey: ticket.id) else { return [] }
            state.finished += 1
            // Kept while a batch whose read began before it may need it.
            if let oldest = state.batches.values.map(\.since).min() {
                for wallet in batch.wallets { state.written[wallet] = (state.finished, after?[wallet]) }
                state.written = state.written.filter { $0.value.finished > oldest }
            } else {
                state.written = [:]
            }
            return batch.waiting
        }
        for continuation in waiting { continuation.resume() }
    }
}
