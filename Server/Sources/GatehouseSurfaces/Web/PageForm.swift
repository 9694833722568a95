import Crypto
import Foundation
import GatehousePlatform
import HTTPTypes
import Hummingbird
import NIOCore

/// What the server-rendered consoles (the developers' `/console`, the operators' `/operator`)
/// read from a request alike: its cookies and a posted form (urlencoded or multipart, with its
/// files), and the headers every such page carries.
package enum PageForm {
    /// A form that could not be read (a multipart body without its boundary, say).
    package struct Unreadable: Error {}

    /// The request's cookies by name (the first of a repeated name).
    package static func cookies(_ request: Request) -> [String: String] {
        var found: [String: String] = [:]
        for header in request.headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2 else { continue }
                let name = parts[0].trimmingCharacters(in: .whitespaces)
                if found[name] == nil { found[name] = parts[1].trimmingCharacters(in: .whitespaces) }
            }
        }
        return found
    }

    /// A cookie for `path`: `HttpOnly`, the given `SameSite`, `Secure` when asked.
    package static func cookie(_ name: String, _ value: String, path: String, sameSite: String, secure: Bool, maxAge: Int?) -> String {
        var text = "\(name)=\(value); Path=\(path); HttpOnly; SameSite=\(sameSite)"
        if secure { text += "; Secure" }
        if let maxAge { text += "; Max-Age=\(maxAge)" }
        return text
    }

    /// The posted form's fields and its file parts (with their declared type), at most `limit` bytes.
    package static func read(_ request: Request, limit: Int) async throws -> (fields: [String: String], files: [String: (type: String?, bytes: Data)]) {
        let buffer = try await request.collectBody(upTo: limit)
        let contentType = request.headers[.contentType] ?? ""
        var fields: [String: String] = [:]
        var files: [String: (type: String?, bytes: Data)] = [:]
        if contentType.lowercased().hasPrefix("multipart/form-data") {
            let boundary = MultipartFormData.boundary(in: contentType)
            guard !boundary.isEmpty, let parts = try? MultipartFormData.parts(Array(buffer.readableBytesView), boundary: boundary) else {
                throw Unreadable()
            }
            for part in parts {
                if part.fileName != nil {
                    if !part.body.isEmpty { files[part.name] = (part.contentType, Data(part.body)) }
                } else if let text = String(validating: part.body, as: UTF8.self) {
                    fields[part.name] = text
                }
            }
        } else if let text = buffer.getString(at: buffer.readerIndex, length: buffer.readableBytes) {
            for (name, value) in FormParameters.parseURLEncoded(text) where fields[name] == nil { fields[name] = value }
        }
        // Text never holds U+0000 (`InputText`): left out of a console's fields, as of an address (a browser never sends
        // it; the page answers what it answers for the value without it).
        if fields.contains(where: { InputText.hasNUL($0.key) || InputText.hasNUL($0.value) }) {
            fields = Dictionary(fields.map { (InputText.removingNUL($0.key), InputText.removingNUL($0.value)) }, uniquingKeysWith: { first, _ in first })
        }
        return (fields, files)
    }

    /// The headers of a console's page: HTML, never cached, a CSP that allows only its own inline
    /// style (by hash), forms posting here and (when `images`) its own images; no script, no frame.
    /// `formAction`: where its forms may post (and be redirected to, as browsers apply it to a form's redirects too).
    package static func headers(style: String, images: Bool, referrer: String, formAction: String = "'self'") -> HTTPFields {
        let styleHash = Data(SHA256.hash(data: Data(style.utf8))).base64EncodedString()
        return [
            .contentType: "text/html; charset=utf-8",
            .cacheControl: "no-store",
            .contentSecurityPolicy: "default-src 'none'; style-src 'sha256-\(styleHash)';" + (images ? " img-src 'self';" : "")
                + " form-action \(formAction); frame-ancestors 'none'; base-uri 'none'",
            HTTPField.Name("X-Frame-Options")!: "DENY",
            HTTPField.Name("X-Content-Type-Options")!: "nosniff",
            HTTPField.Name("Referrer-Policy")!: referrer,
        ]
    }

    /// A rendered page with its headers and the cookies to set.
    package static func response(_ html: String, headers: HTTPFields, status: HTTPResponse.Status, cookies: [String]) -> Response {
        var headers = headers
        for cookie in cookies { headers.append(HTTPField(name: .setCookie, value: cookie)) }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }
}
