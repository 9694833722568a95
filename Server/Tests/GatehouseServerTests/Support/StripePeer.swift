import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import GatehouseFoundation

/// `stripe_peer.py` running: a local Stripe (Checkout Sessions, refunds, signed webhooks) on a free
/// port, one per test. Its controls send the server the notifications Stripe would.
final class StripePeer: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible { let description: String }

    let port: Int
    let secretKey = "sk_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
    let webhookSecret = "whsec_" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
    private var process = Process()

    var base: String { "http://127.0.0.1:\(port)" }

    private init(port: Int) {
        self.port = port
    }

    static func start() async throws -> StripePeer {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("stripe_peer.py").path
        let peer = StripePeer(port: Int.random(in: 20_000...60_000))
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("stripe-peer-\(UUID().uuidString).log").path
        FileManager.default.createFile(atPath: log, contents: nil)
        peer.process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        peer.process.arguments = ["python3", script, "--port", String(peer.port), "--secret-key", peer.secretKey, "--webhook-secret", peer.webhookSecret]
        peer.process.standardOutput = FileHandle(forWritingAtPath: log)
        peer.process.standardError = FileHandle(forWritingAtPath: log)
        try peer.process.run()
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            guard peer.process.isRunning else {
                throw Failure(description: "stripe_peer.py exited (is the stripe package installed? run scripts/test.sh): " + ((try? String(contentsOfFile: log, encoding: .utf8)) ?? ""))
            }
            if (try? String(contentsOfFile: log, encoding: .utf8))?.contains("ready") == true { return peer }
            try await Task.sleep(for: .milliseconds(50))
        }
        peer.stop()
        throw Failure(description: "stripe_peer.py did not start within 30 s")
    }

    func stop() {
        if process.isRunning { process.terminate() }
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
