import Foundation
import GatehouseVerifier

/// Leave-one-set-out (`--loso`): every parameter of the verifier is chosen on some research sets
/// and the figures are reported on a set that played no part in choosing them, beside the figures
/// of the parameters chosen on that set itself ("tuned on it") and of the shipped ones.
///
/// The DTW distances of every attempt to its writer's references, and between the references,
/// are computed once per feature configuration (`Parameters.weights`, `scaling`, `band`,
/// `maxPoints`); the scoring parameters (`nearest`, `typicalSpread`, `pull`, `durationWeight`,
/// `durationSpreadFloor`) are then tried on those distances with the verifier's own
/// `similarity(distances:attemptCount:model:)`, so what is measured is what the server runs.
/// The references are the writer's first genuine signatures, without the enrolment's refusals
/// (the in-process run measures those).
enum LeaveOneSetOut {
    struct TuningSet: Sendable {
        var name: String
        var writers: [Writer]
        var references: Int
        /// Every attempt drifted as another session would (`drifted`); the references as written.
        var drift = false
    }

    /// One writer's distances under one feature configuration.
    struct Target: Sendable {
        var model: SignatureVerifier.Model
        var genuine: [(distances: [Double], count: Int)]
        var skilled: [(distances: [Double], count: Int)]
        var random: [(distances: [Double], count: Int)]
    }

    struct Figures: Sendable {
        var skilledGlobal: Double
        var skilledPerWriter: Double
        var randomGlobal: Double
        /// The distance ratios of every attempt (`SignatureVerifier.ratio`), to carry a threshold
        /// from some sets to another.
        var genuineRatios: [Double] = []
        var skilledRatios: [Double] = []
        var randomRatios: [Double] = []
        var text: String {
            String(format: "%5.2f%% %5.2f%% %5.2f%%", skilledGlobal * 100, skilledPerWriter * 100, randomGlobal * 100)
        }
    }

    /// The writers a set's figures are measured on: those with more genuine signatures than
    /// references, and with skilled forgeries when the set has any (the others still serve as
    /// random forgers).
    static func targets(of set: TuningSet) -> [Int] {
        let anyForgeries = set.writers.contains { !$0.forgeries.isEmpty }
        return set.writers.indices.filter { i in
            set.writers[i].genuine.count > set.references && (!anyForgeries || !set.writers[i].forgeries.isEmpty)
        }
    }

    /// A signature as if written in another session or on another device: turned (±8°), slanted
    /// (shear ±0.15), wider or flatter (±15%), larger or smaller (±25%) and faster or slower (the
    /// points resampled to ±20% of their number), by amounts drawn from `seed`.
    static func drifted(_ signature: SignaturePoints, seed: UInt64) -> SignaturePoints {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 &+ 1
        func uniform() -> Double {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return Double(state % 1_000_000) / 1_000_000 * 2 - 1
        }
        let angle = uniform() * 8 * .pi / 180, shear = uniform() * 0.15, aspect = 1 + uniform() * 0.15
        let scale = 1 + uniform() * 0.25, rate = 1 + uniform() * 0.2
        let n = signature.count
        guard n >= 2 else { return signature }
        let m = max(2, Int((Double(n) * rate).rounded()))
        var xs: [Double] = [], ys: [Double] = []
        for j in 0..<m {
            let t = Double(j) * Double(n - 1) / Double(m - 1)
            let i = min(Int(t), n - 2), f = t - Double(i)
            let x = signature.x[i] * (1 - f) + signature.x[i + 1] * f
            let y = signature.y[i] * (1 - f) + signature.y[i + 1] * f
            let sx = (x + shear * y) * aspect * scale, sy = y / aspect * scale
            xs.append(sx * cos(angle) - sy * sin(angle))
            ys.append(sx * sin(angle) + sy * cos(angle))
        }
        return SignaturePoints(x: xs, y: ys)
    }

