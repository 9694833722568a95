import Crypto
import Foundation
import GatehouseFoundation

/// Stripe's webhook notifications, read as its documentation says ("Check the webhook
/// signatures"): the `Stripe-Signature` header is `t=<unix time>,v1=<hex>[,v1=<hex>…]`, where each
/// `v1` is HMAC-SHA256, keyed by the endpoint's signing secret (`whsec_…`, its bytes as written),
/// of `<t>.<the raw body>`. A notification is believed when one `v1` matches (compared in constant
/// time) and `t` is within the tolerance of our clock (Stripe's default: 300 seconds), which bounds
/// a replay. Other schemes in the header (`v0`) are ignored.
package struct StripeNotifications: Sendable {
    package let secret: String
    package let tolerance: TimeInterval

    package init(secret: String, tolerance: TimeInterval) {
        self.secret = secret
        self.tolerance = tolerance
    }

    /// The header Stripe would send with `payload` at `timestamp` (the local provider signs with it; so do the tests).
    package static func header(payload: Data, secret: String, timestamp: Int) -> String {
        "t=\(timestamp),v1=" + signature(payload: payload, secret: secret, timestamp: String(timestamp))
    }

    private static func signature(payload: Data, secret: String, timestamp: String) -> String {
        var signed = Data(timestamp.utf8)
        signed.append(UInt8(ascii: "."))
        signed.append(payload)
        return Data(HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: Data(secret.utf8)))).hexString
    }

    /// Checks the header and reads the event.
    package func event(payload: Data, header: String?, now: Date) throws(NotificationRefusal) -> ProviderEvent {
        guard let header, !header.isEmpty else { throw .missingSignature }
        var timestamp: String?
        var signatures: [String] = []
        for element in header.split(separator: ",") {
            let pair = element.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            let key = pair[0].trimmingCharacters(in: .whitespaces), value = pair[1].trimmingCharacters(in: .whitespaces)
            if key == "t" { timestamp = value } else if key == "v1" { signatures.append(value) }
        }
        guard let timestamp, let seconds = Int(timestamp), !signatures.isEmpty else { throw .malformedSignature }
        let expected = Self.signature(payload: payload, secret: secret, timestamp: timestamp)
        // Every candidate is compared, so the time taken does not tell which one came close.
        var matched = false
        for candidate in signatures where Secrets.constantTimeEquals(candidate.lowercased(), expected) { matched = true }
        guard matched else { throw .forgedSignature }
        // The time is checked after the signature: an attacker learns nothing from which refusal he gets.
        guard abs(now.timeIntervalSince1970 - Double(seconds)) <= tolerance else { throw .staleTimestamp }
        return try Self.read(payload)
    }

    // MARK: - Events

    private struct Event: Decodable {
        var id: String
        var type: String
        var data: Payload
        struct Payload: Decodable { var object: Object }
    }

    /// The members of a Checkout Session or a Refund that matter here (both are `data.object`).
    private struct Object: Decodable {
        var id: String
        var amount: Int64?
        var amount_total: Int64?
        var currency: String?
        var payment_status: String?
        var status: String?
        var payment_intent: String?
        var metadata: [String: String]?

        enum CodingKeys: String, CodingKey { case id, amount, amount_total, currency, payment_status, status, payment_intent, metadata }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            id = try c.decode(String.self, forKey: .id)
            amount = try c.decodeIfPresent(Int64.self, forKey: .amount)
            amount_total = try c.decodeIfPresent(Int64.self, forKey: .amount_total)
            currency = try c.decodeIfPresent(String.self, forKey: .currency)
            payment_status = try c.decodeIfPresent(String.self, forKey: .payment_status)
            status = try c.decodeIfPresent(String.self, forKey: .status)
            // An expanded payment intent is an object with its id.
            if let id = try? c.decodeIfPresent(String.self, forKey: .payment_intent) {
                payment_intent = id
            } else {
                struct Expanded: Decodable { var id: String }
                payment_intent = (try? c.decodeIfPresent(Expanded.self, forKey: .payment_intent))?.id
            }
            // Metadata values are strings; anything else is not ours.
            metadata = try? c.decodeIfPresent([String: String].self, forKey: .metadata)
        }
    }

    /// The metadata key that names our top-up on a payment (and on its payment intent).
    package static let topUpKey = "gatehouse_topup"

    static func read(_ payload: Data) throws(NotificationRefusal) -> ProviderEvent {
        let event: Event
        do { event = try JSONDecoder().decode(Event.self, from: payload) } catch { throw .malformedEvent }
        let object = event.data.object
        let topUp = object.metadata?[Self.topUpKey]
        switch event.type {
        case "checkout.session.completed", "checkout.session.async_payment_succeeded":
            // A session completed by a delayed method is `unpaid` until its second event.
            guard object.payment_status == "paid" else { return .ignored(event: event.id, type: event.type) }
            return .paid(event: event.id, payment: object.id, paymentIntent: object.payment_intent, topUp: topUp,
                         amount: object.amount_total, currency: object.currency)
        case "checkout.session.expired", "checkout.session.async_payment_failed":
            return .expired(event: event.id, payment: object.id, topUp: topUp)
        case "refund.created", "refund.updated":
            guard object.status == "succeeded", let amount = object.amount else { return .ignored(event: event.id, type: event.type) }
            return .refunded(event: event.id, refund: object.id, paymentIntent: object.payment_intent, amount: amount, currency: object.currency)
        default:
            return .ignored(event: event.id, type: event.type)
        }
    }
}
