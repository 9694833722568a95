import Foundation

/// Whether a file is, from its first byte to its last, one image of a format: every chunk,
/// segment or block walked to the format's end marker, with nothing after it. A magic number
/// alone lets "a PNG header followed by HTML" through, which a browser told the wrong type may
/// render as a page (docs/security.md, "Uploads").
package enum ImageStructure {
    package static func isComplete(_ data: Data, format: ImageFormat) -> Bool {
        let bytes = [UInt8](data)
        switch format {
        case .png: return png(bytes)
        case .jpeg: return jpeg(bytes)
        case .gif: return gif(bytes)
        case .webp: return webp(bytes)
        }
    }

    private static func be32(_ b: [UInt8], _ i: Int) -> Int {
        Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3])
    }

    private static func le32(_ b: [UInt8], _ i: Int) -> Int {
        Int(b[i]) | Int(b[i + 1]) << 8 | Int(b[i + 2]) << 16 | Int(b[i + 3]) << 24
    }

    /// Signature, then chunks (length, type, data, CRC-32 over type and data) up to IEND, which
    /// must end the file; IHDR first.
    package static func png(_ b: [UInt8]) -> Bool {
        guard b.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else { return false }
        var i = 8
        var first = true
        while i + 12 <= b.count {
            let length = be32(b, i)
            guard length <= b.count, i + 12 + length <= b.count else { return false }
            let type = Array(b[(i + 4)..<(i + 8)])
            guard type.allSatisfy({ (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }) else { return false }
            if first {
                guard type == Array("IHDR".utf8) else { return false }
                first = false
            }
            let crc = UInt32(be32(b, i + 8 + length))
            guard crc32(b[(i + 4)..<(i + 8 + length)]) == crc else { return false }
            i += 12 + length
            if type == Array("IEND".utf8) { return i == b.count }
        }
        return false
    }

    /// SOI, then marker segments up to a scan; the entropy-coded data runs to EOI, which must end
    /// the file (restart markers and stuffed 0xFF00 inside the scan are data).
    package static func jpeg(_ b: [UInt8]) -> Bool {
        guard b.count >= 4, b[0] == 0xFF, b[1] == 0xD8 else { return false }
        var i = 2
        while i + 2 <= b.count {   // EOI is two bytes: the loop must reach the last two
            guard b[i] == 0xFF else { return false }
            var marker = b[i + 1]
            while marker == 0xFF, i + 2 < b.count { i += 1; marker = b[i + 1] }   // fill bytes
            if marker == 0xD9 { return i + 2 == b.count }
            if (0xD0...0xD7).contains(marker) || marker == 0x01 { i += 2; continue }
            guard i + 4 <= b.count else { return false }
            let length = Int(b[i + 2]) << 8 | Int(b[i + 3])
            guard length >= 2, i + 2 + length <= b.count else { return false }
            i += 2 + length
            if marker == 0xDA {
                // Entropy-coded data: skip to the next marker that is not a stuffed byte or a restart.
                while i + 1 < b.count {
                    if b[i] == 0xFF, b[i + 1] != 0x00, !(0xD0...0xD7).contains(b[i + 1]) { break }
                    i += 1
                }
            }
        }
        return false
    }

    /// Header, logical screen (and its colour table), then extension and image blocks, each a
    /// chain of sub-blocks, up to the trailer 0x3B, which must end the file.
    package static func gif(_ b: [UInt8]) -> Bool {
        guard b.count >= 14, b.starts(with: Array("GIF87a".utf8)) || b.starts(with: Array("GIF89a".utf8)) else { return false }
        var i = 13
        if b[10] & 0x80 != 0 { i += 3 << (Int(b[10] & 0x07) + 1) }
        func skipSubBlocks() -> Bool {
            while i < b.count {
                let size = Int(b[i])
                i += 1
                if size == 0 { return true }
                i += size
            }
            return false
        }
        while i < b.count {
            switch b[i] {
            case 0x3B:
                return i + 1 == b.count
            case 0x21:
                i += 2
                guard skipSubBlocks() else { return false }
            case 0x2C:
                guard i + 10 <= b.count else { return false }
                let packed = b[i + 9]
                i += 10
                if packed & 0x80 != 0 { i += 3 << (Int(packed & 0x07) + 1) }
                i += 1   // LZW minimum code size
                guard i <= b.count, skipSubBlocks() else { return false }
            default:
                return false
            }
        }
        return false
    }

    /// RIFF whose size is the file's, of chunks (FourCC, size, data padded to even) that fill it.
    package static func webp(_ b: [UInt8]) -> Bool {
        guard b.count >= 20, b.starts(with: Array("RIFF".utf8)), Array(b[8..<12]) == Array("WEBP".utf8),
              le32(b, 4) + 8 == b.count else { return false }
        var i = 12
        var chunks = 0
        while i + 8 <= b.count {
            let size = le32(b, i + 4)
            guard size >= 0, i + 8 + size <= b.count else { return false }
            i += 8 + size + (size & 1)
            chunks += 1
        }
        return chunks > 0 && i == b.count
    }

    private static let crcTable: [UInt32] = (0..<256).map { n -> UInt32 in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    package static func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for byte in bytes { c = crcTable[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }
}
