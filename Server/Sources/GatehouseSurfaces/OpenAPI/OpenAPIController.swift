import GatehouseAPI
import Hummingbird

/// Serves the OpenAPI document of every HTTP surface (docs/architecture.md): as written, as YAML,
/// and as a reference page.
package struct OpenAPIController: Sendable {
    package func addRoutes(to router: Router<GatehouseRequestContext>) {
        let json = ByteBuffer(string: OpenAPIDocument.json)
        let yaml = ByteBuffer(string: OpenAPIDocument.yaml)
        let html = ByteBuffer(string: OpenAPIDocument.html)
        router.get(RouterPath(APIReference.openAPI)) { _, _ -> Response in
            JSONResponse.make(buffer: json)
        }
        router.get(RouterPath(APIReference.openAPIYAML)) { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"], body: .init(byteBuffer: yaml))
        }
        router.get(RouterPath(APIReference.docs)) { _, _ -> Response in
            Response(
                status: .ok,
                headers: [
                    .contentType: "text/html; charset=utf-8",
                    // A page of text and links: nothing to run, nothing to load, nothing to frame it.
                    .contentSecurityPolicy: "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
                ],
                body: .init(byteBuffer: html)
            )
        }
    }

    package init() {

    }
}
