import Foundation

extension V1 {
    /// The wallet (the wallet spec, docs/wallet.md): one per account with a verified phone, in
    /// roubles counted in whole kopecks; transfers and money requests between people, each shown
    /// in their messenger chat. Every `POST` that moves money or makes a request needs an
    /// ``idempotencyKeyHeader`` (Stripe's rules: the same key and body answer the first answer
    /// again; the same key with another body is `422 idempotency_key_reused`).
    public enum Wallet {
        /// The header every money-moving `POST` carries: one fresh value per user intent.
        public static let idempotencyKeyHeader = "Idempotency-Key"
        /// Set to `true` on an answer replayed for a key seen before.
        public static let replayedHeader = "Idempotent-Replayed"
        /// The one currency.
        public static let currency = "RUB"

        /// My wallet (404 `wallet_not_found` before it is attached).
        public static let wallet = Endpoint<NoContent, WalletInfo>(.get, "/v1/wallet")
            .operation("getWallet", "My wallet", tags: "Wallet")
            .errors([404: [.walletNotFound]])
            .shared(.unauthorized, .unexpectedProblem)
        /// Attaches a wallet to my verified phone (409 `phone_not_verified` without one). Answers the
        /// new wallet (201), or the one I have (200).
        public static let attach = Endpoint<NoContent, WalletInfo>(.post, "/v1/wallet", success: 201)
            .operation("attachWallet", "Attach a wallet", tags: "Wallet")
            .errors([409: [.phoneNotVerified, .tagRequired]])
            .shared(.unauthorized, .unexpectedProblem)
        /// My wallet's movements, newest first (`?cursor=`, `?limit=`).
        public static let transactions = Endpoint<PageQuery, WalletTransactionPage>(.get, "/v1/wallet/transactions")
            .operation("listWalletTransactions", "My wallet's history", tags: "Wallet")
            .errors([400: [.invalidParameter], 404: [.walletNotFound]])
            .shared(.unauthorized, .unexpectedProblem)
        /// Who a phone, tag or email pays (`?phone=` | `?tag=` | `?email=`): to show the name before paying.
        public static let recipient = Endpoint<RecipientQuery, WalletParty>(.get, "/v1/wallet/recipients")
            .operation("findRecipient", "Whom a phone, tag or email pays", tags: "Wallet")
            .errors([400: [.invalidParameter, .invalidPhone, .invalidEmail], 404: [.recipientNotFound]])
            .shared(.tooManyRequests, .unauthorized, .unexpectedProblem)
        /// Sends money (needs `Idempotency-Key`). Answers the transfer and my new balance.
        public static let transfer = Endpoint<NewTransfer, TransferResult>(.post, "/v1/wallet/transfers", success: 201)
            .operation("createTransfer", "Send money", tags: "Wallet")
            .errors([400: [.idempotencyKeyRequired, .invalidAmount, .invalidPhone, .invalidEmail, .invalidParameter, .invalidText, .fieldTooLong, .malformedBody], 404: [.recipientNotFound, .walletNotFound], 409: [.phoneNotVerified], 422: [.insufficientFunds, .transferLimitExceeded, .dailyLimitExceeded, .notYourself, .idempotencyKeyReused]])
            .shared(.payloadTooLarge, .unsupportedMediaType, .unauthorized, .unexpectedProblem)
            .headers(.idempotencyKey)
        /// One transfer of mine.
        public static let transferDetail = Endpoint<NoContent, Transfer>(.get, "/v1/wallet/transfers/{id}")
            .operation("getTransfer", "One transfer", tags: "Wallet")
            .errors([404: [.transferNotFound]])
            .shared(.unauthorized, .unexpectedProblem)
            .uuid(notFound: .transferNotFound)
        /// Asks a person for money: an invoice or a loan (needs `Idempotency-Key`).
        public static let createRequest = Endpoint<NewMoneyRequest, MoneyRequest>(.post, "/v1/wallet/requests", success: 201)
            .operation("createMoneyRequest", "Ask for money", tags: "Wallet")
            .errors([400: [.idempotencyKeyRequired, .invalidAmount, .invalidPhone, .invalidEmail, .invalidParameter, .invalidText, .fieldTooLong, .malformedBody], 404: [.recipientNotFound, .walletNotFound], 422: [.transferLimitExceeded, .notYourself, .idempotencyKeyReused]])
            .shared(.tooManyRequests, .payloadTooLarge, .unsupportedMediaType, .unauthorized, .unexpectedProblem)
            .headers(.idempotencyKey)
        /// Requests to me or from me (`?direction=incoming|outgoing`, `?state=`, `?with=` a person's id, `?cursor=`), newest first.
        public static let requests = Endpoint<RequestsQuery, MoneyRequestPage>(.get, "/v1/wallet/requests")
            .operation("listMoneyRequests", "Money requests", tags: "Wallet")
            .errors([400: [.invalidParameter]])
            .shared(.unauthorized, .unexpectedProblem)
        /// One request of mine.
        public static let request = Endpoint<NoContent, MoneyRequest>(.get, "/v1/wallet/requests/{id}")
            .operation("getMoneyRequest", "One money request", tags: "Wallet")
            .errors([404: [.moneyRequestNotFound]])
            .shared(.unauthorized, .unexpectedProblem)
            .uuid(notFound: .moneyRequestNotFound)
        /// Pays a request to me (needs `Idempotency-Key`); on `insufficient_funds` it stays open.
        public static let confirm = Endpoint<NoContent, RequestPayment>(.post, "/v1/wallet/requests/{id}/confirm")
            .operation("confirmMoneyRequest", "Pay a request", tags: "Wallet")
            .errors([400: [.idempotencyKeyRequired], 404: [.moneyRequestNotFound, .walletNotFound], 409: [.invalidRequestState, .phoneNotVerified], 422: [.idempotencyKeyReused, .insufficientFunds, .dailyLimitExceeded]])
            .shared(.unauthorized, .unexpectedProblem)
            .uuid(notFound: .moneyRequestNotFound)
            .headers(.idempotencyKey)
        /// Declines a request to me (needs `Idempotency-Key`).
        public static let decline = Endpoint<NoContent, MoneyRequest>(.post, "/v1/wallet/requests/{id}/decline")
            .operation("declineMoneyRequest", "Decline a request", tags: "Wallet")
            .errors([400: [.idempotencyKeyRequired], 404: [.moneyRequestNotFound, .walletNotFound], 409: [.invalidRequestState], 422: [.idempotencyKeyReused]])
            .shared(.unauthorized, .unexpectedProblem)
            .uuid(notFound: .moneyRequestNotFound)
            .headers(.idempotencyKey)
        /// Cancels my request (needs `Idempotency-Key`).
        public static let cancel = Endpoint<NoContent, MoneyRequest>(.post, "/v1/wallet/requests/{id}/cancel")
            .operation("cancelMoneyRequest", "Cancel a request", tags: "Wallet")
            .errors([400: [.idempotencyKeyRequired], 404: [.moneyRequestNotFound, .walletNotFound], 409: [.invalidRequestState], 422: [.idempotencyKeyReused]])
            .shared(.unauthorized, .unexpectedProblem)
            .uuid(notFound: .moneyRequestNotFound)
            .headers(.idempotencyKey)
        /// Repays a loan I was paid, in full (needs `Idempotency-Key`).
        public static let repay = Endpoint<NoContent, RequestPayment>(.post, "/v1/wallet/requests/{id}/repay")
            .operation("repayLoan", "Repay a loan", tags: "Wallet")
            .errors([400: [.idempotencyKeyRequired], 404: [.moneyRequestNotFound, .walletNotFound], 409: [.invalidRequestState, .phoneNotVerified], 422: [.idempotencyKeyReused, .insufficientFunds, .dailyLimitExceeded]])
            .shared(.unauthorized, .unexpectedProblem)
            .uuid(notFound: .moneyRequestNotFound)
            .headers(.idempotencyKey)

