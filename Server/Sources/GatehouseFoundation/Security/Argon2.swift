import Foundation

/// BLAKE2b (RFC 7693), unkeyed, any output length from 1 to 64 bytes: what Argon2 is built on.
package struct BLAKE2b {
    private static let iv: [UInt64] = [
        0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b, 0xa54ff53a5f1d36f1,
        0x510e527fade682d1, 0x9b05688c2b3e6c1f, 0x1f83d9abfb41bd6b, 0x5be0cd19137e2179,
    ]
    private static let sigma: [[Int]] = [
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
        [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4], [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
        [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13], [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
        [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11], [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
        [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5], [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
    ]

    private var h: [UInt64]
    private var buffer: [UInt8] = []
    private var counter: UInt64 = 0
    private let outputLength: Int

    package init(outputLength: Int) {
        precondition((1...64).contains(outputLength))
        self.outputLength = outputLength
        h = Self.iv
        h[0] ^= 0x0101_0000 ^ UInt64(outputLength)
    }

    package mutating func update(_ bytes: some Sequence<UInt8>) {
        for byte in bytes {
            if buffer.count == 128 {
                counter &+= 128
                compress(last: false)
                buffer.removeAll(keepingCapacity: true)
            }
            buffer.append(byte)
        }
    }

    package mutating func finish() -> [UInt8] {
        counter &+= UInt64(buffer.count)
        buffer.append(contentsOf: repeatElement(0, count: 128 - buffer.count))
        compress(last: true)
        var out: [UInt8] = []
        for word in h { for i in 0..<8 { out.append(UInt8(truncatingIfNeeded: word >> (8 * UInt64(i)))) } }
        return Array(out.prefix(outputLength))
    }

    package static func hash(_ bytes: [UInt8], outputLength: Int) -> [UInt8] {
        var state = BLAKE2b(outputLength: outputLength)
        state.update(bytes)
        return state.finish()
    }

    private mutating func compress(last: Bool) {
        var m = [UInt64](repeating: 0, count: 16)
        for i in 0..<16 {
            var word: UInt64 = 0
            for j in 0..<8 { word |= UInt64(buffer[i * 8 + j]) << (8 * UInt64(j)) }
            m[i] = word
        }
        var v = h + Self.iv
        v[12] ^= counter
        if last { v[14] = ~v[14] }
        func g(_ a: Int, _ b: Int, _ c: Int, _ d: Int, _ x: UInt64, _ y: UInt64) {
            v[a] = v[a] &+ v[b] &+ x; v[d] = (v[d] ^ v[a]).rotatedRight(32)
            v[c] = v[c] &+ v[d]; v[b] = (v[b] ^ v[c]).rotatedRight(24)
            v[a] = v[a] &+ v[b] &+ y; v[d] = (v[d] ^ v[a]).rotatedRight(16)
            v[c] = v[c] &+ v[d]; v[b] = (v[b] ^ v[c]).rotatedRight(63)
        }
        for round in 0..<12 {
            let s = Self.sigma[round % 10]
            g(0, 4, 8, 12, m[s[0]], m[s[1]]); g(1, 5, 9, 13, m[s[2]], m[s[3]])
            g(2, 6, 10, 14, m[s[4]], m[s[5]]); g(3, 7, 11, 15, m[s[6]], m[s[7]])
            g(0, 5, 10, 15, m[s[8]], m[s[9]]); g(1, 6, 11, 12, m[s[10]], m[s[11]])
            g(2, 7, 8, 13, m[s[12]], m[s[13]]); g(3, 4, 9, 14, m[s[14]], m[s[15]])
        }
        for i in 0..<8 { h[i] ^= v[i] ^ v[i + 8] }
    }
}

extension UInt64 {
    fileprivate func rotatedRight(_ n: UInt64) -> UInt64 { (self >> n) | (self << (64 - n)) }
}

/// Argon2 (RFC 9106, version 0x13), the `i` and `id` kinds, without a secret or associated data: what verifying a
/// password hash another system made with argon2-cffi, libsodium or the reference library needs.
package enum Argon2 {
    package enum Kind: UInt32, Sendable {
        case i = 1
        case id = 2
    }

    private static let syncPoints = 4
    /// The sixteen words each of P's sixteen rounds mixes: the block's eight rows, then its eight columns.
    private static let rounds: [[Int]] = (0..<8).map { i in (0..<16).map { 16 * i + $0 } }
        + (0..<8).map { i in [0, 1, 16, 17, 32, 33, 48, 49, 64, 65, 80, 81, 96, 97, 112, 113].map { 2 * i + $0 } }

    /// The tag of `password` and `salt` with these parameters: `memory` in KiB, `passes` (t), `lanes` (p).
    package static func hash(password: [UInt8], salt: [UInt8], kind: Kind, memory: Int, passes: Int, lanes: Int, length: Int) -> [UInt8] {
        var h0 = BLAKE2b(outputLength: 64)
        for value in [UInt32(lanes), UInt32(length), UInt32(memory), UInt32(passes), 0x13, kind.rawValue] { h0.update(le32(value)) }
        h0.update(le32(UInt32(password.count))); h0.update(password)
        h0.update(le32(UInt32(salt.count))); h0.update(salt)
        h0.update(le32(0)); h0.update(le32(0))
        let seed = h0.finish()

        let segmentLength = max(memory, 2 * syncPoints * lanes) / (lanes * syncPoints)
        let laneLength = segmentLength * syncPoints
        let blockCount = laneLength * lanes
        var memory = [UInt64](repeating: 0, count: blockCount * 128)

        func store(_ bytes: [UInt8], at block: Int) {
            for i in 0..<128 {
                var word: UInt64 = 0
                for j in 0..<8 { word |= UInt64(bytes[i * 8 + j]) << (8 * UInt64(j)) }
                memory[block * 128 + i] = word
            }
        }
        for lane in 0..<lanes {
            store(variableHash(seed + le32(0) + le32(UInt32(lane)), length: 1024), at: lane * laneLength)
            store(variableHash(seed + le32(1) + le32(UInt32(lane)), length: 1024), at: lane * laneLength + 1)
        }

        var zero = [UInt64](repeating: 0, count: 128)
        var input = [UInt64](repeating: 0, count: 128)
        var address = [UInt64](repeating: 0, count: 128)
        var scratch = [UInt64](repeating: 0, count: 128)
        func nextAddresses() {
            input[6] &+= 1
            fill(&address, previous: zero, reference: input, xor: false, scratch: &scratch)
            let first = address
            fill(&address, previous: zero, reference: first, xor: false, scratch: &scratch)
        }
        for pass in 0..<passes {
            for slice in 0..<syncPoints {
                for lane in 0..<lanes {
                    let independent = kind == .i || (pass == 0 && slice < syncPoints / 2)
                    if independent {
                        zero = [UInt64](repeating: 0, count: 128)
                        input = [UInt64](repeating: 0, count: 128)
                        input[0] = UInt64(pass); input[1] = UInt64(lane); input[2] = UInt64(slice)
                        input[3] = UInt64(blockCount); input[4] = UInt64(passes); input[5] = UInt64(kind.rawValue)
                    }
                    var start = 0
                    if pass == 0 && slice == 0 {
                        start = 2
                        if independent { nextAddresses() }
                    }
                    var current = lane * laneLength + slice * segmentLength + start
                    var previous = current % laneLength == 0 ? current + laneLength - 1 : current - 1
                    for index in start..<segmentLength {
                        if current % laneLength == 1 { previous = current - 1 }
                        let pseudoRandom: UInt64
                        if independent {
                            if index % 128 == 0 { nextAddresses() }
                            pseudoRandom = address[index % 128]
                        } else {
                            pseudoRandom = memory[previous * 128]
                        }
                        let referenceLane = pass == 0 && slice == 0 ? lane : Int((pseudoRandom >> 32) % UInt64(lanes))
                        let sameLane = referenceLane == lane
                        var area: Int
                        if pass == 0 {
                            area = slice == 0 ? index - 1 : (sameLane ? slice * segmentLength + index - 1 : slice * segmentLength + (index == 0 ? -1 : 0))
                        } else {
                            area = sameLane ? laneLength - segmentLength + index - 1 : laneLength - segmentLength + (index == 0 ? -1 : 0)
                        }
                        var relative = pseudoRandom & 0xFFFF_FFFF
                        relative = (relative &* relative) >> 32
                        let relativePosition = UInt64(area) - 1 - ((UInt64(area) &* relative) >> 32)
                        let startPosition = pass == 0 || slice == syncPoints - 1 ? 0 : (slice + 1) * segmentLength
                        let referenceIndex = Int((UInt64(startPosition) + relativePosition) % UInt64(laneLength))
                        let referenceBlock = laneLength * referenceLane + referenceIndex
                        let prev = Array(memory[previous * 128..<(previous + 1) * 128])
                        let ref = Array(memory[referenceBlock * 128..<(referenceBlock + 1) * 128])
                        var next = Array(memory[current * 128..<(current + 1) * 128])
                        fill(&next, previous: prev, reference: ref, xor: pass > 0, scratch: &scratch)
                        memory.replaceSubrange(current * 128..<(current + 1) * 128, with: next)
                        current += 1
                        previous += 1
                    }
                }
            }
        }
        var final = Array(memory[(laneLength - 1) * 128..<laneLength * 128])
        for lane in 1..<max(lanes, 1) {
            let last = lane * laneLength + laneLength - 1
            for i in 0..<128 { final[i] ^= memory[last * 128 + i] }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(1024)
        for word in final { for j in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: word >> (8 * UInt64(j)))) } }
        return variableHash(bytes, length: length)
    }

    /// H' (RFC 9106 §3.3): BLAKE2b stretched to `length` bytes.
    static func variableHash(_ input: [UInt8], length: Int) -> [UInt8] {
        if length <= 64 { return BLAKE2b.hash(le32(UInt32(length)) + input, outputLength: length) }
        var out: [UInt8] = []
        var v = BLAKE2b.hash(le32(UInt32(length)) + input, outputLength: 64)
        out += v.prefix(32)
        let r = (length + 31) / 32 - 2
        for _ in 1..<r {
            v = BLAKE2b.hash(v, outputLength: 64)
            out += v.prefix(32)
        }
        out += BLAKE2b.hash(v, outputLength: length - 32 * r)
        return out
    }

    /// G (RFC 9106 §3.5): `next` becomes P(previous ⊕ reference) ⊕ previous ⊕ reference (⊕ next, after the first pass).
    private static func fill(_ next: inout [UInt64], previous: [UInt64], reference: [UInt64], xor: Bool, scratch r: inout [UInt64]) {
        for i in 0..<128 { r[i] = previous[i] ^ reference[i] }
        var t = r
        if xor { for i in 0..<128 { t[i] ^= next[i] } }
        func round(_ idx: [Int]) {
            func g(_ a: Int, _ b: Int, _ c: Int, _ d: Int) {
                func mul(_ x: UInt64, _ y: UInt64) -> UInt64 { 2 &* (x & 0xFFFF_FFFF) &* (y & 0xFFFF_FFFF) }
                r[a] = r[a] &+ r[b] &+ mul(r[a], r[b]); r[d] = (r[d] ^ r[a]).rotatedRight(32)
                r[c] = r[c] &+ r[d] &+ mul(r[c], r[d]); r[b] = (r[b] ^ r[c]).rotatedRight(24)
                r[a] = r[a] &+ r[b] &+ mul(r[a], r[b]); r[d] = (r[d] ^ r[a]).rotatedRight(16)
                r[c] = r[c] &+ r[d] &+ mul(r[c], r[d]); r[b] = (r[b] ^ r[c]).rotatedRight(63)
            }
            g(idx[0], idx[4], idx[8], idx[12]); g(idx[1], idx[5], idx[9], idx[13]); g(idx[2], idx[6], idx[10], idx[14]); g(idx[3], idx[7], idx[11], idx[15])
            g(idx[0], idx[5], idx[10], idx[15]); g(idx[1], idx[6], idx[11], idx[12]); g(idx[2], idx[7], idx[8], idx[13]); g(idx[3], idx[4], idx[9], idx[14])
        }
        for indices in rounds { round(indices) }
        for i in 0..<128 { next[i] = t[i] ^ r[i] }
    }

    private static func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
}
