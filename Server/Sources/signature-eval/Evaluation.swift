import Foundation
import GatehouseVerifier

/// What the evaluator needs of a verifier, in process or over the wire: enrol a writer the way the
/// spec's client does (10 signatures, then the `count_required` missing ones after a `res 2`), and
/// score an attempt.
protocol Scorer {
    /// Sends `signatures` for `writer`; `nil` when the model is made, else how many more are needed.
    mutating func enrol(_ writer: String, _ signatures: [SignaturePoints]) async throws -> Int?
    mutating func score(_ writer: String, _ attempt: SignaturePoints) async throws -> Double
}

/// The verifier itself, keeping each writer's accepted signatures between tries as the server does
/// (`SignatureVerifier.continueEnrolment`).
struct InProcessScorer: Scorer {
    let verifier: SignatureVerifier
    let needed: Int
    var kept: [String: [SignaturePoints]] = [:]
    var models: [String: SignatureVerifier.Prepared] = [:]
    /// Seconds spent in `similarity`, one entry per verification.
    var times: [Double] = []

    init(verifier: SignatureVerifier, needed: Int) {
        self.verifier = verifier
        self.needed = needed
    }

    mutating func enrol(_ writer: String, _ signatures: [SignaturePoints]) async throws -> Int? {
        switch verifier.continueEnrolment(kept: kept[writer] ?? [], new: signatures, needed: needed) {
        case .model(let model):
            models[writer] = verifier.prepare(model)
            kept[writer] = nil
            return nil
        case .incomplete(let accepted, let required, _):
            kept[writer] = accepted
            return required
        }
    }

    mutating func score(_ writer: String, _ attempt: SignaturePoints) async throws -> Double {
        guard let model = models[writer] else { return 0 }
        let start = DispatchTime.now().uptimeNanoseconds
        let value = verifier.similarity(attempt, to: model)
        times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        return value
    }
}

/// The scores of one run and what came of enrolment.
struct Outcome {
    struct WriterScores {
        var genuine: [Double] = []
        var skilled: [Double] = []
        var random: [Double] = []
    }

    var writers: [String: WriterScores] = [:]
    /// Writers with more genuine signatures than references (the others cannot be tested).
    var considered = 0
    /// Writers asked for more signatures at least once (`res 2`).
    var refusedAtFirst: [String] = []
    /// Writers whose model could not be made with the signatures they have.
    var notEnrolled: [String] = []

    mutating func merge(_ other: Outcome) {
        writers.merge(other.writers) { first, _ in first }
        considered += other.considered
        refusedAtFirst += other.refusedAtFirst
        notEnrolled += other.notEnrolled
    }

    /// The largest difference between this run's scores and another's for the same attempts.
    func maximumDifference(from other: Outcome) -> (value: Double, compared: Int) {
        var largest = 0.0, compared = 0
        for (id, scores) in writers {
            guard let theirs = other.writers[id] else { continue }
            for (a, b) in [(scores.genuine, theirs.genuine), (scores.skilled, theirs.skilled), (scores.random, theirs.random)] {
                for (x, y) in zip(a, b) {
                    largest = max(largest, abs(x - y))
                    compared += 1
                }
            }
        }
        return (largest, compared)
    }
}

/// The protocol: the first `references` genuine signatures enrol the writer (more, in order, when
/// the verifier asks for them, at most three rounds); the writer's remaining genuine signatures are
/// the genuine attempts, their skilled forgeries the skilled ones, and the first genuine signature
/// of `randomPerWriter` other writers (all of them when nil) the random forgeries. In a set where
/// only some writers were forged, only those are measured.
/// `positions` picks the writers to enrol and attack (all when nil); every writer serves as a random
/// forger.
func evaluate<S: Scorer>(_ writers: [Writer], positions: [Int]? = nil, scorer: inout S, references: Int,
                         randomPerWriter: Int?) async throws -> Outcome {
    var outcome = Outcome()
    for position in positions ?? Array(writers.indices) {
        guard let next = try await enrol(writers, position: position, scorer: &scorer, references: references, outcome: &outcome) else { continue }
        outcome.writers[writers[position].id] = try await score(writers, position: position, from: next, scorer: &scorer,
                                                                randomPerWriter: randomPerWriter)
    }
    return outcome
}

/// Enrols one writer as the spec's client does (answering `res 2` with their next genuine
/// signatures, at most three rounds), noting it in `outcome`: the position of their first genuine
/// signature left for attempts, or nil when they are not measured or could not enrol.
func enrol<S: Scorer>(_ writers: [Writer], position: Int, scorer: inout S, references: Int, outcome: inout Outcome) async throws -> Int? {
    let writer = writers[position]
    // A set with skilled forgeries for some writers only (SigComp 2009's NFI) is measured on those;
    // the others are random forgers.
    let anyForgeries = writers.contains { !$0.forgeries.isEmpty }
    guard writer.genuine.count > references, !anyForgeries || !writer.forgeries.isEmpty else { return nil }
    outcome.considered += 1
    var next = references
    var missing = try await scorer.enrol(writer.id, Array(writer.genuine.prefix(references)))
    var rounds = 0
    if missing != nil { outcome.refusedAtFirst.append(writer.id) }
    // Keep at least a few genuine attempts to test with.
    while let count = missing, rounds < 3, next + count <= writer.genuine.count - 3 {
        missing = try await scorer.enrol(writer.id, Array(writer.genuine[next..<(next + count)]))
        next += count
        rounds += 1
    }
    guard missing == nil else {
        outcome.notEnrolled.append(writer.id)
        return nil
    }
    return next
}

