import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import SQLKit

/// The double-entry ledger (docs/wallet.md, "The ledger"). Every movement is one
/// `ledger_transactions` row and two `ledger_entries` rows that sum to zero, written in the
/// caller's database transaction together with the balances they change. A balance is kept in
/// step with its entries: each entry records the balance after it, and the checker proves that
/// every balance equals the sum of its entries.
///
/// One write path: a movement is written by `record` (its row, before any wallet is locked) and
/// `post(_:at:…)` (the wallets, locked in the order of their ids and read in one statement; the
/// funds and the day's limit checked under the locks; the balances and entries). A group commit
/// of transfers calls them with its batch; everything else (a transfer on its own, a request's
/// payment, a top-up, a reversal) with a batch of one through `post(_:dailyLimit:on:)`. The
/// locks are taken in one order everywhere: the caller's rows (keys, chats, messages), the
/// movements' rows, the wallets in id order, then the events' counters; so two transfers between
/// the same wallets in opposite directions never wait on each other in a cycle, and no
/// read-then-write race can overdraw a wallet, on either engine.
package struct Ledger: Sendable {
    /// The system wallet top-ups come from; its balance is minus all money issued.
    package static let systemWalletID = UUID(uuidString: "00000000-0000-7000-8000-000000000001")!

    package let clock: GatehouseClock

    /// A posted movement: its id, instant and the two balances after it.
    package struct Posting: Sendable {
        package var id: UUID
        package var createdAt: Date
        package var debitBalance: Int64
        package var creditBalance: Int64
    }

    /// Why a posting was refused.
    package enum Refusal: Error, Equatable {
        case insufficientFunds
        case dailyLimitExceeded(limit: Int64)
    }

    /// Moves one movement's amount from its debit wallet to its credit wallet, in `db` (the
    /// caller's transaction): a batch of one through `record` and `post(_:at:…)`, the one code that
    /// writes a movement. Throws the `Refusal` (the caller's transaction then rolls back the
    /// movement's row with it); a wallet that is not there is `walletNotFound`. `dailyLimit`, when
    /// given, caps what the debit wallet pays out in one day (UTC) including this movement.
    package func post(_ movement: Movement, dailyLimit: Int64?, on db: any GatehouseDatabase) async throws -> Posting {
        let now = clock.now()
        // The movement's row first: the transaction writes before it reads the wallets (on SQLite
        // a transaction that reads first cannot wait for another process's writer).
        var early = CombinedWrites(for: db)
        record([movement], at: now, into: &early)
        try await early.run(on: db)
        var late = CombinedWrites(for: db)
        let results: [Result<Posting, Refusal>]
        do {
            results = try await post([movement], at: now, dailyLimit: dailyLimit, prepared: false, on: db, into: &late).results
        } catch LedgerError.walletMissing {
            throw GatehouseError.notFound(.walletNotFound, "error.walletNotFound")
        }
        let posting = try results[0].get()
        // Plain statements, not prepared ones: not a hot path, and postgres-nio can crash the
        // process when PostgreSQL closes the connection under a prepared statement's rows
        // (`PreparedStatements`, "A closing connection").
        try await late.run(on: db, prepared: false)
        return posting
    }

    /// One movement of a batch; its id is made before it is posted.
    package struct Movement: Sendable {
        package var id: UUID
        package var kind: TransferKind
        package var debit: UUID
        package var credit: UUID
        package var amount: Int64
        package var comment: String?
        package var request: UUID?
        /// An outside reference (a payment provider's payment id, a reversed top-up's): at most one movement each.
        package var reference: String?

        package init(id: UUID = OrderedID.make(), kind: TransferKind, debit: UUID, credit: UUID, amount: Int64, comment: String? = nil,
                     request: UUID? = nil, reference: String? = nil) {
            self.id = id
            self.kind = kind
            self.debit = debit
            self.credit = credit
            self.amount = amount
            self.comment = comment
            self.request = request
            self.reference = reference
        }
    }

    /// A wallet's balance and its day's payouts, as a batch applies movements to them.
    package struct Balance: Sendable {
        package var system: Bool
        package var balance: Int64
        package var paidDay: Int64
        package var paidToday: Int64
        package var changed = false

        package init(system: Bool, balance: Int64, paidDay: Int64, paidToday: Int64) {
            (self.system, self.balance, self.paidDay, self.paidToday) = (system, balance, paidDay, paidToday)
        }

        /// The rule `post` applies in SQL, applied here: the funds (the system wallet may go
        /// below zero), then the day's payouts including this one within `dailyLimit`.
        package mutating func pay(_ amount: Int64, day: Int64, dailyLimit: Int64?) -> Refusal? {
            guard system || balance >= amount else { return .insufficientFunds }
            let paid = paidDay == day ? paidToday + amount : amount
            if let dailyLimit, paid > dailyLimit { return .dailyLimitExceeded(limit: dailyLimit) }
            (balance, paidDay, paidToday, changed) = (balance - amount, day, paid, true)
            return nil
        }

        package mutating func receive(_ amount: Int64) {
            balance += amount
            changed = true
        }
    }

    /// The movements' own rows, added to `writes`: they carry no balance, so they are written
    /// before the wallets are locked, and the locks are held for less.
    package func record(_ movements: [Movement], at now: Date, into writes: inout CombinedWrites) {
        guard !movements.isEmpty else { return }
        writes.add(Self.rows(of: movements, at: now, postgres: writes.postgres))
    }

    /// The insert of the movements' rows (`record`).
    private static func rows(of movements: [Movement], at now: Date, postgres: Bool) -> SQLQueryString {
        var rows = RowSet(count: movements.count)
        rows.add("id", "uuid", movements.map(\.id))
        rows.add("kind", "text", movements.map(\.kind.rawValue))
        rows.add("debit_wallet_id", "uuid", movements.map(\.debit))
        rows.add("credit_wallet_id", "uuid", movements.map(\.credit))
        rows.add("amount", "bigint", movements.map(\.amount))
        rows.add("comment", "text", movements.map(\.comment))
        rows.add("request_id", "uuid", movements.map(\.request))
        rows.add("reference", "text", movements.map(\.reference))
        return rows.insert(into: "ledger_transactions", constants: [("created_at", "\(bind: now)")], postgres: postgres)
    }

    /// Applies recorded movements (`record`) to their wallets in `db`, in order: every wallet
    /// they touch locked in id order and read (one statement), each movement applied in turn to
    /// what the ones before it left (`Balance.pay`, the rule of `post`), and the balances (one
    /// update) and entries (one insert) added to `writes`, which the caller runs. A refused
    /// movement changes nothing and does not stop the others. Call it only after the
    /// transaction has written (on SQLite a transaction that reads first cannot wait for another
    /// process's writer): a batch claims its keys first.
    ///
    /// `counters`: the events' counters to raise with the lock (`EventLog.raise`), after the
    /// wallets, in the same statement on PostgreSQL: the batch's events are known in number
    /// before its balances are, and the round trip is one less while the wallets are held.
    /// Answers their new values.
    /// `prepared` (PostgreSQL): the locking read as a prepared statement, for group commits.
    package func post(_ movements: [Movement], at now: Date, dailyLimit: Int64?, raising counters: [UUID: Int64] = [:], prepared: Bool = true,
              on db: any GatehouseDatabase, into writes: inout CombinedWrites) async throws -> (results: [Result<Posting, Refusal>], counters: [UUID: Int64]) {
        guard !movements.isEmpty else { return ([], [:]) }
        let ids = Set(movements.flatMap { [$0.debit, $0.credit] }).sorted()
        var wallets: [UUID: Balance] = [:]
        var raised: [UUID: Int64] = [:]
        func read(_ row: any SQLRow) throws {
            wallets[try row.decode(column: "id", as: UUID.self)] = Balance(
                system: try row.decode(column: "kind", as: String.self) == "system", balance: try row.decode(column: "balance", as: Int64.self),
                paidDay: try row.decode(column: "paid_day", as: Int64.self), paidToday: try row.decode(column: "paid_today", as: Int64.self))
        }
        func readCounter(_ row: any SQLRow) throws {
            raised[try row.decode(column: "account_id", as: UUID.self)] = try row.decode(column: "last_seq", as: Int64.self)
        }
        let select: SQLQueryString = "SELECT id, kind, balance, paid_day, paid_today FROM wallets WHERE \(SQLQueryString.isAny("id", ids, postgres: db.isPostgres))"
        if !db.isPostgres {
            // SQLite: the transaction holds the only writer's lock already.
            for row in try await db.raw(select).all() { try read(row) }
            if !counters.isEmpty { for row in try await db.raw(EventLog.raise(counters, postgres: false)).all() { try readCounter(row) } }
        } else if counters.isEmpty {
            // NO KEY: the rows' ids stay, so other transactions' foreign-key checks on them do not wait.
            let locking: SQLQueryString = "\(select) ORDER BY id FOR NO KEY UPDATE"
            for row in try await prepared ? db.preparedRows(locking) : db.raw(locking).all() { try read(row) }
        } else {
            // The wallets are locked first, then the counters (the order a transfer on its own takes
            // them in): the union reads its first part before it starts the second.
            for row in try await db.preparedRows("""
                WITH w AS (\(select) ORDER BY id FOR NO KEY UPDATE), c AS (\(EventLog.raise(counters, postgres: true)))
                SELECT id, kind, balance, paid_day, paid_today, NULL::uuid AS account_id, NULL::bigint AS last_seq FROM w
                UNION ALL SELECT NULL, NULL, NULL, NULL, NULL, account_id, last_seq FROM c
                """) {
                if try row.decode(column: "id", as: UUID?.self) != nil { try read(row) } else { try readCounter(row) }
            }
        }
        let applied = try Self.apply(movements, to: wallets, at: now, dailyLimit: dailyLimit)
        guard !applied.posted.isEmpty else { return (applied.results, raised) }
        let changed = ids.filter { applied.wallets[$0]!.changed }
        writes.add(Self.balances(changed, applied.wallets).update("wallets", matching: ["id"], postgres: writes.postgres))
        writes.add(Self.entries(applied.posted, at: now, postgres: writes.postgres))
        return (applied.results, raised)
    }

    /// The rows of the wallets' new balances and day's payouts.
    private static func balances(_ ids: [UUID], _ wallets: [UUID: Balance]) -> RowSet {
        var rows = RowSet(count: ids.count)
        rows.add("id", "uuid", ids)
        rows.add("balance", "bigint", ids.map { wallets[$0]!.balance })
        rows.add("paid_day", "bigint", ids.map { wallets[$0]!.paidDay })
        rows.add("paid_today", "bigint", ids.map { wallets[$0]!.paidToday })
        return rows
    }

    /// Movements applied in turn to the wallets as they were (`Balance.pay`, `receive`).
    private struct Applied {
        var results: [Result<Posting, Refusal>] = []
        var posted: [(movement: Movement, posting: Posting)] = []
        var wallets: [UUID: Balance]
    }

    private static func apply(_ movements: [Movement], to wallets: [UUID: Balance], at now: Date, dailyLimit: Int64?) throws -> Applied {
        let day = Self.day(now)
        var applied = Applied(wallets: wallets)
        for movement in movements {
            precondition(movement.amount > 0 && movement.debit != movement.credit)
            guard var debit = applied.wallets[movement.debit], var credit = applied.wallets[movement.credit] else { throw LedgerError.walletMissing }
            if let refusal = debit.pay(movement.amount, day: day, dailyLimit: dailyLimit) {
                applied.results.append(.failure(refusal))
                continue
            }
            applied.wallets[movement.debit] = debit
            credit.receive(movement.amount)
            applied.wallets[movement.credit] = credit
            let posting = Posting(id: movement.id, createdAt: now, debitBalance: debit.balance, creditBalance: credit.balance)
            applied.posted.append((movement, posting))
            applied.results.append(.success(posting))
        }
        return applied
    }

    /// The entries of posted movements: two each, the debit, then the credit.
    private static func entries(_ posted: [(movement: Movement, posting: Posting)], at now: Date, postgres: Bool) -> SQLQueryString {
        var rows = RowSet(count: posted.count * 2)
        rows.add("id", "uuid", posted.flatMap { _ in [OrderedID.make(), OrderedID.make()] })
        rows.add("transaction_id", "uuid", posted.flatMap { [$0.posting.id, $0.posting.id] })
        rows.add("wallet_id", "uuid", posted.flatMap { [$0.movement.debit, $0.movement.credit] })
        rows.add("amount", "bigint", posted.flatMap { [-$0.movement.amount, $0.movement.amount] })
        rows.add("balance_after", "bigint", posted.flatMap { [$0.posting.debitBalance, $0.posting.creditBalance] })
        return rows.insert(into: "ledger_entries", constants: [("created_at", "\(bind: now)")], postgres: postgres)
    }

    /// Movements posted by one statement with no transaction around it (PostgreSQL; a group
    /// commit's `writeAtOnce`), from the wallets as read before it: the statement's parts
    /// (`StatementPart`), to run in this order after those that lock the caller's rows — the
    /// movements' rows, the wallets locked in id order, their balances and day's payouts written
    /// only where they are still as read, the entries. Nil when a movement is refused as read (the
    /// caller goes the transaction's way, which says why). A wallet that changed since the read
    /// updates no row, and the statement fails there: its balances were worked out from the read.
    package struct InStatement {
        package let postings: [Posting]
        package let parts: [StatementPart]
        /// The wallets' balances and day's payouts once it is written.
        package let after: [UUID: Balance]
    }

    package func inStatement(_ movements: [Movement], read wallets: [UUID: Balance], at now: Date, dailyLimit: Int64?) throws -> InStatement? {
        guard !movements.isEmpty else { return nil }
        let applied = try Self.apply(movements, to: wallets, at: now, dailyLimit: dailyLimit)
        guard applied.posted.count == movements.count else { return nil }
        let ids = Set(movements.flatMap { [$0.debit, $0.credit] }).sorted()
        let changed = ids.filter { applied.wallets[$0]!.changed }
        var balances = Self.balances(changed, applied.wallets)
        balances.add("was_balance", "bigint", changed.map { wallets[$0]!.balance })
        balances.add("was_day", "bigint", changed.map { wallets[$0]!.paidDay })
        balances.add("was_today", "bigint", changed.map { wallets[$0]!.paidToday })
        return InStatement(
            postings: applied.posted.map(\.posting),
            parts: [
                StatementPart(name: "movements", statement: "\(Self.rows(of: movements, at: now, postgres: true)) RETURNING 1", rows: movements.count),
                StatementPart(name: "wallets_locked", statement: "SELECT id FROM wallets WHERE id = ANY(\(bind: ids)) ORDER BY id FOR NO KEY UPDATE",
                              rows: ids.count),
                StatementPart(name: "wallets_moved", statement: """
                    UPDATE wallets SET balance = r.balance, paid_day = r.paid_day, paid_today = r.paid_today FROM \(balances.table("r"))
                    WHERE wallets.id = r.id AND wallets.balance = r.was_balance AND wallets.paid_day = r.was_day AND wallets.paid_today = r.was_today
                    RETURNING wallets.id
                    """, rows: changed.count),
                StatementPart(name: "entries", statement: "\(Self.entries(applied.posted, at: now, postgres: true)) RETURNING 1",
                              rows: applied.posted.count * 2),
            ],
            after: Dictionary(uniqueKeysWithValues: changed.map { id in
                var balance = applied.wallets[id]!
                balance.changed = false
                return (id, balance)
            }))
    }

    /// The day a payout counts towards: days since 1970 in UTC.
    package static func day(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 / 86_400).rounded(.down)) }

    /// What `gatehouse wallet audit` and the checker verify: every transaction balanced with two
    /// entries, every balance equal to the sum of its entries, no person's balance below zero,
    /// and all balances summing to zero (money is only ever moved, never made or lost).
    package func audit(on db: any GatehouseDatabase) async throws -> [String] {
        var problems: [String] = []
        for row in try await db.raw("""
            SELECT t.id, COUNT(e.id) AS legs, COALESCE(SUM(e.amount), 0) AS total FROM ledger_transactions t
            LEFT JOIN ledger_entries e ON e.transaction_id = t.id GROUP BY t.id HAVING COUNT(e.id) <> 2 OR COALESCE(SUM(e.amount), 0) <> 0
            """).all() {
            problems.append("transaction \(try row.decode(column: "id", as: UUID.self)) is unbalanced")
        }
        for row in try await db.raw("""
            SELECT w.id, w.kind, w.balance, CAST(COALESCE((SELECT SUM(e.amount) FROM ledger_entries e WHERE e.wallet_id = w.id), 0) AS BIGINT) AS total
            FROM wallets w
            """).all() {
            let id = try row.decode(column: "id", as: UUID.self)
            let balance = try row.decode(column: "balance", as: Int64.self)
            if balance != (try row.decode(column: "total", as: Int64.self)) { problems.append("wallet \(id): balance \(balance) is not the sum of its entries") }
            if balance < 0, try row.decode(column: "kind", as: String.self) != "system" { problems.append("wallet \(id): negative balance \(balance)") }
        }
        let total = try await db.raw("SELECT CAST(COALESCE(SUM(balance), 0) AS BIGINT) AS total FROM wallets").first(decodingColumn: "total", as: Int64.self) ?? 0
        if total != 0 { problems.append("the balances sum to \(total), not 0") }
        return problems
    }

    package init(clock: GatehouseClock) {
        self.clock = clock
    }
}

package enum LedgerError: Error {
    /// A batch named a wallet that is not there (its movements are then made one by one, which say why).
    case walletMissing
}
