import Foundation
import GatehouseVerifier

/// One writer of a research set: genuine signatures in the order they were written, and the
/// skilled forgeries of their signature.
struct Writer: Sendable {
    var id: String
    var genuine: [SignaturePoints]
    var forgeries: [SignaturePoints]
}

/// Reads the two research sets the issue names (never committed: brought into a temporary folder
/// by `Benchmarks/signature/run.sh`). Each signature is reduced to what an iPhone sends: the
/// pen-down points, x and y; pressure, timestamps and pen-up samples are dropped.
enum Dataset {
    enum Failure: Error, CustomStringConvertible {
        case unreadable(String)
        case empty(String)
        var description: String {
            switch self {
            case .unreadable(let what): "cannot read \(what)"
            case .empty(let folder): "no .fpg (MCYT), .sig (SUSIG) or .hwr (SigComp 2009) files under \(folder)"
            }
        }
    }

    /// `count` made-up writers (`SyntheticWriter`, the tests' own): 20 genuine signatures each
    /// and 5 skilled forgeries, seeded, so every run sends the same. For what an authentication
    /// costs (`--wire`), not for error rates: research sets say those.
    static func synthetic(_ count: Int) -> [Writer] {
        var rng = SyntheticWriter.Generator(state: 2026)
        return (0..<count).map { index in
            let writer = SyntheticWriter(seed: UInt64(index) * 7919 + 1)
            return Writer(id: String(format: "s%04d", index),
                          genuine: (0..<20).map { _ in writer.sign(&rng, shapeNoise: 0.03) },
                          forgeries: (0..<5).map { _ in writer.sign(&rng, shapeNoise: 0.12, steady: true) })
        }
    }

    /// Every writer under `folder`, by the files found: MCYT's `NNNNvKK.fpg` (genuine) and
    /// `NNNNfKK.fpg` (forgeries), or SUSIG's `UUU_S_K.sig` (genuine of session S; `g` in the blind
    /// sub-corpus) and `UUU_f_K.sig` (forgeries).
    static func load(_ folder: URL) throws -> [Writer] {
        guard let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else {
            throw Failure.unreadable(folder.path)
        }
        // writer → [(order key, is forgery, signature)]
        var found: [String: [(key: [Int], forgery: Bool, points: SignaturePoints)]] = [:]
        for case let url as URL in walker {
            let name = url.deletingPathExtension().lastPathComponent
            switch url.pathExtension.lowercased() {
            case "fpg":
                // 0000v07 / 0000f12
                guard name.count == 7 else { continue }
                let chars = Array(name)
                let writer = String(chars[0..<4]), kind = chars[4], number = Int(String(chars[5...])) ?? 0
                guard kind == "v" || kind == "f" else { continue }
                found[writer, default: []].append(([number], kind == "f", try mcyt(url)))
            case "sig":
                let parts = name.split(separator: "_")
                guard parts.count == 3, let number = Int(parts[2]) else { continue }
                let writer = String(parts[0])
                let forgery = parts[1] == "f"
                let session = Int(parts[1]) ?? 1
                found[writer, default: []].append(([session, number], forgery, try susig(url)))
            case "hwr":
                // SigComp 2009: NFI-WWWSSVVV (writer, sample, whose signature) in the NFI set,
                // NISDCC-WWW_VVV_SSS in the NISDCC set; a writer other than the owner is a forger.
                let parts = name.split(separator: "-", maxSplits: 1)
                guard parts.count == 2 else { continue }
                let digits = parts[1].filter(\.isNumber)
                guard digits.count == 8 || digits.count == 9, let all = Int(digits) else { continue }
                let (writer, owner, sample): (Int, Int, Int) = digits.count == 8
                    ? (all / 100_000, all % 1000, all / 1000 % 100)
                    : (all / 1_000_000, all / 1000 % 1000, all % 1000)
                found[String(format: "%03d", owner), default: []].append(([writer == owner ? 0 : writer, sample], writer != owner, try hwr(url)))
            default:
                continue
            }
        }
        guard !found.isEmpty else { throw Failure.empty(folder.path) }
        return found.keys.sorted().map { id in
            let all = found[id]!.sorted { $0.key.lexicographicallyPrecedes($1.key) }
            return Writer(id: id, genuine: all.filter { !$0.forgery }.map(\.points), forgeries: all.filter(\.forgery).map(\.points))
        }
    }

    /// MCYT's FPG file: "FPG ", the header size (UInt16 at 4), the sample width in bits (UInt16 at
    /// 16), the channels per vector (UInt32 at 26) and the number of vectors (UInt32 at 30); then
    /// the vectors from the header's end. Channels: x, y, pressure, azimuth, altitude. A sample with
    /// no pressure is the pen in the air.
    static func mcyt(_ url: URL) throws -> SignaturePoints {
        let data = try Data(contentsOf: url)
        guard data.count > 40, data.prefix(4) == Data("FPG ".utf8) else { throw Failure.unreadable(url.path) }
        func uint16(_ at: Int) -> Int { Int(data[at]) | Int(data[at + 1]) << 8 }
        func uint32(_ at: Int) -> Int { uint16(at) | uint16(at + 2) << 16 }
        let header = uint16(4), bits = uint16(16), channels = uint32(26), vectors = uint32(30)
        guard channels >= 3, header + vectors * channels * (bits / 8) <= data.count else { throw Failure.unreadable(url.path) }
        func sample(_ index: Int) -> Double {
            let at = header + index * (bits / 8)
            switch bits {
            case 32: return Double(Float(bitPattern: UInt32(uint32(at))))
            case 16: return Double(uint16(at))
            case 8: return Double(data[at])
            default:
                var raw: UInt64 = 0
                for k in 0..<8 { raw |= UInt64(data[at + k]) << (8 * UInt64(k)) }
                return Double(bitPattern: raw)
            }
        }
        var points: [(Double, Double)] = []
        for v in 0..<vectors {
            let row = v * channels
            guard sample(row + 2) > 0 else { continue }
            points.append((sample(row), sample(row + 1)))
        }
        return SignaturePoints(points: points)
    }

    /// SigComp 2009's HWR file: a name and the number of samples, then "x y pressure azimuth
    /// altitude" rows of the pen on the tablet.
    static func hwr(_ url: URL) throws -> SignaturePoints {
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { throw Failure.unreadable(url.path) }
        var points: [(Double, Double)] = []
        for line in text.split(whereSeparator: \.isNewline).dropFirst() {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).compactMap { Double($0) }
            guard fields.count >= 3, fields[2] > 0 else { continue }
            points.append((fields[0], fields[1]))
        }
        return SignaturePoints(points: points)
    }

    /// SUSIG's text file: a column header, "DataSize: N", then "x y time pressure endpoint" rows.
    static func susig(_ url: URL) throws -> SignaturePoints {
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { throw Failure.unreadable(url.path) }
        var points: [(Double, Double)] = []
        for line in text.split(whereSeparator: \.isNewline).dropFirst(2) {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," }).compactMap { Double($0) }
            guard fields.count >= 4, fields[3] > 0 else { continue }
            points.append((fields[0], fields[1]))
        }
        return SignaturePoints(points: points)
    }
}
