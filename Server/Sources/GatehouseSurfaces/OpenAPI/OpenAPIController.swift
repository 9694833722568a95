import GatehouseAPI
import Hummingbird

/// Serves the API's own description (docs/architecture.md): the root's signposts, the OpenAPI
/// document as JSON and as YAML, and its reference page.
package struct OpenAPIController: Sendable {

    package func addRoutes(to router: Router<GatehouseRequestContext>) {
        // A newcomer's first request: which version answers, and where to go next.
        let signposts = ByteBuffer(string: #"{"name":"Gatehouse","version":"\#(GatehouseVersion.current)","openapi":"/openapi.json","docs":"/docs","console":"\#(ServerPages.Console.home.path)","operator":"\#(ServerPages.OperatorConsole.home.path)","health":"/health","live":"/health/live","apis":["/api","/v1","/customer-gateway/customer"]}"#)
        let json = ByteBuffer(string: OpenAPIDocument.json)
        let yaml = ByteBuffer(string: OpenAPIDocument.yaml)
        let html = ByteBuffer(string: OpenAPIDocument.html)
        router.route(ServerPages.APIDocument.root) { _, _ -> Response in
            JSONResponse.make(buffer: signposts)
        }
        router.route(ServerPages.APIDocument.openAPI) { _, _ -> Response in
            JSONResponse.make(buffer: json)
        }
        router.route(ServerPages.APIDocument.openAPIYAML) { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"], body: .init(byteBuffer: yaml))
        }
        router.route(ServerPages.APIDocument.docs) { _, _ -> Response in
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

    package init() {}
}
