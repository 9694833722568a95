import Foundation
import GatehouseAPI
import GatehouseFoundation
import Hummingbird
import NIOCore

/// Request parameters as the phone-accounts spec's clients send them: an
/// `application/x-www-form-urlencoded` body, a `multipart/form-data` body (the web client's
/// FormData), a flat JSON object, and the query string. Names match case-insensitively
/// (`FirstName` = `firstname`); a body value wins over a query value.
///
/// Secrets (passwords, codes) are read with `secret`, which takes the body only: a query string
/// ends up in access logs, proxies and browser history.
package struct FormParameters: Sendable {
    package private(set) var values: [String: String] = [:]
    /// Names (lower-cased) whose value came from the body.
    package private(set) var bodyNames: Set<String> = []
    package let maxFieldLength: Int

    package init(values: [String: String] = [:], maxFieldLength: Int) {
        self.maxFieldLength = maxFieldLength
        for (k, v) in values { self.values[k.lowercased()] = v }
    }

    package static func read(_ request: Request, maxBodyBytes: Int, maxFieldLength: Int) async throws -> FormParameters {
        var form = FormParameters(maxFieldLength: maxFieldLength)
        for (name, value) in request.uri.queryParameters {
            form.setIfAbsent(String(name), String(value))
        }
        let buffer = try await request.collectBody(upTo: maxBodyBytes)
        guard buffer.readableBytes > 0 else { return form }
        let contentType = request.headers[.contentType]?.lowercased() ?? ""
        var bodyValues: [(String, String)] = []
        if contentType.hasPrefix("multipart/form-data") {
            bodyValues = try parseMultipart(buffer, contentType: request.headers[.contentType] ?? "")
        } else if contentType.hasPrefix("application/json") {
            bodyValues = try parseJSON(buffer)
        } else {
            // The spec's clients send form bodies, sometimes without a content type.
            guard let text = buffer.getString(at: buffer.readerIndex, length: buffer.readableBytes) else {
                throw GatehouseError.invalid(.malformedBody, "error.malformedBody.utf8")
            }
            bodyValues = parseURLEncoded(text)
        }
        // Body wins over the query string.
        for (name, value) in bodyValues { try refuseNUL(name, value) }
        for (name, value) in bodyValues.reversed() {
            form.values[name.lowercased()] = value
            form.bodyNames.insert(name.lowercased())
        }
        return form
    }

    /// A value holding U+0000 is refused (`InputText`), naming its parameter.
    private static func refuseNUL(_ name: String, _ value: String) throws {
        if InputText.hasNUL(value) {
            throw GatehouseError.invalid(.invalidParameter, "error.nulCharacter", name).on(field: name)
        }
    }

    private mutating func setIfAbsent(_ name: String, _ value: String) {
        let key = name.lowercased()
        if values[key] == nil { values[key] = value }
    }

    package static func parseURLEncoded(_ text: String) -> [(String, String)] {
        text.split(separator: "&", omittingEmptySubsequences: true).compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let rawName = parts.first, !rawName.isEmpty else { return nil }
            func decode(_ s: Substring) -> String {
                let plusDecoded = s.replacingOccurrences(of: "+", with: " ")
                return plusDecoded.removingPercentEncoding ?? plusDecoded
            }
            return (decode(rawName), parts.count > 1 ? decode(parts[1]) : "")
        }
    }

    package static func parseMultipart(_ buffer: ByteBuffer, contentType: String) throws -> [(String, String)] {
        let boundary = MultipartFormData.boundary(in: contentType)
        guard !boundary.isEmpty else {
            throw GatehouseError.invalid(.malformedBody, "error.malformedBody.boundary")
        }
        do {
            return try MultipartFormData.fields(buffer, boundary: boundary)
        } catch {
            throw GatehouseError.invalid(.malformedBody, "error.malformedBody.multipart")
        }
    }

    package static func parseJSON(_ buffer: ByteBuffer) throws -> [(String, String)] {
        guard let object = try? JSONDecoder().decode([String: JSONValue].self, from: Data(buffer.readableBytesView)) else {
            throw GatehouseError.invalid(.malformedBody, "error.malformedBody.json")
        }
        // A form field holds a scalar: an array or an object is a malformed body, null is absent.
        var fields: [(String, String)] = []
        for (key, value) in object {
            switch value {
            case .array, .object: throw GatehouseError.invalid(.malformedBody, "error.malformedBody.json")
            default: if let text = value.text { fields.append((key, text)) }
            }
        }
        return fields
    }

    // MARK: Reading values

    /// The value of a parameter under any of `names`, checked against the field length limit.
    package func string(_ names: String...) throws -> String? {
        for name in names {
            if let value = values[name.lowercased()] {
                guard value.count <= maxFieldLength else {
                    throw GatehouseError.invalid(.fieldTooLong, "error.fieldTooLong", name, String(maxFieldLength))
                }
                return value
            }
        }
        return nil
    }

    /// Like `string`, but an empty or blank value counts as absent.
    package func nonEmpty(_ names: String...) throws -> String? {
        for name in names {
            if let value = try string(name), !value.trimmingCharacters(in: .whitespaces).isEmpty {
                return value
            }
        }
        return nil
    }

    /// A secret (password, code): like `nonEmpty`, but from the body only.
    package func secret(_ names: String...) throws -> String? {
        for name in names where bodyNames.contains(name.lowercased()) {
            if let value = try nonEmpty(name) { return value }
        }
        return nil
    }

    /// A required secret, from the body only.
    package func requiredSecret(_ name: String) throws -> String {
        guard let value = try secret(name) else {
            throw GatehouseError.invalid(.missingParameter, "error.missingParameter", name)
        }
        return value
    }

    package func required(_ name: String) throws -> String {
        guard let value = try nonEmpty(name) else {
            throw GatehouseError.invalid(.missingParameter, "error.missingParameter", name)
        }
        return value
    }

    package func bool(_ name: String) throws -> Bool? {
        guard let raw = try string(name)?.trimmingCharacters(in: .whitespaces).lowercased(), !raw.isEmpty else { return nil }
        switch raw {
        case "true", "1", "on", "yes": return true
        case "false", "0", "off", "no": return false
        default: throw GatehouseError.invalid(.invalidParameter, "error.invalidBool", name)
        }
    }

    package func date(_ name: String) throws -> Date?? {
        guard let raw = try string(name) else { return nil }
        if raw.trimmingCharacters(in: .whitespaces).isEmpty { return .some(nil) }
        guard let date = WireDates.parseFlexible(raw) else {
            throw GatehouseError.invalid(.invalidDate, "error.invalidDate", String(raw.prefix(40)))
        }
        return .some(date)
    }
}

