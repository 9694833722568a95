import AsyncHTTPClient
import Foundation
import GatehouseAPI
import GatehouseFoundation
import NIOCore
import NIOHTTP1

/// Stripe as the wallet's payment provider: a Checkout Session per top-up (`POST
/// /v1/checkout/sessions`, form-encoded, the secret key as a bearer token, the top-up's id as the
/// `Idempotency-Key`, so a retried creation answers the same session), refunds by `POST
/// /v1/refunds`, and notifications by its signed webhooks (`StripeNotifications`). The API
/// version is pinned, so the shapes read here do not change under us when the account's default does.
package struct StripeProvider: PaymentProvider {
    package let secretKey: String
    package let apiURL: String
    package let notifications: StripeNotifications
    package let httpClient: HTTPClient
    package let timeout: TimeAmount
    package static let apiVersion = "2024-06-20"

    package var name: String { "stripe" }

    package init(secretKey: String, webhookSecret: String, apiURL: String, tolerance: TimeInterval, httpClient: HTTPClient, timeoutSeconds: Int) {
        self.secretKey = secretKey
        self.apiURL = apiURL.hasSuffix("/") ? String(apiURL.dropLast()) : apiURL
        self.notifications = StripeNotifications(secret: webhookSecret, tolerance: tolerance)
        self.httpClient = httpClient
        self.timeout = .seconds(Int64(timeoutSeconds))
    }

    /// The form of a Checkout Session for one top-up: one line, our top-up's id in the session's
    /// and its payment intent's metadata (so a refund's notification names it too).
    package static func checkoutForm(_ order: CheckoutOrder) -> [(String, String)] {
        let id = order.topUp.uuidString.lowercased()
        let returnURL = order.returnURL.replacingOccurrences(of: "{id}", with: id)
        return [
            ("mode", "payment"),
            ("line_items[0][quantity]", "1"),
            ("line_items[0][price_data][currency]", order.currency.lowercased()),
            ("line_items[0][price_data][unit_amount]", String(order.amount)),
            ("line_items[0][price_data][product_data][name]", order.description),
            ("client_reference_id", id),
            ("metadata[\(StripeNotifications.topUpKey)]", id),
            ("payment_intent_data[metadata][\(StripeNotifications.topUpKey)]", id),
            ("success_url", returnURL),
            ("cancel_url", returnURL),
        ]
    }

    package func checkout(_ order: CheckoutOrder) async throws -> ProviderCheckout {
        struct Session: Decodable { var id: String; var url: String? }
        let session: Session = try await post("/v1/checkout/sessions", Self.checkoutForm(order), key: "topup-" + order.topUp.uuidString.lowercased())
        guard let url = session.url else { throw ProviderUnavailable("Stripe answered a session without a url") }
        return ProviderCheckout(id: session.id, url: url)
    }

    package func refund(paymentIntent: String, amount: Int64, topUp: UUID, key: String) async throws -> ProviderRefund {
        struct Refund: Decodable { var id: String; var amount: Int64; var status: String? }
        let refund: Refund = try await post("/v1/refunds", [
            ("payment_intent", paymentIntent), ("amount", String(amount)),
            ("metadata[\(StripeNotifications.topUpKey)]", topUp.uuidString.lowercased()),
        ], key: key)
        return ProviderRefund(id: refund.id, amount: refund.amount, succeeded: refund.status == "succeeded")
    }

    package func event(payload: Data, signature: String?, now: Date) throws(NotificationRefusal) -> ProviderEvent {
        try notifications.event(payload: payload, header: signature, now: now)
    }

    private struct Failure: Decodable {
        var error: Detail
        struct Detail: Decodable { var type: String?; var message: String? }
    }

    /// One form `POST` with an idempotency key; Stripe's error object becomes the reason.
    private func post<T: Decodable>(_ path: String, _ form: [(String, String)], key: String) async throws -> T {
        var request = HTTPClientRequest(url: apiURL + path)
        request.method = .POST
        request.headers.add(name: "authorization", value: "Bearer " + secretKey)
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "idempotency-key", value: key)
        request.headers.add(name: "stripe-version", value: Self.apiVersion)
        request.body = .bytes(ByteBuffer(string: FormURLEncoding.encode(form)))
        let response: HTTPClientResponse
        let body: ByteBuffer
        do {
            response = try await httpClient.execute(request, timeout: timeout)
            body = try await response.body.collect(upTo: 1 << 20)
        } catch {
            throw ProviderUnavailable("Stripe cannot be reached: \(error)")
        }
        guard (200..<300).contains(response.status.code) else {
            let detail = (try? JSONDecoder().decode(Failure.self, from: Data(body.readableBytesView))).map { "\($0.error.type ?? "error"): \($0.error.message ?? "")" }
            throw ProviderUnavailable("Stripe answered \(response.status.code) to \(path)" + (detail.map { " (\($0))" } ?? ""))
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(body.readableBytesView))
        } catch {
            throw ProviderUnavailable("Stripe's answer to \(path) is not what its documentation says: \(error)")
        }
    }
}