/// An enrolled writer's scores: their genuine signatures from `next` on, their skilled
/// forgeries, and the first genuine signature of the next `randomPerWriter` writers (all others by default).
func score<S: Scorer>(_ writers: [Writer], position: Int, from next: Int, scorer: inout S, randomPerWriter: Int?) async throws -> Outcome.WriterScores {
    let writer = writers[position]
    var scores = Outcome.WriterScores()
    for attempt in writer.genuine[next...] { scores.genuine.append(try await scorer.score(writer.id, attempt)) }
    for attempt in writer.forgeries { scores.skilled.append(try await scorer.score(writer.id, attempt)) }
    let others = (1..<writers.count).map { writers[(position + $0) % writers.count] }.prefix(randomPerWriter ?? writers.count)
    for other in others where !other.genuine.isEmpty {
        scores.random.append(try await scorer.score(writer.id, other.genuine[0]))
    }
    return scores
}

/// The equal error rate of a set of genuine and impostor scores (higher is more genuine): the
/// point where the share of genuine scores below the threshold equals the share of impostor
/// scores at or above it, and that threshold.
func equalErrorRate(genuine: [Double], impostor: [Double]) -> (rate: Double, threshold: Double) {
    guard !genuine.isEmpty, !impostor.isEmpty else { return (.nan, .nan) }
    let g = genuine.sorted(), i = impostor.sorted()
    let thresholds = Array(Set(g + i)).sorted() + [(g.last! > i.last! ? g.last! : i.last!) + 1]
    var best = (gap: Double.infinity, rate: 1.0, threshold: 0.0)
    var gBelow = 0, iBelow = 0
    for t in thresholds {
        while gBelow < g.count, g[gBelow] < t { gBelow += 1 }
        while iBelow < i.count, i[iBelow] < t { iBelow += 1 }
        let frr = Double(gBelow) / Double(g.count)
        let far = Double(i.count - iBelow) / Double(i.count)
        let gap = abs(far - frr)
        if gap < best.gap { best = (gap, (far + frr) / 2, t) }
    }
    return (best.rate, best.threshold)
}

/// The figures the issue asks for.
struct Report: Codable {
    var dataset: String
    var mode: String
    var writers: Int
    var references: Int
    var refusedAtFirstRate: Double
    var notEnrolledRate: Double
    var skilledEERGlobal: Double
    var skilledThreshold: Double
    var skilledEERPerWriter: Double
    var randomEERGlobal: Double
    var randomThreshold: Double
    var randomEERPerWriter: Double
    var genuineAttempts: Int
    var skilledAttempts: Int
    var randomAttempts: Int
    var verificationMeanMs: Double?
    var verificationP50Ms: Double?
    var verificationP99Ms: Double?
    /// Over the wire with the server's process known: its processor time per authentication.
    var serverMsPerAuthentication: Double?

    init(dataset: String, mode: String, references: Int, outcome: Outcome, times: [Double]) {
        self.dataset = dataset
        self.mode = mode
        let total = outcome.considered
        writers = total
        self.references = references
        refusedAtFirstRate = Double(outcome.refusedAtFirst.count) / Double(max(total, 1))
        notEnrolledRate = Double(outcome.notEnrolled.count) / Double(max(total, 1))
        let all = outcome.writers.values
        let genuine = all.flatMap(\.genuine), skilled = all.flatMap(\.skilled), random = all.flatMap(\.random)
        (skilledEERGlobal, skilledThreshold) = equalErrorRate(genuine: genuine, impostor: skilled)
        (randomEERGlobal, randomThreshold) = equalErrorRate(genuine: genuine, impostor: random)
        func perWriter(_ impostor: (Outcome.WriterScores) -> [Double]) -> Double {
            let rates = all.map { equalErrorRate(genuine: $0.genuine, impostor: impostor($0)).rate }.filter { !$0.isNaN }
            return rates.isEmpty ? .nan : rates.reduce(0, +) / Double(rates.count)
        }
        skilledEERPerWriter = perWriter(\.skilled)
        randomEERPerWriter = perWriter(\.random)
        genuineAttempts = genuine.count
        skilledAttempts = skilled.count
        randomAttempts = random.count
        if !times.isEmpty {
            let sorted = times.sorted()
            verificationMeanMs = times.reduce(0, +) / Double(times.count) * 1000
            verificationP50Ms = sorted[sorted.count / 2] * 1000
            verificationP99Ms = sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))] * 1000
        }
    }

    var text: String {
        func percent(_ value: Double) -> String { String(format: "%.2f%%", value * 100) }
        var lines = [
            "\(dataset), \(mode): \(writers) writers, \(references) references",
            "  enrolment: asked for more signatures \(percent(refusedAtFirstRate)) of writers, not enrolled \(percent(notEnrolledRate))",
            "  skilled forgeries: EER \(percent(skilledEERGlobal)) at one threshold (\(String(format: "%.3f", skilledThreshold))), \(percent(skilledEERPerWriter)) averaged per writer",
            "  random forgeries:  EER \(percent(randomEERGlobal)) at one threshold (\(String(format: "%.3f", randomThreshold))), \(percent(randomEERPerWriter)) averaged per writer",
            "  attempts: \(genuineAttempts) genuine, \(skilledAttempts) skilled, \(randomAttempts) random",
        ]
        if let mean = verificationMeanMs, let p99 = verificationP99Ms {
            let what = mode == "in process" ? "verification (one core)" : "authentication (HTTP round trip, with the others in flight)"
            lines.append("  \(what): \(String(format: "%.2f", mean)) ms mean, \(String(format: "%.2f", verificationP50Ms ?? .nan)) ms p50, \(String(format: "%.2f", p99)) ms p99")
        }
        if let serverMs = serverMsPerAuthentication {
            lines.append("  the server's processor time: \(String(format: "%.3f", serverMs)) ms per authentication")
        }
        return lines.joined(separator: "\n")
    }
}
