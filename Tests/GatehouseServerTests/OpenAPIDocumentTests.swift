import Foundation
import GatehouseAPI
import Hummingbird
import HummingbirdTesting
import Testing
@testable import GatehouseServer

/// The OpenAPI document and the router must describe the same API: a route missing from the
/// document, or a documented route the server does not have, fails here.
@Suite("OpenAPI document")
struct OpenAPIDocumentTests {
    struct Operation: Hashable, CustomStringConvertible {
        var method: String
        var path: String
        var description: String { "\(method) \(path)" }
    }

    static func documentedOperations() throws -> Set<Operation> {
        let document = try #require(try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.json.utf8)) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        let methods: Set<String> = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
        var operations: Set<Operation> = []
        for (path, item) in paths {
            for key in item.keys where methods.contains(key) {
                operations.insert(Operation(method: key.uppercased(), path: path))
            }
        }
        return operations
    }

    @Test func routesAndDocument_nameTheSameOperations() async throws {
        try await withApp(.sqlite) { app in
            // setup
            let router = makeRouter(services: app.services)
            // MUT
            let served = Set(router.routes
                .map { Operation(method: $0.method.rawValue, path: $0.path.description) }
                // Development-only routes are not part of the product's API.
                .filter { !$0.path.hasPrefix("/dev/") })
            let documented = try Self.documentedOperations()
            // validate
            #expect(served.subtracting(documented).isEmpty, "routes missing from the OpenAPI document: \(served.subtracting(documented).sorted { $0.description < $1.description })")
            #expect(documented.subtracting(served).isEmpty, "documented routes the server does not have: \(documented.subtracting(served).sorted { $0.description < $1.description })")
            #expect(served.contains(Operation(method: "PATCH", path: AccountsV1API.Path.me)))
        }
    }

    @Test func document_isServedAsOpenAPI31() async throws {
        try await withApp(.sqlite) { app in
            // MUT
            let response = try await app.client.execute(uri: AccountsV1API.Path.openAPI, method: .get)
            // validate
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
            let body = String(buffer: response.body)
            #expect(body == OpenAPIDocument.json)
            let document = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
            #expect(document["openapi"] as? String == "3.1.0")
        }
    }
}
