import Foundation
#if arch(x86_64)
import _Builtin_intrinsics.intel
#endif

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

    /// The same JSON as `JSONEncoder` writes (`{"x":[…],"y":[…]}`, integral values without a
    /// fraction), written directly: `JSONEncoder` cost about a millisecond for a long signature.
    public var json: String {
        var text = "{\"x\":["
        text.reserveCapacity(count * 16 + 16)
        func append(_ values: [Double]) {
            for (i, value) in values.enumerated() {
                if i > 0 { text += "," }
                if value.isFinite, value == value.rounded(), abs(value) < 1e15 {
                    text += String(Int64(value))
                } else if value.isFinite {
                    text += value.description
                } else {
                    text += "0"
                }
            }
        }
        append(x)
        text += "],\"y\":["
        append(y)
        text += "]}"
        return text
    }
}

/// Compares handwritten signatures (docs/sign-to-login.md, "The verifier").
///
/// Each signature becomes a sequence of features per point, after the pen's position and size
/// are taken out (`Parameters.scaling`): the position relative to the centroid, the direction of
/// the stroke (its sine and cosine), the speed (the step between points, relative to the
/// signature's mean step: touches arrive at a steady rate, so the point index is the clock), the
/// change of direction, the velocity and the acceleration. Two signatures are compared by dynamic
/// time warping on these features within a band, normalised by the path length.
///
/// The similarity of an attempt is then normalised by the person's own references: the
/// distance to the nearest references divided by how far the references are from each other.
/// That ratio is 1 for an attempt as close as the person's own signatures are to each other, so
/// one threshold means the same for everybody; it is mapped to 0…1 with 0.5 at `ratioAtHalf`.
/// Every number is a `Parameters` value chosen on research sets with the others held out
/// (docs/performance.md, "Signature verification"). Deterministic, allocation-light, and run off
/// the event loop by its callers.
public struct SignatureVerifier: Sendable {
    /// How a signature's size is taken out before comparing.
    public enum Scaling: String, Sendable, Codable, CaseIterable {
        /// One factor for both axes: the RMS distance from the centroid.
        case isotropic
        /// Each axis by its own standard deviation: a signature written wider or flatter than the
        /// references is compared by its shape, not its aspect.
        case perAxis
    }

    /// Where a signature's points are taken before comparing.
    public enum Resampling: String, Sendable, Codable, CaseIterable {
        /// The points as they came, cut evenly to `Parameters.maxPoints`: the spacing of the points is the pen's speed.
        case asSent
        /// Evenly along the path (the step between two pen-down points, a lift included, counts as
        /// its straight line), as many as were sent up to `Parameters.maxPoints`; the speed feature
        /// is the speed as sent at that place of the path. Two devices that sample at different
        /// rates give the same shape point for point.
        case arcLength
    }

