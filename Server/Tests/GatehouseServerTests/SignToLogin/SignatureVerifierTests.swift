import Foundation
import GatehouseServer
import GatehouseVerifier
import Testing

@Suite("Sign To Login: the verifier")
struct SignatureVerifierTests {
    let verifier = SignatureVerifier()

    @Test("genuine signatures score high, skilled forgeries and other writers low, at one threshold for everyone")
    func separatesGenuineFromForgeries() throws {
        var rng = SyntheticWriter.Generator(state: 42)
        let writers = (0..<12).map { SyntheticWriter(seed: UInt64($0) * 7919 + 1) }
        var genuine: [Double] = [], skilled: [Double] = [], random: [Double] = []
        for (index, writer) in writers.enumerated() {
            let references = (0..<10).map { _ in writer.sign(&rng, shapeNoise: 0.03) }
            guard case .model(let model) = verifier.enrol(references) else {
                Issue.record("writer \(index): honest references refused")
                continue
            }
            for _ in 0..<5 { genuine.append(verifier.similarity(writer.sign(&rng, shapeNoise: 0.03), to: model)) }
            for _ in 0..<5 { skilled.append(verifier.similarity(writer.sign(&rng, shapeNoise: 0.12, steady: true), to: model)) }
            let other = writers[(index + 1) % writers.count]
            for _ in 0..<5 { random.append(verifier.similarity(other.sign(&rng, shapeNoise: 0.03), to: model)) }
        }
        func share(_ values: [Double], _ test: (Double) -> Bool) -> Double { Double(values.filter(test).count) / Double(values.count) }
        #expect(share(genuine) { $0 >= 0.5 } >= 0.9, "genuine accepted: \(genuine.sorted())")
        #expect(share(skilled) { $0 >= 0.5 } <= 0.2, "skilled forgeries accepted: \(skilled.sorted())")
        #expect(share(random) { $0 >= 0.5 } == 0, "random forgeries accepted: \(random.sorted())")
        #expect(genuine.allSatisfy { (0...1).contains($0) } && skilled.allSatisfy { (0...1).contains($0) })
    }

    @Test("enrolment refuses a signature that is too short or does not fit the others, and says which")
    func enrolmentRefusesOutliers() throws {
        var rng = SyntheticWriter.Generator(state: 7)
        let writer = SyntheticWriter(seed: 99), stranger = SyntheticWriter(seed: 1234)
        var references = (0..<10).map { _ in writer.sign(&rng, shapeNoise: 0.03) }
        references[3] = SignaturePoints(points: [(1, 1), (2, 2), (3, 3)])
        references[7] = stranger.sign(&rng, shapeNoise: 0.03)

        #expect(verifier.enrol(references) == .refused([3, 7]))
        #expect(verifier.problem(with: references[3]) == .tooFewPoints)
        #expect(verifier.problem(with: SignaturePoints(points: (0..<40).map { (Double($0) * 0.1, 5) })) == .tooSmall)
    }

    @Test("the same inputs give the same similarity (deterministic); a signature matches itself best")
    func deterministic() throws {
        var rng = SyntheticWriter.Generator(state: 3)
        let writer = SyntheticWriter(seed: 5)
        let (references, model) = try writer.enrolled(by: verifier, &rng)
        let attempt = writer.sign(&rng, shapeNoise: 0.03)
        #expect(verifier.similarity(attempt, to: model) == verifier.similarity(attempt, to: model))
        let a = verifier.features(attempt)
        #expect(verifier.distance(a, a) == 0)
        #expect(verifier.distance(a, verifier.features(references[0])) > 0)
    }
}

@Suite("Sign To Login: the verifier's model")
struct SignatureModelTests {
    let verifier = SignatureVerifier()

    @Test("a model made by another version of the verifier is made again from its signatures and scores as a new one")
    func modelOfAnotherVersionIsRemade() throws {
        // setup
        var rng = SyntheticWriter.Generator(state: 11)
        let writer = SyntheticWriter(seed: 21)
        let (_, model) = try writer.enrolled(by: verifier, &rng)
        var old = model
        old.version = SignatureVerifier.version - 1
        old.spread = 1000
        let attempt = writer.sign(&rng, shapeNoise: 0.03)

        // MUT
        let remade = verifier.current(old)

        // validate
        #expect(remade == model)
        #expect(verifier.similarity(attempt, to: old) == verifier.similarity(attempt, to: model))
        #expect(verifier.current(model) == model)
    }

