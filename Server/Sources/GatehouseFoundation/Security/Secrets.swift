import Crypto
import Foundation

/// Random codes and tokens, and the one-way forms they are stored in.
/// Tokens carry 256 bits and are stored as SHA-256; short numeric codes are stored as an
/// HMAC keyed with the server secret, so a copy of the database alone does not reveal them.
package struct Secrets: Sendable {
    private let keyBytes: [UInt8]
    private var hmacKey: SymmetricKey { SymmetricKey(data: keyBytes) }

    /// A key for `purpose` derived from the server secret (HKDF-SHA256): sealing and signing
    /// with it never reuse the code-hashing key.
    package func sealingKey(_ purpose: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: hmacKey, info: Data("gatehouse \(purpose)".utf8), outputByteCount: 32)
    }
    package let random: GatehouseRandom

    package init(serverSecret: String, random: GatehouseRandom = .live) {
        self.keyBytes = Array(SHA256.hash(data: Data(serverSecret.utf8)))
        self.random = random
    }

    /// A fresh one-time code of `length` digits, from the injected source.
    package func numericCode(length: Int) -> String { random.code(length) }

    /// A fresh token, from the injected source.
    package func token() -> String { random.token() }

    @Sendable package static func systemCode(length: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<length).map { _ in Character(String(Int.random(in: 0...9, using: &generator))) })
    }

    /// 32 random bytes, base64url without padding (43 characters).
    @Sendable package static func systemToken() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: 32)
        for i in bytes.indices { bytes[i] = UInt8.random(in: 0...255, using: &generator) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    package static func sha256Hex(_ text: String) -> String {
        // Hashed from the string's own bytes: every authenticated request hashes its token, and copying it into
        // `Data` first and building the hex through an array was 2.5% of an authenticated read.
        var text = text
        return text.withUTF8 { SHA256.hash(data: UnsafeRawBufferPointer($0)) }.hexString
    }

    /// An HMAC of `text` under the key of `purpose`, base64url (43 characters): a token the server
    /// can check again without keeping it (a form's CSRF token bound to its session).
    package func mac(_ text: String, purpose: String) -> String {
        Data(HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: sealingKey(purpose))).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    package func codeHash(_ code: String, purpose: String, destination: String) -> String {
        let message = "\(purpose)\u{1F}\(destination)\u{1F}\(code)"
        return Data(HMAC<SHA256>.authenticationCode(for: Data(message.utf8), using: hmacKey)).hexString
    }

    /// Compares two hashes without leaking where they first differ.
    package static func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var diff: UInt8 = 0
        for i in x.indices { diff |= x[i] ^ y[i] }
        return diff == 0
    }

    /// Compares two byte strings (a challenge, a hash) without leaking where they first differ.
    package static func constantTimeEquals(_ x: [UInt8], _ y: [UInt8]) -> Bool {
        guard x.count == y.count else { return false }
        var diff: UInt8 = 0
        for i in x.indices { diff |= x[i] ^ y[i] }
        return diff == 0
    }
}

extension Sequence where Element == UInt8 {
    package var hexString: String {
        var out = [UInt8]()
        out.reserveCapacity(underestimatedCount * 2)
        for byte in self {
            out.append(hexDigit(byte >> 4))
            out.append(hexDigit(byte & 0x0F))
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension Digest {
    package var hexString: String {
        withUnsafeBytes { bytes in
            String(unsafeUninitializedCapacity: bytes.count * 2) { out in
                for (index, byte) in bytes.enumerated() {
                    out[2 * index] = hexDigit(byte >> 4)
                    out[2 * index + 1] = hexDigit(byte & 0x0F)
                }
                return bytes.count * 2
            }
        }
    }
}

private func hexDigit(_ nibble: UInt8) -> UInt8 {
    nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
}
