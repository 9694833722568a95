import Foundation

/// Where money enters the wallet (docs/wallet.md, "Money in"): a payment service that takes a
/// card on its own page and tells the server, in a signed notification, that it was paid or
/// refunded. `StripeProvider` speaks Stripe's API; `LocalPaymentProvider` stands in for it in
/// development, with a confirmation page on this server. Both read notifications in Stripe's
/// format (`StripeNotifications`), so the path that credits a wallet is one.
package protocol PaymentProvider: Sendable {
    /// The provider's name: the prefix of its references in the ledger and the audit trail.
    var name: String { get }

    /// Creates a payment of `amount` kopecks for the top-up and answers its page. Asked again for
    /// the same top-up (a retry after a lost answer), it answers the same payment.
    func checkout(_ order: CheckoutOrder) async throws -> ProviderCheckout

    /// Refunds `amount` kopecks of a paid payment; the same `key` refunds once.
    func refund(paymentIntent: String, amount: Int64, topUp: UUID, key: String) async throws -> ProviderRefund

    /// A notification the provider sent, once its signature and time are checked.
    func event(payload: Data, signature: String?, now: Date) throws(NotificationRefusal) -> ProviderEvent
}

/// What to charge.
package struct CheckoutOrder: Sendable {
    package var topUp: UUID
    /// In kopecks.
    package var amount: Int64
    /// ISO 4217, as the wallet keeps it (`RUB`).
    package var currency: String
    /// The line the person sees on the provider's page.
    package var description: String
    /// Where the provider sends the person back.
    package var returnURL: String

    package init(topUp: UUID, amount: Int64, currency: String, description: String, returnURL: String) {
        self.topUp = topUp
        self.amount = amount
        self.currency = currency
        self.description = description
        self.returnURL = returnURL
    }
}

/// A payment the provider made for a top-up: its id and the page that takes the money.
package struct ProviderCheckout: Sendable, Equatable {
    package var id: String
    package var url: String
    package init(id: String, url: String) {
        self.id = id
        self.url = url
    }
}

/// A refund the provider accepted.
package struct ProviderRefund: Sendable, Equatable {
    package var id: String
    package var amount: Int64
    /// `succeeded` moves the ledger now; `pending` when the provider's notification says so.
    package var succeeded: Bool
    package init(id: String, amount: Int64, succeeded: Bool) {
        self.id = id
        self.amount = amount
        self.succeeded = succeeded
    }
}

/// What a verified notification says.
package enum ProviderEvent: Sendable, Equatable {
    /// A payment was made: the top-up it names (our metadata), its amount and currency as the provider charged them.
    case paid(event: String, payment: String, paymentIntent: String?, topUp: String?, amount: Int64?, currency: String?)
    /// The payment page expired (or the payment failed): nothing will be charged.
    case expired(event: String, payment: String, topUp: String?)
    /// A refund went through.
    case refunded(event: String, refund: String, paymentIntent: String?, amount: Int64, currency: String?)
    /// Anything else the provider tells (other event types, payments not yet paid, refunds not yet done).
    case ignored(event: String, type: String)
}

/// Why a notification was not believed. The raw values go into the audit trail.
package enum NotificationRefusal: String, Error, Sendable, Equatable {
    /// No `Stripe-Signature` header.
    case missingSignature = "missing_signature"
    /// A header without a time or without a `v1` signature.
    case malformedSignature = "malformed_signature"
    /// No `v1` signature matches the body with our secret: forged, or signed for another endpoint.
    case forgedSignature = "forged_signature"
    /// Signed too long ago (or in the future): a replay, or a clock far off.
    case staleTimestamp = "stale_timestamp"
    /// Signed, but not an event we can read.
    case malformedEvent = "malformed_event"
}

/// The provider could not be reached or refused the call: the top-up stays, and a retry with the
/// same key tries again.
package struct ProviderUnavailable: Error, Sendable {
    package var reason: String
    package init(_ reason: String) {
        self.reason = reason
    }
}
