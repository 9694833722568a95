import Foundation

/// A handwritten signature as an iPhone sends it: the pen-down points in order, x and y only
/// (no pressure, no timestamps). Touch events come at a steady rate, so the spacing of the points
/// stands in for the pen's speed.
public struct SignaturePoints: Sendable, Equatable, Codable {
    public var x: [Double]
    public var y: [Double]

    public var count: Int { x.count }

    public init(x: [Double], y: [Double]) {
        self.x = x
        self.y = y
    }

    public init(points: [(Double, Double)]) {
        self.x = points.map(\.0)
        self.y = points.map(\.1)
    }
}

/// Compares handwritten signatures (docs/sign-to-login.md, "The verifier").
///
/// Each signature becomes a sequence of features per point, after the pen's position and size
/// are taken out: the position relative to the centroid scaled by the spread, the direction of
/// the stroke (its sine and cosine), the speed (the step between points, relative to the
/// signature's mean step) and the change of direction. Two signatures are compared by dynamic
/// time warping on these features within a band, normalised by the path length.
///
/// The similarity of an attempt is then normalised by the person's own references: the
/// distance to the nearest references divided by how far the references are from each other.
/// That ratio is 1 for an attempt as close as the person's own signatures are to each other, so
/// one threshold means the same for everybody; it is mapped to 0…1 with 0.5 at `ratioAtHalf`.
/// Deterministic, allocation-light, and run off the event loop by its callers.
public struct SignatureVerifier: Sendable {
    /// The fewest points a signature may have.
    public var minPoints = 16
    /// Signatures are cut to at most this many points (evenly) before comparing.
    public var maxPoints = 256
    /// The DTW band, as a fraction of the longer sequence.
    public var band = 0.15
    /// An attempt is compared with this many of the references nearest to it.
    public var nearest = 3
    /// The spread (median distance between two references) of a typical person: a person's own
    /// spread is pulled halfway towards it.
    public var typicalSpread = 0.45
    /// How much a duration unlike the references' counts, per standard deviation.
    public var durationWeight = 0.15
    /// The smallest standard deviation of the references' log-durations the duration is measured in.
    public var durationSpreadFloor = 0.15
    /// The similarity is 0.5 at this distance ratio (the equal error point against skilled
    /// forgeries on the research sets, docs/performance.md).
    public var ratioAtHalf = 1.5
    /// How steeply the similarity falls around `ratioAtHalf`.
    public var steepness = 4.0
    /// A reference whose spread is this many times the median one is an outlier at enrolment.
    public var outlierFactor = 1.9

    /// Features of one signature, point by point (row-major, `dimensions` per point).
    public struct Features: Sendable, Equatable, Codable {
        public var values: [Double]
        public var count: Int
    }

    public static let dimensions = 6

    public init() {}

    // MARK: Features

    /// Why a signature cannot be used, if it cannot.
    public enum Problem: Equatable, Sendable {
        case tooFewPoints
        case tooSmall
    }

    public func problem(with signature: SignaturePoints) -> Problem? {
        guard signature.count >= minPoints, signature.x.count == signature.y.count else { return .tooFewPoints }
        let width = (signature.x.max() ?? 0) - (signature.x.min() ?? 0)
        let height = (signature.y.max() ?? 0) - (signature.y.min() ?? 0)
        return max(width, height) < 10 ? .tooSmall : nil
    }

    public func features(_ signature: SignaturePoints) -> Features {
        // Cut evenly to at most maxPoints (keeps the spacing pattern, i.e. the speed).
        var xs = signature.x, ys = signature.y
        if xs.count > maxPoints {
            let step = Double(xs.count - 1) / Double(maxPoints - 1)
            let picks = (0..<maxPoints).map { Int((Double($0) * step).rounded()) }
            xs = picks.map { signature.x[$0] }
            ys = picks.map { signature.y[$0] }
        }
        let n = xs.count
        // Position and size out: centroid and the spread (RMS distance from it).
        let cx = xs.reduce(0, +) / Double(n), cy = ys.reduce(0, +) / Double(n)
        var spread = 0.0
        for i in 0..<n { spread += (xs[i] - cx) * (xs[i] - cx) + (ys[i] - cy) * (ys[i] - cy) }
        spread = max(sqrt(spread / Double(n)), 1e-9)
        // Steps, smoothed over three points.
        var dx = [Double](repeating: 0, count: n), dy = [Double](repeating: 0, count: n)
        for i in 0..<n {
            let a = max(0, i - 1), b = min(n - 1, i + 1)
            dx[i] = (xs[b] - xs[a]) / Double(max(1, b - a))
            dy[i] = (ys[b] - ys[a]) / Double(max(1, b - a))
        }
        var speed = [Double](repeating: 0, count: n)
        for i in 0..<n { speed[i] = sqrt(dx[i] * dx[i] + dy[i] * dy[i]) }
        let meanSpeed = max(speed.reduce(0, +) / Double(n), 1e-9)
        var angle = [Double](repeating: 0, count: n)
        for i in 0..<n { angle[i] = atan2(dy[i], dx[i]) }
        var values = [Double](repeating: 0, count: n * Self.dimensions)
        for i in 0..<n {
            let moving = speed[i] > 1e-9
            var turn = 0.0
            if i > 0 {
                turn = angle[i] - angle[i - 1]
                while turn > .pi { turn -= 2 * .pi }
                while turn < -.pi { turn += 2 * .pi }
            }
            let row = i * Self.dimensions
            values[row] = (xs[i] - cx) / spread
            values[row + 1] = (ys[i] - cy) / spread
            values[row + 2] = moving ? dx[i] / speed[i] : 0
            values[row + 3] = moving ? dy[i] / speed[i] : 0
            values[row + 4] = speed[i] / meanSpeed - 1
            values[row + 5] = turn / .pi
        }
        return Features(values: values, count: n)
    }

