import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehouseServer
import GatehouseTestSupport
import GatehouseVerifier
import SQLKit
import Testing

/// What version 2 of the verifier adds (docs/sign-to-login.md, "The verifier"): features that do
/// not care where or how large a signature is written, the refusal of references too far apart
/// to tell their writer from a forger, and models of version 1 made again on first use.
@Suite("Sign To Login: the verifier, version 2")
struct SignatureVerifierVersionTests {
    let verifier = SignatureVerifier()

    /// The signature turned by `degrees` about its first point.
    static func rotated(_ s: SignaturePoints, degrees: Double) -> SignaturePoints {
        let a = degrees * .pi / 180
        let (x0, y0) = (s.x[0], s.y[0])
        return SignaturePoints(x: zip(s.x, s.y).map { x0 + ($0 - x0) * cos(a) - ($1 - y0) * sin(a) },
                               y: zip(s.x, s.y).map { y0 + ($0 - x0) * sin(a) + ($1 - y0) * cos(a) })
    }

    /// The signature's points resampled to `factor` times their number (a faster or slower touch rate).
    static func resampled(_ s: SignaturePoints, factor: Double) -> SignaturePoints {
        let n = s.count, m = Int((Double(n) * factor).rounded())
        var points: [(Double, Double)] = []
        for j in 0..<m {
            let t = Double(j) * Double(n - 1) / Double(m - 1)
            let i = min(Int(t), n - 2), f = t - Double(i)
            points.append((s.x[i] * (1 - f) + s.x[i + 1] * f, s.y[i] * (1 - f) + s.y[i + 1] * f))
        }
        return SignaturePoints(points: points)
    }

    @Test("the features do not change when a signature is moved or scaled, and do when it is turned")
    func featuresAreNormalised() throws {
        // setup
        var rng = SyntheticWriter.Generator(state: 31)
        let signature = SyntheticWriter(seed: 41).sign(&rng, shapeNoise: 0.03)
        let moved = SignaturePoints(x: signature.x.map { $0 * 3.5 + 900 }, y: signature.y.map { $0 * 3.5 - 200 })

        // MUT
        let a = verifier.features(signature), b = verifier.features(moved), c = verifier.features(Self.rotated(signature, degrees: 30))

        // validate
        #expect(a.count == signature.count && a.dimensions == verifier.parameters.weights.filter { $0 > 0 }.count)
        #expect(zip(a.values, b.values).allSatisfy { abs($0 - $1) < 1e-9 })
        #expect(verifier.distance(a, b) < 1e-9)
        #expect(verifier.distance(a, c) > 0.05, "a turned signature is not the same drawing")
    }

    /// A textbook DTW within the same band, in double precision, on the features as numbers:
    /// what the verifier's vectorised one must agree with.
    static func plainDistance(_ a: SignatureVerifier.Features, _ b: SignatureVerifier.Features, band: Double) -> Double {
        let (n, m, d) = (a.count, b.count, a.dimensions)
        let (av, bv) = (a.values, b.values)
        let width = max(Int(Double(max(n, m)) * band), abs(n - m) + 1)
        var cost = [[Double]](repeating: [Double](repeating: .infinity, count: m + 1), count: n + 1)
        var steps = [[Int]](repeating: [Int](repeating: 0, count: m + 1), count: n + 1)
        cost[0][0] = 0
        for i in 1...n {
            let center = Int((Double(i) * Double(m) / Double(n)).rounded())
            for j in max(1, center - width)...min(m, center + width) {
                let match = (0..<d).map { k in (av[(i - 1) * d + k] - bv[(j - 1) * d + k]) * (av[(i - 1) * d + k] - bv[(j - 1) * d + k]) }
                    .reduce(0, +).squareRoot()
                var best = cost[i - 1][j - 1], length = steps[i - 1][j - 1]
                if cost[i - 1][j] < best { best = cost[i - 1][j]; length = steps[i - 1][j] }
                if cost[i][j - 1] < best { best = cost[i][j - 1]; length = steps[i][j - 1] }
                cost[i][j] = best + match
                steps[i][j] = length + 1
            }
        }
        return cost[n][m].isFinite ? cost[n][m] / Double(max(steps[n][m], 1)) : .infinity
    }

