import FluentKit
import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehouseMessenger

/// Money requests (docs/wallet.md, "Requests"): A asks B for money, an invoice or a loan; B
/// confirms (the transfer B → A runs then, in the transaction that marks the request paid) or
/// declines; A cancels; an open request expires. A paid loan is repaid by A with one action.
///
/// Every change is one conditional `UPDATE … WHERE state = <the state it leaves>`: the row's lock
/// orders concurrent changes, and only one of two racing moves (confirm and cancel, two confirms)
/// finds the state it expects; the other is `409 invalid_request_state`.
package struct MoneyRequestsService: WalletConcept {
    package let clock: GatehouseClock
    package let settings: GatehouseConfiguration.Wallet
    let rateLimiter: RateLimiter
    /// The chat messages that show requests.
    let dialogs: PaymentMessages
    package let directory: WalletDirectory
    let writes: IdempotentWrites
    /// How a request's payment moves its money (`WalletService.move`).
    package let wallets: WalletService
    var store: WalletStore { directory.store }

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

    /// Stored requests as their sides see them: the people named, an open one past its time expired.
    private func decode(_ rows: [WalletStore.StoredRequest], on db: (any GatehouseDatabase)? = nil) async throws -> [MoneyRequest] {
        let people = try await parties(Set(rows.flatMap { [$0.requester, $0.payer] }), on: db)
        let now = clock.now()
        return rows.map { row in
            var state = MoneyRequestState(rawValue: row.state) ?? .open
            // Expiry is read, not written: an open request past its time is expired for everyone at once.
            if state == .open, row.expiresAt <= now { state = .expired }
            let unknown = WalletParty(id: UUID(), tag: nil, firstName: nil, lastName: nil, avatarUrl: nil)
            return MoneyRequest(
                id: row.id, kind: MoneyRequestKind(rawValue: row.kind) ?? .invoice, state: state, amount: row.amount, comment: row.comment,
                requester: people[row.requester] ?? unknown, payer: people[row.payer] ?? unknown,
                createdAt: row.createdAt, updatedAt: row.updatedAt, expiresAt: row.expiresAt, paymentId: row.payment, repaymentId: row.repayment
            )
        }
    }

    /// A request I am a side of; 404 otherwise.
    package func request(_ id: UUID, viewer: UUID, on db: (any GatehouseDatabase)? = nil) async throws -> MoneyRequest {
        guard let row = try await store.request(id, viewer: viewer, on: db), let request = try await decode([row], on: db).first else { throw Self.notFound }
        return request
    }

    package static var notFound: GatehouseError { .notFound(.moneyRequestNotFound, "error.moneyRequestNotFound") }

    package typealias Direction = MoneyRequestDirection

    /// Requests to me (`incoming`), from me (`outgoing`) or both, newest first, optionally in one
    /// state and with one person.
    package func list(viewer: UUID, direction: Direction?, state: MoneyRequestState?, with other: UUID?, cursor: String?, limit: Int?) async throws -> MoneyRequestPage {
        let size = min(max(limit ?? 50, 1), 200)
        var before: UUID?
        if let parts = try PageCursor.read(cursor, parts: 1) {
            guard let after = UUID(uuidString: parts[0]) else { throw PageCursor.invalid }
            before = after
        }
        let filter = WalletStore.RequestFilter(direction: direction, state: state, with: other, now: clock.now())
        let rows = try await store.requests(viewer: viewer, filter, before: before, limit: size + 1)
        let items = try await decode(Array(rows.prefix(size)))
        return MoneyRequestPage(items: items, nextCursor: rows.count > size ? items.last.map { PageCursor.make([$0.id.uuidString]) } : nil)
    }

    // MARK: - asking

    /// Asks a person for money.
    package func create(_ viewer: AccountSnapshot, _ input: NewMoneyRequest, call: IdempotentCall) async throws -> Idempotent<MoneyRequest> {
        let comment = try cleanComment(input.comment)
        try requirePositive(input.amount)
        return try await writes.run(call) { tx, recorder in
            try checkAmount(input.amount)
            let mine = try await requireWallet(of: viewer.id, on: tx)
            let payer = try await resolve(input.from, field: "from", on: tx)
            guard payer.account != viewer.id else {
                throw GatehouseError(.unprocessable, .notYourself, LocalizedText("error.askYourself"), field: "from")
            }
            try await dialogs.checkMayPost(from: viewer.id, to: payer.account, on: tx)
            try await rateLimiter.hit("wallet-requests", key: viewer.id.uuidString, limit: settings.requestsPerDay, window: 86_400, on: tx)
            let id = OrderedID.make()
            let now = clock.now()
            try await store.insertRequest(id: id, kind: input.kind, requester: mine.account, payer: payer.account, amount: input.amount,
                                               comment: comment, now: now, expiresAt: now.addingTimeInterval(settings.requestTTL), on: tx)
            let request = try await request(id, viewer: viewer.id, on: tx)
            try await dialogs.post(PaymentNote(kind: .request, amount: input.amount, transferId: nil, requestId: id, requestKind: input.kind),
                                        comment: comment, author: viewer.id, to: payer.account, on: tx, recorder)
            try recorder.add(.walletRequestCreated, to: viewer.id, request)
            try recorder.add(.walletRequestCreated, to: payer.account, request, push: true)
            return request
        }
    }

    // MARK: - answering

    /// Confirms (pays) or repays: the transition and the transfer in one transaction. On
    /// `insufficient_funds` or a limit nothing is written and the request stays as it was.
    package func pay(_ action: Action, _ viewer: AccountSnapshot, request id: UUID, call: IdempotentCall) async throws -> Idempotent<RequestPayment> {
        precondition(action == .confirm || action == .repay)
        return try await writes.run(call) { tx, recorder in
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
            try await store.setTransfer(result.transfer.id, of: id, repayment: action == .repay, on: tx)
            let updated = try await self.request(id, viewer: viewer.id, on: tx)
            try recorder.add(.walletRequestUpdated, to: request.requester.id, updated)
            try recorder.add(.walletRequestUpdated, to: request.payer.id, updated)
            return RequestPayment(request: updated, transfer: result.transfer, balance: result.balance)
        }
    }

    /// Declines (the payer) or cancels (the requester) an open request.
    package func close(_ action: Action, _ viewer: AccountSnapshot, request id: UUID, call: IdempotentCall) async throws -> Idempotent<MoneyRequest> {
        precondition(action == .decline || action == .cancel)
        return try await writes.run(call) { tx, recorder in
            let request = try await request(id, viewer: viewer.id, on: tx)
            try allowed(action, request, viewer: viewer.id)
            try await transition(action, request, on: tx)
            let updated = try await self.request(id, viewer: viewer.id, on: tx)
            // The other side hears of it on their devices too.
            try recorder.add(.walletRequestUpdated, to: request.requester.id, updated, push: viewer.id != request.requester.id)
            try recorder.add(.walletRequestUpdated, to: request.payer.id, updated, push: viewer.id != request.payer.id)
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
    private func transition(_ action: Action, _ request: MoneyRequest, on tx: any GatehouseDatabase) async throws {
        let now = clock.now()
        guard try await store.moveRequest(request.id, from: action.from, to: action.to, now: now, notExpiredAt: action.from == .open, on: tx) else {
            let current = try await self.request(request.id, viewer: request.requester.id, on: tx)
            throw Self.wrongState(current.state, action)
        }
    }

    package init(clock: GatehouseClock, settings: GatehouseConfiguration.Wallet, rateLimiter: RateLimiter, dialogs: PaymentMessages,
                 directory: WalletDirectory, writes: IdempotentWrites, wallets: WalletService) {
        self.clock = clock
        self.settings = settings
        self.rateLimiter = rateLimiter
        self.dialogs = dialogs
        self.directory = directory
        self.writes = writes
        self.wallets = wallets
    }
}