    /// The verifier's numbers. `shipped` is what the server runs.
    public struct Parameters: Sendable, Equatable, Codable {
        /// Signatures are cut to at most this many points (evenly) before comparing.
        public var maxPoints = 256
        public var resampling = Resampling.asSent
        public var scaling = Scaling.isotropic
        /// Weights of the features per point (`Feature`); a zero weight leaves a feature out.
        public var weights: [Double] = [1.0, 1.0, 0.8, 0.8, 1.5, 0.3, 0, 0, 0, 0]
        /// The relative speed is cut at this many times the signature's median step before it is
        /// compared (a pen lifted between strokes makes a few huge steps; a signature of many
        /// strokes must not be judged by where exactly its jumps fall). Infinite in version 1.
        public var speedCap = Double.infinity
        /// The DTW band, as a fraction of the longer sequence.
        public var band = 0.15
        /// An attempt is compared with this many of the references nearest to it.
        public var nearest = 3
        /// The spread (median distance between two references) of a typical person: a person's own
        /// spread is pulled towards it by `pull` (geometrically; 0: their own, 1: the typical one).
        public var typicalSpread = 0.45
        public var pull = 0.5
        /// How an attempt's distances are put in the person's terms: `false` divides the mean of
        /// the `nearest` by the median distance between two references (version 1); `true` divides
        /// each of the three distances below by the same distance measured among the references
        /// themselves, each reference against the others (so a genuine attempt's ratios are about
        /// 1 whatever the person's number of references or the shape of their spread).
        public var matched = false
        /// The weights of the three distances when `matched`: the mean of the `nearest`, the mean
        /// to every reference, and the distance to the medoid (the reference nearest the others).
        public var nearestWeight = 1.0
        public var meanWeight = 0.0
        public var medoidWeight = 0.0
        /// How much a duration unlike the references' counts, per standard deviation.
        public var durationWeight = 0.15
        /// `true` (version 1): a duration longer or shorter than the references' counts; `false`:
        /// only a longer one. A forger copies slowly; the owner of a signature writes it faster as
        /// it becomes a habit, and must not be refused for that.
        public var durationBothWays = true
        /// The smallest standard deviation of the references' log-durations the duration is measured in.
        public var durationSpreadFloor = 0.15
        /// The similarity is 0.5 at this distance ratio.
        public var ratioAtHalf = 1.5
        /// How steeply the similarity falls around `ratioAtHalf`.
        public var steepness = 4.0
        /// `false`: a logistic curve in the ratio (version 1), which reaches 0.00 at twice
        /// `ratioAtHalf` and more; `true`: a log-logistic one, 1 / (1 + (ratio / ratioAtHalf)^steepness),
        /// which keeps telling attempts apart well beyond it once rounded to two decimals.
        public var logistic = false
        /// A reference whose mean distance to the others is this many times the median one is an
        /// outlier at enrolment.
        public var outlierFactor = 1.9
        /// References whose spread (the median distance between two of them) is above this do not
        /// tell their writer from a forger well: enrolment refuses the ones farthest from the
        /// others (at most half) when the rest are then within it, and asks for new ones (a person
        /// whose closest half is still beyond it is enrolled as they are, not asked forever).
        /// Infinite in version 1; near the 97th percentile of the research sets' writers in version 2.
        public var spreadLimit = Double.infinity

        public init() {}

        /// The verifier of version 1 (the first one shipped): the defaults.
        public static let first = Parameters()
        /// What the server runs (version 2): chosen by leave-one-set-out on five research sets
        /// (docs/performance.md, "Signature verification").
        public static let shipped: Parameters = {
            var p = Parameters()
            p.matched = true
            p.nearestWeight = 1
            p.meanWeight = 1
            p.nearest = 3
            p.pull = 0.25
            p.typicalSpread = 0.113
            p.durationWeight = 0.25
            p.durationBothWays = false
            p.logistic = true
            p.steepness = 3
            p.ratioAtHalf = 2.26
            p.spreadLimit = 0.85
            return p
        }()
    }

    /// The features per point, in the order of `Parameters.weights`.
    public enum Feature: Int, CaseIterable, Sendable {
        case x, y, directionCosine, directionSine, speed, turn, velocityX, velocityY, acceleration, logSpeed
    }

    /// The fewest points a signature may have.
    public var minPoints = 16
    public var parameters: Parameters

    /// Features of one signature: the features with a weight, already multiplied by its square
    /// root, feature by feature (`columns[k * count + i]` is feature `k` of point `i`), so the DTW
    /// reads eight neighbouring points' feature in one vector step.
    public struct Features: Sendable, Equatable {
        public var columns: [Float]
        public var count: Int
        public var dimensions: Int

        /// The features as numbers, `dimensions` per point.
        public var values: [Double] {
            (0..<count).flatMap { i in (0..<dimensions).map { k in Double(columns[k * count + i]) } }
        }
    }

