import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import GatehouseFoundation

/// `stripe_peer.py` running: a local Stripe (Checkout Sessions, refunds, signed webhooks) on a free
/// port, one per test. Its controls send the server the notifications Stripe would.
final class StripePeer: @unchecked Sendable {
    let secretKey = "sk_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
    let webhookSecret = "whsec_" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
    private var process: PythonPeer!

    var port: Int { process.port }
    var base: String { process.base }

    private init() {}

    static func start() async throws -> StripePeer {
        let peer = StripePeer()
        peer.process = try await PythonPeer.start("stripe_peer.py", ["--secret-key", peer.secretKey, "--webhook-secret", peer.webhookSecret],
                                                  hint: " (is the stripe package installed? run scripts/test.sh)")
        return peer
    }

    func stop() {
        process.stop()
    }

    /// The top-up settings that point the server at this peer.
    func configure(_ c: inout GatehouseConfiguration) {
        c.wallet.topUps.provider = .stripe
        c.wallet.topUps.stripeSecretKey = secretKey
        c.wallet.topUps.webhookSecret = webhookSecret
        c.wallet.topUps.stripeAPIURL = base
    }

    /// Calls a control (`/_test/<path>`) with a JSON body and answers its JSON.
    @discardableResult
    func control(_ path: String, _ body: [String: Any] = [:]) async throws -> [String: Any] {
        var request = URLRequest(url: URL(string: "\(base)/_test/\(path)")!)
        request.httpMethod = path == "requests" ? "GET" : "POST"
        if request.httpMethod == "POST" { request.httpBody = try JSONSerialization.data(withJSONObject: body) }
        request.timeoutInterval = 60
        let data = try await Self.load(request)
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
    }

    /// Every API request the peer received: path, headers, form.
    func requests() async throws -> [[String: Any]] {
        var request = URLRequest(url: URL(string: "\(base)/_test/requests")!)
        request.timeoutInterval = 30
        return (try JSONSerialization.jsonObject(with: try await Self.load(request)) as? [[String: Any]]) ?? []
    }

    /// The peer tells the server what it sends to the webhook at `port`, at the server's clock.
    func point(atServerPort port: Int, now: Date) async throws {
        try await control("config", ["webhook": "http://127.0.0.1:\(port)/webhooks/stripe", "now": now.timeIntervalSince1970])
    }

    private static func load(_ request: URLRequest) async throws -> Data {
        try await withCheckedThrowingContinuation { continuation in
            URLSession.shared.dataTask(with: request) { data, _, error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: data ?? Data()) }
            }.resume()
        }
    }
}