    @Test("the DTW, eight columns per vector step and two references at a time, gives a plain DTW's distances")
    func vectorisedDistancesMatchAPlainDTW() throws {
        // setup: five references (the last one alone), of different lengths, and attempts shorter and longer than them
        var rng = SyntheticWriter.Generator(state: 33)
        let writer = SyntheticWriter(seed: 43)
        let references = [1.0, 0.7, 1.3, 0.9, 1.1].map { verifier.features(Self.resampled(writer.sign(&rng, shapeNoise: 0.03), factor: $0)) }
        let attempts = [0.6, 1.0, 1.5].map { verifier.features(Self.resampled(writer.sign(&rng, shapeNoise: 0.05), factor: $0)) }
            + [verifier.features(SyntheticWriter(seed: 44).sign(&rng, shapeNoise: 0.03))]

        for attempt in attempts {
            // MUT
            let together = verifier.distances(attempt, to: references)
            let alone = references.map { verifier.distance(attempt, $0) }

            // validate
            #expect(together == alone, "two at a time is the same arithmetic as one by one")
            for (reference, value) in zip(references, together) {
                let plain = Self.plainDistance(attempt, reference, band: verifier.parameters.band)
                #expect(value.isFinite && abs(value - plain) <= 1e-4 * max(1, plain), "\(value) against \(plain)")
            }
        }
        var positionsOnly = SignatureVerifier.Parameters.shipped
        positionsOnly.weights = [1, 1]
        let unlike = SignatureVerifier(parameters: positionsOnly).features(writer.sign(&rng, shapeNoise: 0.03))
        #expect(verifier.distances(attempts[0], to: [references[0], unlike, references[1]]) ==
                [verifier.distance(attempts[0], references[0]), .infinity, verifier.distance(attempts[0], references[1])],
                "features of another shape are infinitely far, and leave the others alone")
    }

    @Test("a genuine signature written a little turned, larger or at another touch rate still passes; one with a stroke missing does not")
    func genuineVariationsPassAndAMissingStrokeFails() throws {
        // setup
        var rng = SyntheticWriter.Generator(state: 32)
        let writer = SyntheticWriter(seed: 42)
        let (_, model) = try writer.enrolled(by: verifier, &rng)
        let fresh = writer.sign(&rng, shapeNoise: 0.03)
        let n = fresh.count
        // The middle quarter of the points gone: the pen jumps over a stroke never written.
        let missing = SignaturePoints(x: Array(fresh.x[..<(n * 3 / 8)] + fresh.x[(n * 5 / 8)...]),
                                      y: Array(fresh.y[..<(n * 3 / 8)] + fresh.y[(n * 5 / 8)...]))

        // MUT
        let plain = verifier.similarity(fresh, to: model)
        let turned = verifier.similarity(Self.rotated(fresh, degrees: 4), to: model)
        let larger = verifier.similarity(SignaturePoints(x: fresh.x.map { $0 * 1.4 }, y: fresh.y.map { $0 * 1.4 }), to: model)
        let faster = verifier.similarity(Self.resampled(fresh, factor: 0.85), to: model)
        let slower = verifier.similarity(Self.resampled(fresh, factor: 1.6), to: model)
        let withoutStroke = verifier.similarity(missing, to: model)

        // validate
        for (what, score) in [("as written", plain), ("turned 4°", turned), ("40% larger", larger), ("15% fewer points", faster)] {
            #expect(score >= 0.5, "\(what): \(score)")
        }
        #expect(abs(larger - plain) < 1e-9, "size is taken out entirely")
        #expect(slower < plain - 0.1, "60% more points is a slow copy: \(plain) → \(slower)")
        #expect(withoutStroke < 0.5, "a quarter of the signature missing: \(withoutStroke)")
    }

    @Test("a writer whose faster signing counts against nobody: the owner writing faster than at enrolment keeps their score; slower loses")
    func onlySlowerCounts() throws {
        var rng = SyntheticWriter.Generator(state: 33)
        let writer = SyntheticWriter(seed: 43)
        let (_, model) = try writer.enrolled(by: verifier, &rng)
        let fresh = writer.sign(&rng, shapeNoise: 0.03)
        let prepared = verifier.prepare(model)
        let distances = prepared.features.map { verifier.distance(verifier.features(fresh), $0) }
        let count = Double(fresh.count)

        // MUT: the same distances, as if written with 30% fewer and 30% more points
        let asWritten = verifier.ratio(distances: distances, attemptCount: fresh.count, model: prepared.model)
        let faster = verifier.ratio(distances: distances, attemptCount: Int(count * 0.7), model: prepared.model)
        let slower = verifier.ratio(distances: distances, attemptCount: Int(count * 1.3), model: prepared.model)

        // validate
        #expect(faster <= asWritten + 1e-9)
        #expect(slower > asWritten + 0.1)
    }

    @Test("references too far apart to tell their writer from a forger: the farthest are refused, at most half, and the rest make the model once replaced")
    func scatteredReferencesAreRefused() throws {
        // setup: six careful signatures and four scribbled ones
        var rng = SyntheticWriter.Generator(state: 34)
        let writer = SyntheticWriter(seed: 44)
        let careful = (0..<6).map { _ in writer.sign(&rng, shapeNoise: 0.03) }
        let scribbled = (0..<4).map { _ in writer.sign(&rng, shapeNoise: 0.35) }
        var strict = SignatureVerifier()
        strict.parameters.outlierFactor = .infinity  // only the spread limit speaks here
        let spreadOfCareful: Double = {
            guard case .model(let m) = strict.enrol(careful) else { return .nan }
            return m.spread
        }()
        strict.parameters.spreadLimit = spreadOfCareful * 1.3

        // MUT
        let first = strict.continueEnrolment(kept: [], new: careful + scribbled, needed: 10)
        guard case .incomplete(let kept, let required, let incorrect) = first else { Issue.record("\(first)"); return }
        let second = strict.continueEnrolment(kept: kept, new: (0..<required).map { _ in writer.sign(&rng, shapeNoise: 0.03) }, needed: 10)

        // validate
        #expect(spreadOfCareful.isFinite)
        #expect(required >= 1 && required <= 5 && incorrect == required, "refused \(required), at most half")
        #expect(kept.allSatisfy { k in careful.contains(k) || scribbled.contains(k) })
        #expect(Set(scribbled.indices.filter { !kept.contains(scribbled[$0]) }).count >= 1, "a scribbled one goes")
        guard case .model(let model) = second else { Issue.record("\(second)"); return }
        #expect(model.spread <= strict.parameters.spreadLimit)
        // The shipped limit asks almost nobody: the careful writer enrols at once.
        #expect(verifier.enrol(careful + (0..<4).map { _ in writer.sign(&rng, shapeNoise: 0.03) }).isModel)
        // A person whose every signature is scribbled is not asked again and again: nothing closer to
        // agree on, so the model is made as they sign.
        let allScribbled = (0..<10).map { _ in writer.sign(&rng, shapeNoise: 0.35) }
        var tight = strict
        tight.parameters.spreadLimit = spreadOfCareful
        #expect(tight.enrol(allScribbled).isModel)
    }

    @Test("a replay fingerprint survives its stored form and finds the same replays as the points")
    func fingerprintRoundTrip() throws {
        var rng = SyntheticWriter.Generator(state: 35)
        let writer = SyntheticWriter(seed: 45)
        let detector = ReplayDetector()
        let signature = writer.sign(&rng, shapeNoise: 0.03), other = writer.sign(&rng, shapeNoise: 0.03)
        let copy = SignaturePoints(x: signature.x.map { $0 * 1.1 + 5 }, y: signature.y.map { $0 * 1.1 })

        let stored = detector.encoded(detector.fingerprint(signature))
        let read = try #require(detector.decoded(stored))

        #expect(read == detector.fingerprint(signature))
        #expect(detector.decoded("12:not base64!") == nil && detector.decoded("garbage") == nil)
        #expect(detector.replayed(detector.fingerprint(copy), among: [detector.fingerprint(other), read]) == 1)
        #expect(detector.replayed(detector.fingerprint(other), among: [read]) == nil)
    }
}

