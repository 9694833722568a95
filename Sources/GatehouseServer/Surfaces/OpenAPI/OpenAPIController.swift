import GatehouseAPI
import Hummingbird

/// Serves the OpenAPI document of every HTTP surface (docs/architecture.md).
struct OpenAPIController: Sendable {
    func addRoutes(to router: Router<GatehouseRequestContext>) {
        let body = ByteBuffer(string: OpenAPIDocument.json)
        router.get(RouterPath(AccountsV1API.Path.openAPI)) { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: body))
        }
    }
}