    static func distances(_ set: TuningSet, verifier: SignatureVerifier, randomPerWriter: Int) -> [Target] {
        var set = set
        if set.drift {
            for w in set.writers.indices {
                for g in set.writers[w].genuine.indices where g >= set.references || set.writers[w].forgeries.isEmpty {
                    set.writers[w].genuine[g] = drifted(set.writers[w].genuine[g], seed: UInt64(w * 1000 + g))
                }
                for f in set.writers[w].forgeries.indices {
                    set.writers[w].forgeries[f] = drifted(set.writers[w].forgeries[f], seed: UInt64(w * 1000 + 500 + f))
                }
            }
        }
        let features = set.writers.map { writer in (writer.genuine.map(verifier.features), writer.forgeries.map(verifier.features)) }
        return targets(of: set).map { position in
            let writer = set.writers[position]
            let references = Array(writer.genuine.prefix(set.references))
            let referenceFeatures = Array(features[position].0.prefix(set.references))
            let model = verifier.model(references, distances: verifier.pairwise(referenceFeatures))
            func measure(_ attempt: SignatureVerifier.Features, _ points: SignaturePoints) -> (distances: [Double], count: Int) {
                (verifier.distances(attempt, to: referenceFeatures), points.count)
            }
            let genuine = (set.references..<writer.genuine.count).map { measure(features[position].0[$0], writer.genuine[$0]) }
            let skilled = writer.forgeries.indices.map { measure(features[position].1[$0], writer.forgeries[$0]) }
            let others = (1..<set.writers.count).map { (position + $0) % set.writers.count }
                .filter { !set.writers[$0].genuine.isEmpty }.prefix(randomPerWriter)
            let random = others.map { measure(features[$0].0[0], set.writers[$0].genuine[0]) }
            return Target(model: model, genuine: genuine, skilled: skilled, random: random)
        }
    }

    static func figures(_ targets: [Target], verifier: SignatureVerifier) -> Figures {
        var genuine: [Double] = [], skilled: [Double] = [], random: [Double] = []
        var ratios: ([Double], [Double], [Double]) = ([], [], [])
        var perWriter: [Double] = []
        for target in targets {
            func ratio(_ attempt: (distances: [Double], count: Int)) -> Double {
                verifier.ratio(distances: attempt.distances, attemptCount: attempt.count, model: target.model)
            }
            // Rounded to two decimals, as the server answers.
            func score(_ ratio: Double) -> Double { (verifier.similarity(ratio: ratio) * 100).rounded() / 100 }
            let gr = target.genuine.map(ratio), sr = target.skilled.map(ratio), rr = target.random.map(ratio)
            ratios.0 += gr
            ratios.1 += sr
            ratios.2 += rr
            let g = gr.map(score), s = sr.map(score)
            genuine += g
            skilled += s
            random += rr.map(score)
            let rate = equalErrorRate(genuine: g, impostor: s).rate
            if !rate.isNaN { perWriter.append(rate) }
        }
        return Figures(skilledGlobal: equalErrorRate(genuine: genuine, impostor: skilled).rate,
                       skilledPerWriter: perWriter.isEmpty ? .nan : perWriter.reduce(0, +) / Double(perWriter.count),
                       randomGlobal: equalErrorRate(genuine: genuine, impostor: random).rate,
                       genuineRatios: ratios.0, skilledRatios: ratios.1, randomRatios: ratios.2)
    }

    /// The ratio at the equal error point of these attempts (genuine below, forgeries above).
    static func thresholdRatio(genuine: [Double], skilled: [Double]) -> Double {
        // equalErrorRate takes higher as more genuine: negate the ratios.
        -equalErrorRate(genuine: genuine.map { -$0 }, impostor: skilled.map { -$0 }).threshold
    }

    /// What a choice is judged by on the sets it is chosen on: the skilled EER at one threshold,
    /// with the per-writer one and the random one counted too (the issue's three goals).
    static func cost(_ f: Figures) -> Double { f.skilledGlobal + 0.5 * f.skilledPerWriter + 2 * f.randomGlobal }