@Suite("Sign To Login: what an attempt reads and writes")
struct SignatureWireTextTests {
    @Test("points written by hand read back as JSONEncoder's do, fractions and negatives included")
    func pointsJSON() throws {
        let points = SignaturePoints(x: [0, 1, -2.5, 1e-5, 123456.75, 3], y: [10, 10.125, -0.0, 7, 8, 1e14])
        let written = points.json
        #expect(try JSONDecoder().decode(SignaturePoints.self, from: Data(written.utf8)) == points)
        #expect(written.hasPrefix("{\"x\":[0,1,-2.5,"))
        let encoded = try JSONDecoder().decode(SignaturePoints.self, from: JSONEncoder().encode(points))
        #expect(encoded == points)
    }

    @Test("the spec's times and dates: days that exist, hours and minutes in range; anything else is not one")
    func specTimes() {
        for good in ["22.01.2026 15:23:56", "29.02.2024", "31.12.1999 23:59:59", "01.01.2026 00:00:00"] {
            #expect(SignToLoginAPI.isSpecTime(good), "\(good)")
        }
        for bad in ["29.02.2026", "31.04.2026", "00.01.2026", "22.13.2026", "22.01.2026 24:00:00", "22.01.2026 12:60:00",
                    "2026-01-22", "22.01.26", "22/01/2026", "22.01.2026T15:23:56", "22.01.2026 15:23", "", "aa.bb.cccc"] {
            #expect(!SignToLoginAPI.isSpecTime(bad), "\(bad)")
        }
    }

