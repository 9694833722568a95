import Crypto
import Foundation
import GatehouseFoundation

/// The payment provider of development mode: no card, no money. A top-up's page is on this server
/// (`/dev/payments/{id}`), where a button pays or abandons it; the page then sends the server a
/// notification in Stripe's format, signed with this provider's secret (random per process), so a
/// local top-up is credited by the same path as a real one. Refunds succeed at once.
package struct LocalPaymentProvider: PaymentProvider {
    package let publicURL: String
    package let secret: String
    package let notifications: StripeNotifications

    package var name: String { "local" }

    package init(publicURL: String, tolerance: TimeInterval) {
        self.publicURL = publicURL
        self.secret = "whsec_local_" + Secrets.systemToken()
        self.notifications = StripeNotifications(secret: secret, tolerance: tolerance)
    }

    /// The payment's id: derived from the top-up's, so asking again answers the same one.
    package static func paymentID(_ topUp: UUID) -> String {
        "cs_local_" + topUp.uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    }

    package func checkout(_ order: CheckoutOrder) async throws -> ProviderCheckout {
        let id = Self.paymentID(order.topUp)
        return ProviderCheckout(id: id, url: "\(publicURL)/dev/payments/\(id)")
    }

    package func refund(paymentIntent: String, amount: Int64, topUp: UUID, key: String) async throws -> ProviderRefund {
        let digest = SHA256.hash(data: Data(key.utf8)).hexString.prefix(24)
        return ProviderRefund(id: "re_local_" + digest, amount: amount, succeeded: true)
    }

    package func event(payload: Data, signature: String?, now: Date) throws(NotificationRefusal) -> ProviderEvent {
        try notifications.event(payload: payload, header: signature, now: now)
    }

    /// The notification Stripe sends when its page is paid (`checkout.session.completed`), and its signature header.
    package func paidNotification(payment: String, topUp: UUID, amount: Int64, currency: String, now: Date) -> (payload: Data, signature: String) {
        let id = topUp.uuidString.lowercased()
        let object: [String: JSONValue] = [
            "id": .string(payment), "object": .string("checkout.session"), "amount_total": .integer(amount), "currency": .string(currency.lowercased()),
            "payment_status": .string("paid"), "status": .string("complete"),
            "payment_intent": .string("pi_local_" + id.replacingOccurrences(of: "-", with: "")),
            "client_reference_id": .string(id), "metadata": .object([StripeNotifications.topUpKey: .string(id)]), "livemode": .bool(false),
        ]
        let event: [String: JSONValue] = [
            "id": .string("evt_local_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")), "object": .string("event"),
            "api_version": .string(StripeProvider.apiVersion), "created": .integer(Int64(now.timeIntervalSince1970)),
            "type": .string("checkout.session.completed"), "data": .object(["object": .object(object)]), "livemode": .bool(false),
        ]
        let payload = (try? JSONValue.object(event).sortedJSON()) ?? Data()
        return (payload, StripeNotifications.header(payload: payload, secret: secret, timestamp: Int(now.timeIntervalSince1970)))
    }
}
