import CompressNIO
import Foundation
import NIOCore

/// The list of common and breached passwords a new password must not be (NIST SP 800-63B, 3.1.1.2): the server ships
/// one (docs/security.md, "Common and breached passwords"), read once at start-up into a set.
///
/// A password is refused when, lower-cased, it is on the list, or its core is a listed password's core: the core is
/// what is left without special characters at either end. The specs' rule "a digit and a special character" makes
/// people write `Password1!` for `password1` and `qwerty123!` for `qwerty123`, and those are the first guesses of any
/// list-driven attack. Digits are kept: `secret-42!` is not `secret`.
package struct CommonPasswords: Sendable {
    private let words: Set<String>

    /// How many passwords the list holds (each counted once, cores aside).
    package let count: Int

    /// A list of its passwords, as given (lower-cased here).
    package init<S: Sequence>(_ words: S) where S.Element == String {
        let listed = Set(words.lazy.map { $0.lowercased() }.filter { !$0.isEmpty })
        self.count = listed.count
        self.words = listed.union(listed.lazy.map(Self.core).filter { !$0.isEmpty })
    }

    /// The list from a gzip file of one password per line (the shipped list's format).
    package init(gzip data: Data) throws {
        var buffer = ByteBuffer(bytes: data)
        var text = try buffer.decompress(with: .gzip())
        let lines = (text.readString(length: text.readableBytes) ?? "").split(whereSeparator: \.isNewline)
        self.init(lines.map { Self.decoded($0.trimmingCharacters(in: .whitespaces)) })
    }

    /// A line as the password it stands for: lists write a password with bytes a text file cannot hold in
    /// hashcat's `$HEX[…]` form (lower-cased in the shipped list), decoded here (as UTF-8, else left as it is).
    package static func decoded(_ line: String) -> String {
        let lowered = line.lowercased()
        guard lowered.hasPrefix("$hex["), lowered.hasSuffix("]"), lowered.count % 2 == 0 else { return line }
        let hex = Array(lowered.dropFirst(5).dropLast())
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: hex.count, by: 2) {
            guard let byte = UInt8(String(hex[index...index + 1]), radix: 16) else { return line }
            bytes.append(byte)
        }
        return String(validating: bytes, as: UTF8.self) ?? line
    }

    /// Whether `password` is a listed one, or one with special characters around a listed one's core.
    package func contains(_ password: String) -> Bool {
        let lowered = password.lowercased()
        return words.contains(lowered) || words.contains(Self.core(lowered))
    }

    /// The password without the special characters (neither letters nor digits) at its ends.
    package static func core(_ password: String) -> String {
        let special: (Character) -> Bool = { !$0.isLetter && !$0.isNumber }
        return String(password.drop(while: special).reversed().drop(while: special).reversed())
    }
}
