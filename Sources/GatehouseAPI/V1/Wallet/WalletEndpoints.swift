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
        /// Attaches a wallet to my verified phone (409 `phone_not_verified` without one). Answers the
        /// new wallet (201), or the one I have (200).
        public static let attach = Endpoint<NoContent, WalletInfo>(.post, "/v1/wallet", success: 201)
        /// My wallet's movements, newest first (`?cursor=`, `?limit=`).
        public static let transactions = Endpoint<NoContent, WalletTransactionPage>(.get, "/v1/wallet/transactions")
        /// Who a phone, tag or email pays (`?phone=` | `?tag=` | `?email=`): to show the name before paying.
        public static let recipient = Endpoint<NoContent, WalletParty>(.get, "/v1/wallet/recipients")
        /// Sends money (needs `Idempotency-Key`). Answers the transfer and my new balance.
        public static let transfer = Endpoint<NewTransfer, TransferResult>(.post, "/v1/wallet/transfers", success: 201)
        /// One transfer of mine.
        public static let transferDetail = Endpoint<NoContent, Transfer>(.get, "/v1/wallet/transfers/{id}")
        /// Asks a person for money: an invoice or a loan (needs `Idempotency-Key`).
        public static let createRequest = Endpoint<NewMoneyRequest, MoneyRequest>(.post, "/v1/wallet/requests", success: 201)
        /// Requests to me or from me (`?direction=incoming|outgoing`, `?state=`, `?with=` a person's id, `?cursor=`), newest first.
        public static let requests = Endpoint<NoContent, MoneyRequestPage>(.get, "/v1/wallet/requests")
        /// One request of mine.
        public static let request = Endpoint<NoContent, MoneyRequest>(.get, "/v1/wallet/requests/{id}")
        /// Pays a request to me (needs `Idempotency-Key`); on `insufficient_funds` it stays open.
        public static let confirm = Endpoint<NoContent, RequestPayment>(.post, "/v1/wallet/requests/{id}/confirm")
        /// Declines a request to me (needs `Idempotency-Key`).
        public static let decline = Endpoint<NoContent, MoneyRequest>(.post, "/v1/wallet/requests/{id}/decline")
        /// Cancels my request (needs `Idempotency-Key`).
        public static let cancel = Endpoint<NoContent, MoneyRequest>(.post, "/v1/wallet/requests/{id}/cancel")
        /// Repays a loan I was paid, in full (needs `Idempotency-Key`).
        public static let repay = Endpoint<NoContent, RequestPayment>(.post, "/v1/wallet/requests/{id}/repay")

        /// Every operation above (the tests check it against the router and the OpenAPI document).
        public static let all: [any EndpointDeclaration] = [
            wallet, attach, transactions, recipient, transfer, transferDetail, createRequest, requests, request, confirm, decline, cancel, repay,
        ]
    }
}