    public init(parameters: Parameters = .shipped) {
        self.parameters = parameters
    }

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
        let p = parameters
        var xs = signature.x, ys = signature.y
        // Along the path: the speed as sent, carried to each new point.
        var carriedSpeed: [Double]?
        if p.resampling == .arcLength, xs.count >= 2 {
            (xs, ys, carriedSpeed) = Self.alongThePath(xs, ys, count: min(xs.count, p.maxPoints))
        } else if xs.count > p.maxPoints {
            // Cut evenly to at most maxPoints (keeps the spacing pattern, i.e. the speed).
            let step = Double(xs.count - 1) / Double(p.maxPoints - 1)
            let picks = (0..<p.maxPoints).map { Int((Double($0) * step).rounded()) }
            xs = picks.map { signature.x[$0] }
            ys = picks.map { signature.y[$0] }
        }
        let n = xs.count
        guard n > 0 else { return Features(columns: [], count: 0, dimensions: 0) }
        // Position and size out: the centroid, and the spread (one for both axes, or one per axis).
        let cx = xs.reduce(0, +) / Double(n), cy = ys.reduce(0, +) / Double(n)
        var varianceX = 0.0, varianceY = 0.0
        for i in 0..<n {
            varianceX += (xs[i] - cx) * (xs[i] - cx)
            varianceY += (ys[i] - cy) * (ys[i] - cy)
        }
        varianceX /= Double(n)
        varianceY /= Double(n)
        let scaleX: Double, scaleY: Double
        switch p.scaling {
        case .isotropic:
            scaleX = max((varianceX + varianceY).squareRoot(), 1e-9)
            scaleY = scaleX
        case .perAxis:
            let floor = max((varianceX + varianceY).squareRoot() * 0.05, 1e-9)
            scaleX = max(varianceX.squareRoot(), floor)
            scaleY = max(varianceY.squareRoot(), floor)
        }
        for i in 0..<n {
            xs[i] = (xs[i] - cx) / scaleX
            ys[i] = (ys[i] - cy) / scaleY
        }
        // Steps, smoothed over three points.
        var dx = [Double](repeating: 0, count: n), dy = [Double](repeating: 0, count: n)
        for i in 0..<n {
            let a = max(0, i - 1), b = min(n - 1, i + 1)
            dx[i] = (xs[b] - xs[a]) / Double(max(1, b - a))
            dy[i] = (ys[b] - ys[a]) / Double(max(1, b - a))
        }
        // The step (for the direction) and the speed: the same but along the path, where the steps are even.
        let step = (0..<n).map { (dx[$0] * dx[$0] + dy[$0] * dy[$0]).squareRoot() }
        // The speed as sent is in the device's units: in the signature's size, as the steps are.
        let size = max((varianceX + varianceY).squareRoot(), 1e-9)
        let speed = carriedSpeed.map { $0.map { $0 / size } } ?? step
        // The median step: a pen lifted between strokes makes a few huge steps that the mean
        // follows and the median does not.
        let medianSpeed = max(speed.sorted()[n / 2], 1e-9)
        var capped = speed
        if p.speedCap.isFinite {
            for i in 0..<n where capped[i] > p.speedCap * medianSpeed { capped[i] = p.speedCap * medianSpeed }
        }
        let meanSpeed = max(capped.reduce(0, +) / Double(n), 1e-9)
        var acceleration = [Double](repeating: 0, count: n)
        for i in 0..<n {
            let a = max(0, i - 1), b = min(n - 1, i + 1)
            let ax = (dx[b] - dx[a]) / Double(max(1, b - a)), ay = (dy[b] - dy[a]) / Double(max(1, b - a))
            acceleration[i] = (ax * ax + ay * ay).squareRoot()
        }
        let meanAcceleration = max(acceleration.reduce(0, +) / Double(n), 1e-9)
        // Only the features with a weight, each multiplied by the square root of its weight.
        let kept = p.weights.indices.filter { p.weights[$0] > 0 && $0 < Feature.allCases.count }
        let roots = kept.map { p.weights[$0].squareRoot() }
        let d = kept.count
        var columns = [Float](repeating: 0, count: n * d)
        var previousAngle = 0.0
        for i in 0..<n {
            let moving = step[i] > 1e-9
            let angle = atan2(dy[i], dx[i])
            var turn = 0.0
            if i > 0 {
                turn = angle - previousAngle
                while turn > .pi { turn -= 2 * .pi }
                while turn < -.pi { turn += 2 * .pi }
            }
            previousAngle = angle
            for (column, feature) in kept.enumerated() {
                let value: Double
                switch Feature(rawValue: feature)! {
                case .x: value = xs[i]
                case .y: value = ys[i]
                case .directionCosine: value = moving ? dx[i] / step[i] : 0
                case .directionSine: value = moving ? dy[i] / step[i] : 0
                case .speed: value = capped[i] / meanSpeed - 1
                case .turn: value = turn / .pi
                case .velocityX: value = dx[i] / meanSpeed
                case .velocityY: value = dy[i] / meanSpeed
                case .acceleration: value = acceleration[i] / meanAcceleration - 1
                case .logSpeed: value = min(max(log(max(speed[i] / medianSpeed, 1e-3)), -3), 3)
                }
                columns[column * n + i] = Float(value * roots[column])
            }
        }
        return Features(columns: columns, count: n, dimensions: d)
    }

    /// `count` points evenly along the path of `xs`, `ys`, and at each the speed as sent there
    /// (the step between the points as sent, over three points, interpolated at that place).
    static func alongThePath(_ xs: [Double], _ ys: [Double], count: Int) -> ([Double], [Double], [Double]) {
        let n = xs.count
        var length = [Double](repeating: 0, count: n)
        for i in 1..<n { length[i] = length[i - 1] + ((xs[i] - xs[i - 1]) * (xs[i] - xs[i - 1]) + (ys[i] - ys[i - 1]) * (ys[i] - ys[i - 1])).squareRoot() }
        var sent = [Double](repeating: 0, count: n)
        for i in 0..<n {
            let a = max(0, i - 1), b = min(n - 1, i + 1)
            sent[i] = (length[b] - length[a]) / Double(max(1, b - a))
        }
        let total = length[n - 1]
        guard total > 0, count >= 2 else { return (xs, ys, sent) }
        var x = [Double](repeating: 0, count: count), y = x, speed = x
        var j = 0
        for k in 0..<count {
            let target = total * Double(k) / Double(count - 1)
            while j < n - 2 && length[j + 1] < target { j += 1 }
            let segment = length[j + 1] - length[j]
            let f = segment > 0 ? min(max((target - length[j]) / segment, 0), 1) : 0
            x[k] = xs[j] + f * (xs[j + 1] - xs[j])
            y[k] = ys[j] + f * (ys[j + 1] - ys[j])
            speed[k] = sent[j] + f * (sent[j + 1] - sent[j])
        }
        return (x, y, speed)
    }

    // MARK: Distance

    /// The DTW distance of two signatures' features, per step of the warping path.
    public func distance(_ a: Features, _ b: Features) -> Double {
        guard a.count > 0, b.count > 0, a.dimensions == b.dimensions else { return .infinity }
        var warp = Warp(a.count, b.count, band: parameters.band)
        defer { warp.deallocate() }
        a.columns.withUnsafeBufferPointer { av in
            b.columns.withUnsafeBufferPointer { bv in
                for i in 1...a.count {
                    let (low, high) = warp.startRow(i, a: av, b: bv, dimensions: a.dimensions)
                    if low <= high {
                        var left = warp.leftOf(low)
                        for j in low...high { warp.cell(j, &left) }
                    }
                    warp.endRow()
                }
            }
        }
        return warp.distance
    }

    /// `distance` of one signature's features to several others': two at a time, in one loop, so
    /// that the processor overlaps their chains of dependent cells (each cell waits for the one
    /// on its left); the same numbers as one by one, in the others' order.
    public func distances(_ a: Features, to others: [Features]) -> [Double] {
        var result: [Double] = []
        result.reserveCapacity(others.count)
        var k = 0
        while k + 1 < others.count {
            let (b, c) = (others[k], others[k + 1])
            if a.count > 0, b.count > 0, c.count > 0, a.dimensions == b.dimensions, a.dimensions == c.dimensions {
                var first = Warp(a.count, b.count, band: parameters.band), second = Warp(a.count, c.count, band: parameters.band)
                defer {
                    first.deallocate()
                    second.deallocate()
                }
                a.columns.withUnsafeBufferPointer { av in
                    b.columns.withUnsafeBufferPointer { bv in
                        c.columns.withUnsafeBufferPointer { cv in
                            for i in 1...a.count {
                                let (lowB, highB) = first.startRow(i, a: av, b: bv, dimensions: a.dimensions)
                                let (lowC, highC) = second.startRow(i, a: av, b: cv, dimensions: a.dimensions)
                                let lengthB = max(0, highB - lowB + 1), lengthC = max(0, highC - lowC + 1)
                                var leftB = first.leftOf(lowB), leftC = second.leftOf(lowC)
                                for t in 0..<max(lengthB, lengthC) {
                                    if t < lengthB { first.cell(lowB &+ t, &leftB) }
                                    if t < lengthC { second.cell(lowC &+ t, &leftC) }
                                }
                                first.endRow()
                                second.endRow()
                            }
                        }
                    }
                }
                result.append(first.distance)
                result.append(second.distance)
            } else {
                result.append(distance(a, b))
                result.append(distance(a, c))
            }
            k += 2
        }
        if k < others.count { result.append(distance(a, others[k])) }
        return result
    }

    /// One DTW in progress, within a band: two rows of path costs and of path lengths, swapped
    /// row by row, and the current row's costs of matching two points. Its memory is its owner's
    /// to `deallocate`.
    private struct Warp {
        let n: Int, m: Int, width: Int
        let buffer: UnsafeMutablePointer<Float>
        let steps: UnsafeMutablePointer<Int32>
        /// The current row's costs by column (1-based, as the rows), with room for a last vector step.
        let costs: UnsafeMutablePointer<Float>
        var previous: UnsafeMutablePointer<Float>, current: UnsafeMutablePointer<Float>
        var previousSteps: UnsafeMutablePointer<Int32>, currentSteps: UnsafeMutablePointer<Int32>

        init(_ n: Int, _ m: Int, band: Double) {
            self.n = n
            self.m = m
            width = max(Int(Double(max(n, m)) * band), abs(n - m) + 1)
            buffer = .allocate(capacity: 2 * (m + 1))
            steps = .allocate(capacity: 2 * (m + 1))
            costs = .allocate(capacity: m + 9)
            buffer.initialize(repeating: .infinity, count: 2 * (m + 1))
            steps.initialize(repeating: 0, count: 2 * (m + 1))
            costs.initialize(repeating: 0, count: m + 9)
            (previous, current) = (buffer, buffer + (m + 1))
            (previousSteps, currentSteps) = (steps, steps + (m + 1))
            previous[0] = 0
        }

        func deallocate() {
            buffer.deallocate()
            steps.deallocate()
            costs.deallocate()
        }

        /// Starts row `i` (1-based): the band's columns (empty when low > high), whose costs are
        /// worked out here, eight columns per vector step: the Euclidean distance between point
        /// `i` of `a` and each point of `b` in the band.
        @inline(__always)
        func startRow(_ i: Int, a: UnsafeBufferPointer<Float>, b: UnsafeBufferPointer<Float>, dimensions: Int) -> (low: Int, high: Int) {
            let center = Int((Double(i) * Double(m) / Double(n)).rounded())
            let low = max(1, center - width), high = min(m, center + width)
            // The band only moves right: this buffer's cells right of the band were never
            // written, the ones inside are written now, and of the ones left of it the next
            // row reads only the one just before the band.
            current[max(0, low - 1)] = .infinity
            guard low <= high, let ab = a.baseAddress, let bb = b.baseAddress else { return (low, high) }
            var j = low
            while j + 7 <= high {
                var squares = SIMD8<Float>.zero
                for k in 0..<dimensions {
                    let column = UnsafeRawPointer(bb + k * m + (j - 1)).loadUnaligned(as: SIMD8<Float>.self)
                    let difference = SIMD8<Float>(repeating: ab[k * n + (i - 1)]) - column
                    squares += difference * difference
                }
                UnsafeMutableRawPointer(costs + j).storeBytes(of: Self.squareRoot(squares), as: SIMD8<Float>.self)
                j += 8
            }
            while j <= high {
                var squares: Float = 0
                for k in 0..<dimensions {
                    let difference = ab[k * n + (i - 1)] - bb[k * m + (j - 1)]
                    squares += difference * difference
                }
                costs[j] = squares.squareRoot()
                j += 1
            }
            return (low, high)
        }

        /// Lane by lane the same as `squareRoot()`, in two instructions where the processor has
        /// them (the standard library's takes every lane on its own, with a branch for negatives).
        @inline(__always)
        static func squareRoot(_ value: SIMD8<Float>) -> SIMD8<Float> {
            #if arch(x86_64)
            let low = _mm_sqrt_ps(value.lowHalf), high = _mm_sqrt_ps(value.highHalf)
            return SIMD8(lowHalf: low, highHalf: high)
            #else
            return value.squareRoot()
            #endif
        }

        /// Column `j` of the current row: the cheapest of its three predecessors, plus its cost.
        /// The cell on its left comes in `left` (and leaves as this one), in registers rather than
        /// through memory: the chain of cells is what the DTW waits on. Wrapping arithmetic: `j`
        /// is within the band, and a path is at most `n + m` steps.
        @inline(__always)
        func cell(_ j: Int, _ left: inout (cost: Float, length: Int32)) {
            var best = previous[j &- 1], length = previousSteps[j &- 1]
            if previous[j] < best { best = previous[j]; length = previousSteps[j] }
            if left.cost < best { best = left.cost; length = left.length }
            left = (best + costs[j], length &+ 1)
            current[j] = left.cost
            currentSteps[j] = left.length
        }

        /// The cell left of the band in the current row (`cell`'s first `left`).
        @inline(__always)
        func leftOf(_ low: Int) -> (cost: Float, length: Int32) {
            (current[low &- 1], currentSteps[low &- 1])
        }

        @inline(__always)
        mutating func endRow() {
            swap(&previous, &current)
            swap(&previousSteps, &currentSteps)
        }

        /// After the last row: the cost of the cheapest path per step.
        var distance: Double {
            let total = Double(previous[m])
            return total.isFinite ? total / Double(max(previousSteps[m], 1)) : .infinity
        }
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
        /// The distances between every two references (from version 2).
        public var distances: [[Double]]?

        public init(version: Int, references: [SignaturePoints], spread: Double, distances: [[Double]]? = nil) {
            self.version = version
            self.references = references
            self.spread = spread
            self.distances = distances
        }
    }

    /// Changes whenever features, distance or normalisation change: a model of another version is
    /// made again from its signatures (`current(_:)`), and the server stores it again.
    public static let version = 2

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
            for (position, index) in usable.enumerated() where mean[position] > median * parameters.outlierFactor {
                refused.append(index)
            }
        }
        refused.sort()
        guard refused.isEmpty else { return .refused(refused) }
        guard features.count >= 3 else { return .refused(Array(signatures.indices)) }
        // Too far apart to tell their writer from a forger: the farthest go until the rest agree.
        // When even the closest half does not agree, refusing would only ask the person again and
        // again: their signature varies that much, and the model is made (the pull to a typical
        // spread keeps its tolerance bounded).
        var kept = Array(usable.indices), far: [Int] = []
        while median(of: kept, in: distances) > parameters.spreadLimit, kept.count > max(3, (usable.count + 1) / 2) {
            // Summed apart from the closure: the one-expression form took the type checker five seconds.
            func apart(_ index: Int) -> Double {
                var sum = 0.0
                for other in kept { sum += distances[index][other] }
                return sum
            }
            let farthest = kept.max { apart($0) < apart($1) }!
            kept.removeAll { $0 == farthest }
            far.append(usable[farthest])
        }
        if !far.isEmpty, median(of: kept, in: distances) <= parameters.spreadLimit { return .refused(far.sorted()) }
        return .model(model(usable.map { signatures[$0] }, distances: distances))
    }

    /// The median distance between two of the signatures at `positions`.
    private func median(of positions: [Int], in distances: [[Double]]) -> Double {
        var values: [Double] = []
        for (a, i) in positions.enumerated() {
            for j in positions[(a + 1)...] { values.append(distances[i][j]) }
        }
        return values.isEmpty ? 0 : values.sorted()[values.count / 2]
    }

    /// The distances between every two of the signatures' features.
    public func pairwise(_ features: [Features]) -> [[Double]] {
        var distances = [[Double]](repeating: [Double](repeating: 0, count: features.count), count: features.count)
        for i in features.indices {
            let later = Array(features[(i + 1)...])
            for (offset, value) in self.distances(features[i], to: later).enumerated() {
                distances[i][i + 1 + offset] = value
                distances[i + 1 + offset][i] = value
            }
        }
        return distances
    }

    /// The model of these references, whose pairwise distances are `distances`.
    public func model(_ references: [SignaturePoints], distances: [[Double]]) -> Model {
        var values: [Double] = []
        for i in references.indices {
            for j in references.indices where j > i { values.append(distances[i][j]) }
        }
        let sorted = values.sorted()
        let spread = sorted.isEmpty ? 1 : max(sorted[sorted.count / 2], 1e-6)
        return Model(version: Self.version, references: references, spread: spread, distances: distances)
    }

    /// The model as this verifier makes it: one of another version is made again from its
    /// signatures (they were accepted once; they are not checked again).
    public func current(_ model: Model) -> Model {
        guard model.version != Self.version || model.distances?.count != model.references.count else { return model }
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

    /// A model made current (`current(_:)`) with its references' features: what a server keeps
    /// in memory between attempts, so an attempt costs its own features and the DTW only.
    public struct Prepared: Sendable {
        public let model: Model
        public let features: [Features]
    }

    public func prepare(_ model: Model) -> Prepared {
        let model = current(model)
        return Prepared(model: model, features: model.references.map(features))
    }

    /// The similarity (0…1) of an attempt to a model (docs/sign-to-login.md, "The verifier").
    public func similarity(_ attempt: SignaturePoints, to model: Model) -> Double {
        similarity(attempt, to: prepare(model))
    }

    public func similarity(_ attempt: SignaturePoints, to prepared: Prepared) -> Double {
        guard problem(with: attempt) == nil, !prepared.model.references.isEmpty else { return 0 }
        let features = self.features(attempt)
        let distances = distances(features, to: prepared.features)
        return similarity(distances: distances, attemptCount: attempt.count, model: prepared.model)
    }

    /// The similarity of an attempt from its distances to the model's references (in their order)
    /// and its number of points:
    ///
    /// - the mean DTW distance to the attempt's `nearest` references, divided by the person's own
    ///   spread pulled towards a typical spread: a person whose signatures vary a lot is not
    ///   given a limitless tolerance, and a very steady one is not refused their own signature;
    /// - plus how far the attempt's duration (its number of points: touches come at the device's
    ///   steady rate) is from the references', in the references' own standard deviations
    ///   (log scale; at least `durationSpreadFloor`): a forger who traces slowly gives themselves away;
    /// - mapped through a logistic curve, 0.5 at `ratioAtHalf`.
    public func similarity(distances: [Double], attemptCount: Int, model: Model) -> Double {
        similarity(ratio: ratio(distances: distances, attemptCount: attemptCount, model: model))
    }

    /// The similarity of a distance ratio: 1 at 0, 0.5 at `ratioAtHalf`, towards 0 beyond.
    public func similarity(ratio: Double) -> Double {
        let p = parameters
        guard ratio.isFinite else { return 0 }
        if p.logistic { return 1 / (1 + pow(max(ratio, 0) / p.ratioAtHalf, p.steepness)) }
        return 1 / (1 + exp(p.steepness * (ratio - p.ratioAtHalf)))
    }

    /// An attempt's distance ratio (`similarity(distances:attemptCount:model:)`): about 1 for an
    /// attempt as near the references as they are to each other; infinite for no distances.
    public func ratio(distances: [Double], attemptCount: Int, model: Model) -> Double {
        let p = parameters
        guard !distances.isEmpty else { return .infinity }
        let sorted = distances.sorted()
        let nearest = sorted.prefix(max(1, p.nearest))
        let nearestMean = nearest.reduce(0, +) / Double(nearest.count)
        var ratio: Double
        if p.matched, let among = model.distances, among.count == distances.count, among.count >= 2 {
            // The same three distances for each reference against the others.
            let n = among.count, k = min(max(1, p.nearest), n - 1)
            var ownNearest = 0.0, ownMean = 0.0
            var medoid = 0, medoidSum = Double.infinity
            for i in 0..<n {
                let others = (0..<n).filter { $0 != i }.map { among[i][$0] }
                let row = others.sorted()
                ownNearest += row.prefix(k).reduce(0, +) / Double(k)
                let sum = others.reduce(0, +)
                ownMean += sum / Double(n - 1)
                if sum < medoidSum { (medoid, medoidSum) = (i, sum) }
            }
            ownNearest /= Double(n)
            ownMean /= Double(n)
            let ownMedoid = medoidSum / Double(n - 1)
            let attemptNearest = sorted.prefix(k).reduce(0, +) / Double(k)
            let attemptMean = distances.reduce(0, +) / Double(n)
            let total = p.nearestWeight + p.meanWeight + p.medoidWeight
            ratio = (p.nearestWeight * attemptNearest / max(ownNearest, 1e-9)
                + p.meanWeight * attemptMean / max(ownMean, 1e-9)
                + p.medoidWeight * distances[medoid] / max(ownMedoid, 1e-9)) / max(total, 1e-9)
            // A person whose signatures vary a lot is not given a limitless tolerance, nor a very
            // steady one refused their own signature: their spread counts against a typical one.
            ratio *= pow(model.spread / p.typicalSpread, p.pull)
        } else {
            let spread = pow(model.spread, 1 - p.pull) * pow(p.typicalSpread, p.pull)
            ratio = nearestMean / spread
        }
        let logs = model.references.map { log(Double($0.count)) }
        let mean = logs.reduce(0, +) / Double(logs.count)
        let deviation = (logs.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(logs.count)).squareRoot()
        let slower = log(Double(attemptCount)) - mean
        ratio += p.durationWeight * (p.durationBothWays ? abs(slower) : max(slower, 0)) / max(deviation, p.durationSpreadFloor)
        return ratio.isFinite ? ratio : .infinity
    }
}
