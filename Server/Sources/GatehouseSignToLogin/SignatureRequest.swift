import Foundation
import GatehouseFoundation
import GatehousePlatform
import Hummingbird
import NIOCore

/// A request of the Sign To Login endpoints, however it came: a JSON object, a
/// urlencoded form or a multipart form. In forms the structured fields (`signatures`,
/// `signature`, `location`, `resolution`) are JSON text; `photo` is a file part, or base64 text.
package struct SignatureRequest: Sendable {
    /// The top-level fields, by lower-cased name.
    package private(set) var fields: [String: JSONValue] = [:]
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
            guard case .object(let members)? = try? JSONValue.parse(bytes) else { throw Failure.malformed }
            // JSON carries U+0000 only as an escape: a body without one needs no walk through its values
            // (a signature's points are most of a request, and the walk was a tenth of its reading).
            if InputText.hasEscapedNUL(inJSON: bytes) { throw Failure.malformed }
            for (name, value) in members { result.fields[name.lowercased()] = value }
            return result
        } else if !bytes.isEmpty {
            guard let text = String(validating: bytes, as: UTF8.self) else { throw Failure.malformed }
            for (name, value) in FormParameters.parseURLEncoded(text) where result.fields[name.lowercased()] == nil {
                result.fields[name.lowercased()] = .string(value)
            }
        }
        // Text may not hold U+0000 (`InputText`), in any field or member.
        if InputText.memberWithNUL(.object(result.fields)) != nil { throw Failure.malformed }
        return result
    }

    /// A plain field, trimmed; nil when absent or empty.
    /// Whether the field was sent as text, an empty string included (a field the spec requires but lets be empty).
    package func sent(_ name: String) -> Bool {
        fields[name]?.text != nil
    }

    package func text(_ name: String) -> String? {
        guard let value = fields[name]?.text?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty else { return nil }
        return value
    }

    /// A structured field: the JSON value, or JSON text parsed (as forms carry it).
    package func structured(_ name: String) -> JSONValue? {
        guard let value = fields[name] else { return nil }
        if case .string(let text) = value {
            return try? JSONValue.parse(text.utf8)
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
