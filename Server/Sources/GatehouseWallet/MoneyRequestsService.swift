import FluentKit
import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import SQLKit

/// Money requests (docs/wallet.md, "Requests"): A asks B for money, an invoice or a loan; B
/// confirms (the transfer B → A runs then, in the transaction that marks the request paid) or
/// declines; A cancels; an open request expires. A paid loan is repaid by A with one action.
///
/// Every change is one conditional `UPDATE … WHERE state = <the state it leaves>`: the row's lock
/// orders concurrent changes, and only one of two racing moves (confirm and cancel, two confirms)
/// finds the state it expects; the other is `409 invalid_request_state`.
package struct MoneyRequestsService: WalletConcept {
    package let core: WalletCore
    package let wallets: WalletService

    /// The transitions, as the docs list them: the action, who may take it, from which state, to which.
    package enum Action: String, Sendable {
        case confirm, decline, cancel, repay

        package var from: MoneyRequestState { self == .repay ? .paid : .open }
        package var to: MoneyRequestState {
            switch self {
            case .confirm: .paid
            case .decline: .declined
            case .cancel: .cancelled
            case .repay: .repaid
            }
        }
    }

    // MARK: - reading

    private static let columns: SQLQueryString = """
        r.id, r.kind, r.state, r.requester_id, r.payer_id, r.amount, r.comment, r.created_at, r.updated_at, r.expires_at, r.payment_id, r.repayment_id
        """

    private func decode(_ rows: [any SQLRow], on db: (any Database)? = nil) async throws -> [MoneyRequest] {
        var ids = Set<UUID>()
        for row in rows {
            ids.insert(try row.decode(column: "requester_id", as: UUID.self))
            ids.insert(try row.decode(column: "payer_id", as: UUID.self))
        }
        let people = try await parties(ids, on: db)
        let now = clock.now()
        return try rows.map { row in
            let requester = try row.decode(column: "requester_id", as: UUID.self)
            let payer = try row.decode(column: "payer_id", as: UUID.self)
            let expiresAt = try row.decode(column: "expires_at", as: Date.self)
            var state = MoneyRequestState(rawValue: try row.decode(column: "state", as: String.self)) ?? .open
            // Expiry is read, not written: an open request past its time is expired for everyone at once.
            if state == .open, expiresAt <= now { state = .expired }
            let unknown = WalletParty(id: UUID(), tag: nil, firstName: nil, lastName: nil, avatarUrl: nil)
            return MoneyRequest(
                id: try row.decode(column: "id", as: UUID.self), kind: MoneyRequestKind(rawValue: try row.decode(column: "kind", as: String.self)) ?? .invoice,
                state: state, amount: try row.decode(column: "amount", as: Int64.self), comment: try row.decode(column: "comment", as: String?.self),
                requester: people[requester] ?? unknown, payer: people[payer] ?? unknown,
                createdAt: try row.decode(column: "created_at", as: Date.self), updatedAt: try row.decode(column: "updated_at", as: Date.self),
                expiresAt: expiresAt, paymentId: try row.decode(column: "payment_id", as: UUID?.self), repaymentId: try row.decode(column: "repayment_id", as: UUID?.self)
            )
        }
    }

    /// A request I am a side of; 404 otherwise.
    package func request(_ id: UUID, viewer: UUID, on db: (any Database)? = nil) async throws -> MoneyRequest {
        let rows = try await sql(db ?? database.db).raw("""
            SELECT \(Self.columns) FROM money_requests r WHERE r.id = \(bind: id) AND (r.requester_id = \(bind: viewer) OR r.payer_id = \(bind: viewer))
            """).all()
        guard let request = try await decode(rows, on: db).first else { throw Self.notFound }
        return request
    }

    package static var notFound: GatehouseError { .notFound(.moneyRequestNotFound, "error.moneyRequestNotFound") }

    package typealias Direction = MoneyRequestDirection

    /// Requests to me (`incoming`), from me (`outgoing`) or both, newest first, optionally in one
    /// state and with one person.
    package func list(viewer: UUID, direction: Direction?, state: MoneyRequestState?, with other: UUID?, cursor: String?, limit: Int?) async throws -> MoneyRequestPage {
        let size = min(max(limit ?? 50, 1), 200)
        var condition: SQLQueryString = switch direction {
        case .incoming?: "r.payer_id = \(bind: viewer)"
        case .outgoing?: "r.requester_id = \(bind: viewer)"
        case nil: "(r.payer_id = \(bind: viewer) OR r.requester_id = \(bind: viewer))"
        }
        if let other { condition += " AND (r.payer_id = \(bind: other) OR r.requester_id = \(bind: other))" }
        let now = clock.now()
        switch state {
        case .open?: condition += " AND r.state = 'open' AND r.expires_at > \(bind: now)"
        case .expired?: condition += " AND r.state = 'open' AND r.expires_at <= \(bind: now)"
        case let other?: condition += " AND r.state = \(bind: other.rawValue)"
        case nil: break
        }
        if let parts = try PageCursor.read(cursor, parts: 1) {
            guard let after = UUID(uuidString: parts[0]) else { throw PageCursor.invalid }
            condition += " AND r.id < \(bind: after)"
        }
        let rows = try await sql(database.db).raw("SELECT \(Self.columns) FROM money_requests r WHERE \(condition) ORDER BY r.id DESC LIMIT \(literal: size + 1)").all()
        let items = try await decode(Array(rows.prefix(size)))
        return MoneyRequestPage(items: items, nextCursor: rows.count > size ? items.last.map { PageCursor.make([$0.id.uuidString]) } : nil)
    }

    // MARK: - asking

    /// Asks a person for money.
    package func create(_ viewer: AccountSnapshot, _ input: NewMoneyRequest, call: IdempotentCall) async throws -> Idempotent<MoneyRequest> {
        let comment = try cleanComment(input.comment)
        try requirePositive(input.amount)
        return try await idempotent(call) { tx, recorder in
            try checkAmount(input.amount)
            let mine = try await requireWallet(of: viewer.id, on: tx)
            let payer = try await resolve(input.from, field: "from", on: tx)
            guard payer.account != viewer.id else {
                throw GatehouseError(.unprocessable, .notYourself, LocalizedText("error.askYourself"), field: "from")
            }
            try await core.dialogs.checkMayPost(from: viewer.id, to: payer.account, on: tx)
            try await core.rateLimiter.hit("wallet-requests", key: viewer.id.uuidString, limit: settings.requestsPerDay, window: 86_400, on: tx)
            let id = OrderedID.make()
            let now = clock.now()
            try await sql(tx).raw("""
                INSERT INTO money_requests (id, kind, state, requester_id, payer_id, amount, comment, created_at, updated_at, expires_at)
                VALUES (\(bind: id), \(bind: input.kind.rawValue), 'open', \(bind: mine.account), \(bind: payer.account), \(bind: input.amount),
                        \(bind: comment), \(bind: now), \(bind: now), \(bind: now.addingTimeInterval(settings.requestTTL)))
                """).run()
            let request = try await request(id, viewer: viewer.id, on: tx)
            try await core.dialogs.post(PaymentNote(kind: .request, amount: input.amount, transferId: nil, requestId: id, requestKind: input.kind),
                                        comment: comment, author: viewer.id, to: payer.account, on: tx, recorder)
            try recorder.add(.walletRequestCreated, to: viewer.id, request)
            try recorder.add(.walletRequestCreated, to: payer.account, request)
            return request
        }
    }

    // MARK: - answering

    /// Confirms (pays) or repays: the transition and the transfer in one transaction. On
    /// `insufficient_funds` or a limit nothing is written and the request stays as it was.
    package func pay(_ action: Action, _ viewer: AccountSnapshot, request id: UUID, call: IdempotentCall) async throws -> Idempotent<RequestPayment> {
        precondition(action == .confirm || action == .repay)
        return try await idempotent(call) { tx, recorder in
            let request = try await request(id, viewer: viewer.id, on: tx)
            try allowed(action, request, viewer: viewer.id)
            try requireVerifiedPhone(viewer)
            // The one who pays: the payer confirming, the borrower (the requester) repaying.
            let (payerID, payeeID) = action == .confirm ? (request.payer.id, request.requester.id) : (request.requester.id, request.payer.id)
            let payer = try await requireWallet(of: payerID, on: tx)
            guard let payee = try await wallet(of: payeeID, on: tx) else { throw GatehouseError.notFound(.recipientNotFound, "error.recipientNotFound") }
            try await transition(action, request, on: tx)
            let result = try await wallets.move(action == .confirm ? .requestPayment : .repayment, from: payer, to: payee, amount: request.amount,
                                                comment: request.comment, request: id, requestKind: request.kind,
                                                note: action == .confirm ? .requestPaid : .repayment, on: tx, recorder)
            let column: SQLQueryString = action == .confirm ? "payment_id" : "repayment_id"
            try await sql(tx).raw("UPDATE money_requests SET \(column) = \(bind: result.transfer.id) WHERE id = \(bind: id)").run()
            let updated = try await self.request(id, viewer: viewer.id, on: tx)
            try recorder.add(.walletRequestUpdated, to: request.requester.id, updated)
            try recorder.add(.walletRequestUpdated, to: request.payer.id, updated)
            return RequestPayment(request: updated, transfer: result.transfer, balance: result.balance)
        }
    }

    /// Declines (the payer) or cancels (the requester) an open request.
    package func close(_ action: Action, _ viewer: AccountSnapshot, request id: UUID, call: IdempotentCall) async throws -> Idempotent<MoneyRequest> {
        precondition(action == .decline || action == .cancel)
        return try await idempotent(call) { tx, recorder in
            let request = try await request(id, viewer: viewer.id, on: tx)
            try allowed(action, request, viewer: viewer.id)
            try await transition(action, request, on: tx)
            let updated = try await self.request(id, viewer: viewer.id, on: tx)
            try recorder.add(.walletRequestUpdated, to: request.requester.id, updated)
            try recorder.add(.walletRequestUpdated, to: request.payer.id, updated)
            return updated
        }
    }

    /// Whether `viewer` may take `action` on `request` as it stands: the side and the state. Every
    /// move the transition table does not list is 409, the wrong side's too (naming who may).
    private func allowed(_ action: Action, _ request: MoneyRequest, viewer: UUID) throws {
        let side = switch action {
        case .confirm, .decline: request.payer.id
        case .cancel, .repay: request.requester.id
        }
        guard side == viewer else {
            throw GatehouseError(.conflict, .invalidRequestState, LocalizedText("error.requestWrongSide.\(action.rawValue)"))
        }
        if action == .repay, request.kind != .loan {
            throw GatehouseError(.conflict, .invalidRequestState, LocalizedText("error.requestNotLoan"))
        }
        guard request.state == action.from else { throw Self.wrongState(request.state, action) }
    }

    package static func wrongState(_ state: MoneyRequestState, _ action: Action) -> GatehouseError {
        GatehouseError(.conflict, .invalidRequestState, LocalizedText("error.requestState.\(action.rawValue)", [state.rawValue]))
    }

    /// Moves the request from the state the action leaves to the one it makes, if it is still
    /// there (and, for open requests, not expired this very moment); 409 otherwise.
    private func transition(_ action: Action, _ request: MoneyRequest, on tx: any Database) async throws {
        let now = clock.now()
        let notExpired: SQLQueryString = action.from == .open ? " AND expires_at > \(bind: now)" : ""
        let moved = try await sql(tx).raw("""
            UPDATE money_requests SET state = \(bind: action.to.rawValue), updated_at = \(bind: now)
            WHERE id = \(bind: request.id) AND state = \(bind: action.from.rawValue)\(notExpired) RETURNING id
            """).first()
        guard moved != nil else {
            let current = try await self.request(request.id, viewer: request.requester.id, on: tx)
            throw Self.wrongState(current.state, action)
        }
    }

    package init(core: WalletCore, wallets: WalletService) {
        self.core = core
        self.wallets = wallets
    }
}