        /// Starts putting money into my wallet (needs `Idempotency-Key`): a payment at the provider,
        /// whose page the app opens (`confirmationUrl`). The wallet is credited when the provider
        /// says the payment succeeded; the top-up then reads `paid`.
        public static let createTopUp = Endpoint<NewTopUp, TopUp>(.post, "/v1/wallet/topups", success: 201)
            .operation("createTopUp", "Top up my wallet", tags: "Wallet")
            .errors([400: [.idempotencyKeyRequired, .malformedBody], 404: [.walletNotFound], 409: [.topUpsUnavailable], 422: [.invalidAmount, .idempotencyKeyReused], 429: [.rateLimited], 503: [.paymentProviderUnavailable]])
            .shared(.payloadTooLarge, .unsupportedMediaType, .unauthorized, .unexpectedProblem)
            .headers(.idempotencyKey)
        /// One top-up of mine: is it paid yet?
        public static let topUp = Endpoint<NoContent, TopUp>(.get, "/v1/wallet/topups/{id}")
            .operation("getTopUp", "One top-up", tags: "Wallet")
            .errors([404: [.topUpNotFound]])
            .shared(.unauthorized, .unexpectedProblem)
            .uuid(notFound: .topUpNotFound)

        /// Every operation above (the tests check it against the router and the OpenAPI document).
        public static let all: [any EndpointDeclaration] = [
            wallet, attach, transactions, recipient, transfer, transferDetail, createRequest, requests, request, confirm, decline, cancel, repay,
            createTopUp, topUp,
        ]
    }
}

