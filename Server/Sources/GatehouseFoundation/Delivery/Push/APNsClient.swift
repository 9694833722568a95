import AsyncHTTPClient
import Crypto
import Foundation
import GatehouseAPI
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// Apple's push service, by its provider API (HTTP/2, token-based authentication): a request per
/// push to `/3/device/{token}` with an ES256 JWT (`kid`: the key's id, `iss`: the team, `iat`)
/// made from the team's `.p8` key, reused for 50 minutes (Apple refuses one older than an hour
/// and one renewed more than once in 20 minutes).
package final class APNsClient: Sendable {
    package let settings: GatehouseConfiguration.Push.APNs
    package let httpClient: HTTPClient
    package let timeout: TimeAmount
    package let logger: Logger
    /// The key's raw form (the key type is not `Sendable`; a token is made once in 50 minutes).
    private let keyData: Data
    private let cached = NIOLockedValueBox<(token: String, issuedAt: Date)?>(nil)
    /// How long a provider token is reused.
    package static let tokenLifetime: TimeInterval = 50 * 60
    /// APNs' largest payload.
    package static let maxPayloadBytes = 4_096

    package init(settings: GatehouseConfiguration.Push.APNs, httpClient: HTTPClient, timeoutSeconds: Int, logger: Logger) throws {
        self.settings = settings
        self.httpClient = httpClient
        self.timeout = .seconds(Int64(timeoutSeconds))
        self.logger = logger
        do {
            self.keyData = try P256.Signing.PrivateKey(pemRepresentation: settings.privateKeyPEM).rawRepresentation
        } catch {
            throw ConfigurationError(variable: "GATEHOUSE_APNS_KEY_FILE", problem: "not a P-256 private key in PEM (the .p8 file Apple gives): \(error)")
        }
    }

    private struct Claims: Encodable {
        var iss: String
        var iat: Int
    }

    /// The provider token, made anew when the cached one is older than its lifetime (or dropped).
    package func providerToken(now: Date = Date()) throws -> String {
        if let (token, issuedAt) = cached.withLockedValue({ $0 }), now.timeIntervalSince(issuedAt) < Self.tokenLifetime, issuedAt <= now {
            return token
        }
        let key = try P256.Signing.PrivateKey(rawRepresentation: keyData)
        let token = try JWS.es256(keyID: settings.keyID, claims: Claims(iss: settings.teamID, iat: Int(now.timeIntervalSince1970)), key: key)
        cached.withLockedValue { $0 = (token, now) }
        return token
    }

    private func dropToken() { cached.withLockedValue { $0 = nil } }

    /// The JSON payload: `aps` (a localized alert, badge, sound, thread, `mutable-content` so a
    /// notification service extension may enrich it) and our deep-link keys beside it. At most
    /// 4 KB: a longer text is cut until it fits.
    package static func payload(_ push: PushEnvelope) throws -> Data {
        var body = push.body
        while true {
            var aps: [String: JSONValue] = ["alert": .object(["title": .string(push.title), "body": .string(body)]), "sound": .string("default"),
                                            "mutable-content": .integer(1)]
            if let badge = push.badge { aps["badge"] = .integer(Int64(badge)) }
            if let thread = push.thread { aps["thread-id"] = .string(thread) }
            var object = push.data.mapValues(JSONValue.string)
            object["aps"] = .object(aps)
            let data = try JSONValue.object(object).sortedJSON()
            if data.count <= maxPayloadBytes || body.isEmpty { return data }
            // The excess is in bytes, and a character may take several (Cyrillic two, many emoji four): cut by the
            // body's UTF-8 bytes, on a character boundary, with room for the "…". Counting characters instead
            // cut a long Russian text to nothing.
            let keep = body.utf8.count - (data.count - maxPayloadBytes) - "…".utf8.count
            var kept = ""
            var used = 0
            for character in body {
                let size = character.utf8.count
                if used + size > keep { break }
                kept.append(character)
                used += size
            }
            body = kept.isEmpty ? "" : kept + "…"
        }
    }

    package enum Outcome: Equatable {
        case sent
        /// The token is gone (410 `Unregistered`) or was never good (400 `BadDeviceToken`,
        /// `DeviceTokenNotForTopic`): remove the device.
        case unregistered(String)
    }

    package func send(_ push: PushEnvelope, now: Date = Date()) async throws -> Outcome {
        guard let topic = push.topic else { throw DeliveryError.permanent("an APNs device without a bundle id") }
        let base = push.environment == .sandbox ? settings.sandboxEndpoint : settings.productionEndpoint
        var request = HTTPClientRequest(url: base + "/3/device/" + push.token)
        request.method = .POST
        request.headers.add(name: "authorization", value: "bearer " + (try providerToken(now: now)))
        request.headers.add(name: "apns-topic", value: topic)
        request.headers.add(name: "apns-push-type", value: "alert")
        request.headers.add(name: "apns-priority", value: "10")
        // A day: a phone off for longer gets it when it is back, then it is stale.
        request.headers.add(name: "apns-expiration", value: String(Int(now.timeIntervalSince1970) + 86_400))
        if let collapse = push.collapseKey { request.headers.add(name: "apns-collapse-id", value: String(collapse.prefix(64))) }
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(data: try Self.payload(push)))
        let response: HTTPClientResponse
        do {
            response = try await httpClient.execute(request, timeout: timeout)
        } catch {
            throw DeliveryError.transient("APNs unreachable: \(error)")
        }
        let text = (try? await response.body.collect(upTo: 16_384)).map { String(buffer: $0) } ?? ""
        let reason = (try? JSONValue.parse(text.utf8))?["reason"]?.string ?? ""
        let summary = "APNs answered \(response.status.code) \(reason)"
        switch response.status.code {
        case 200: return .sent
        case 410: return .unregistered(summary)
        case 400 where ["BadDeviceToken", "DeviceTokenNotForTopic", "Unregistered"].contains(reason): return .unregistered(summary)
        case 403 where reason == "ExpiredProviderToken":
            dropToken()
            throw DeliveryError.transient(summary)
        case 403:
            // The key, team or topic is wrong: every push would fail alike. An alarm for the
            // operator, and a slow retry, not a storm.
            dropToken()
            logger.critical("push: APNs refused our credentials (\(reason)): check GATEHOUSE_APNS_KEY_FILE, GATEHOUSE_APNS_KEY_ID, GATEHOUSE_APNS_TEAM_ID and the bundle id")
            throw DeliveryError.later(summary, after: 900)
        case 429, 500...:
            throw DeliveryError.retry(summary, retryAfter: response.headers.first(name: "retry-after"))
        default:
            throw DeliveryError.permanent(summary)
        }
    }
}
