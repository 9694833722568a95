import AsyncHTTPClient
import Foundation
import GatehouseFoundation
import NIOCore
import NIOHTTP1

/// Delivers a webhook from the outbox (docs/webhooks.md): the body as it was queued, signed for the endpoint's current
/// secret (and the one it replaced, during the overlap) with Standard Webhooks' `webhook-id` (the outbox row: the same
/// on every retry, for the receiver to drop repeats), `webhook-timestamp` and `webhook-signature`. Any 2xx is done;
/// anything else, a timeout or an address the rules refuse now is tried again on the webhook schedule; a disabled or
/// removed endpoint fails for good. Redirects are not followed, and at most `GATEHOUSE_WEBHOOK_MAX_RESPONSE_BYTES` of an
/// answer is read.
package struct WebhookChannel: DeliveryChannel {
    package let endpoints: WebhookEndpoints
    package let client: HTTPClient
    package var name: String { "webhook" }

    package init(endpoints: WebhookEndpoints, client: HTTPClient) {
        self.endpoints = endpoints
        self.client = client
    }

    /// The client webhooks go out on: no redirects, the configured timeout for connecting.
    package static func makeClient(settings: GatehouseConfiguration.Webhooks) -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.timeout = .init(connect: .milliseconds(Int64(settings.timeout * 1000)), read: .milliseconds(Int64(settings.timeout * 1000)))
        configuration.decompression = .disabled
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    package func deliver(_ message: OutgoingMessage) async throws {
        guard let id = UUID(uuidString: message.destination), let signing = try await endpoints.signing(id) else {
            throw DeliveryError.permanent("the endpoint is removed")
        }
        let (endpoint, keys) = signing
        guard endpoint.disabledAt == nil else { throw DeliveryError.permanent("the endpoint is disabled") }
        guard let host = URLComponents(string: endpoint.url)?.host else { throw DeliveryError.permanent("the endpoint's URL has no host") }
        if let refusal = try await endpoints.address.refusal(host: host) { throw DeliveryError.transient(refusal) }
        let messageID = "msg_" + (message.id ?? UUID()).uuidString.lowercased()
        // The wall clock, not the injected one: the timestamp is what a receiver checks against its own clock (five minutes
        // either way, in the reference libraries) to refuse a replay.
        let timestamp = Int(Date().timeIntervalSince1970)
        var request = HTTPClientRequest(url: endpoint.url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "Gatehouse-Webhooks/1")
        request.headers.add(name: "webhook-id", value: messageID)
        request.headers.add(name: "webhook-timestamp", value: String(timestamp))
        request.headers.add(name: "webhook-signature", value: StandardWebhooks.signature(id: messageID, timestamp: timestamp, body: message.body, keys: keys))
        request.body = .bytes(ByteBuffer(string: message.body))
        let settings = endpoints.settings
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request, timeout: .milliseconds(Int64(settings.timeout * 1000)))
        } catch {
            throw DeliveryError.transient("the endpoint did not answer: \(String(describing: error).prefix(200))")
        }
        // Read to the cap and no further (the rest is dropped with the connection); the first bytes go in the error.
        var head: [UInt8] = []
        var read = 0
        do {
            for try await chunk in response.body {
                if head.count < 300 { head += chunk.readableBytesView.prefix(300 - head.count) }
                read += chunk.readableBytes
                if read >= settings.maxResponseBytes { break }
            }
        } catch {}
        let text = String(decoding: head, as: UTF8.self)
        guard (200..<300).contains(response.status.code) else {
            let what = "the endpoint answered \(response.status.code)" + (text.isEmpty ? "" : ": \(text)")
            throw DeliveryError.retry(what, retryAfter: response.headers.first(name: "Retry-After"))
        }
    }
}