    /// The feature configurations tried (each costs a pass of DTW over every set).
    static func featureCandidates(from base: SignatureVerifier.Parameters) -> [(String, SignatureVerifier.Parameters)] {
        var candidates: [(String, SignatureVerifier.Parameters)] = [("shipped", base)]
        func variant(_ name: String, _ change: (inout SignatureVerifier.Parameters) -> Void) {
            var p = base
            change(&p)
            if p != base { candidates.append((name, p)) }
        }
        variant("first") { $0 = .first }
        for spec in ProcessInfo.processInfo.environment["VARIANTS", default: ""].split(separator: ";") {
            // name:key=value,key=value (weights as w=a/b/c/...)
            let parts = spec.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            variant(String(parts[0])) { p in
                for pair in parts[1].split(separator: ",") {
                    let kv = pair.split(separator: "=")
                    guard kv.count == 2 else { continue }
                    let value = String(kv[1])
                    switch kv[0] {
                    case "w": p.weights = value.split(separator: "/").compactMap { Double($0) }
                    case "scaling": p.scaling = SignatureVerifier.Scaling(rawValue: value) ?? p.scaling
                    case "band": p.band = Double(value) ?? p.band
                    case "max": p.maxPoints = Int(value) ?? p.maxPoints
                    case "cap": p.speedCap = Double(value) ?? p.speedCap
                    case "resample": p.resampling = SignatureVerifier.Resampling(rawValue: value) ?? p.resampling
                    case "loglogistic": (p.logistic, p.steepness, p.ratioAtHalf) = (true, 3, Double(value) ?? 2)
                    default: break
                    }
                }
            }
        }
        return candidates
    }

    /// The scoring parameters tried on every feature configuration.
    static func scoringCandidates(from base: SignatureVerifier.Parameters) -> [SignatureVerifier.Parameters] {
        var all: [SignatureVerifier.Parameters] = []
        let blends: [(Bool, Double, Double, Double)] = [(false, 1, 0, 0), (true, 1, 0, 0), (true, 1, 1, 0), (true, 1, 0, 1), (true, 1, 1, 1)]
        for (matched, nearestWeight, meanWeight, medoidWeight) in blends {
            for nearest in (matched && nearestWeight == 0 ? [3] : [1, 2, 3, 5]) {
                for pull in [0.0, 0.25, 0.5, 0.75] {
                    for typical in (pull == 0 ? [0.225] : [0.113, 0.225, 0.45]) {
                        for (duration, bothWays) in [(0.0, true), (0.1, true), (0.15, true), (0.25, true), (0.1, false), (0.2, false), (0.3, false)] {
                            var p = base
                            p.durationBothWays = bothWays
                            p.matched = matched
                            (p.nearestWeight, p.meanWeight, p.medoidWeight) = (nearestWeight, meanWeight, medoidWeight)
                            p.nearest = nearest
                            p.pull = pull
                            p.typicalSpread = typical
                            p.durationWeight = duration
                            all.append(p)
                        }
                    }
                }
            }
        }
        return all
    }

