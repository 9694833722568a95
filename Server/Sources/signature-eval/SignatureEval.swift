import Foundation
import GatehouseVerifier

// The signature verifier's evaluator (Benchmarks/signature/README.md): reads a research set of
// online signatures from a folder, enrols every writer from their first genuine signatures and
// prints the equal error rates against skilled and random forgeries, the enrolment refusal rate
// and the time of one verification; in process, or through a running server's /register/ and
// /authenticate/ (`--server`).

let usage = """
    usage: signature-eval FOLDER [--references N] [--random N] [--writers N] [--json]
                                 [--server URL --apikey KEY [--concurrency N]]
    """

/// Takes `name VALUE` out of the arguments.
func option(_ name: String, from arguments: inout [String]) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    let value = arguments[index + 1]
    arguments.removeSubrange(index...(index + 1))
    return value
}
func flag(_ name: String, from arguments: inout [String]) -> Bool {
    guard let index = arguments.firstIndex(of: name) else { return false }
    arguments.remove(at: index)
    return true
}

@main
enum SignatureEval {
    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        let references = option("--references", from: &arguments).flatMap(Int.init) ?? 10
        let randomPerWriter = option("--random", from: &arguments).flatMap(Int.init)
        let writerLimit = option("--writers", from: &arguments).flatMap(Int.init)
        let server = option("--server", from: &arguments).flatMap(URL.init(string:))
        let apiKey = option("--apikey", from: &arguments)
        let concurrency = option("--concurrency", from: &arguments).flatMap(Int.init) ?? 8
        let json = flag("--json", from: &arguments)
        guard arguments.count == 1 else {
            FileHandle.standardError.write(Data((usage + "\n").utf8))
            exit(2)
        }
        let folder = URL(fileURLWithPath: arguments[0])

        do {
            var writers = try Dataset.load(folder)
            if let writerLimit { writers = Array(writers.prefix(writerLimit)) }
            let name = folder.lastPathComponent
            let verifier = SignatureVerifier()
            var local = InProcessScorer(verifier: verifier, needed: references)
            let inProcess = try await evaluate(writers, scorer: &local, references: references, randomPerWriter: randomPerWriter)
            var reports = [Report(dataset: name, mode: "in process", references: references,
                                  outcome: inProcess, times: local.times)]
            if let server {
                guard let apiKey else {
                    FileHandle.standardError.write(Data("--server needs --apikey\n".utf8))
                    exit(2)
                }
                let wire = try await WireEvaluation(server: server, apiKey: apiKey, concurrency: concurrency)
                    .run(writers, references: references, randomPerWriter: randomPerWriter)
                var report = Report(dataset: name, mode: "over the wire", references: references,
                                    outcome: wire.outcome, times: [])
                report.verificationMeanMs = wire.latencyMeanMs
                report.verificationP99Ms = wire.latencyP99Ms
                reports.append(report)
                // The server rounds to two decimals; anything more than rounding is a disagreement.
                let disagreement = wire.outcome.maximumDifference(from: inProcess)
                FileHandle.standardError.write(Data(String(format: "wire vs in process: largest difference %.4f over %d attempts; %.0f authentications/s\n",
                                                             disagreement.value, disagreement.compared, wire.rate).utf8))
            }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                print(String(decoding: try encoder.encode(reports), as: UTF8.self))
            } else {
                for report in reports { print(report.text) }
            }
        } catch {
            FileHandle.standardError.write(Data("signature-eval: \(error)\n".utf8))
            exit(1)
        }
    }
}
