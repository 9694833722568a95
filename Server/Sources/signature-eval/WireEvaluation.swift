import AsyncHTTPClient
import Foundation
import GatehouseAPI
import GatehouseVerifier
import NIOCore
import NIOFoundationCompat

/// The same evaluation through a running server: each writer registers with `/register/` (as a new
/// address, proven by the code the development outbox holds, answering `res 2` with the missing
/// signatures and their `enrolment_token`) and every attempt goes through `/authenticate/`, whose
/// `similarity` is the score. Writers enrol `concurrency` at a time, then send their attempts as
/// many at a time. The server runs in development mode (`GET /dev/outbox`).
struct WireEvaluation {
    let server: URL
    let apiKey: String
    let concurrency: Int
    /// The server's process, when it runs on this machine: its processor time per authentication is read from `/proc`.
    let serverPID: Int32?
    /// Makes the addresses of this run new to the server.
    let run = String(UInt32.random(in: 0...UInt32.max), radix: 36)

    struct Result {
        var outcome: Outcome
        var latencyMeanMs: Double
        var latencyP50Ms: Double
        var latencyP99Ms: Double
        /// Authentications per second, from the first to the last.
        var rate: Double
        /// The server's processor time (user and system) per authentication, when `serverPID` is known.
        var serverMsPerAuthentication: Double?
    }

    init(server: URL, apiKey: String, concurrency: Int, serverPID: Int32? = nil) async throws {
        self.server = server
        self.apiKey = apiKey
        self.concurrency = max(1, concurrency)
        self.serverPID = serverPID
    }

    /// A process's user and system time so far, in seconds (`/proc/PID/stat`'s utime and stime, in clock ticks).
    static func processorSeconds(_ pid: Int32) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // After the command's closing parenthesis: state is field 3, utime 14 and stime 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    func run(_ writers: [Writer], references: Int, randomPerWriter: Int?) async throws -> Result {
        let shards = (0..<concurrency).map { shard in Array(stride(from: shard, to: writers.count, by: concurrency)) }.filter { !$0.isEmpty }
        // Every writer enrols first, `concurrency` at a time; then their attempts are sent, as
        // many at a time, and only those are timed: the latency of an authentication among
        // authentications, not behind another writer's enrolment.
        let enrolled = try await withThrowingTaskGroup(of: (WireScorer, Outcome, [(Int, Int)]).self) { group in
            for positions in shards {
                group.addTask {
                    var scorer = WireScorer(server: server, apiKey: apiKey, run: run)
                    var outcome = Outcome()
                    var ready: [(Int, Int)] = []
                    for position in positions {
                        if let next = try await enrol(writers, position: position, scorer: &scorer, references: references, outcome: &outcome) {
                            ready.append((position, next))
                        }
                    }
                    return (scorer, outcome, ready)
                }
            }
            var all: [(WireScorer, Outcome, [(Int, Int)])] = []
            for try await result in group { all.append(result) }
            return all
        }
        let start = Date()
        let cpuBefore = serverPID.flatMap(Self.processorSeconds)
        let results = try await withThrowingTaskGroup(of: (Outcome, [Double]).self) { group in
            for (shardScorer, enrolment, ready) in enrolled {
                group.addTask {
                    var (scorer, outcome) = (shardScorer, enrolment)
                    for (position, next) in ready {
                        outcome.writers[writers[position].id] = try await score(writers, position: position, from: next, scorer: &scorer,
                                                                                randomPerWriter: randomPerWriter)
                    }
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
        var serverMs: Double?
        if let cpuBefore, let cpuAfter = serverPID.flatMap(Self.processorSeconds), !latencies.isEmpty {
            serverMs = (cpuAfter - cpuBefore) * 1000 / Double(latencies.count)
        }
        return Result(outcome: outcome,
                      latencyMeanMs: latencies.isEmpty ? 0 : latencies.reduce(0, +) / Double(latencies.count) * 1000,
                      latencyP50Ms: latencies.isEmpty ? 0 : latencies[latencies.count / 2] * 1000,
                      latencyP99Ms: latencies.isEmpty ? 0 : latencies[min(latencies.count - 1, Int(Double(latencies.count) * 0.99))] * 1000,
                      rate: Double(latencies.count) / elapsed, serverMsPerAuthentication: serverMs)
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

    /// A name the server takes (letters, spaces and .'- only): the writer's id with each digit
    /// spelt as a letter (0 → a, 1 → b, …), other characters dropped.
    static func name(_ writer: String) -> String {
        "Writer " + String(writer.compactMap { character -> Character? in
            if let digit = character.wholeNumberValue, character.isASCII { return Character(UnicodeScalar(UInt8(ascii: "a") + UInt8(digit))) }
            return character.isLetter ? character : nil
        })
    }

    static let time = SignToLoginAPI.specTime(Date())

    /// Request bodies are written directly: JSONSerialization's bridging of a thousand little
    /// dictionaries per signature costs the client more than the server spends answering, and on
    /// one machine that time is taken from the server being measured.
    static func body(_ fields: [(String, String)], _ name: String, json value: String) -> Data {
        let members = fields.map { "\(quoted($0.0)):\(quoted($0.1))" } + ["\(quoted(name)):\(value)"]
        return Data(("{" + members.joined(separator: ",") + "}").utf8)
    }

    static func json(_ signature: SignaturePoints) -> String {
        var text = "{\"pressure\":0,\"dot_count\":\(signature.count),\"signature_contents\":["
        text.reserveCapacity(signature.count * 40)
        for i in 0..<signature.count {
            if i > 0 { text += "," }
            text += "{\"x\":\(signature.x[i]),\"y\":\(signature.y[i]),\"p\":0}"
        }
        return text + "]}"
    }

    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

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

    func post(_ path: String, _ body: Data) async throws -> [String: Any] {
        let data = try await send(server.appendingPathComponent(path), body: body)
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
        var fields = [("apikey", apiKey), ("email", email(writer)), ("user_name", Self.name(writer)), ("time", Self.time),
                      ("device_version", "iPhone15,2"), ("os_version", "17.4"), ("resolution", "{\"width\":393,\"height\":852}"), ("pressure", "0")]
        if let code = codes[writer] { fields.append(("email_code", code)) }
        if let token = tokens[writer] { fields.append(("enrolment_token", token)) }
        var answer = try await post("register/", Self.body(fields, "signatures", json: "[" + signatures.map(Self.json).joined(separator: ",") + "]"))
        if answer["res"] as? String == "13" {
            let code = try await mailedCode(email(writer))
            codes[writer] = code
            fields.append(("email_code", code))
            answer = try await post("register/", Self.body(fields, "signatures", json: "[" + signatures.map(Self.json).joined(separator: ",") + "]"))
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
        let body = Self.body([("apikey", apiKey), ("email", email(writer)), ("time", Self.time), ("device_version", "iPhone15,2"),
                              ("resolution", "{\"width\":393,\"height\":852}"), ("pressure", "0")],
                             "signature", json: Self.json(attempt))
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
