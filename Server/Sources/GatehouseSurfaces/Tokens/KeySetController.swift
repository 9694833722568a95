import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import Hummingbird
import NIOCore

/// `/.well-known/jwks.json`: the public keys of the tokens other services verify (docs/oidc.md, "Keys"). Cacheable
/// for five minutes (a key is published a whole access-token lifetime before it signs, and at least a minute), with
/// an `ETag` so a verifier that asks again gets `304` until the set changes.
package struct KeySetController: Sendable {
    package let keys: SigningKeys

    package init(keys: SigningKeys) {
        self.keys = keys
    }

    package func addRoutes(to router: some RouterMethods<GatehouseRequestContext>) {
        router.route(ServerPages.WellKnown.keySet) { request, _ in
            let body = try await keys.keySet().sortedJSON(escapingSlashes: false)
            let etag = "\"" + Secrets.sha256Hex(String(decoding: body, as: UTF8.self)).prefix(32) + "\""
            var headers: HTTPFields = [.cacheControl: "public, max-age=300", .eTag: etag, .contentType: "application/jwk-set+json"]
            if request.headers[.ifNoneMatch] == etag {
                headers[.contentType] = nil
                return Response(status: .notModified, headers: headers)
            }
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
    }
}
