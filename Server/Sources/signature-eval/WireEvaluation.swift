import AsyncHTTPClient
import Foundation
import GatehouseAPI
import GatehouseVerifier
import NIOCore
import NIOFoundationCompat

/// The same evaluation through a running server: each writer registers with `/register/` (as a new
/// address, proven by the code the development outbox holds, answering `res 2` with the missing
/// signatures and their `enrolment_token`) and every attempt goes through `/authenticate/`, whose
/// `similarity` is the score. Writers run `concurrency` at a time. The server runs in development
/// mode (`GET /dev/outbox`).
struct WireEvaluation {
    let server: URL
    let apiKey: String
    let concurrency: Int
    /// Makes the addresses of this run new to the server.
    let run = String(UInt32.random(in: 0...UInt32.max), radix: 36)

    struct Result {
        var outcome: Outcome
        var latencyMeanMs: Double
        var latencyP50Ms: Double
        var latencyP99Ms: Double
        /// Authentications per second over the whole run.
        var rate: Double
    }

    init(server: URL, apiKey: String, concurrency: Int) async throws {
        self.server = server
        self.apiKey = apiKey
        self.concurrency = max(1, concurrency)
    }

    func run(_ writers: [Writer], references: Int, randomPerWriter: Int?) async throws -> Result {
        let start = Date()
        let shards = (0..<concurrency).map { shard in Array(stride(from: shard, to: writers.count, by: concurrency)) }
        let results = try await withThrowingTaskGroup(of: (Outcome, [Double]).self) { group in
            for positions in shards where !positions.isEmpty {
                group.addTask {
                    var scorer = WireScorer(server: server, apiKey: apiKey, run: run)
                    let outcome = try await evaluate(writers, positions: positions, scorer: &scorer, references: references,
                                                     randomPerWriter: randomPerWriter)
                    return (outcome, scorer.latencies)
                }
            }
            var all: [(Outcome, [Double])] = []
            for try await result in group { all.append(result) }
            return all
        }
        var outcome = Outcome()
        var latencies: [Double] = []
        for (part, times) in results {
            outcome.merge(part)
            latencies += times
        }
        latencies.sort()
        let elapsed = Date().timeIntervalSince(start)
        return Result(outcome: outcome,
                      latencyMeanMs: latencies.isEmpty ? 0 : latencies.reduce(0, +) / Double(latencies.count) * 1000,
                      latencyP50Ms: latencies.isEmpty ? 0 : latencies[latencies.count / 2] * 1000,
                      latencyP99Ms: latencies.isEmpty ? 0 : latencies[min(latencies.count - 1, Int(Double(latencies.count) * 0.99))] * 1000,
                      rate: Double(latencies.count) / elapsed)
    }
}

struct WireScorer: Scorer {
    enum Failure: Error, CustomStringConvertible {
        case answer(String, String)
        var description: String {
            switch self {
            case .answer(let path, let body): "\(path) answered \(body)"
            }
        }
    }

    let server: URL
    let apiKey: String
    let run: String
    var latencies: [Double] = []
    /// Each writer's email code and unfinished enrolment's token.
    var codes: [String: String] = [:]
    var tokens: [String: String] = [:]

    init(server: URL, apiKey: String, run: String) {
        self.server = server
        self.apiKey = apiKey
        self.run = run
    }

    func email(_ writer: String) -> String { "eval-\(run)-\(writer)@eval.example" }

    static func wire(_ signature: SignaturePoints) -> [String: Any] {
        ["pressure": 0, "dot_count": signature.count,
         "signature_contents": zip(signature.x, signature.y).map { ["x": $0.0, "y": $0.1, "p": 0] }]
    }

    static let time = SignToLoginAPI.specTime(Date())

    /// One request over kept-alive connections (AsyncHTTPClient: the client's own cost stays far
    /// below the server's, so the latency measured is the server's).
    func send(_ url: URL, body: Data? = nil) async throws -> Data {
        var request = HTTPClientRequest(url: url.absoluteString)
        if let body {
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        var collected = try await response.body.collect(upTo: 16 << 20)
        return collected.readData(length: collected.readableBytes) ?? Data()
    }

    func post(_ path: String, _ body: [String: Any]) async throws -> [String: Any] {
        let data = try await send(server.appendingPathComponent(path), body: try JSONSerialization.data(withJSONObject: body))
        guard let answer = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw Failure.answer(path, String(decoding: data, as: UTF8.self))
        }
        return answer
    }

    /// The code the server mailed to `address`, from its development outbox.
    func mailedCode(_ address: String) async throws -> String {
        var components = URLComponents(url: server.appendingPathComponent("dev/outbox"), resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: "to", value: address), URLQueryItem(name: "last", value: "1")]
        let data = try await send(components.url!)
        guard let messages = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]], let code = messages.first?["code"] as? String else {
            throw Failure.answer("dev/outbox", String(decoding: data, as: UTF8.self))
        }
        return code
    }

    mutating func enrol(_ writer: String, _ signatures: [SignaturePoints]) async throws -> Int? {
        var body: [String: Any] = [
            "apikey": apiKey, "email": email(writer), "user_name": "Writer \(writer)", "time": Self.time,
            "device_version": "iPhone15,2", "os_version": "17.4", "signatures": signatures.map(Self.wire),
        ]
        if let code = codes[writer] { body["email_code"] = code }
        if let token = tokens[writer] { body["enrolment_token"] = token }
        var answer = try await post("register/", body)
        if answer["res"] as? String == "13" {
            let code = try await mailedCode(email(writer))
            codes[writer] = code
            body["email_code"] = code
            answer = try await post("register/", body)
        }
        switch answer["res"] as? String {
        case "0": return nil
        case "2":
            tokens[writer] = answer["enrolment_token"] as? String
            guard let count = (answer["count_required"] as? NSNumber)?.intValue ?? (answer["count_required"] as? String).flatMap(Int.init) else {
                throw Failure.answer("register/", "\(answer)")
            }
            return count
        default: throw Failure.answer("register/", "\(answer)")
        }
    }

    mutating func score(_ writer: String, _ attempt: SignaturePoints) async throws -> Double {
        // The body is made before the clock starts: the latency is the round trip.
        let body = try JSONSerialization.data(withJSONObject: [
            "apikey": apiKey, "email": email(writer), "time": Self.time, "device_version": "iPhone15,2",
            "signature": Self.wire(attempt),
        ] as [String: Any])
        let start = DispatchTime.now().uptimeNanoseconds
        let data = try await send(server.appendingPathComponent("authenticate/"), body: body)
        latencies.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        guard let answer = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw Failure.answer("authenticate/", String(decoding: data, as: UTF8.self))
        }
        guard answer["res"] as? String == "0", let similarity = (answer["similarity"] as? NSNumber)?.doubleValue else {
            throw Failure.answer("authenticate/", "\(answer)")
        }
        return similarity
    }
}
