import Foundation

/// Signatures made up for the tests and the benchmarks, where no research set may go: each writer
/// has a shape (a few circular strokes and a drift) and a rhythm (where the pen is fast and slow);
/// the writer's own signatures vary a little, a skilled forger copies the shape less exactly at a
/// slower, flatter pace, and another writer is a random forgery. Seeded, so every run is the same.
package struct SyntheticWriter: Sendable {
    package struct Generator: RandomNumberGenerator, Sendable {
        package var state: UInt64
        package init(state: UInt64) { self.state = state }
        package mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    var amplitudes: [(Double, Double)]
    var frequencies: [(Double, Double)]
    var phases: [(Double, Double)]
    var drift: Double
    var rhythm: (Double, Double, Double)

    package init(seed: UInt64) {
        var rng = Generator(state: seed)
        let parts = Int.random(in: 3...5, using: &rng)
        amplitudes = (0..<parts).map { _ in (Double.random(in: 20...80, using: &rng), Double.random(in: 15...60, using: &rng)) }
        frequencies = (0..<parts).map { _ in (Double.random(in: 0.5...3.5, using: &rng), Double.random(in: 0.5...3.5, using: &rng)) }
        phases = (0..<parts).map { _ in (Double.random(in: 0...(2 * .pi), using: &rng), Double.random(in: 0...(2 * .pi), using: &rng)) }
        drift = Double.random(in: 20...60, using: &rng)
        rhythm = (Double.random(in: 0.3...0.7, using: &rng), Double.random(in: 1...4, using: &rng), Double.random(in: 0...(2 * .pi), using: &rng))
    }

    package struct Refused: Error {}

    /// Ten of the writer's own signatures and the model the verifier makes of them (`Refused` when
    /// the verifier refuses them).
    package func enrolled(by verifier: SignatureVerifier, _ rng: inout Generator) throws -> (references: [SignaturePoints], model: SignatureVerifier.Model) {
        let references = (0..<10).map { _ in sign(&rng, shapeNoise: 0.03) }
        guard case .model(let model) = verifier.enrol(references) else { throw Refused() }
        return (references, model)
    }

    /// One signature: `shapeNoise` perturbs the strokes, `steady` flattens the writer's rhythm to
    /// a third and slows it down (how a forger traces).
    package func sign(_ rng: inout Generator, shapeNoise: Double, steady: Bool = false) -> SignaturePoints {
        let scale = Double.random(in: 0.93...1.07, using: &rng) * 2
        let rotation = Double.random(in: -0.05...0.05, using: &rng)
        let offset = (Double.random(in: 100...400, using: &rng), Double.random(in: 100...400, using: &rng))
        let a = amplitudes.map { ($0.0 * (1 + Double.random(in: -shapeNoise...shapeNoise, using: &rng)), $0.1 * (1 + Double.random(in: -shapeNoise...shapeNoise, using: &rng))) }
        let p = phases.map { ($0.0 + Double.random(in: -shapeNoise...shapeNoise, using: &rng), $0.1 + Double.random(in: -shapeNoise...shapeNoise, using: &rng)) }
        let amount = rhythm.0 * (steady ? 0.3 : 1 + Double.random(in: -0.1...0.1, using: &rng))
        let count = steady ? Int.random(in: 200...260, using: &rng) : Int.random(in: 120...150, using: &rng)
        // Samples come at a steady rate: the curve's parameter advances with the pen's speed.
        var t = 0.0
        let length = 2 * Double.pi
        var raw: [Double] = []
        for i in 0..<count {
            raw.append(t)
            t += 1 + amount * sin(rhythm.1 * 2 * .pi * Double(i) / Double(count) + rhythm.2)
        }
        let total = raw.last ?? 1
        var points: [(Double, Double)] = []
        for r in raw {
            let s = r / total * length
            var x = drift * s, y = 0.0
            for k in a.indices {
                x += a[k].0 * cos(frequencies[k].0 * s + p[k].0)
                y += a[k].1 * sin(frequencies[k].1 * s + p[k].1)
            }
            let rx = x * cos(rotation) - y * sin(rotation), ry = x * sin(rotation) + y * cos(rotation)
            points.append((offset.0 + scale * rx + Double.random(in: -0.5...0.5, using: &rng),
                           offset.1 + scale * ry + Double.random(in: -0.5...0.5, using: &rng)))
        }
        return SignaturePoints(points: points)
    }
}
