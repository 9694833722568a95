import Foundation
import GatehouseAPI

/// One thing a person meant to do with money: a payment, a request, a confirmation. It carries
/// the `Idempotency-Key` every attempt of that intent sends, so a retried tap or a request whose
/// answer was lost is applied once (docs/wallet.md, "Idempotency"). Make a new intent when the
/// person starts a new payment, keep it while they retry the same one.
public struct PaymentIntent: Sendable, Hashable {
    /// The key sent as `Idempotency-Key`.
    public let key: String

    /// A new intent with a fresh random key.
    public init() { self.key = UUID().uuidString }

    /// An intent with a known key (one the app kept across a relaunch).
    public init(key: String) { self.key = key }
}

/// The client of the wallet on `/v1` (`docs/wallet.md`): the wallet, transfers and money
/// requests, each call the ``Endpoint`` that `V1.Wallet` declares, sent through a
/// ``GatehouseClient`` core (share the app's ``AccountsClient`` core, so one session serves).
///
/// Money-moving calls take a ``PaymentIntent`` and resend it by themselves when the answer is
/// lost on the way (a ``GatehouseClientError/transport(_:)`` error), up to `retries` times: the
/// same key makes the server answer the first answer again instead of paying twice. Refusals come
/// as ``GatehouseClientError/rejected(code:message:)`` with the server's code
/// (`insufficient_funds`, `recipient_not_found`, `invalid_request_state`, …).
public final class WalletClient: Sendable {
    typealias W = V1.Wallet
    /// The core that sends the calls with the session (share the app's `AccountsClient` core).
    public let core: GatehouseClient
    /// How often a money-moving call is resent after a lost answer.
    public let retries: Int
    /// How long to wait before a resend (doubled each time).
    public let retryDelay: TimeInterval

    /// A client of the wallet on `core`; money-moving calls resend a lost answer `retries` times, waiting `retryDelay` (doubled each time).
    public init(core: GatehouseClient, retries: Int = 2, retryDelay: TimeInterval = 0.3) {
        self.core = core
        self.retries = retries
        self.retryDelay = retryDelay
    }

    // MARK: The wallet

    /// My wallet; `wallet_not_found` before it is attached.
    public func wallet() async throws -> WalletInfo {
        try await core.call(W.wallet)
    }

    /// Attaches my wallet to my verified phone (or answers the one I have).
    public func attach() async throws -> WalletInfo {
        try await core.call(W.attach)
    }

    /// My movements, newest first.
    public func transactions(cursor: String? = nil, limit: Int? = nil) async throws -> WalletTransactionPage {
        try await core.call(W.transactions, PageQuery(cursor: cursor, limit: limit))
    }

    /// Whom a phone, tag or email pays: the name to show before the person confirms.
    public func recipient(_ reference: PartyReference) async throws -> WalletParty {
        try await core.call(W.recipient, RecipientQuery(reference))
    }

    /// One transfer of mine.
    public func transfer(_ id: UUID) async throws -> Transfer {
        try await core.call(W.transferDetail, parameters: ["id": id.uuidString.lowercased()])
    }

    // MARK: Money

    /// Sends money; answers the transfer and my balance after it.
    public func send(_ transfer: NewTransfer, intent: PaymentIntent) async throws -> TransferResult {
        try await resending { try await self.core.call(W.transfer, transfer, headers: self.headers(intent)) }
    }

    /// Asks a person for money (an invoice or a loan).
    public func ask(_ request: NewMoneyRequest, intent: PaymentIntent) async throws -> MoneyRequest {
        try await resending { try await self.core.call(W.createRequest, request, headers: self.headers(intent)) }
    }

    /// Pays a request to me.
    public func confirm(_ request: UUID, intent: PaymentIntent) async throws -> RequestPayment {
        try await resending { try await self.core.call(W.confirm, parameters: self.pathID(request), headers: self.headers(intent)) }
    }

    /// Declines a request to me.
    public func decline(_ request: UUID, intent: PaymentIntent) async throws -> MoneyRequest {
        try await resending { try await self.core.call(W.decline, parameters: self.pathID(request), headers: self.headers(intent)) }
    }

    /// Cancels my request.
    public func cancel(_ request: UUID, intent: PaymentIntent) async throws -> MoneyRequest {
        try await resending { try await self.core.call(W.cancel, parameters: self.pathID(request), headers: self.headers(intent)) }
    }

    /// Repays a loan I was paid, in full.
    public func repay(_ request: UUID, intent: PaymentIntent) async throws -> RequestPayment {
        try await resending { try await self.core.call(W.repay, parameters: self.pathID(request), headers: self.headers(intent)) }
    }

    /// Requests to me (`incoming`) or from me (`outgoing`), newest first.
    public func requests(direction: RequestDirection? = nil, state: MoneyRequestState? = nil, with person: UUID? = nil,
                         cursor: String? = nil, limit: Int? = nil) async throws -> MoneyRequestPage {
        try await core.call(W.requests, RequestsQuery(direction: direction, state: state, with: person, cursor: cursor, limit: limit))
    }

    /// Which requests to list.
    public typealias RequestDirection = MoneyRequestDirection

    /// One request of mine.
    public func request(_ id: UUID) async throws -> MoneyRequest {
        try await core.call(W.request, parameters: pathID(id))
    }

    // MARK: Money in

    /// Starts a top-up of `amount` kopecks through the server's payment provider. Open the
    /// answer's `confirmationUrl` in a browser (on iOS an `SFSafariViewController`); the wallet is
    /// credited when the provider tells the server the payment went through, and ``topUp(_:)``
    /// then reads `paid` (a `wallet.transfer` event arrives too). Refusals: `topups_unavailable`
    /// (no provider on this server), `invalid_amount` (outside its limits), `wallet_not_found`.
    public func startTopUp(amount: Int64, intent: PaymentIntent) async throws -> TopUp {
        try await resending { try await self.core.call(W.createTopUp, NewTopUp(amount: amount), headers: self.headers(intent)) }
    }

    /// One top-up of mine: pending, paid or expired.
    public func topUp(_ id: UUID) async throws -> TopUp {
        try await core.call(W.topUp, parameters: pathID(id))
    }

    // MARK: Plumbing

    private func headers(_ intent: PaymentIntent) -> [String: String] { [W.idempotencyKeyHeader: intent.key] }
    private func pathID(_ id: UUID) -> [String: String] { ["id": id.uuidString.lowercased()] }

    /// Runs `call`, again with the same key after a lost answer.
    private func resending<T>(_ call: @Sendable () async throws -> T) async throws -> T {
        var attempt = 0
        while true {
            do {
                return try await call()
            } catch GatehouseClientError.transport(let reason) {
                guard attempt < retries else { throw GatehouseClientError.transport(reason) }
                attempt += 1
                try await Task.sleep(nanoseconds: UInt64(retryDelay * pow(2, Double(attempt - 1)) * 1_000_000_000))
            }
        }
    }

}
