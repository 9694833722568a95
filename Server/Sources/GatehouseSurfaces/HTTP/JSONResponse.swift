import Foundation
import GatehouseAPI
import GatehouseFoundation
import Hummingbird

/// Every JSON answer of every surface: UTF-8, written by `V1.encoder` (sorted keys, stable bytes
/// for clients and tests; unescaped slashes; ISO 8601 instants), or bytes written already.
package enum JSONResponse {
    package static let contentType = "application/json; charset=utf-8"

    /// A value that writes itself, chosen at compile time (no cast at run time).
    package static func make(_ value: some JSONWritable, status: HTTPResponse.Status = .ok) -> Response {
        make(buffer: value.jsonBuffer, status: status)
    }

    package static func make(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        if let written = value as? any JSONWritable { return make(buffer: written.jsonBuffer, status: status) }
        return make(encoded: try V1.encoder.encode(value), status: status)
    }

    /// A body encoded already (a stored idempotent answer).
    package static func make(encoded data: Data, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: contentType], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// JSON text written already (an answer whose members keep the order a spec writes them in).
    package static func make(text: String, status: HTTPResponse.Status = .ok) -> Response {
        make(buffer: ByteBuffer(string: text), status: status)
    }

    /// JSON bytes kept for every request (a document built once).
    package static func make(buffer: ByteBuffer, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: contentType], body: .init(byteBuffer: buffer))
    }

    package static func noContent() -> Response { Response(status: .noContent) }
}

extension HTTPFields {
    /// What a refusal tells the client to do next, on every surface: `WWW-Authenticate` on 401 (`invalid_token` when a
    /// token was sent), `Retry-After` on 429 and on 503 `service_unavailable` (a second: the database is back soon or
    /// another instance answers).
    package mutating func addChallenge(for error: GatehouseError, request: Request) {
        switch error.kind {
        case .unauthorized: self[.wwwAuthenticate] = request.bearerToken == nil ? "Bearer" : "Bearer error=\"invalid_token\""
        case .rateLimited(let seconds): self[.retryAfter] = String(seconds)
        case .unavailable where error.code == .serviceUnavailable: self[.retryAfter] = "1"
        default: break
        }
    }
}