    @Test("JSON parsed by hand: every kind of value, escapes and surrogate pairs; malformed and too deep texts refused")
    func jsonParser() throws {
        let text = #"{"a":[1,-2,3.5,1e3,true,false,null,"x\n\"y\u00e9\ud83d\ude00"],"b":{"c":{}},"d":[]}"#
        let value = try JSONValue.parse(Array(text.utf8))
        guard case .array(let items)? = value["a"] else { Issue.record("\(value)"); return }
        #expect(items == [.integer(1), .integer(-2), .number(3.5), .number(1000), .bool(true), .bool(false), .null, .string("x\n\"yé😀")])
        #expect(value["b"] == .object(["c": .object([:])]) && value["d"] == .array([]))
        let plain = #"{"n":[0,-7,2.25,"é",{"k":null}],"t":true}"#
        #expect(try JSONValue.parse(Array(plain.utf8)) == JSONDecoder().decode(JSONValue.self, from: Data(plain.utf8)))
        for bad in ["", "{", "[1,]", #"{"a" 1}"#, "01", "1.", "-", "tru", #""\u12""#, #""\ud800""#, #""\ud800\u0041""#, #""a"#, "[1] 2",
                    "\"\t\"", #"{"a":1,}"#, "nul"] {
            #expect(throws: JSONValue.ParseError.self, "\(bad)") { try JSONValue.parse(Array(bad.utf8)) }
        }
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        #expect(throws: JSONValue.ParseError.tooDeep) { try JSONValue.parse(Array(deep.utf8)) }
    }
}

