import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import SQLKit

/// The wallet's queries (docs/architecture.md, "Data access"): wallets and the people they name,
/// the ledger read back as movements and transfers, and money requests. `Ledger` writes postings
/// and `IdempotencyKeys` the keys' answers; the services decide, and this reads and writes. A
/// write that belongs to a caller's transaction takes it (`on:`).
package struct WalletStore: Sendable {
    package let database: DatabaseProvider
    /// Where avatars are served, for the parties' `avatarUrl`.
    package let publicURL: String

    package init(database: DatabaseProvider, publicURL: String) {
        self.database = database
        self.publicURL = publicURL
    }

    private func sql(_ db: (any GatehouseDatabase)?) -> any SQLDatabase { db ?? database.db }

    // MARK: Wallets and parties

    /// Opens a person's wallet on their phone; false when they have one.
    package func createWallet(id: UUID, account: UUID, phone: String?, now: Date) async throws -> Bool {
        try await sql(nil).raw("""
            INSERT INTO wallets (id, account_id, kind, phone, currency, balance, created_at)
            VALUES (\(bind: id), \(bind: account), 'person', \(bind: phone), \(bind: V1.Wallet.currency), 0, \(bind: now))
            ON CONFLICT (account_id) DO NOTHING RETURNING id
            """).first() != nil
    }

    private static let walletColumns: SQLQueryString =
        "w.id, w.account_id, w.phone, w.balance, w.paid_day, w.paid_today, w.created_at, a.username, a.first_name, a.last_name, a.avatar_id"

    /// An account's wallet; nil when it has none or is being deleted (nothing moves to or from it then).
    package func wallet(of account: UUID, on db: (any GatehouseDatabase)? = nil) async throws -> WalletRow? {
        try await sql(db).raw("""
            SELECT \(Self.walletColumns) FROM wallets w JOIN accounts a ON a.id = w.account_id
            WHERE w.account_id = \(bind: account) AND a.deletion_requested_at IS NULL
            """).first().map(walletRow)
    }

    /// A wallet by its id whatever its account's state, and whether that account is being deleted
    /// or erased (a payment that arrives then goes back to the card: `TopUpService`).
    package func walletAnyState(_ id: UUID, on db: (any GatehouseDatabase)? = nil) async throws -> (wallet: WalletRow, deleting: Bool)? {
        guard let row = try await sql(db).raw("""
            SELECT \(Self.walletColumns), a.deletion_requested_at FROM wallets w JOIN accounts a ON a.id = w.account_id WHERE w.id = \(bind: id)
            """).first() else { return nil }
        return (try walletRow(row), try row.decode(column: "deletion_requested_at", as: Date?.self) != nil)
    }

    /// The wallets the keys name (a tag, a verified phone, a confirmed email), and those of `mine`;
    /// none of an account being deleted. `restricts` and `hasDevices`, when given, are conditions
    /// on the account's id, read into the rows' fields of those names in the same statement.
    package func wallets(named keys: [PartyKey], mine: [UUID], restricts: ((SQLQueryString) -> SQLQueryString)? = nil,
                         hasDevices: ((SQLQueryString) -> SQLQueryString)? = nil, on db: (any GatehouseDatabase)? = nil) async throws -> (named: [PartyKey: WalletRow], mine: [UUID: WalletRow]) {
        var tags: [String] = [], phones: [String] = [], emails: [String] = []
        for key in Set(keys) {
            switch key {
            case .tag(let tag): tags.append(tag)
            case .phone(let phone): phones.append(phone)
            case .email(let email): emails.append(email)
            }
        }
        let sql = sql(db)
        let postgres = sql.isPostgres
        var conditions: [SQLQueryString] = []
        if !tags.isEmpty { conditions.append(.isAny("a.username_key", tags, postgres: postgres)) }
        if !phones.isEmpty { conditions.append("(\(SQLQueryString.isAny("a.phone", phones, postgres: postgres)) AND a.phone_verified_at IS NOT NULL)") }
        if !emails.isEmpty { conditions.append("(\(SQLQueryString.isAny("a.email", emails, postgres: postgres)) AND a.email_confirmed_at IS NOT NULL)") }
        if !mine.isEmpty { conditions.append(.isAny("a.id", mine, postgres: postgres)) }
        guard !conditions.isEmpty else { return ([:], [:]) }
        let rows = try await sql.preparedRows("""
            SELECT \(Self.walletColumns), a.username_key, a.phone AS account_phone, a.phone_verified_at, a.email, a.email_confirmed_at,
                   \(restricts?("a.id") ?? "FALSE") AS restricts, \(hasDevices?("a.id") ?? "TRUE") AS has_devices
            FROM accounts a JOIN wallets w ON w.account_id = a.id
            WHERE (\(conditions.joined(separator: " OR "))) AND a.deletion_requested_at IS NULL
            """)
        let mineSet = Set(mine)
        var named: [PartyKey: WalletRow] = [:], own: [UUID: WalletRow] = [:]
        for row in rows {
            var wallet = try walletRow(row)
            wallet.restricts = try row.decode(column: "restricts", as: Bool.self)
            wallet.hasDevices = try row.decode(column: "has_devices", as: Bool.self)
            if let tag = try row.decode(column: "username_key", as: String?.self) { named[.tag(tag)] = wallet }
            if let phone = try row.decode(column: "account_phone", as: String?.self), try row.decode(column: "phone_verified_at", as: Date?.self) != nil {
                named[.phone(phone)] = wallet
            }
            if let email = try row.decode(column: "email", as: String?.self), try row.decode(column: "email_confirmed_at", as: Date?.self) != nil {
                named[.email(email)] = wallet
            }
            if mineSet.contains(wallet.account) { own[wallet.account] = wallet }
        }
        return (named.filter { keys.contains($0.key) }, own)
    }

    /// The people these accounts are, as a payment shows them.
    package func parties(_ ids: Set<UUID>, on db: (any GatehouseDatabase)? = nil) async throws -> [UUID: WalletParty] {
        guard !ids.isEmpty else { return [:] }
        let rows = try await sql(db).raw("""
            SELECT id, username, first_name, last_name, avatar_id FROM accounts WHERE id IN (\(binds: Array(ids)))
            """).all()
        var found: [UUID: WalletParty] = [:]
        for row in rows {
            let id = try row.decode(column: "id", as: UUID.self)
            found[id] = try party(row, id: id)
        }
        return found
    }

    private func walletRow(_ row: any SQLRow) throws -> WalletRow {
        let account = try row.decode(column: "account_id", as: UUID.self)
        return WalletRow(
            id: try row.decode(column: "id", as: UUID.self), account: account, phone: try row.decode(column: "phone", as: String?.self),
            balance: try row.decode(column: "balance", as: Int64.self), paidDay: try row.decode(column: "paid_day", as: Int64.self),
            paidToday: try row.decode(column: "paid_today", as: Int64.self), createdAt: try row.decode(column: "created_at", as: Date.self),
            party: try party(row, id: account)
        )
    }

    private func party(_ row: any SQLRow, id: UUID) throws -> WalletParty {
        WalletParty(
            id: id, tag: try row.decode(column: "username", as: String?.self)?.lowercased(),
            firstName: try row.decode(column: "first_name", as: String?.self), lastName: try row.decode(column: "last_name", as: String?.self),
            avatarUrl: try row.decode(column: "avatar_id", as: UUID?.self).map { publicURL + V1.Accounts.avatarImage.path(id: $0) }
        )
    }

    // MARK: The ledger read back

    /// A wallet's movement: one ledger entry with its transaction and the other side's account.
    package struct Movement: Sendable {
        package var entry: UUID
        package var transaction: UUID
        package var kind: String
        package var amount: Int64
        package var balanceAfter: Int64
        package var comment: String?
        package var request: UUID?
        package var createdAt: Date
        package var otherAccount: UUID?
    }

    /// A wallet's movements, newest first, before the entry `before`.
    package func movements(wallet: UUID, before: UUID?, limit: Int, on db: (any GatehouseDatabase)? = nil) async throws -> [Movement] {
        var condition: SQLQueryString = "e.wallet_id = \(bind: wallet)"
        if let before { condition += " AND e.id < \(bind: before)" }
        let rows = try await sql(db).raw("""
            SELECT e.id AS entry_id, e.amount AS entry_amount, e.balance_after, t.id, t.kind, t.comment, t.request_id, t.created_at,
                   other.account_id AS other_account
            FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id
            JOIN wallets other ON other.id = CASE WHEN t.debit_wallet_id = e.wallet_id THEN t.credit_wallet_id ELSE t.debit_wallet_id END
            WHERE \(condition) ORDER BY e.id DESC LIMIT \(literal: limit)
            """).all()
        return try rows.map { row in
            Movement(
                entry: try row.decode(column: "entry_id", as: UUID.self), transaction: try row.decode(column: "id", as: UUID.self),
                kind: try row.decode(column: "kind", as: String.self), amount: try row.decode(column: "entry_amount", as: Int64.self),
                balanceAfter: try row.decode(column: "balance_after", as: Int64.self), comment: try row.decode(column: "comment", as: String?.self),
                request: try row.decode(column: "request_id", as: UUID?.self), createdAt: try row.decode(column: "created_at", as: Date.self),
                otherAccount: try row.decode(column: "other_account", as: UUID?.self)
            )
        }
    }

    /// A posting as its sides see it (the system wallet has no account).
    package struct PostedTransfer: Sendable {
        package var kind: String
        package var amount: Int64
        package var comment: String?
        package var request: UUID?
        package var createdAt: Date
        package var payer: UUID?
        package var payee: UUID?
    }

    /// A posting `viewer` is a side of; nil otherwise.
    package func transfer(_ id: UUID, viewer: UUID) async throws -> PostedTransfer? {
        guard let row = try await sql(nil).raw("""
            SELECT t.id, t.kind, t.amount, t.comment, t.request_id, t.created_at, d.account_id AS payer, c.account_id AS payee
            FROM ledger_transactions t JOIN wallets d ON d.id = t.debit_wallet_id JOIN wallets c ON c.id = t.credit_wallet_id
            WHERE t.id = \(bind: id) AND (d.account_id = \(bind: viewer) OR c.account_id = \(bind: viewer))
            """).first() else { return nil }
        return PostedTransfer(
            kind: try row.decode(column: "kind", as: String.self), amount: try row.decode(column: "amount", as: Int64.self),
            comment: try row.decode(column: "comment", as: String?.self), request: try row.decode(column: "request_id", as: UUID?.self),
            createdAt: try row.decode(column: "created_at", as: Date.self), payer: try row.decode(column: "payer", as: UUID?.self),
            payee: try row.decode(column: "payee", as: UUID?.self)
        )
    }

    /// The top-up made with an outside reference: its id, whom it credited and the balance it left.
    /// A reversal made with this reference, with the balance it left its wallet.
    package func reversal(reference: String) async throws -> (id: UUID, balanceAfter: Int64)? {
        guard let row = try await sql(nil).raw("""
            SELECT t.id, e.balance_after FROM ledger_transactions t
            JOIN ledger_entries e ON e.transaction_id = t.id AND e.wallet_id = t.debit_wallet_id
            WHERE t.reference = \(bind: reference)
            """).first() else { return nil }
        return (try row.decode(column: "id", as: UUID.self), try row.decode(column: "balance_after", as: Int64.self))
    }

    package func credit(reference: String) async throws -> (transfer: UUID, account: UUID, balanceAfter: Int64)? {
        guard let row = try await sql(nil).raw("""
            SELECT t.id, e.balance_after, w.account_id FROM ledger_transactions t
            JOIN ledger_entries e ON e.transaction_id = t.id AND e.wallet_id = t.credit_wallet_id JOIN wallets w ON w.id = t.credit_wallet_id
            WHERE t.reference = \(bind: reference)
            """).first() else { return nil }
        return (try row.decode(column: "id", as: UUID.self), try row.decode(column: "account_id", as: UUID.self),
                try row.decode(column: "balance_after", as: Int64.self))
    }

    // MARK: Money requests

    /// A money request as stored: its sides are account ids, its state as written (expiry is
    /// the service's reading).
    package struct StoredRequest: Sendable {
        package var id: UUID
        package var kind: String
        package var state: String
        package var requester: UUID
        package var payer: UUID
        package var amount: Int64
        package var comment: String?
        package var createdAt: Date
        package var updatedAt: Date
        package var expiresAt: Date
        package var payment: UUID?
        package var repayment: UUID?
    }

    private static let requestColumns: SQLQueryString = """
        r.id, r.kind, r.state, r.requester_id, r.payer_id, r.amount, r.comment, r.created_at, r.updated_at, r.expires_at, r.payment_id, r.repayment_id
        """

    private static func request(_ row: any SQLRow) throws -> StoredRequest {
        StoredRequest(
            id: try row.decode(column: "id", as: UUID.self), kind: try row.decode(column: "kind", as: String.self),
            state: try row.decode(column: "state", as: String.self), requester: try row.decode(column: "requester_id", as: UUID.self),
            payer: try row.decode(column: "payer_id", as: UUID.self), amount: try row.decode(column: "amount", as: Int64.self),
            comment: try row.decode(column: "comment", as: String?.self), createdAt: try row.decode(column: "created_at", as: Date.self),
            updatedAt: try row.decode(column: "updated_at", as: Date.self), expiresAt: try row.decode(column: "expires_at", as: Date.self),
            payment: try row.decode(column: "payment_id", as: UUID?.self), repayment: try row.decode(column: "repayment_id", as: UUID?.self)
        )
    }

    /// A request `viewer` is a side of; nil otherwise.
    package func request(_ id: UUID, viewer: UUID, on db: (any GatehouseDatabase)? = nil) async throws -> StoredRequest? {
        try await sql(db).raw("""
            SELECT \(Self.requestColumns) FROM money_requests r WHERE r.id = \(bind: id) AND (r.requester_id = \(bind: viewer) OR r.payer_id = \(bind: viewer))
            """).first().map(Self.request)
    }

    /// Which of a viewer's requests a page shows.
    package struct RequestFilter: Sendable {
        /// To the viewer, from them, or both (nil).
        package var direction: MoneyRequestDirection?
        /// The state as written; `open` and `expired` read the expiry at `now`.
        package var state: MoneyRequestState?
        package var with: UUID?
        package var now: Date

        package init(direction: MoneyRequestDirection?, state: MoneyRequestState?, with: UUID?, now: Date) {
            (self.direction, self.state, self.with, self.now) = (direction, state, with, now)
        }
    }

    /// A viewer's requests, newest first, before `before`.
    package func requests(viewer: UUID, _ filter: RequestFilter, before: UUID?, limit: Int) async throws -> [StoredRequest] {
        var condition: SQLQueryString = switch filter.direction {
        case .incoming?: "r.payer_id = \(bind: viewer)"
        case .outgoing?: "r.requester_id = \(bind: viewer)"
        case nil: "(r.payer_id = \(bind: viewer) OR r.requester_id = \(bind: viewer))"
        }
        if let other = filter.with { condition += " AND (r.payer_id = \(bind: other) OR r.requester_id = \(bind: other))" }
        switch filter.state {
        case .open?: condition += " AND r.state = 'open' AND r.expires_at > \(bind: filter.now)"
        case .expired?: condition += " AND r.state = 'open' AND r.expires_at <= \(bind: filter.now)"
        case let other?: condition += " AND r.state = \(bind: other.rawValue)"
        case nil: break
        }
        if let before { condition += " AND r.id < \(bind: before)" }
        return try await sql(nil).raw("SELECT \(Self.requestColumns) FROM money_requests r WHERE \(condition) ORDER BY r.id DESC LIMIT \(literal: limit)")
            .all().map(Self.request)
    }

    package func insertRequest(id: UUID, kind: MoneyRequestKind, requester: UUID, payer: UUID, amount: Int64, comment: String?,
                               now: Date, expiresAt: Date, on tx: any GatehouseDatabase) async throws {
        try await sql(tx).raw("""
            INSERT INTO money_requests (id, kind, state, requester_id, payer_id, amount, comment, created_at, updated_at, expires_at)
            VALUES (\(bind: id), \(bind: kind.rawValue), 'open', \(bind: requester), \(bind: payer), \(bind: amount),
                    \(bind: comment), \(bind: now), \(bind: now), \(bind: expiresAt))
            """).run()
    }

    /// Moves a request from one state to another if it is still in the first (and, with
    /// `notExpiredAt`, not expired then); false when it was not.
    package func moveRequest(_ id: UUID, from: MoneyRequestState, to: MoneyRequestState, now: Date, notExpiredAt: Bool, on tx: any GatehouseDatabase) async throws -> Bool {
        let notExpired: SQLQueryString = notExpiredAt ? " AND expires_at > \(bind: now)" : ""
        return try await sql(tx).raw("""
            UPDATE money_requests SET state = \(bind: to.rawValue), updated_at = \(bind: now)
            WHERE id = \(bind: id) AND state = \(bind: from.rawValue)\(notExpired) RETURNING id
            """).first() != nil
    }

    /// The transfer that paid (`repayment`: repaid) a request.
    package func setTransfer(_ transfer: UUID, of request: UUID, repayment: Bool, on tx: any GatehouseDatabase) async throws {
        let column: SQLQueryString = repayment ? "repayment_id" : "payment_id"
        try await sql(tx).raw("UPDATE money_requests SET \(column) = \(bind: transfer) WHERE id = \(bind: request)").run()
    }

    // MARK: Deletion

    /// The balance of an account's wallet, nil when it has none (whether or not it is being deleted).
    package func balance(of account: UUID, on db: any GatehouseDatabase) async throws -> Int64? {
        try await sql(db).raw("SELECT balance FROM wallets WHERE account_id = \(bind: account)").first(decodingColumn: "balance", as: Int64.self)
    }

    /// An erased account's wallet data, in the erasure's transaction: the wallet forgets its phone,
    /// open money requests either way are cancelled, the idempotency keys of its calls go. The
    /// wallet row and the ledger stay.
    package func eraseAccount(_ account: UUID, now: Date, on tx: any GatehouseDatabase) async throws {
        let sql = sql(tx)
        try await sql.raw("UPDATE wallets SET phone = NULL WHERE account_id = \(bind: account)").run()
        try await sql.raw("""
            UPDATE money_requests SET state = \(bind: MoneyRequestState.cancelled.rawValue), updated_at = \(bind: now)
            WHERE (requester_id = \(bind: account) OR payer_id = \(bind: account)) AND state = \(bind: MoneyRequestState.open.rawValue)
            """).run()
        try await sql.raw("DELETE FROM idempotency_keys WHERE account_id = \(bind: account)").run()
    }
}
