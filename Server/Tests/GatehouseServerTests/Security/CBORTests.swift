import Crypto
import Foundation
import GatehouseFoundation
import Testing
import _CryptoExtras

/// The CBOR decoder and COSE keys that passkeys will read (RFC 8949, RFC 9052/9053): the RFC's own
/// examples, every refusal by name, and random damage to real-shaped input that never crashes.
@Suite("CBOR and COSE keys")
struct CBORTests {
    static func bytes(_ hex: String) -> [UInt8] { [UInt8](hex: hex) }

    @Test("RFC 8949's examples (Appendix A) decode to their values and the canonical ones encode back byte for byte")
    func rfcExamples() throws {
        let canonical: [(String, CBOR)] = [
            ("00", .unsigned(0)), ("17", .unsigned(23)), ("1818", .unsigned(24)), ("1864", .unsigned(100)), ("1903e8", .unsigned(1000)),
            ("1a000f4240", .unsigned(1_000_000)), ("1b000000e8d4a51000", .unsigned(1_000_000_000_000)),
            ("1bffffffffffffffff", .unsigned(.max)), ("3bffffffffffffffff", .negative(.max)),
            ("20", .int(-1)), ("29", .int(-10)), ("3863", .int(-100)), ("3903e7", .int(-1000)),
            ("f4", .bool(false)), ("f5", .bool(true)), ("f6", .null), ("f7", .undefined), ("f0", .simple(16)), ("f8ff", .simple(255)),
            ("c11a514b67b0", .tagged(1, .unsigned(1_363_896_240))), ("40", .bytes([])), ("4401020304", .bytes([1, 2, 3, 4])),
            ("60", .text("")), ("6161", .text("a")), ("6449455446", .text("IETF")), ("62c3bc", .text("ü")), ("63e6b0b4", .text("水")),
            ("80", .array([])), ("83010203", .array([.unsigned(1), .unsigned(2), .unsigned(3)])),
            ("8301820203820405", .array([.unsigned(1), .array([.unsigned(2), .unsigned(3)]), .array([.unsigned(4), .unsigned(5)])])),
            ("a0", .map([])), ("a201020304", .map([.init(.unsigned(1), .unsigned(2)), .init(.unsigned(3), .unsigned(4))])),
            ("a26161016162820203", .map([.init(.text("a"), .unsigned(1)), .init(.text("b"), .array([.unsigned(2), .unsigned(3)]))])),
            ("826161a161626163", .array([.text("a"), .map([.init(.text("b"), .text("c"))])])),
        ]
        for (hex, value) in canonical {
            #expect(try CBOR.decode(Self.bytes(hex)) == value, "\(hex)")
            #expect(value.encoded() == Self.bytes(hex), "\(hex) encodes back")
        }
        let floats: [(String, Double)] = [
            ("f90000", 0.0), ("f93c00", 1.0), ("f93e00", 1.5), ("f97bff", 65504.0), ("fa47c35000", 100_000.0),
            ("fb3ff199999999999a", 1.1), ("f90001", 5.960464477539063e-8), ("f90400", 6.103515625e-5), ("f9c400", -4.0),
            ("f97c00", .infinity), ("f9fc00", -.infinity), ("fa7f800000", .infinity),
        ]
        for (hex, value) in floats {
            #expect(try CBOR.decode(Self.bytes(hex)) == .float(value), "\(hex)")
        }
        guard case .float(let nan) = try CBOR.decode(Self.bytes("f97e00")) else { Issue.record("NaN"); return }
        #expect(nan.isNaN)
        #expect(try CBOR.decode(Self.bytes("f98000")) == .float(-0.0))
        let (first, used) = try CBOR.decodePrefix(Self.bytes("a1616101ff00"))
        #expect(first["a"]?.int == 1 && used == 4, "an item followed by other bytes: decodePrefix says where it ended")
    }

    @Test("what WebAuthn's CBOR never holds, and broken input, are refused by name and place")
    func refusals() {
        let cases: [(String, CBORError.Reason)] = [
            ("5f42010243030405ff", .indefiniteLength), ("9fff", .indefiniteLength), ("bf6161 01ff", .indefiniteLength),
            ("1c", .reservedValue), ("fc", .reservedValue), ("f810", .reservedValue),
            ("a2010201 03", .duplicateKey), ("a2616101616102", .duplicateKey),
            ("1a0000", .truncated), ("43 0102", .truncated), ("", .truncated), ("83 0102", .truncated),
            ("9bffffffffffffffff00", .truncated), ("bb7fffffffffffffff", .truncated), ("5b7fffffffffffffff00", .truncated),
            ("62c328", .invalidText), ("0000", .trailingBytes),
            (String(repeating: "81", count: 17) + "00", .tooDeep), (String(repeating: "c1", count: 17) + "00", .tooDeep),
        ]
        for (hex, reason) in cases {
            do {
                let item = try CBOR.decode(Self.bytes(hex.replacingOccurrences(of: " ", with: "")))
                Issue.record("\(hex) decoded to \(item)")
            } catch let error as CBORError {
                #expect(error.reason == reason, "\(hex): \(error)")
            } catch {
                Issue.record("\(hex): \(error)")
            }
        }
        var few = CBOR.Limits()
        few.maxItems = 3
        #expect(throws: CBORError(.tooManyItems, at: 3)) { try CBOR.decode(Self.bytes("8401020304"), limits: few) }
        #expect(throws: Never.self) { try CBOR.decode(Self.bytes(String(repeating: "81", count: 16) + "00")) }
    }

