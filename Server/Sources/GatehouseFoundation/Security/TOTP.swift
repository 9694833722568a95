import Crypto
import Foundation

/// Time-based one-time passwords (RFC 6238 over RFC 4226's HOTP): HMAC-SHA1, six digits, 30-second
/// steps: what every authenticator app (Google Authenticator, 1Password, Authy…) computes from
/// the secret it scanned as an `otpauth://` URI.
package struct TOTP: Sendable {
    package let secret: [UInt8]
    package static let digits = 6
    package static let period: TimeInterval = 30

    package init(secret: [UInt8]) {
        self.secret = secret
    }

    /// A fresh 160-bit secret (RFC 4226's recommended length).
    package static func newSecret() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<20).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    package static func step(at date: Date) -> Int64 { Int64((date.timeIntervalSince1970 / period).rounded(.down)) }

    /// The code of a time step.
    package func code(step: Int64) -> String {
        var counter = UInt64(bitPattern: step).bigEndian
        let message = withUnsafeBytes(of: &counter) { Data($0) }
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: SymmetricKey(data: secret)))
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let binary = (UInt32(mac[offset] & 0x7f) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        let value = binary % 1_000_000
        let text = String(value)
        return String(repeating: "0", count: Self.digits - text.count) + text
    }

    package func code(at date: Date) -> String { code(step: Self.step(at: date)) }

    /// The step `code` is the code of, within one step either side of `date` (a clock a little
    /// off, a code typed as the step turned), newer than `after` (a code works once); or nil.
    package func match(_ code: String, at date: Date, after: Int64) -> Int64? {
        steps(of: code, at: date).filter { $0 > after }.max()
    }

    /// Whether `code` is the code of a step within that window that is not newer than `after`: a
    /// right code already spent (typed twice, or the app not yet on its next code).
    package func wasUsed(_ code: String, at date: Date, upTo after: Int64) -> Bool {
        steps(of: code, at: date).contains { $0 <= after }
    }

    /// The steps within one step either side of `date` whose code `code` is. Every candidate is
    /// computed and compared in constant time, whichever matches.
    private func steps(of code: String, at date: Date) -> [Int64] {
        let typed = code.filter { !$0.isWhitespace }
        guard typed.count == Self.digits, typed.allSatisfy(\.isASCII), typed.allSatisfy(\.isNumber) else { return [] }
        let now = Self.step(at: date)
        var found: [Int64] = []
        for step in (now - 1)...(now + 1) where Secrets.constantTimeEquals(self.code(step: step), typed) {
            found.append(step)
        }
        return found
    }

    /// The URI an authenticator app scans (as a QR code) or takes pasted.
    package func uri(issuer: String, account: String) -> String {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        let label = (issuer + ":" + account).addingPercentEncoding(withAllowedCharacters: allowed.union(CharacterSet(charactersIn: ":"))) ?? account
        let issuerParameter = issuer.addingPercentEncoding(withAllowedCharacters: allowed) ?? "Gatehouse"
        return "otpauth://totp/\(label)?secret=\(Base32.encode(secret))&issuer=\(issuerParameter)&algorithm=SHA1&digits=\(Self.digits)&period=\(Int(Self.period))"
    }
}

/// RFC 4648 base32 without padding: how authenticator apps write a TOTP secret.
package enum Base32 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    package static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var buffer = 0, bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | Int(byte)
            bits += 8
            while bits >= 5 {
                out.append(alphabet[(buffer >> (bits - 5)) & 31])
                bits -= 5
            }
        }
        if bits > 0 { out.append(alphabet[(buffer << (5 - bits)) & 31]) }
        return String(decoding: out, as: UTF8.self)
    }

    package static func decode(_ text: String) -> [UInt8]? {
        var out: [UInt8] = []
        var buffer = 0, bits = 0
        for char in text.uppercased().utf8 where char != UInt8(ascii: "=") && char != UInt8(ascii: " ") {
            guard let value = alphabet.firstIndex(of: char) else { return nil }
            buffer = (buffer << 5) | value
            bits += 5
            if bits >= 8 {
                out.append(UInt8((buffer >> (bits - 8)) & 0xff))
                bits -= 8
            }
        }
        return out
    }
}

extension Secrets {
    /// Seals `bytes` (a secret the server must read again, as a TOTP secret) with AES-GCM under a
    /// key derived from the server secret for `purpose`: a copy of the database alone does not
    /// reveal it. Base64.
    package func seal(_ bytes: [UInt8], purpose: String) throws -> String {
        let box = try AES.GCM.seal(bytes, using: sealingKey(purpose))
        guard let combined = box.combined else { throw CryptoKitError.incorrectParameterSize }
        return combined.base64EncodedString()
    }

    package func open(_ sealed: String, purpose: String) throws -> [UInt8] {
        guard let data = Data(base64Encoded: sealed) else { throw CryptoKitError.incorrectParameterSize }
        return Array(try AES.GCM.open(AES.GCM.SealedBox(combined: data), using: sealingKey(purpose)))
    }
}
