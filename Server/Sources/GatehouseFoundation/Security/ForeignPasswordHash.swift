import Crypto
import Foundation
import _CryptoExtras

/// A password hash another system made, kept as it came until its owner's next login replaces it with Gatehouse's
/// own bcrypt (docs/migrating.md): bcrypt's `$2y$` (PHP's name for `$2b$`), Argon2 `i` and `id` (PHC strings), scrypt
/// (PHC), Firebase's modified scrypt (with the project's parameters, as its export gives them), and PBKDF2-SHA256
/// (Django's `pbkdf2_sha256$…` and PHC's `$pbkdf2-sha256$…`). Each format's cost is bounded (`Limits`): a hash that
/// would make a login cost more is refused when it is imported, never stored.
package enum ForeignPasswordHash: Sendable, Equatable {
    case bcrypt(String)
    case argon2(kind: Argon2.Kind, memory: Int, passes: Int, lanes: Int, salt: [UInt8], hash: [UInt8])
    case scrypt(logN: Int, r: Int, p: Int, salt: [UInt8], hash: [UInt8])
    case firebaseScrypt(FirebaseScrypt, salt: [UInt8], hash: [UInt8])
    case pbkdf2SHA256(iterations: Int, salt: [UInt8], hash: [UInt8], django: Bool)

    /// A Firebase project's hash parameters (`hash_config` of `firebase auth:export`).
    package struct FirebaseScrypt: Sendable, Equatable {
        package var signerKey: [UInt8]
        package var saltSeparator: [UInt8]
        package var rounds: Int
        package var memoryCost: Int

        package init(signerKey: [UInt8], saltSeparator: [UInt8], rounds: Int, memoryCost: Int) {
            self.signerKey = signerKey
            self.saltSeparator = saltSeparator
            self.rounds = rounds
            self.memoryCost = memoryCost
        }
    }

    /// The most a foreign hash may ask of a login.
    package enum Limits {
        static let argon2MemoryKiB = 262_144
        static let argon2Passes = 10
        static let lanes = 16
        static let scryptLogN = 20
        static let scryptR = 32
        static let pbkdf2Iterations = 2_000_000
        static let firebaseRounds = 16
        static let firebaseMemoryCost = 16
    }

    /// Why a hash cannot be imported.
    package struct Refused: Error, CustomStringConvertible {
        package var description: String
        init(_ description: String) { self.description = description }
    }

    /// Whether a stored hash is Gatehouse's own (bcrypt `$2a$`/`$2b$`): anything else is replaced at the next login.
    package static func isNative(_ stored: String) -> Bool { stored.hasPrefix("$2b$") || stored.hasPrefix("$2a$") }

    /// Reads a hash as another system wrote it (or as Gatehouse keeps it: `stored`). Throws what is wrong with it.
    package init(_ text: String) throws {
        let parts = text.split(separator: "$", omittingEmptySubsequences: false).map(String.init)
        if text.hasPrefix("$2a$") || text.hasPrefix("$2b$") || text.hasPrefix("$2y$") {
            guard text.utf8.count == 60 else { throw Refused("a bcrypt hash is 60 characters") }
            self = .bcrypt("$2b$" + text.dropFirst(4))
        } else if text.hasPrefix("$argon2id$") || text.hasPrefix("$argon2i$") {
            // $argon2id$v=19$m=65536,t=3,p=4$salt$hash
            guard parts.count == 6, parts[2] == "v=19" else { throw Refused("an Argon2 hash is a PHC string of version 19: $argon2id$v=19$m=…,t=…,p=…$salt$hash") }
            let p = try Self.parameters(parts[3], ["m", "t", "p"])
            guard let m = p["m"], let t = p["t"], let lanes = p["p"], (1...Limits.lanes).contains(lanes), (8 * lanes...Limits.argon2MemoryKiB).contains(m),
                  (1...Limits.argon2Passes).contains(t) else {
                throw Refused("Argon2 parameters out of bounds (m up to \(Limits.argon2MemoryKiB) KiB, t up to \(Limits.argon2Passes), p up to \(Limits.lanes))")
            }
            self = .argon2(kind: parts[1] == "argon2id" ? .id : .i, memory: m, passes: t, lanes: lanes, salt: try Self.base64(parts[4]),
                           hash: try Self.base64(parts[5], minimum: 4))
        } else if text.hasPrefix("$scrypt$") {
            // $scrypt$ln=15,r=8,p=1$salt$hash (passlib's form; standard or adapted base64)
            guard parts.count == 5 else { throw Refused("a scrypt hash is a PHC string: $scrypt$ln=…,r=…,p=…$salt$hash") }
            let p = try Self.parameters(parts[2], ["ln", "r", "p"])
            guard let ln = p["ln"], let r = p["r"], let par = p["p"], (1...Limits.scryptLogN).contains(ln), (1...Limits.scryptR).contains(r), (1...Limits.lanes).contains(par)
            else { throw Refused("scrypt parameters out of bounds (ln up to \(Limits.scryptLogN), r up to \(Limits.scryptR), p up to \(Limits.lanes))") }
            self = .scrypt(logN: ln, r: r, p: par, salt: try Self.base64(parts[3]), hash: try Self.base64(parts[4], minimum: 16))
        } else if text.hasPrefix("$firebase-scrypt$") {
            // Gatehouse's own keeping of a Firebase hash: $firebase-scrypt$r=8,m=14$separator$signerKey$salt$hash
            guard parts.count == 7 else { throw Refused("not a kept Firebase hash") }
            let p = try Self.parameters(parts[2], ["r", "m"])
            guard let r = p["r"], let m = p["m"] else { throw Refused("not a kept Firebase hash") }
            self = try .firebase(hash: parts[6], salt: parts[5], config: FirebaseScrypt(signerKey: try Self.base64(parts[4]), saltSeparator: try Self.base64(parts[3], minimum: 0),
                                                                                      rounds: r, memoryCost: m))
        } else if text.hasPrefix("pbkdf2_sha256$") {
            // Django: pbkdf2_sha256$iterations$salt$base64(hash)
            guard parts.count == 4, let iterations = Int(parts[1]), (1...Limits.pbkdf2Iterations).contains(iterations), !parts[2].isEmpty else {
                throw Refused("a Django hash is pbkdf2_sha256$iterations$salt$hash, at most \(Limits.pbkdf2Iterations) iterations")
            }
            self = .pbkdf2SHA256(iterations: iterations, salt: Array(parts[2].utf8), hash: try Self.base64(parts[3], minimum: 16), django: true)
        } else if text.hasPrefix("$pbkdf2-sha256$") {
            // PHC (passlib): $pbkdf2-sha256$iterations$salt$hash
            guard parts.count == 5, let iterations = Int(parts[2].hasPrefix("i=") ? String(parts[2].dropFirst(2)) : parts[2]),
                  (1...Limits.pbkdf2Iterations).contains(iterations)
            else { throw Refused("a PBKDF2 hash is $pbkdf2-sha256$iterations$salt$hash, at most \(Limits.pbkdf2Iterations) iterations") }
            self = .pbkdf2SHA256(iterations: iterations, salt: try Self.base64(parts[3]), hash: try Self.base64(parts[4], minimum: 16), django: false)
        } else {
            throw Refused("an unknown hash format: bcrypt, Argon2 (PHC), scrypt (PHC), Firebase scrypt, Django's or PHC PBKDF2-SHA256")
        }
    }

    /// A Firebase export's `passwordHash` and `salt` (standard base64) with its project's `hash_config`.
    package static func firebase(hash: String, salt: String, config: FirebaseScrypt) throws -> ForeignPasswordHash {
        guard (1...Limits.firebaseRounds).contains(config.rounds), (1...Limits.firebaseMemoryCost).contains(config.memoryCost), !config.signerKey.isEmpty else {
            throw Refused("Firebase hash parameters out of bounds (rounds up to \(Limits.firebaseRounds), mem_cost up to \(Limits.firebaseMemoryCost))")
        }
        return .firebaseScrypt(config, salt: try base64(salt), hash: try base64(hash, minimum: 16))
    }

    /// As Gatehouse keeps it in `accounts.password_hash`.
    package var stored: String {
        func b64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString().replacingOccurrences(of: "=", with: "") }
        switch self {
        case .bcrypt(let text): return text
        case .argon2(let kind, let memory, let passes, let lanes, let salt, let hash):
            return "$argon2\(kind == .id ? "id" : "i")$v=19$m=\(memory),t=\(passes),p=\(lanes)$\(b64(salt))$\(b64(hash))"
        case .scrypt(let logN, let r, let p, let salt, let hash): return "$scrypt$ln=\(logN),r=\(r),p=\(p)$\(b64(salt))$\(b64(hash))"
        case .firebaseScrypt(let config, let salt, let hash):
            return "$firebase-scrypt$r=\(config.rounds),m=\(config.memoryCost)$\(b64(config.saltSeparator))$\(b64(config.signerKey))$\(b64(salt))$\(b64(hash))"
        case .pbkdf2SHA256(let iterations, let salt, let hash, let django):
            return django ? "pbkdf2_sha256$\(iterations)$\(String(decoding: salt, as: UTF8.self))$\(Data(hash).base64EncodedString())"
                : "$pbkdf2-sha256$\(iterations)$\(b64(salt))$\(b64(hash))"
        }
    }

    /// Whether `password` is the one hashed (constant time in the derived bytes). Costly: call it off the event loop.
    package func verify(_ password: String) -> Bool {
        let bytes = Array(password.utf8)
        switch self {
        case .bcrypt:
            return false  // bcrypt is PasswordHasher's own
        case .argon2(let kind, let memory, let passes, let lanes, let salt, let hash):
            return Secrets.constantTimeEquals(Argon2.hash(password: bytes, salt: salt, kind: kind, memory: memory, passes: passes, lanes: lanes, length: hash.count), hash)
        case .scrypt(let logN, let r, let p, let salt, let hash):
            guard let key = try? KDF.Scrypt.deriveKey(from: bytes, salt: salt, outputByteCount: hash.count, rounds: 1 << logN, blockSize: r, parallelism: p)
            else { return false }
            return Secrets.constantTimeEquals(key.withUnsafeBytes { Array($0) }, hash)
        case .firebaseScrypt(let config, let salt, let hash):
            // Firebase's scrypt (github.com/firebase/scrypt): scrypt(password, salt ‖ separator, N = 2^mem_cost, r = rounds, p = 1),
            // the first 32 bytes the AES-256 key that encrypts the signer key in CTR mode from a zero counter.
            guard let key = try? KDF.Scrypt.deriveKey(from: bytes, salt: salt + config.saltSeparator, outputByteCount: 32, rounds: 1 << config.memoryCost,
                                                      blockSize: config.rounds, parallelism: 1),
                  let nonce = try? AES._CTR.Nonce(nonceBytes: [UInt8](repeating: 0, count: 16)),
                  let sealed = try? AES._CTR.encrypt(config.signerKey, using: key, nonce: nonce)
            else { return false }
            return Secrets.constantTimeEquals(Array(sealed), hash)
        case .pbkdf2SHA256(let iterations, let salt, let hash, _):
            guard let key = try? KDF.Insecure.PBKDF2.deriveKey(from: bytes, salt: salt, using: .sha256, outputByteCount: hash.count, unsafeUncheckedRounds: iterations)
            else { return false }
            return Secrets.constantTimeEquals(key.withUnsafeBytes { Array($0) }, hash)
        }
    }

    private static func parameters(_ text: String, _ names: [String]) throws -> [String: Int] {
        var found: [String: Int] = [:]
        for pair in text.split(separator: ",") {
            let kv = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard kv.count == 2, names.contains(kv[0]), found[kv[0]] == nil, let value = Int(kv[1]) else { throw Refused("unreadable parameters: \(text.prefix(60))") }
            found[kv[0]] = value
        }
        guard found.count == names.count else { throw Refused("parameters \(names.joined(separator: ", ")) are required") }
        return found
    }

    /// Base64, standard or URL-safe or passlib's adapted (`.` for `+`), padded or not.
    private static func base64(_ text: String, minimum: Int = 8) throws -> [UInt8] {
        var normalized = text.replacingOccurrences(of: ".", with: "+").replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            .replacingOccurrences(of: "=", with: "")
        normalized += String(repeating: "=", count: (4 - normalized.count % 4) % 4)
        guard text.utf8.count <= 1_024, let data = Data(base64Encoded: normalized), data.count >= minimum else { throw Refused("unreadable base64: \(text.prefix(40))") }
        return Array(data)
    }
}
