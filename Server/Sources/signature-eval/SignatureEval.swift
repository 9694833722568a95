import Foundation
import GatehouseVerifier

// The signature verifier's evaluator (Benchmarks/signature/README.md): reads a research set of
// online signatures from a folder, enrols every writer from their first genuine signatures and
// prints the equal error rates against skilled and random forgeries, the enrolment refusal rate
// and the time of one verification; in process, or through a running server's /register/ and
// /authenticate/ (`--server`).

let usage = """
    usage: signature-eval FOLDER [--references N] [--random N] [--writers N] [--json]
                                 [--server URL --apikey KEY [--concurrency N] [--server-pid PID]]
           (FOLDER synthetic:N: N made-up writers instead of a research set)
           signature-eval --loso FOLDER FOLDER... [--references N] [--random N]
    """

/// A research set's name in the figures: its folder's, or the set's own for SigComp 2009's folders.
func setName(_ folder: URL) -> String {
    let last = folder.lastPathComponent
    switch last {
    case "NFI_", "NFI": return "SigComp2009 NFI"
    case "Training", "training": return "SigComp2009 NISDCC"
    case "MCYT_Signature_100": return "MCYT-100"
    case "VisualSubCorpus": return "SUSIG visual"
    case "BlindSubCorpus": return "SUSIG blind"
    default: return last
    }
}

/// The spec's 10 references, or half the writers' genuine signatures when a set has fewer than
/// twice that (at least 3), so every writer keeps genuine attempts to test with.
func defaultReferences(_ writers: [Writer]) -> Int {
    let counts = writers.map(\.genuine.count).sorted()
    return max(3, min(10, counts[counts.count / 2] / 2))
}

/// Every set at once, leave one set out (`LeaveOneSetOut`), each enrolling with `references`
/// signatures or `defaultReferences`.
func leaveOneSetOut(_ folders: [URL], references: Int?, randomPerWriter: Int) async {
    do {
        var sets: [LeaveOneSetOut.TuningSet] = []
        for folder in folders {
            let writers = try Dataset.load(folder)
            let count = references ?? defaultReferences(writers)
            sets.append(.init(name: setName(folder), writers: writers, references: count))
            if ProcessInfo.processInfo.environment["DRIFT"] != nil {
                sets.append(.init(name: setName(folder) + " drifted", writers: writers, references: count, drift: true))
            }
        }
        await LeaveOneSetOut.run(sets, randomPerWriter: randomPerWriter)
    } catch {
        FileHandle.standardError.write(Data("signature-eval: \(error)\n".utf8))
        exit(1)
    }
}

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
        let givenReferences = option("--references", from: &arguments).flatMap(Int.init)
        let randomPerWriter = option("--random", from: &arguments).flatMap(Int.init)
        let writerLimit = option("--writers", from: &arguments).flatMap(Int.init)
        let server = option("--server", from: &arguments).flatMap(URL.init(string:))
        let apiKey = option("--apikey", from: &arguments)
        let concurrency = option("--concurrency", from: &arguments).flatMap(Int.init) ?? 8
        let serverPID = option("--server-pid", from: &arguments).flatMap(Int32.init)
        let json = flag("--json", from: &arguments)
        if flag("--loso", from: &arguments) {
            await leaveOneSetOut(arguments.map { URL(fileURLWithPath: $0) }, references: givenReferences, randomPerWriter: randomPerWriter ?? 20)
            return
        }
        guard arguments.count == 1 else {
            FileHandle.standardError.write(Data((usage + "\n").utf8))
            exit(2)
        }
        let folder = URL(fileURLWithPath: arguments[0])
        let synthetic = arguments[0].hasPrefix("synthetic:") ? Int(arguments[0].dropFirst("synthetic:".count)) : nil

        do {
            var writers = try synthetic.map(Dataset.synthetic) ?? Dataset.load(folder)
            if let writerLimit { writers = Array(writers.prefix(writerLimit)) }
            let references = givenReferences ?? defaultReferences(writers)
            let name = synthetic.map { "\($0) made-up writers" } ?? setName(folder)
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
                let wire = try await WireEvaluation(server: server, apiKey: apiKey, concurrency: concurrency, serverPID: serverPID)
                    .run(writers, references: references, randomPerWriter: randomPerWriter)
                var report = Report(dataset: name, mode: "over the wire", references: references,
                                    outcome: wire.outcome, times: [])
                report.verificationMeanMs = wire.latencyMeanMs
                report.verificationP50Ms = wire.latencyP50Ms
                report.verificationP99Ms = wire.latencyP99Ms
                report.serverMsPerAuthentication = wire.serverMsPerAuthentication
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