    @Test("the same shape traced at half the speed scores clearly below the same signature at the writer's pace")
    func slowTracingScoresLower() throws {
        // setup: the writer's own signatures, and each of them traced with every point doubled
        var rng = SyntheticWriter.Generator(state: 12)
        let writer = SyntheticWriter(seed: 22)
        let (_, model) = try writer.enrolled(by: verifier, &rng)
        let genuine = (0..<5).map { _ in writer.sign(&rng, shapeNoise: 0.03) }
        let traced = genuine.map { signature in
            SignaturePoints(x: signature.x.flatMap { [$0, $0] }, y: signature.y.flatMap { [$0, $0] })
        }

        // MUT
        let genuineScores = genuine.map { verifier.similarity($0, to: model) }
        let tracedScores = traced.map { verifier.similarity($0, to: model) }

        // validate
        #expect(genuineScores.min()! >= 0.5, "\(genuineScores)")
        for (own, slow) in zip(genuineScores, tracedScores) { #expect(slow < own - 0.1, "\(own) → \(slow)") }
    }

    @Test("enrolment in steps: refused signatures are asked for again, the kept ones count, the missing ones complete the model")
    func enrolmentInSteps() throws {
        // setup
        var rng = SyntheticWriter.Generator(state: 13)
        let writer = SyntheticWriter(seed: 23), stranger = SyntheticWriter(seed: 24)
        var first = (0..<10).map { _ in writer.sign(&rng, shapeNoise: 0.03) }
        first[2] = SignaturePoints(points: [(1, 1), (2, 2)])
        first[6] = stranger.sign(&rng, shapeNoise: 0.03)

        // MUT: the first try, then the two missing ones
        let step = verifier.continueEnrolment(kept: [], new: first, needed: 10)
        guard case .incomplete(let kept, let required, let incorrect) = step else { Issue.record("\(step)"); return }
        let second = verifier.continueEnrolment(kept: kept, new: (0..<required).map { _ in writer.sign(&rng, shapeNoise: 0.03) }, needed: 10)

        // validate
        #expect(kept.count == 8 && required == 2 && incorrect == 2)
        #expect(!kept.contains(first[2]) && !kept.contains(first[6]))
        guard case .model(let model) = second else { Issue.record("\(second)"); return }
        #expect(model.references.count == 10 && model.version == SignatureVerifier.version)
    }
}

@Suite("Sign To Login: replays")
struct ReplayDetectorTests {
    let detector = ReplayDetector()

    @Test("a copy, moved, scaled or jittered by a third of a pixel, is a replay; two signings by the same hand never are")
    func copiesAndFreshSignatures() {
        // setup
        var rng = SyntheticWriter.Generator(state: 9)
        let writers = (0..<8).map { SyntheticWriter(seed: UInt64($0) * 104_729 + 3) }
        var fresh: [Double] = []
        var copies: [Double] = []

        // MUT
        for writer in writers {
            let signings = (0..<12).map { _ in writer.sign(&rng, shapeNoise: 0.03) }
            for i in signings.indices {
                for j in signings.indices where j > i { fresh.append(detector.distance(signings[i], signings[j])) }
                let original = signings[i]
                let moved = SignaturePoints(x: original.x.map { $0 * 1.3 + 40 }, y: original.y.map { $0 * 1.3 - 25 })
                let jittered = SignaturePoints(x: original.x.map { $0 + Double.random(in: -0.3...0.3, using: &rng) },
                                               y: original.y.map { $0 + Double.random(in: -0.3...0.3, using: &rng) })
                copies += [detector.distance(original, original), detector.distance(moved, original), detector.distance(jittered, original)]
            }
        }

        // validate
        #expect(copies.allSatisfy { $0 < detector.threshold }, "largest copy distance \(copies.max()!)")
        let comparable = fresh.filter(\.isFinite)
        #expect(comparable.count > 50, "enough pairs of similar length to compare: \(comparable.count)")
        // The generated writers are far steadier than people (their closest pair: 0.012).
        #expect(comparable.allSatisfy { $0 > detector.threshold * 3 }, "smallest fresh distance \(comparable.min() ?? .infinity)")
    }
}
