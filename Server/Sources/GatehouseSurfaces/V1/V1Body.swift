import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import Hummingbird
import NIOCore

/// Reading `/v1` JSON request bodies with the shared decoder of `V1` (answers: `JSONResponse`).
package enum V1Body {
    /// The request body as `T`. A missing `Content-Type` is read as JSON; another type is 415;
    /// a body over the limit is 413; a body that does not decode is 400 `malformed_body` naming
    /// the member at fault; a string member over `maxFieldLength` is 400 `field_too_long`; one
    /// holding U+0000 is 400 `invalid_parameter` naming it (`InputText`).
    package static func decode<T: Decodable>(_ type: T.Type, from request: Request, limits: GatehouseConfiguration.Limits) async throws -> T {
        if let contentType = request.headers[.contentType] {
            let media = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
            guard media == "application/json" || (media.hasPrefix("application/") && media.hasSuffix("+json")) else {
                throw GatehouseError(.unsupportedMediaType, .unsupportedMediaType, LocalizedText("error.unsupportedMediaType", [String(media.prefix(60)), "application/json"]))
            }
        }
        let buffer = try await request.collectBody(upTo: limits.maxBodyBytes)
        let data = Data(buffer.readableBytesView)
        let value: T
        do {
            value = try V1.decoder.decode(T.self, from: data.isEmpty ? Data("{}".utf8) : data)
        } catch let error as DecodingError {
            throw malformed(error)
        } catch {
            throw GatehouseError.invalid(.malformedBody, "error.malformedJSON", "unreadable body")
        }
        if InputText.hasEscapedNUL(inJSON: data) {
            let name = (try? JSONValue.parse(data)).flatMap { InputText.memberWithNUL($0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "body"
            throw GatehouseError.invalid(.invalidParameter, "error.nulCharacter", name).on(field: name)
        }
        try checkLengths(value, limit: limits.maxFieldLength)
        return value
    }

    private static func malformed(_ error: DecodingError) -> GatehouseError {
        func field(_ path: [any CodingKey]) -> String? {
            let names = path.map { $0.intValue.map(String.init) ?? $0.stringValue }
            return names.isEmpty ? nil : names.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            let name = field(context.codingPath + [key]) ?? key.stringValue
            return GatehouseError.invalid(.missingParameter, "error.missingParameter", name).on(field: name)
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            let name = field(context.codingPath) ?? "body"
            if context.codingPath.isEmpty { return GatehouseError.invalid(.malformedBody, "error.malformedJSON", "expected a JSON object") }
            return GatehouseError.invalid(.malformedBody, "error.wrongType", name).on(field: name)
        case .dataCorrupted(let context):
            if let name = field(context.codingPath) {
                return GatehouseError.invalid(.malformedBody, "error.wrongType", name).on(field: name)
            }
            return GatehouseError.invalid(.malformedBody, "error.malformedJSON", "syntax error")
        @unknown default:
            return GatehouseError.invalid(.malformedBody, "error.malformedJSON", "syntax error")
        }
    }

    /// Every string member (found by reflection) within the field length limit.
    private static func checkLengths(_ value: Any, limit: Int) throws {
        if value is any ChecksOwnLengths { return }
        for child in Mirror(reflecting: value).children {
            guard let name = child.label else { continue }
            if let text = unwrap(child.value), text.count > limit {
                throw GatehouseError.invalid(.fieldTooLong, "error.fieldTooLong", name, String(limit)).on(field: name)
            }
        }
    }

    private static func unwrap(_ value: Any) -> String? {
        if let text = value as? String { return text }
        if let text = value as? String?, let text { return text }
        if let text = value as? String??, let inner = text, let text = inner { return text }
        return nil
    }
}

/// A body whose service checks the length of each member itself (a message's text may be far
/// longer than a name).
package protocol ChecksOwnLengths {}

extension SendMessage: ChecksOwnLengths {}
extension EditMessage: ChecksOwnLengths {}
