import GatehouseAPI
import Hummingbird

/// Serves the API's own description (docs/architecture.md): the root's signposts, the OpenAPI
/// document as JSON and as YAML, and its reference page.
package struct OpenAPIController: Sendable {
    package static let root = Endpoint<NoContent, RawBody>(.get, "/", access: .anyone)
    package static let openAPI = Endpoint<NoContent, RawBody>(.get, APIReference.openAPI, access: .anyone)
    package static let openAPIYAML = Endpoint<NoContent, RawBody>(.get, APIReference.openAPIYAML, access: .anyone)
    package static let docs = Endpoint<NoContent, RawBody>(.get, APIReference.docs, access: .anyone)
    package static let all: [any EndpointDeclaration] = [root, openAPI, openAPIYAML, docs]

    package func addRoutes(to router: Router<GatehouseRequestContext>) {
        // A newcomer's first request: which version answers, and where to go next.
        let signposts = ByteBuffer(string: #"{"name":"Gatehouse","version":"\#(GatehouseVersion.current)","openapi":"/openapi.json","docs":"/docs","console":"\#(ConsoleController.home.path)","operator":"\#(OperatorConsoleController.home.path)","health":"/health","live":"/health/live","apis":["/api","/v1","/customer-gateway/customer"]}"#)
        let json = ByteBuffer(string: OpenAPIDocument.json)
        let yaml = ByteBuffer(string: OpenAPIDocument.yaml)
        let html = ByteBuffer(string: OpenAPIDocument.html)
        router.route(Self.root) { _, _ -> Response in
            JSONResponse.make(buffer: signposts)
        }
        router.route(Self.openAPI) { _, _ -> Response in
            JSONResponse.make(buffer: json)
        }
        router.route(Self.openAPIYAML) { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"], body: .init(byteBuffer: yaml))
        }
        router.route(Self.docs) { _, _ -> Response in
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
