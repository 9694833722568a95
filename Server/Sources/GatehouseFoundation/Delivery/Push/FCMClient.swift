import AsyncHTTPClient
import Foundation
import GatehouseAPI
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import _CryptoExtras

/// Firebase Cloud Messaging by its HTTP v1 API: `POST /v1/projects/{project}/messages:send` with
/// an OAuth 2 access token, which the service account obtains by the JWT-bearer grant (RFC 7523:
/// an RS256 assertion with `iss` the account's email, `scope` FCM's, `aud` the token endpoint,
/// `iat` and `exp` an hour apart) and reuses until a minute before it expires.
package final class FCMClient: Sendable {
    package struct ServiceAccount: Decodable, Sendable {
        package var projectID: String
        package var clientEmail: String
        package var privateKey: String
        package var privateKeyID: String?
        package var tokenURI: String

        enum CodingKeys: String, CodingKey {
            case projectID = "project_id", clientEmail = "client_email", privateKey = "private_key", privateKeyID = "private_key_id", tokenURI = "token_uri"
        }
    }

    package let account: ServiceAccount
    package let endpoint: String
    package let httpClient: HTTPClient
    package let timeout: TimeAmount
    package let logger: Logger
    /// The key is read again for each assertion (once an hour): its type is not `Sendable`.
    private var key: _RSA.Signing.PrivateKey { get throws { try _RSA.Signing.PrivateKey(pemRepresentation: account.privateKey) } }
    private let cached = NIOLockedValueBox<(token: String, expires: Date)?>(nil)
    package static let scope = "https://www.googleapis.com/auth/firebase.messaging"

    package init(settings: GatehouseConfiguration.Push.FCM, httpClient: HTTPClient, timeoutSeconds: Int, logger: Logger) throws {
        do {
            self.account = try JSONDecoder().decode(ServiceAccount.self, from: Data(settings.serviceAccountJSON.utf8))
        } catch {
            throw ConfigurationError(variable: "GATEHOUSE_FCM_SERVICE_ACCOUNT_FILE", problem: "not a service account's JSON (project_id, client_email, private_key, token_uri): \(error)")
        }
        do {
            _ = try _RSA.Signing.PrivateKey(pemRepresentation: account.privateKey)
        } catch {
            throw ConfigurationError(variable: "GATEHOUSE_FCM_SERVICE_ACCOUNT_FILE", problem: "its private_key is not an RSA key in PEM: \(error)")
        }
        self.endpoint = settings.endpoint
        self.httpClient = httpClient
        self.timeout = .seconds(Int64(timeoutSeconds))
        self.logger = logger
    }

    private struct Assertion: Encodable {
        var iss: String
        var scope: String
        var aud: String
        var iat: Int
        var exp: Int
    }

    private struct TokenAnswer: Decodable {
        var access_token: String
        var expires_in: Int?
    }

    /// An access token: the cached one until a minute before it expires, else a new one.
    package func accessToken(now: Date = Date()) async throws -> String {
        if let (token, expires) = cached.withLockedValue({ $0 }), expires.timeIntervalSince(now) > 60 { return token }
        let iat = Int(now.timeIntervalSince1970)
        let assertion = try JWS.rs256(keyID: account.privateKeyID,
                                      claims: Assertion(iss: account.clientEmail, scope: Self.scope, aud: account.tokenURI, iat: iat, exp: iat + 3_600),
                                      key: try key)
        var request = HTTPClientRequest(url: account.tokenURI)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(ByteBuffer(string: "grant_type=" + FormURLEncoding.escape("urn:ietf:params:oauth:grant-type:jwt-bearer") + "&assertion=" + assertion))
        let response: HTTPClientResponse
        do {
            response = try await httpClient.execute(request, timeout: timeout)
        } catch {
            throw DeliveryError.transient("the OAuth token endpoint is unreachable: \(error)")
        }
        let text = (try? await response.body.collect(upTo: 65_536)).map { String(buffer: $0) } ?? ""
        guard response.status == .ok, let answer = try? JSONDecoder().decode(TokenAnswer.self, from: Data(text.utf8)) else {
            if response.status.code >= 500 || response.status.code == 429 { throw DeliveryError.transient("the OAuth token endpoint answered \(response.status.code)") }
            logger.critical("push: Google refused the service account's assertion (\(response.status.code) \(text.prefix(200))): check GATEHOUSE_FCM_SERVICE_ACCOUNT_FILE")
            throw DeliveryError.later("the OAuth token endpoint answered \(response.status.code)", after: 900)
        }
        cached.withLockedValue { $0 = (answer.access_token, now.addingTimeInterval(TimeInterval(answer.expires_in ?? 3_600))) }
        return answer.access_token
    }

    private func dropToken() { cached.withLockedValue { $0 = nil } }

    /// The message: a notification (title, body), our deep-link keys as `data` (strings), the
    /// chat as Android's `tag` and `collapse_key`, and the badge for iOS devices FCM reaches.
    package static func message(_ push: PushEnvelope) throws -> Data {
        var android: [String: JSONValue] = ["priority": .string("HIGH"), "ttl": .string("86400s")]
        var androidNotification: [String: JSONValue] = [:]
        if let thread = push.thread { androidNotification["tag"] = .string(thread) }
        if let badge = push.badge { androidNotification["notification_count"] = .integer(Int64(badge)) }
        if !androidNotification.isEmpty { android["notification"] = .object(androidNotification) }
        if let collapse = push.collapseKey { android["collapse_key"] = .string(collapse) }
        var aps: [String: JSONValue] = ["sound": .string("default")]
        if let badge = push.badge { aps["badge"] = .integer(Int64(badge)) }
        if let thread = push.thread { aps["thread-id"] = .string(thread) }
        let message: [String: JSONValue] = [
            "token": .string(push.token),
            "notification": .object(["title": .string(push.title), "body": .string(push.body)]),
            "data": .object(push.data.mapValues(JSONValue.string)),
            "android": .object(android),
            "apns": .object(["payload": .object(["aps": .object(aps)])]),
        ]
        return try JSONValue.object(["message": .object(message)]).sortedJSON()
    }

    package func send(_ push: PushEnvelope, now: Date = Date()) async throws -> APNsClient.Outcome {
        var request = HTTPClientRequest(url: endpoint + "/v1/projects/" + account.projectID + "/messages:send")
        request.method = .POST
        request.headers.add(name: "authorization", value: "Bearer " + (try await accessToken(now: now)))
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(data: try Self.message(push)))
        let response: HTTPClientResponse
        do {
            response = try await httpClient.execute(request, timeout: timeout)
        } catch {
            throw DeliveryError.transient("FCM unreachable: \(error)")
        }
        let text = (try? await response.body.collect(upTo: 65_536)).map { String(buffer: $0) } ?? ""
        let error = (try? JSONValue.parse(text.utf8))?["error"]
        let status = error?["status"]?.string ?? ""
        let details = error?["details"]?.array ?? []
        let code = details.compactMap { $0["errorCode"]?.string }.first ?? status
        let tokenAtFault = details.contains { detail in
            (detail["fieldViolations"]?.array ?? []).contains { $0["field"]?.string?.contains("token") == true }
        }
        let summary = "FCM answered \(response.status.code) \(code)"
        switch response.status.code {
        case 200: return .sent
        case 404 where code == "UNREGISTERED", 400 where code == "UNREGISTERED": return .unregistered(summary)
        case 400 where code == "INVALID_ARGUMENT" && tokenAtFault: return .unregistered(summary)
        case 403 where code == "SENDER_ID_MISMATCH": return .unregistered(summary)
        case 401:
            dropToken()
            throw DeliveryError.transient(summary)
        case 403:
            dropToken()
            logger.critical("push: FCM refused the service account (\(code)): check GATEHOUSE_FCM_SERVICE_ACCOUNT_FILE and the project's permissions")
            throw DeliveryError.later(summary, after: 900)
        case 429, 500...:
            throw DeliveryError.retry(summary, retryAfter: response.headers.first(name: "retry-after"))
        default:
            throw DeliveryError.permanent(summary)
        }
    }
}
