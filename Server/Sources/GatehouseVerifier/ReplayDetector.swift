import Foundation

/// Tells a replayed signature from a fresh one: a person never draws the same points twice, so an
/// attempt (nearly) identical to one of their references or to an earlier attempt is a copy: sent
/// again from a log, a proxy or the database, moved, scaled or lightly jittered.
///
/// Both signatures are taken to their centroid and scaled by their RMS spread (so a copy moved or
/// scaled is still a copy), resampled to `samples` points along their point index, and compared
/// point by point: the mean distance is 0 for an exact copy and stays near the jitter's size for a
/// jittered one (at most 0.005 for a pixel of jitter on a signature 200 points wide), while two
/// signings by the same hand differ by their shape, timing and point count (0.012 and more for the
/// tests' generated writers, which are steadier than people). Signatures whose point counts differ
/// by more than `countTolerance` are never replays of each other. A copy jittered by several pixels
/// passes this check; what stops it is the attempt budget and the session rules, not this.
public struct ReplayDetector: Sendable {
    /// Below this mean distance (in units of the signature's spread) an attempt is a replay.
    public var threshold: Double
    public var samples = 64
    public var countTolerance = 0.05

    public init(threshold: Double = 0.003) {
        self.threshold = threshold
    }

    /// The mean point distance after normalising (0 = the same points), or `.infinity` when the
    /// point counts differ too much to be copies or either is degenerate.
    public func distance(_ a: SignaturePoints, _ b: SignaturePoints) -> Double {
        distance(fingerprint(a), fingerprint(b))
    }

    /// What the detector compares of a signature, small enough to keep with every attempt (so a
    /// new attempt is checked against the history without reading the history's points): the
    /// point count and the normalised, resampled curve.
    public struct Fingerprint: Sendable, Equatable, Codable {
        public var count: Int
        /// `samples` points, x and y interleaved; empty for a degenerate signature.
        public var curve: [Float]
    }

    /// A fingerprint as stored: "count:base64 of the curve's little-endian 32-bit floats".
    public func encoded(_ f: Fingerprint) -> String {
        var bytes = [UInt8]()
        bytes.reserveCapacity(f.curve.count * 4)
        for value in f.curve {
            let bits = value.bitPattern
            bytes += [UInt8(bits & 0xFF), UInt8(bits >> 8 & 0xFF), UInt8(bits >> 16 & 0xFF), UInt8(bits >> 24)]
        }
        return "\(f.count):" + Data(bytes).base64EncodedString()
    }

    /// The fingerprint `encoded(_:)` wrote, or nil for text it did not write.
    public func decoded(_ text: String) -> Fingerprint? {
        // By bytes: an attempt reads up to `GATEHOUSE_SIGNATURE_REPLAY_HISTORY` of them.
        let utf8 = text.utf8
        guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")),
              let count = Int(Substring(utf8[..<colon])),
              let data = Data(base64Encoded: Data(utf8[utf8.index(after: colon)...])), data.count % 4 == 0 else { return nil }
        let bytes = [UInt8](data)
        let curve = stride(from: 0, to: bytes.count, by: 4).map { i in
            Float(bitPattern: UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24)
        }
        return Fingerprint(count: count, curve: curve)
    }

    public func fingerprint(_ s: SignaturePoints) -> Fingerprint {
        guard s.count >= 2, let points = normalised(s) else { return Fingerprint(count: s.count, curve: []) }
        return Fingerprint(count: s.count, curve: points.flatMap { [Float($0.0), Float($0.1)] })
    }

    /// The mean point distance of two fingerprints (0 = the same points), or `.infinity` when the
    /// point counts differ too much to be copies or either is degenerate.
    public func distance(_ a: Fingerprint, _ b: Fingerprint) -> Double {
        guard a.count >= 2, b.count >= 2, a.curve.count == samples * 2, b.curve.count == samples * 2 else { return .infinity }
        let larger = Double(max(a.count, b.count)), smaller = Double(min(a.count, b.count))
        guard (larger - smaller) / larger <= countTolerance else { return .infinity }
        var total = 0.0
        for i in 0..<samples {
            let dx = Double(a.curve[2 * i] - b.curve[2 * i]), dy = Double(a.curve[2 * i + 1] - b.curve[2 * i + 1])
            total += (dx * dx + dy * dy).squareRoot()
        }
        return total / Double(samples)
    }

    /// The first of `earlier` the attempt's fingerprint replays, by index.
    public func replayed(_ attempt: Fingerprint, among earlier: [Fingerprint]) -> Int? {
        earlier.firstIndex { distance(attempt, $0) < threshold }
    }

    private func normalised(_ s: SignaturePoints) -> [(Double, Double)]? {
        let n = Double(s.count)
        let cx = s.x.reduce(0, +) / n, cy = s.y.reduce(0, +) / n
        var spread = 0.0
        for i in 0..<s.count { spread += (s.x[i] - cx) * (s.x[i] - cx) + (s.y[i] - cy) * (s.y[i] - cy) }
        spread = (spread / n).squareRoot()
        guard spread.isFinite, spread > 1e-9 else { return nil }
        return (0..<samples).map { k in
            let position = Double(k) * Double(s.count - 1) / Double(samples - 1)
            let low = Int(position.rounded(.down)), high = min(low + 1, s.count - 1)
            let t = position - Double(low)
            let x = s.x[low] + (s.x[high] - s.x[low]) * t, y = s.y[low] + (s.y[high] - s.y[low]) * t
            return ((x - cx) / spread, (y - cy) / spread)
        }
    }
}
