import Foundation
import GatehousePlatform
import Hummingbird
import NIOCore

/// A JSON value of any shape (the spec's structured fields).
package enum WireValue: Decodable, Equatable, Sendable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case null
    case array([WireValue])
    case object([String: WireValue])

    package init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let n = try? c.decode(Double.self) { self = .number(n) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([WireValue].self) { self = .array(a) }
        else { self = .object(try c.decode([String: WireValue].self)) }
    }

    /// A number, or a string holding one (clients send both).
    package var number: Double? {
        switch self {
        case .number(let n): n.isFinite ? n : nil
        case .string(let s): Double(s.trimmingCharacters(in: .whitespaces)).flatMap { $0.isFinite ? $0 : nil }
        default: nil
        }
    }

    /// A string, or a number written as one.
    package var text: String? {
        switch self {
        case .string(let s): s
        case .number(let n): n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : String(n)
        case .bool(let b): b ? "true" : "false"
        default: nil
        }
    }

    /// A member of an object, by any of `names` (the spec writes `dot count` and `dot_count`).
    package subscript(_ names: String...) -> WireValue? {
        guard case .object(let members) = self else { return nil }
        for name in names { if let value = members[name] { return value } }
        return nil
    }
}

/// A request of the signature identity endpoints, however it came: a JSON object, a
/// urlencoded form or a multipart form. In forms the structured fields (`signatures`,
/// `signature`, `location`, `resolution`) are JSON text; `photo` is a file part, or base64 text.
package struct SignatureRequest: Sendable {
    /// The top-level fields, by lower-cased name.
    package private(set) var fields: [String: WireValue] = [:]
    /// File parts, by lower-cased name.
    package private(set) var files: [String: Data] = [:]

    /// Why a request cannot be read (answered as the spec's surface answers: a `res` with an `error`).
    package enum Failure: Error, Equatable {
        case malformed
        case tooLarge
    }

    package static func read(_ request: Request, maxBytes: Int) async throws -> SignatureRequest {
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: maxBytes)
        } catch {
            throw Failure.tooLarge
        }
        // The body only: a key or a code in the query string ends up in proxies' logs and histories.
        return try parse(Array(buffer.readableBytesView), contentType: request.headers[.contentType])
    }

    package static func parse(_ bytes: [UInt8], contentType: String?) throws -> SignatureRequest {
        var result = SignatureRequest()
        let type = (contentType ?? "").lowercased()
        if type.hasPrefix("multipart/form-data") {
            let boundary = MultipartFormData.boundary(in: contentType ?? "")
            guard !boundary.isEmpty, let parts = try? MultipartFormData.parts(bytes, boundary: boundary) else { throw Failure.malformed }
            for part in parts {
                let name = part.name.lowercased()
                if part.fileName != nil {
                    result.files[name] = Data(part.body)
                } else {
                    guard let text = String(validating: part.body, as: UTF8.self) else { throw Failure.malformed }
                    result.fields[name] = .string(text)
                }
            }
        } else if type.hasPrefix("application/json") || (type.isEmpty && bytes.first.map { $0 == UInt8(ascii: "{") } == true) {
            guard case .object(let members)? = try? JSONDecoder().decode(WireValue.self, from: Data(bytes)) else { throw Failure.malformed }
            for (name, value) in members { result.fields[name.lowercased()] = value }
        } else if !bytes.isEmpty {
            guard let text = String(validating: bytes, as: UTF8.self) else { throw Failure.malformed }
            for (name, value) in FormParameters.parseURLEncoded(text) where result.fields[name.lowercased()] == nil {
                result.fields[name.lowercased()] = .string(value)
            }
        }
        return result
    }

    /// A plain field, trimmed; nil when absent or empty.
    package func text(_ name: String) -> String? {
        guard let value = fields[name]?.text?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty else { return nil }
        return value
    }

    /// A structured field: the JSON value, or JSON text parsed (as forms carry it).
    package func structured(_ name: String) -> WireValue? {
        guard let value = fields[name] else { return nil }
        if case .string(let text) = value {
            return try? JSONDecoder().decode(WireValue.self, from: Data(text.utf8))
        }
        return value
    }

    /// The photo: a file part, or base64 text (a `data:` URL prefix allowed).
    package func photo() -> Data? {
        if let file = files["photo"], !file.isEmpty { return file }
        guard var text = text("photo") else { return nil }
        if text.hasPrefix("data:"), let comma = text.firstIndex(of: ",") { text = String(text[text.index(after: comma)...]) }
        return Data(base64Encoded: text, options: .ignoreUnknownCharacters)
    }
}