@Suite("JSON parsed by hand, fuzzed")
struct JSONValueFuzzTests {
    /// A random value: integers, fractions, strings with escapes and any character, nesting.
    static func value(_ rng: inout SyntheticWriter.Generator, depth: Int) -> JSONValue {
        switch Int.random(in: 0..<(depth > 3 ? 5 : 7), using: &rng) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &rng))
        case 2: return .integer(Int64.random(in: -1_000_000_000_000...1_000_000_000_000, using: &rng))
        case 3: return .number(Double(Int.random(in: -100_000...100_000, using: &rng)) + 0.5)
        case 4:
            let alphabet = Array("aé\"\\/\n\t\u{0001}😀 z{}[],:")
            return .string(String((0..<Int.random(in: 0...12, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }))
        case 5: return .array((0..<Int.random(in: 0...4, using: &rng)).map { _ in value(&rng, depth: depth + 1) })
        default:
            var members: [String: JSONValue] = [:]
            for i in 0..<Int.random(in: 0...4, using: &rng) { members["k\(i)é"] = value(&rng, depth: depth + 1) }
            return .object(members)
        }
    }

    @Test("50,000 random decimal numbers, short and long, with and without exponents, and 20,000 doubles' shortest texts: each read as Double(text) reads it, to the bit")
    func numbersAsStrtodReadsThem() throws {
        var rng = SyntheticWriter.Generator(state: 58)
        func digits(_ count: Int) -> String { String((0..<count).map { _ in "0123456789".randomElement(using: &rng)! }) }
        var texts = ["0.1", "-0.0", "0.30000000000000004", "123456789012345.6", "1234567890123456.7", "9007199254740993.0", "1e22",
                     "1e23", "1.5e-22", "1.5e-23", "4.9e-324", "1.7976931348623157e308", "0.000000000000000000000000001", "-12.5E+2",
                     // 2^53 and 2^53 + 1 as digits: the last exact mantissa, and the first one read by strtod
                     "900719925474099.2", "900719925474099.3", "274.9999889943848", "0.0009007199254740992"]
        // What a client's JSON encoder writes for a point: the shortest text of a double, 16 or 17 digits as often as not.
        for _ in 0..<20_000 {
            texts.append(Double.random(in: -2_000...2_000, using: &rng).description)
        }
        for _ in 0..<50_000 {
            var text = Bool.random(using: &rng) ? "-" : ""
            text += String(Int.random(in: 0...99_999, using: &rng)) + "." + digits(Int.random(in: 1...20, using: &rng))
            if Int.random(in: 0..<3, using: &rng) == 0 {
                text += ["e", "E", "e-", "e+"].randomElement(using: &rng)! + String(Int.random(in: 0...40, using: &rng))
            }
            texts.append(text)
        }
        for text in texts {
            guard case .number(let parsed) = try JSONValue.parse(Array(text.utf8)) else { Issue.record("\(text)"); continue }
            let expected = try #require(Double(text))
            #expect(parsed.bitPattern == expected.bitPattern, "\(text): \(parsed) ≠ \(expected)")
        }
    }

    @Test("2,000 random values read back as JSONEncoder wrote them; 20,000 mutated texts throw or parse, never crash")
    func randomValuesAndMutations() throws {
        var rng = SyntheticWriter.Generator(state: 77)
        var texts: [[UInt8]] = []
        for _ in 0..<2_000 {
            let original = Self.value(&rng, depth: 0)
            let text = Array(try JSONEncoder().encode(original))
            #expect(try JSONValue.parse(text) == original)
            texts.append(text)
        }
        var parsed = 0
        for _ in 0..<20_000 {
            var bytes = texts.randomElement(using: &rng)!
            for _ in 0..<Int.random(in: 1...3, using: &rng) where !bytes.isEmpty {
                let at = Int.random(in: 0..<bytes.count, using: &rng)
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: bytes[at] = UInt8.random(in: 0...255, using: &rng)
                case 1: bytes.remove(at: at)
                default: bytes.insert(Array("{}[]\",:\\e-.0u".utf8).randomElement(using: &rng)!, at: at)
                }
            }
            if (try? JSONValue.parse(bytes)) != nil { parsed += 1 }
        }
        #expect(parsed > 0 && parsed < 20_000)
    }
}

extension SignatureModelMigrationTests {
    @Test("an attempt stored before fingerprints were kept is still a replay's original: its points are read and fingerprinted; once every recent attempt has one, they come with the enrolment's read",
          .tags(.engine), arguments: TestEngine.all)
    func attemptsWithoutFingerprintStillCatchReplays(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup: an enrolment and one attempt, its fingerprint then taken away as rows before migration 018 have none
            let created = try await app.services.signToLogin.apps.create(NewApp(name: "Signer", bundleId: "com.acme.signer", email: "dev@acme.example"), owner: nil, by: .system(nil))
            var f = Fixture(app: app, key: created.key)
            _ = try await f.enrolled("lev@example.com", f.genuine(10))
            let earlier = f.genuine(1)[0]
            func attempt(_ s: SignaturePoints) async throws -> [String: Any] {
                try await f.json("/authenticate/", ["apikey": "\"\(f.key)\"", "email": "\"lev@example.com\"", "signature": SignatureEndpointsTests.wire(s)])
            }
            let first = try await attempt(earlier)
            #expect(first["res"] as? String == "0", "\(first)")
            let sql = app.services.database.sql
            #expect(try await sql.raw("SELECT fingerprint FROM signature_attempts").first(decodingColumn: "fingerprint", as: String.self) != nil,
                    "a new attempt keeps its fingerprint")
            try await sql.raw("UPDATE signature_attempts SET fingerprint = NULL").run()

            // MUT: the same points again, and moved and scaled
            let again = try await attempt(earlier)
            let moved = try await attempt(SignaturePoints(x: earlier.x.map { $0 * 1.3 + 40 }, y: earlier.y.map { $0 * 1.3 - 10 }))
            let fresh = try await attempt(f.genuine(1)[0])