    // MARK: Distance

    /// Weights of the features: position, direction, speed, turning.
    private static let weights: [Double] = [1.0, 1.0, 0.8, 0.8, 1.5, 0.3]

    /// The DTW distance of two signatures' features, per step of the warping path.
    public func distance(_ a: Features, _ b: Features) -> Double {
        let n = a.count, m = b.count
        guard n > 0, m > 0 else { return .infinity }
        let d = Self.dimensions
        let width = max(Int(Double(max(n, m)) * band), abs(n - m) + 1)
        let infinity = Double.infinity
        var previous = [Double](repeating: infinity, count: m + 1)
        var current = [Double](repeating: infinity, count: m + 1)
        var previousSteps = [Int](repeating: 0, count: m + 1)
        var currentSteps = [Int](repeating: 0, count: m + 1)
        previous[0] = 0
        let w = Self.weights
        a.values.withUnsafeBufferPointer { av in
            b.values.withUnsafeBufferPointer { bv in
                for i in 1...n {
                    for j in 0...m { current[j] = infinity }
                    let center = Int((Double(i) * Double(m) / Double(n)).rounded())
                    let low = max(1, center - width), high = min(m, center + width)
                    guard low <= high else { swap(&previous, &current); swap(&previousSteps, &currentSteps); continue }
                    let ai = (i - 1) * d
                    for j in low...high {
                        let bj = (j - 1) * d
                        var cost = 0.0
                        for k in 0..<d {
                            let diff = av[ai + k] - bv[bj + k]
                            cost += w[k] * diff * diff
                        }
                        cost = cost.squareRoot()
                        // The cheapest of the three predecessors.
                        var best = previous[j - 1], steps = previousSteps[j - 1]
                        if previous[j] < best { best = previous[j]; steps = previousSteps[j] }
                        if current[j - 1] < best { best = current[j - 1]; steps = currentSteps[j - 1] }
                        current[j] = best + cost
                        currentSteps[j] = steps + 1
                    }
                    swap(&previous, &current)
                    swap(&previousSteps, &currentSteps)
                    current[0] = infinity
                }
            }
        }
        let total = previous[m]
        return total.isFinite ? total / Double(max(previousSteps[m], 1)) : .infinity
    }

    // MARK: The model

    /// A person's references and how far they are from each other. It keeps the signatures
    /// themselves, not their features, so that a later verifier can make it again.
    public struct Model: Sendable, Codable, Equatable {
        /// The verifier that made it (`SignatureVerifier.version`).
        public var version: Int
        public var references: [SignaturePoints]
        /// The typical distance between two of the person's own signatures.
        public var spread: Double
    }

    /// Changes whenever features, distance or normalisation change: a model of another version is
    /// made again from its signatures (`current(_:)`).
    public static let version = 1

    /// What enrolment makes of a set of signatures: the model, or which ones do not fit.
    public enum Enrolment: Equatable, Sendable {
        case model(Model)
        /// The indexes of the signatures refused (unusable, or outliers against the rest).
        case refused([Int])
    }