    static func run(_ sets: [TuningSet], randomPerWriter: Int) async {
        let shipped = SignatureVerifier.Parameters.shipped
        let configurations = featureCandidates(from: shipped)
        // figures[configuration][scoring][set]
        var table: [[[Figures]]] = []
        var labels: [[String]] = []
        for (name, features) in configurations {
            let started = Date()
            let verifier = SignatureVerifier(parameters: features)
            let cached = await withTaskGroup(of: (Int, [Target]).self) { group in
                for (index, set) in sets.enumerated() {
                    group.addTask { (index, distances(set, verifier: verifier, randomPerWriter: randomPerWriter)) }
                }
                var all = [[Target]](repeating: [], count: sets.count)
                for await (index, targets) in group { all[index] = targets }
                return all
            }
            if name == "shipped" {
                // The references' spread over the population, for the enrolment's limit.
                for (set, targets) in zip(sets, cached) {
                    let spreads = targets.map(\.model.spread).sorted()
                    func at(_ q: Double) -> Double { spreads[min(spreads.count - 1, Int(Double(spreads.count) * q))] }
                    FileHandle.standardError.write(Data(String(format: "%@ spread: median %.3f, 90%% %.3f, 95%% %.3f, 98%% %.3f, largest %.3f\n",
                                                               set.name, at(0.5), at(0.9), at(0.95), at(0.98), spreads.last ?? 0).utf8))
                }
            }
            let scorings = [features] + scoringCandidates(from: features)
            table.append(scorings.map { scoring in cached.map { figures($0, verifier: SignatureVerifier(parameters: scoring)) } })
            labels.append(scorings.map { s in
                String(format: "%@ %@ %.0f/%.0f/%.0f nearest %d pull %.2f typical %.3f duration %.2f %@", name, s.matched ? "matched" : "spread",
                       s.nearestWeight, s.meanWeight, s.medoidWeight, s.nearest, s.pull, s.typicalSpread, s.durationWeight,
                       s.durationBothWays ? "both ways" : "slower only")
            })
            let own = table.last![0]
            FileHandle.standardError.write(Data(String(format: "%@: %.0f s; as shipped: %@\n", name, Date().timeIntervalSince(started),
                                                       zip(sets, own).map { "\($0.name) \($1.text)" }.joined(separator: " | ")).utf8))
        }
        let choices = table.indices.flatMap { c in table[c].indices.map { (c, $0) } }
        func best(on included: [Int]) -> (Int, Int) {
            choices.min { a, b in
                let ca = included.map { cost(table[a.0][a.1][$0]) }.reduce(0, +)
                let cb = included.map { cost(table[b.0][b.1][$0]) }.reduce(0, +)
                return ca < cb
            }!
        }
        print("set: skilled EER one threshold, per writer, random EER one threshold")
        print(String(format: "%-28@ %-22@ %-22@ %-22@", "set" as NSString, "tuned on it" as NSString, "held out" as NSString, "shipped" as NSString))
        for (index, set) in sets.enumerated() {
            let own = best(on: [index])
            // A set and its drifted copy are one set: held out together.
            let family = set.name.replacingOccurrences(of: " drifted", with: "")
            let others = best(on: sets.indices.filter { sets[$0].name.replacingOccurrences(of: " drifted", with: "") != family })
            let shippedFigures = table[0][0][index]
            print(String(format: "%-28@ %-22@ %-22@ %-22@", "\(set.name) (\(targets(of: set).count), \(set.references))" as NSString,
                         table[own.0][own.1][index].text as NSString, table[others.0][others.1][index].text as NSString,
                         shippedFigures.text as NSString))
            // The threshold too from the other sets: what a server set up on them would do here.
            let trained = sets.indices.filter { sets[$0].name.replacingOccurrences(of: " drifted", with: "") != family }.map { table[others.0][others.1][$0] }
            let threshold = thresholdRatio(genuine: trained.flatMap(\.genuineRatios), skilled: trained.flatMap(\.skilledRatios))
            let here = table[others.0][others.1][index]
            func share(_ values: [Double], _ test: (Double) -> Bool) -> Double { Double(values.filter(test).count) / Double(max(values.count, 1)) * 100 }
            print(String(format: "    at the others' threshold (ratio %.3f): genuine refused %.2f%%, skilled accepted %.2f%%, random accepted %.2f%%",
                         threshold, share(here.genuineRatios) { $0 > threshold }, share(here.skilledRatios) { $0 <= threshold },
                         share(here.randomRatios) { $0 <= threshold }))
            print("    held out chose: \(labels[others.0][others.1])")
        }
        let all = best(on: Array(sets.indices))
        let pooled = table[all.0][all.1]
        print(String(format: "chosen on every set: %@; equal error ratio over every set %.3f", labels[all.0][all.1],
                     thresholdRatio(genuine: pooled.flatMap(\.genuineRatios), skilled: pooled.flatMap(\.skilledRatios))))
    }
}