/// `GET /v1/wallet/recipients`: whom to pay, by a phone, a tag or an email (the query form of a `PartyReference`).
public struct RecipientQuery: EndpointQuery, Equatable {
    /// Whom to look up: an account id, a tag or a phone number.
    public var reference: PartyReference
    /// Makes one of its members, each as its property describes.
    public init(_ reference: PartyReference) { self.reference = reference }
    /// Every parameter the operation reads, in the order the document lists them.
    public static let parameters: [QueryParameter] = [QueryParameter("phone", .text), QueryParameter("tag", .text), QueryParameter("email", .text)]
    /// Reads it from a request's query; a value against its parameter's rule throws ``QueryError``.
    public init(from query: QueryValues) throws {
        self.init(PartyReference(phone: query.text("phone"), tag: query.text("tag"), email: query.text("email")))
    }
    /// The query's values to send, by name; absent parameters are left out.
    public var values: [String: String] {
        var values: [String: String] = [:]
        values.put("phone", reference.phone)
        values.put("tag", reference.tag)
        values.put("email", reference.email)
        return values
    }
}

/// Which money requests to list: to me (`incoming`) or from me (`outgoing`).
public enum MoneyRequestDirection: String, Codable, Sendable, CaseIterable {
    /// Requests others made of me.
    case incoming
    /// Requests I made of others.
    case outgoing
}

/// `GET /v1/wallet/requests`: a direction, a state, a person, and a page.
public struct RequestsQuery: EndpointQuery, Equatable {
    /// Requests I asked or I was asked.
    public var direction: MoneyRequestDirection?
    /// Only requests in this state.
    public var state: MoneyRequestState?
    /// Only requests between me and this person.
    public var with: UUID?
    /// Where the page starts: a `nextCursor` of a previous answer.
    public var cursor: String?
    /// How many items a page holds at most.
    public var limit: Int?
    /// Makes one of its members, each as its property describes.
    public init(direction: MoneyRequestDirection? = nil, state: MoneyRequestState? = nil, with: UUID? = nil, cursor: String? = nil, limit: Int? = nil) {
        self.direction = direction
        self.state = state
        self.with = with
        self.cursor = cursor
        self.limit = limit
    }
    /// Every parameter the operation reads, in the order the document lists them.
    public static let parameters: [QueryParameter] = [
        .choice("direction", MoneyRequestDirection.self), .choice("state", MoneyRequestState.self), QueryParameter("with", .uuid), .cursor, .limit,
    ]
    /// Reads it from a request's query; a value against its parameter's rule throws ``QueryError``.
    public init(from query: QueryValues) throws {
        self.init(direction: try query.choice("direction", as: MoneyRequestDirection.self), state: try query.choice("state", as: MoneyRequestState.self),
                  with: try query.uuid("with"), cursor: query.text("cursor"), limit: try query.limit())
    }
    /// The query's values to send, by name; absent parameters are left out.
    public var values: [String: String] {
        var values: [String: String] = [:]
        values.put("direction", direction)
        values.put("state", state)
        values.put("with", with)
        values.put("cursor", cursor)
        values.put("limit", limit)
        return values
    }
}