    /// Builds a model from the signatures when every one is usable and fits the others; otherwise
    /// says which do not. With fewer than three usable signatures there is nothing to compare.
    public func enrol(_ signatures: [SignaturePoints]) -> Enrolment {
        var refused = signatures.indices.filter { problem(with: signatures[$0]) != nil }
        let usable = signatures.indices.filter { !refused.contains($0) }
        let features = usable.map { self.features(signatures[$0]) }
        let distances = pairwise(features)
        if features.count >= 3 {
            // Each signature's mean distance to the others; an outlier's is far above the median.
            let mean = features.indices.map { i in features.indices.filter { $0 != i }.map { distances[i][$0] }.reduce(0, +) / Double(features.count - 1) }
            let median = mean.sorted()[mean.count / 2]
            for (position, index) in usable.enumerated() where mean[position] > median * outlierFactor {
                refused.append(index)
            }
        }
        refused.sort()
        guard refused.isEmpty else { return .refused(refused) }
        guard features.count >= 3 else { return .refused(Array(signatures.indices)) }
        return .model(model(usable.map { signatures[$0] }, distances: distances))
    }

    private func pairwise(_ features: [Features]) -> [[Double]] {
        var distances = [[Double]](repeating: [Double](repeating: 0, count: features.count), count: features.count)
        for i in features.indices {
            for j in features.indices where j > i {
                distances[i][j] = distance(features[i], features[j])
                distances[j][i] = distances[i][j]
            }
        }
        return distances
    }

    private func model(_ references: [SignaturePoints], distances: [[Double]]) -> Model {
        var values: [Double] = []
        for i in references.indices {
            for j in references.indices where j > i { values.append(distances[i][j]) }
        }
        let sorted = values.sorted()
        let spread = sorted.isEmpty ? 1 : max(sorted[sorted.count / 2], 1e-6)
        return Model(version: Self.version, references: references, spread: spread)
    }

    /// The model as this verifier makes it: one of another version is made again from its
    /// signatures (they were accepted once; they are not checked again).
    public func current(_ model: Model) -> Model {
        guard model.version != Self.version else { return model }
        return self.model(model.references, distances: pairwise(model.references.map(features)))
    }

    /// One step of the spec's enrolment: the signatures kept from earlier tries and the new ones
    /// make the model when `needed` of them fit together; otherwise the ones that fit are kept
    /// (at most `needed`) and the client is asked for the rest. `incorrect` counts the new
    /// signatures refused. (A client that sent more than needed is not asked for "0 more": when
    /// `needed` of them fit, the model is made.)
    public enum EnrolmentStep: Equatable, Sendable {
        case model(Model)
        case incomplete(kept: [SignaturePoints], required: Int, incorrect: Int)
    }

    public func continueEnrolment(kept: [SignaturePoints], new: [SignaturePoints], needed: Int) -> EnrolmentStep {
        let all = kept + new
        var accepted = all
        var incorrect = 0
        switch enrol(all) {
        case .refused(let indexes):
            accepted = all.indices.filter { !indexes.contains($0) }.map { all[$0] }
            incorrect = indexes.filter { $0 >= kept.count }.count
        case .model(let model) where all.count == needed:
            return .model(model)
        case .model:
            break
        }
        // Enough fit together (extra ones sent and refused do not matter): the model is made from them.
        if accepted.count < needed {
            let keep = Array(accepted.prefix(needed))
            return .incomplete(kept: keep, required: needed - keep.count, incorrect: incorrect)
        }
        guard case .model(let model) = enrol(Array(accepted.prefix(needed))) else {
            return .incomplete(kept: [], required: needed, incorrect: min(new.count, needed))
        }
        return .model(model)
    }

    /// The similarity (0…1) of an attempt to a model (docs/sign-to-login.md, "The verifier"):
    ///
    /// - the mean DTW distance to the attempt's `nearest` references, divided by the person's own
    ///   spread pulled halfway (geometrically) towards a typical spread: a person whose
    ///   signatures vary a lot is not given a limitless tolerance, and a very steady one is not
    ///   refused their own signature;
    /// - plus how far the attempt's duration (its number of points: touches come at the device's
    ///   steady rate) is from the references', in the references' own standard deviations
    ///   (log scale; at least `durationSpreadFloor`): a forger who traces slowly gives themselves away;
    /// - mapped through a logistic curve, 0.5 at `ratioAtHalf`.
    public func similarity(_ attempt: SignaturePoints, to model: Model) -> Double {
        guard problem(with: attempt) == nil, !model.references.isEmpty else { return 0 }
        let model = current(model)
        let features = self.features(attempt)
        let nearest = model.references.map { distance(features, self.features($0)) }.sorted().prefix(self.nearest)
        var ratio = (nearest.reduce(0, +) / Double(nearest.count)) / (model.spread * typicalSpread).squareRoot()
        let logs = model.references.map { log(Double($0.count)) }
        let mean = logs.reduce(0, +) / Double(logs.count)
        let deviation = (logs.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(logs.count)).squareRoot()
        ratio += durationWeight * abs(log(Double(attempt.count)) - mean) / max(deviation, durationSpreadFloor)
        guard ratio.isFinite else { return 0 }
        return 1 / (1 + exp(steepness * (ratio - ratioAtHalf)))
    }
}