    /// An attestation object of the "none" format with a real ES256 key, as an authenticator writes it.
    static func attestationObject(key: P256.Signing.PublicKey) -> [UInt8] {
        let raw = Array(key.rawRepresentation)
        let cose = CBOR.map([.init(.int(1), .int(2)), .init(.int(3), .int(-7)), .init(.int(-1), .int(1)),
                             .init(.int(-2), .bytes(Array(raw[0..<32]))), .init(.int(-3), .bytes(Array(raw[32..<64])))])
        let authData = Array(SHA256.hash(data: Data("example.com".utf8))) + [0x45, 0, 0, 0, 7] + [UInt8](repeating: 0xaa, count: 16)
            + [0, 16] + [UInt8](repeating: 0xcc, count: 16) + cose.encoded()
        return CBOR.map([.init(.text("fmt"), .text("none")), .init(.text("attStmt"), .map([])), .init(.text("authData"), .bytes(authData))]).encoded()
    }

    @Test("random damage to an attestation object and its key (20,000 mutations) decodes or is refused, never crashes or hangs")
    func mutations_neverCrash() throws {
        let key = P256.Signing.PrivateKey().publicKey
        let original = Self.attestationObject(key: key)
        let decoded = try CBOR.decode(original)
        let authData = try #require(decoded["authData"]?.bytes)
        let (cose, _) = try CBOR.decodePrefix(Array(authData[71...]))
        #expect(try COSEKey(cose).algorithm == .es256)
        var generator = SystemRandomNumberGenerator()
        var (accepted, refused) = (0, 0)
        for round in 0..<20_000 {
            var bytes = round % 2 == 0 ? original : Array(authData[71...])
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                case 1: bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator)))
                case 2: bytes.insert(UInt8.random(in: 0...255, using: &generator), at: Int.random(in: 0...bytes.count, using: &generator))
                default: if !bytes.isEmpty { bytes.remove(at: Int.random(in: 0..<bytes.count, using: &generator)) }
                }
                if bytes.isEmpty { bytes = [0xff] }
            }
            do {
                let (item, _) = try CBOR.decodePrefix(bytes)
                accepted += 1
                if let key = try? COSEKey(item) { _ = key.isValidSignature([0x30, 0x00], for: bytes) }
            } catch is CBORError {
                refused += 1
            }
        }
        #expect(accepted + refused == 20_000 && accepted > 0 && refused > 0, "\(accepted) decoded, \(refused) refused")
    }

    @Test("ES256 and RS256 keys verify their signatures over WebAuthn's signed bytes; other data, a bad signature, a wrong kty, curve or algorithm are refused")
    func coseKeys_verify() throws {
        let message = Array("authenticatorData || SHA-256(clientDataJSON)".utf8)

        // ES256: a DER ECDSA signature, as authenticators send it
        let ec = P256.Signing.PrivateKey()
        let raw = Array(ec.publicKey.rawRepresentation)
        let es256Map: [CBOR.Pair] = [.init(.int(1), .int(2)), .init(.int(3), .int(-7)), .init(.int(-1), .int(1)),
                                     .init(.int(-2), .bytes(Array(raw[0..<32]))), .init(.int(-3), .bytes(Array(raw[32..<64])))]
        let es256 = try COSEKey(encoded: CBOR.map(es256Map).encoded())
        let signature = Array(try ec.signature(for: message).derRepresentation)
        #expect(es256.algorithm == .es256 && es256.isValidSignature(signature, for: message))
        #expect(!es256.isValidSignature(signature, for: message + [0]))
        #expect(!es256.isValidSignature(Array(try P256.Signing.PrivateKey().signature(for: message).derRepresentation), for: message))
        #expect(!es256.isValidSignature(Array(signature.dropLast()), for: message))

        // RS256: PKCS#1 v1.5 over SHA-256
        let rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let primitives = try rsa.publicKey.getKeyPrimitives()
        let rs256 = try COSEKey(.map([.init(.int(1), .int(3)), .init(.int(3), .int(-257)),
                                      .init(.int(-1), .bytes(Array(primitives.modulus))), .init(.int(-2), .bytes(Array(primitives.publicExponent)))]))
        let rsaSignature = Array(try rsa.signature(for: SHA256.hash(data: message), padding: .insecurePKCS1v1_5).rawRepresentation)
        #expect(rs256.algorithm == .rs256 && rs256.isValidSignature(rsaSignature, for: message))
        #expect(!rs256.isValidSignature(rsaSignature, for: message + [0]))

        // Refusals
        func refusal(_ map: [CBOR.Pair]) -> COSEKeyError? {
            do { _ = try COSEKey(.map(map)); return nil } catch { return error as? COSEKeyError }
        }
        func replacing(_ label: Int64, with value: CBOR) -> [CBOR.Pair] { es256Map.map { $0.key.int == label ? .init($0.key, value) : $0 } }
        #expect(refusal(replacing(3, with: .int(-8))) == .unsupportedAlgorithm(-8))
        #expect(refusal(replacing(1, with: .int(1)))?.description.contains("kty") == true)
        #expect(refusal(replacing(-1, with: .int(2)))?.description.contains("crv") == true)
        #expect(refusal(replacing(-2, with: .bytes([1, 2, 3]))) == .missing("x (-2) and y (-3), 32 bytes each"))
        #expect(refusal(replacing(-3, with: .bytes([UInt8](repeating: 7, count: 32))))?.description.contains("not on P-256") == true)
        #expect(refusal(Array(es256Map.filter { $0.key.int != 3 })) == .missing("alg (3)"))
        #expect((try? COSEKey(.array([]))) == nil)
        #expect(refusal([.init(.int(1), .int(3)), .init(.int(3), .int(-257)), .init(.int(-1), .bytes([0xc3, 0x01])), .init(.int(-2), .bytes([1, 0, 1]))])
                == .mismatch("the RSA key is not one of 2048 bits or more"))
    }
}