            // validate
            #expect(again["res"] as? String == "17" && moved["res"] as? String == "17", "\(again) \(moved)")
            #expect(fresh["res"] as? String == "0", "a new signing is not a replay: \(fresh)")
            let signatures = app.services.signToLogin.signatures
            func recent() async throws -> [String]? {
                try #require(try await signatures.records.enrolment(email: "lev@example.com", appID: created.0.id, deviceClass: "other",
                                                                    recentAttempts: 50)).recentFingerprints
            }
            #expect(try await recent() == nil, "a recent attempt without a fingerprint: its points are read again")

            // MUT: the old attempt gone, every recent one has its fingerprint
            try await sql.raw("DELETE FROM signature_attempts WHERE fingerprint IS NULL").run()
            let second = f.genuine(1)[0]
            #expect(try await attempt(second)["res"] as? String == "0")
            let read = try #require(try await recent())
            let kept = try await sql.raw("SELECT fingerprint FROM signature_attempts").all(decodingColumn: "fingerprint", as: String.self)
            let copied = try await attempt(second)
            let third = try await attempt(f.genuine(1)[0])

            // validate: both fingerprints come with the enrolment, and they still catch a copy
            #expect(read.sorted() == kept.sorted() && read.count == 2, "\(read.count) read, \(kept.count) kept")
            #expect(copied["res"] as? String == "17", "\(copied)")
            #expect(third["res"] as? String == "0", "\(third)")
        }
    }
}

extension SignatureVerifier.Enrolment {
    var isModel: Bool { if case .model = self { true } else { false } }
}

@Suite("Sign To Login: models of an older verifier")
struct SignatureModelMigrationTests {
    typealias Fixture = SignatureEndpointsTests.Fixture

    @Test("a model of version 1 is made again on its first use, stored so, and scores as one enrolled today; the person is never locked out", arguments: TestEngine.once)
    func olderModelIsMadeAgainOnFirstUse(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup: an enrolment, its model turned into what version 1 stored (no distances)
            let created = try await app.services.signToLogin.apps.create(NewApp(name: "Signer", bundleId: "com.acme.signer", email: "dev@acme.example"), owner: nil, by: .system(nil))
            var f = Fixture(app: app, key: created.key)
            let references = f.genuine(10)
            _ = try await f.enrolled("vera@example.com", references)
            let sql = app.services.database.sql
            let row = try #require(try await sql.raw("SELECT id, model FROM signature_models").first())
            let id = try row.decode(column: "id", as: UUID.self)
            let today = try JSONDecoder().decode(SignatureVerifier.Model.self, from: Data(try row.decode(column: "model", as: String.self).utf8))
            #expect(today.version == SignatureVerifier.version && today.distances?.count == 10)
            // (the references as the server read them off the wire)
            let old = "{\"version\":1,\"spread\":0.4,\"references\":" + String(decoding: try JSONEncoder().encode(today.references), as: UTF8.self) + "}"
            try await sql.raw("UPDATE signature_models SET model = \(bind: old) WHERE id = \(bind: id)").run()
            let fresh = f.genuine(1)[0]
            let expected = (SignatureVerifier().similarity(fresh, to: today) * 100).rounded() / 100

            // MUT: the first attempt since (no attempt has been scored: nothing of the row is in memory)
            let answer = try await f.json("/authenticate/", ["apikey": "\"\(f.key)\"", "email": "\"vera@example.com\"",
                                                               "signature": SignatureEndpointsTests.wire(fresh)])

            // validate
            #expect(answer["res"] as? String == "0" && answer["similarity"] as? Double == expected, "\(answer) vs \(expected)")
            #expect(expected >= 0.5, "the person signs in as before")
            let stored = try JSONDecoder().decode(SignatureVerifier.Model.self, from: Data(
                try #require(try await sql.raw("SELECT model FROM signature_models WHERE id = \(bind: id)").first(decodingColumn: "model", as: String.self)).utf8))
            #expect(app.services.signToLogin.signatures.preparedModels.value(id)?.model == today, "the instance keeps the prepared model by its row")
            #expect(stored == today, "stored as version \(SignatureVerifier.version) makes it (\(stored.version), \(stored.spread) vs \(today.spread))")
        }
    }
}
