import AsyncHTTPClient
import Crypto
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehouseServer
import GatehouseTestSupport
import Logging
import NIOSSL
import Testing

/// The push clients against local peers that check what Apple's and Google's documentation
/// requires (`Support/push_peers.py`, HTTP/2 over TLS): APNs' ES256 provider token, headers and
/// payload; the OAuth JWT-bearer grant's RS256 assertion and FCM's message; what each answer
/// means for the device and the retries.
@Suite("Push: APNs and FCM against their protocols")
struct PushProviderTests {
    static func client(_ peers: PushPeers) -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.additionalTrustRoots = [.file(peers.caFile)]
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
    }

    static func envelope(_ platform: PushPlatform, token: String, topic: String? = nil, body: String = "Hi there") -> PushEnvelope {
        PushEnvelope(device: UUID(), platform: platform, token: token, topic: topic, environment: platform == .apns ? .production : nil,
                     title: "Ann", body: body, badge: 3, thread: "chat-1", collapseKey: "chat-1", data: ["kind": "message", "chat": "chat-1"])
    }

    static func hex(_ prefix: String) -> String { prefix + String(repeating: "0123456789abcdef", count: 4).dropFirst(prefix.count) }

    @Test("APNs: an HTTP/2 request with a verifiable ES256 token (reused, then renewed after 50 minutes), the headers and a payload of at most 4 KB; 410 and BadDeviceToken mean the device is gone; 429 waits Retry-After")
    func apns() async throws {
        let peers = try await PushPeers.start()
        defer { peers.stop() }
        let http = Self.client(peers)
        defer { Task { try? await http.shutdown() } }
        let apns = try APNsClient(settings: try peers.apns(), httpClient: http, timeoutSeconds: 10, logger: Logger(label: "test"))
        let now = Date()

        // MUT
        let first = try await apns.send(Self.envelope(.apns, token: Self.hex("aaaa"), topic: peers.bundleID), now: now)
        let long = try await apns.send(Self.envelope(.apns, token: Self.hex("abcd"), topic: peers.bundleID, body: String(repeating: "слово ", count: 2_000)),
                                       now: now.addingTimeInterval(60))
        let renewed = try await apns.send(Self.envelope(.apns, token: Self.hex("aaaa"), topic: peers.bundleID), now: now.addingTimeInterval(51 * 60))
        let gone = try await apns.send(Self.envelope(.apns, token: Self.hex("dead"), topic: peers.bundleID), now: now.addingTimeInterval(51 * 60))
        let bad = try await apns.send(Self.envelope(.apns, token: Self.hex("bad0"), topic: peers.bundleID), now: now.addingTimeInterval(51 * 60))
        var busy: [String] = []
        for _ in 0..<3 {
            do {
                _ = try await apns.send(Self.envelope(.apns, token: Self.hex("cafe"), topic: peers.bundleID), now: now.addingTimeInterval(51 * 60))
                busy.append("sent")
            } catch DeliveryError.later(_, let after) {
                busy.append("later \(Int(after))")
            }
        }

        // validate
        #expect(first == .sent && long == .sent && renewed == .sent)
        #expect(gone.isUnregistered && bad.isUnregistered)
        #expect(busy == ["later 1", "later 1", "sent"])
        let received = peers.received()
        #expect(received.count == 8 && received.allSatisfy { $0["ok"] as? Bool == true }, "\(received.filter { $0["ok"] as? Bool != true })")
        #expect(received.allSatisfy { $0["http"] as? String == "2" })
        let tokens = received.compactMap { $0["jwtToken"] as? String }
        #expect(tokens[0] == tokens[1] && tokens[1] != tokens[2] && tokens[2] == tokens[3], "reused within 50 minutes, renewed after")
        let headers = try #require(received.first?["headers"] as? [String: String])
        #expect(headers["apns-collapse-id"] == "chat-1" && headers["apns-priority"] == "10")
        let payload = try #require(received.first?["payload"] as? [String: Any])
        let aps = try #require(payload["aps"] as? [String: Any])
        #expect(aps["badge"] as? Int == 3 && aps["thread-id"] as? String == "chat-1" && aps["mutable-content"] as? Int == 1)
        #expect(payload["kind"] as? String == "message" && payload["chat"] as? String == "chat-1", "our deep-link keys beside aps")
        let cut = try #require((received[1]["payload"] as? [String: Any])?["aps"] as? [String: Any])
        let body = (cut["alert"] as? [String: Any])?["body"] as? String ?? ""
        #expect(body.hasSuffix("…"), "a long text is cut to fit 4 KB: \(String(describing: cut["alert"]).prefix(300))")
    }

    @Test("FCM: the JWT-bearer grant with a verifiable RS256 assertion, its access token cached, HTTP v1 messages; UNREGISTERED and an invalid token mean the device is gone; QUOTA_EXCEEDED waits Retry-After")
    func fcm() async throws {
        let peers = try await PushPeers.start()
        defer { peers.stop() }
        let http = Self.client(peers)
        defer { Task { try? await http.shutdown() } }
        let fcm = try FCMClient(settings: try peers.fcm(), httpClient: http, timeoutSeconds: 10, logger: Logger(label: "test"))
        let now = Date()

        // MUT
        let first = try await fcm.send(Self.envelope(.fcm, token: "device-1"), now: now)
        let second = try await fcm.send(Self.envelope(.fcm, token: "device-2"), now: now.addingTimeInterval(600))
        let gone = try await fcm.send(Self.envelope(.fcm, token: "gone-1"), now: now.addingTimeInterval(600))
        let invalid = try await fcm.send(Self.envelope(.fcm, token: "invalid-1"), now: now.addingTimeInterval(600))
        var quota: [String] = []
        for _ in 0..<2 {
            do {
                _ = try await fcm.send(Self.envelope(.fcm, token: "quota-1"), now: now.addingTimeInterval(600))
                quota.append("sent")
            } catch DeliveryError.later(_, let after) {
                quota.append("later \(Int(after))")
            }
        }
        let afterExpiry = try await fcm.send(Self.envelope(.fcm, token: "device-3"), now: now.addingTimeInterval(3_600))

        // validate
        #expect(first == .sent && second == .sent && afterExpiry == .sent)
        #expect(gone.isUnregistered && invalid.isUnregistered)
        #expect(quota == ["later 1", "sent"])
        let received = peers.received()
        #expect(received.allSatisfy { $0["ok"] as? Bool == true }, "\(received.filter { $0["ok"] as? Bool != true })")
        #expect(received.filter { $0["service"] as? String == "oauth" }.count == 2, "one token for an hour, a new one when it expires")
        let message = try #require(received.first { $0["service"] as? String == "fcm" }?["message"] as? [String: Any])
        #expect((message["notification"] as? [String: String])?["title"] == "Ann")
        #expect((message["data"] as? [String: String])?["chat"] == "chat-1")
        #expect((message["android"] as? [String: Any])?["collapse_key"] as? String == "chat-1")
    }
}

extension PushProviderTests {
    @Test("APNs refusing our credentials (a key that is not the team's: 403) is an alarm and a retry in 15 minutes, not a storm")
    func apnsWrongKey() async throws {
        let peers = try await PushPeers.start()
        defer { peers.stop() }
        let http = Self.client(peers)
        defer { Task { try? await http.shutdown() } }
        var settings = try peers.apns()
        settings.privateKeyPEM = P256.Signing.PrivateKey().pemRepresentation
        let apns = try APNsClient(settings: settings, httpClient: http, timeoutSeconds: 10, logger: Logger(label: "test"))

        // MUT
        var refusal: DeliveryError?
        do {
            _ = try await apns.send(Self.envelope(.apns, token: Self.hex("aaaa"), topic: peers.bundleID))
        } catch let error as DeliveryError {
            refusal = error
        }

        // validate
        guard case .later(let text, let after)? = refusal else { Issue.record("expected a slow retry, got \(String(describing: refusal))"); return }
        #expect(after == 900 && text.contains("403"), "\(text)")
        #expect(peers.received().first?["ok"] as? Bool == false, "the peer refused the signature")
    }
}

extension APNsClient.Outcome {
    var isUnregistered: Bool { if case .unregistered = self { true } else { false } }
}
