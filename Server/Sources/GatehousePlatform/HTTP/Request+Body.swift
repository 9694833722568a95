import GatehouseFoundation
import Hummingbird
import NIOCore

extension Request {
    /// The whole body, at most `limit` bytes: a declared or actual size over it is the domain's
    /// `body_too_large`, which each surface renders its own way (400 on `/api`, 413 on `/v1`).
    package func collectBody(upTo limit: Int) async throws -> ByteBuffer {
        if let length = headers[.contentLength].flatMap(Int.init), length > limit {
            throw GatehouseError.bodyTooLarge(limit)
        }
        do {
            return try await body.collect(upTo: limit)
        } catch {
            throw GatehouseError.bodyTooLarge(limit)
        }
    }
}
