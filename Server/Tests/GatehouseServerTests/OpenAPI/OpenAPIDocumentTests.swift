import Foundation
import GatehouseAPI
import GatehouseServer
import GatehouseSurfaces
import GatehouseTestSupport
import OpenAPIKit
import Hummingbird
import HummingbirdTesting
import Testing
import Yams

/// The OpenAPI document and the router must describe the same API: a route missing from the
/// document, or a documented route the server does not have, fails here.
@Suite("OpenAPI document")
struct OpenAPIDocumentTests {
    struct Operation: Hashable, CustomStringConvertible {
        var method: String
        var path: String
        var description: String { "\(method) \(path)" }
    }

    static func documentedOperations(asServed: Bool = true) throws -> Set<Operation> {
        let methods: Set<String> = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
        var operations: Set<Operation> = []
        for (path, item) in OpenAPIDocument.value["paths"]?.members ?? [] {
            // The router takes a path with or without its trailing slash alike (the signature spec's
            // `/register/`), and names it without.
            let served = asServed && path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
            for (key, _) in item.members where methods.contains(key) {
                operations.insert(Operation(method: key.uppercased(), path: served))
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
            let declared = Set(OpenAPIDocument.operations.map {
                Operation(method: $0.method.rawValue, path: $0.path.count > 1 && $0.path.hasSuffix("/") ? String($0.path.dropLast()) : $0.path)
            })
            // validate
            #expect(served.subtracting(documented).isEmpty, "routes missing from the OpenAPI document: \(served.subtracting(documented).sorted { $0.description < $1.description })")
            #expect(documented.subtracting(served).isEmpty, "documented routes the server does not have: \(documented.subtracting(served).sorted { $0.description < $1.description })")
            #expect(served == declared, "routes that are not declared: \(served.symmetricDifference(declared).sorted { $0.description < $1.description })")
            #expect(served.contains(Operation(method: "PATCH", path: V1.Accounts.me.path)))
        }
    }

    @Test("every operation is declared once, and the document gives each its method, success status, access and query parameters, a summary and a tag")
    func declaredEndpoints_matchTheDocument() throws {
        // setup
        let declared = OpenAPIDocument.operations
        let document = OpenAPIDocument.value
        let paths = try #require(document["paths"])
        // validate
        #expect(Set(declared.map(\.description)).count == declared.count, "an operation declared twice")
        var operationIDs: Set<String> = []
        for endpoint in declared {
            let operation = try #require(paths[endpoint.path]?[endpoint.method.rawValue.lowercased()], "\(endpoint) is not in the document")
            let statuses = Set(operation["responses"]?.members.map(\.0) ?? [])
            #expect(statuses.contains(String(endpoint.successStatus)), "\(endpoint): declared \(endpoint.successStatus), documented \(statuses.sorted())")
            let security = operation["security"]?.elements ?? []
            let schemes = security.flatMap { $0.members.map(\.0) }
            switch endpoint.access {
            case .anyone: #expect(security.isEmpty, "\(endpoint): open to anyone, documented \(schemes)")
            case .session: #expect(schemes == ["bearerAuth"], "\(endpoint): a session, documented \(schemes)")
            case .adminKey(let scope):
                #expect(schemes == ["adminKeyAuth"], "\(endpoint): an admin key, documented \(schemes)")
                #expect(security.first?["adminKeyAuth"]?.elements.compactMap(\.string) == [scope], "\(endpoint): the scope \(scope) is documented")
            }
            // The prose's part: every operation named, summarised and filed under a tag; every
            // answer described; every body that is not JSON given its media types.
            let operationID = operation["operationId"]?.string ?? ""
            #expect(operationID.isEmpty == false && operationIDs.insert(operationID).inserted, "\(endpoint): no operationId, or one used twice")
            #expect((operation["summary"]?.string ?? "").isEmpty == false, "\(endpoint) has no summary")
            #expect((operation["tags"]?.elements ?? []).isEmpty == false, "\(endpoint) has no tag")
            for (status, response) in operation["responses"]?.members ?? [] where response["$ref"] == nil {
                #expect((response["description"]?.string ?? "").isEmpty == false, "\(endpoint) \(status) has no description")
            }
            if endpoint.inputType == FormBody.self || endpoint.inputType == RawBody.self {
                #expect((operation["requestBody"]?["content"]?.members ?? []).isEmpty == false, "\(endpoint): its body's media types are not documented")
            }
            // A form's fields are declared with its operation, not written in the prose alone.
            if endpoint.inputType == FormBody.self {
                let form = try #require(endpoint.declaration.form, "\(endpoint) reads a form and declares no fields")
                for type in form.mediaTypes {
                    #expect(operation["requestBody"]?["content"]?[type.rawValue] != nil, "\(endpoint): \(type.rawValue) is not documented")
                }
            }
            // The query parameters: the declared ones, each as required, and a choice with its values.
            let parameters = (operation["parameters"]?.elements ?? [])
                .map { APIReferencePage.resolved($0, in: document) }
                .filter { $0["in"]?.string == "query" }
            let documented = Dictionary(uniqueKeysWithValues: parameters.map { ($0["name"]?.string ?? "", $0) })
            #expect(Set(documented.keys) == Set(endpoint.queryParameters.map(\.name)),
                    "\(endpoint): query declared \(endpoint.queryParameters.map(\.name)), documented \(documented.keys.sorted())")
            for parameter in endpoint.queryParameters {
                guard let entry = documented[parameter.name] else { continue }
                let required = entry["required"]?.bool ?? false
                #expect(required == parameter.required, "\(endpoint) ?\(parameter.name): declared required \(parameter.required)")
                if case .choice(let values) = parameter.kind {
                    let listed = (entry["schema"]?["enum"]?.elements ?? []).compactMap(\.string)
                    #expect(listed == values, "\(endpoint) ?\(parameter.name): declared \(values), documented \(listed)")
                }
            }
        }
    }

    @Test("every refusal an operation declares is in the document in its surface's format, and its description names exactly the declared codes")
    func declaredRefusals_matchTheirDescriptions() throws {
        let document = OpenAPIDocument.value
        let known = Set(Self.errorCodes())
        for endpoint in OpenAPIDocument.operations {
            let operation = try #require(document["paths"]?[endpoint.path]?[endpoint.method.rawValue.lowercased()])
            for refusal in endpoint.declaration.errors {
                let response = try #require(operation["responses"]?.members.first { $0.0 == String(refusal.status) }?.1, "\(endpoint) \(refusal.status) is not in the document")
                let description = response["description"]?.string ?? ""
                let named = Set(description.split(separator: "`", omittingEmptySubsequences: false).enumerated()
                    .filter { $0.offset % 2 == 1 }.map { GatehouseErrorCode(String($0.element)) }.filter(known.contains))
                #expect(named == Set(refusal.codes), "\(endpoint) \(refusal.status): declared \(refusal.codes), described \(named.sorted { $0.rawValue < $1.rawValue })")
                let media = response["content"]?.members.map(\.0) ?? []
                let expected: [String] = switch endpoint.declaration.errorFormat {
                case .problem: [V1.problemContentType]
                case .plainText: ["text/plain"]
                case .page: ["text/html"]
                case .signToLogin, .oauth: ["application/json"]
                case .bare: []
                }
                #expect(media == expected, "\(endpoint) \(refusal.status): \(media)")
            }
            for answer in endpoint.declaration.shared {
                #expect(operation["responses"]?.members.first { $0.0 == answer.status }?.1["$ref"]?.string == "#/components/responses/\(answer.rawValue)", "\(endpoint): \(answer)")
            }
        }
    }

    /// Every code `GatehouseErrorCode` declares (read from its declarations' source, which ships
    /// no list of its own).
    static func errorCodes() -> [GatehouseErrorCode] {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../../Sources/GatehouseAPI/Common/GatehouseErrorCode.swift").standardized
        guard let text = try? String(contentsOf: source, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard line.contains(": Self = \""), let start = line.firstIndex(of: "\""), let end = line.lastIndex(of: "\""), start < end else { return nil }
            return GatehouseErrorCode(String(line[line.index(after: start)..<end]))
        }
    }

    @Test("an id that is not a UUID answers the 404 its operation declares, before its body is read", .tags(.engine), arguments: TestEngine.all)
    func malformedIDs_answerTheDeclaredNotFound(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.signedUp()
            var checked = 0
            for endpoint in OpenAPIDocument.operations {
                if case .adminKey = endpoint.access { continue }
                guard let (name, type) = endpoint.declaration.pathTypes.first, let code = type.notFound else { continue }
                var values: [String: String] = [:]
                for parameter in OpenAPIGenerator.pathParameters(endpoint.path) { values[parameter] = parameter == name ? "not-an-id" : "x" }
                // MUT: no body at all (it would be 400 or 415 were it read first)
                let response = try await app.v1.send(HTTPRequest.Method(rawValue: endpoint.method.rawValue)!, V1.filling(endpoint.path, values), token: ann.token)
                // validate
                try expectProblem(response, .notFound, code)
                checked += 1
            }
            #expect(checked >= 30, "only \(checked) operations checked")
        }
    }

    @Test("the document reads back as OpenAPI 3.1 and passes OpenAPIKit's validation (references resolve, operation ids are unique)")
    func document_validates() throws {
        let document = try YAMLDecoder().decode(OpenAPI.Document.self, from: OpenAPIDocument.yaml)
        #expect(document.openAPIVersion == .v3_1_0)
        try document.validate()
        #expect(document.paths.count == Set(OpenAPIDocument.operations.map(\.path)).count)
    }

    @Test("a wire type's schema is what its Codable reads and writes: members, required, null, nested types and enums")
    func schemas_comeFromTheTypes() throws {
        // setup
        let schemas = WireSchemas()
        // MUT
        try schemas.component(LoginRequest.self)
        try schemas.component(PhoneUser.self)
        try schemas.component(ProfileUpdate.self)
        try schemas.component(MessagePage.self)
        // validate
        let login = try #require(schemas.components["LoginRequest"]?.objectContext)
        #expect(Array(login.properties.keys) == ["identifier", "password", "device", "tokens"])
        #expect(login.requiredProperties == ["identifier", "password"])
        // PhoneUser writes every member, `null` when empty: all required, the empty ones nullable.
        let user = try #require(schemas.components["PhoneUser"]?.objectContext)
        #expect(user.optionalProperties.isEmpty)
        #expect(user.properties["email"]?.nullable == true)
        #expect(user.properties["id"]?.nullable == false)
        // ProfileUpdate takes `null` to clear a member, and every member may be absent.
        let update = try #require(schemas.components["ProfileUpdate"]?.objectContext)
        #expect(update.requiredProperties.isEmpty)
        #expect(update.properties["middleName"]?.nullable == true)
        // Nested types become components of their own; a string enum lists its cases.
        let page = try #require(schemas.components["MessagePage"]?.objectContext)
        #expect(page.properties["items"]?.arrayContext?.items?.reference?.name == "Message")
        let kind = try #require(schemas.components["AttachmentKind"])
        #expect(kind.allowedValues?.compactMap { $0.value as? String } == Attachment.Kind.allCases.map(\.rawValue))
        #expect(schemas.components["Message"]?.objectContext?.properties["createdAt"]?.formatString == "date-time")
    }

    @Test("the prose cannot add an operation, a query parameter or a member, nor change a generated value (a declared operation id, summary or answer included)")
    func prose_cannotChangeTheStructure() throws {
        let operations: [any EndpointDeclaration] = [V1.Sessions.login, V1.Messenger.people]
        let base = """
            info: {title: T}
            paths:
              /v1/sessions:
                post: {description: Logs in., responses: {'200': {description: A session.}}}
            """
        // The prose as written merges: the declaration's name and summary, the prose's descriptions.
        let merged = try OpenAPIGenerator.document(operations, prose: base)
        let login = merged["paths"]?["/v1/sessions"]?["post"]
        #expect(login?["summary"]?.string == V1.Sessions.login.declaration.summary && login?["operationId"]?.string == V1.Sessions.login.declaration.id)
        #expect(login?["description"]?.string == "Logs in.")
        // A declared refusal comes with its surface's problem document; the prose only describes it.
        let refusal = try #require(V1.Sessions.login.declaration.errors.first)
        #expect(login?["responses"]?.members.first { $0.0 == String(refusal.status) }?.1["content"]?["application/problem+json"] != nil)
        #expect(merged["paths"]?["/v1/sessions"]?["post"]?["responses"]?.members.first { $0.0 == String(V1.Sessions.login.successStatus) }?.1["content"]?["application/json"] != nil)
        let refused = [
            "paths:\n  /v1/elsewhere:\n    get: {summary: x}",
            "paths:\n  /v1/sessions:\n    delete: {summary: x}",
            "paths:\n  /v1/sessions:\n    post: {operationId: another}",
            "paths:\n  /v1/sessions:\n    post: {summary: Another}",
            "paths:\n  /v1/people:\n    get:\n      parameters: [{name: extra, in: query, schema: {type: string}}]",
            "components:\n  schemas:\n    LoginRequest:\n      properties:\n        extra: {type: string}",
            "components:\n  schemas:\n    LoginRequest:\n      properties:\n        password: {type: integer}",
            "components:\n  schemas:\n    LoginRequest:\n      required: [device]",
        ]
        for prose in refused {
            #expect(throws: OpenAPIGenerator.Failure.self, "\(prose)") { try OpenAPIGenerator.document(operations, prose: prose) }
        }
    }

    @Test("/openapi.yaml is the same document as /openapi.json, and /docs renders every operation")
    func yamlAndReference_renderTheDocument() async throws {
        try await withApp(.sqlite) { app in
            let yaml = try await app.client.execute(uri: APIReference.openAPIYAML, method: .get)
            #expect(yaml.status == .ok)
            #expect(yaml.headers[.contentType]?.hasPrefix("application/yaml") == true)
            // Parsed by PyYAML (an independent reader) and compared with the JSON, in the test environment's Python.
            let same = try await PythonCheck.run("""
                import json, sys, yaml
                a = yaml.safe_load(open(sys.argv[1]).read())
                b = json.loads(open(sys.argv[2]).read())
                print("same" if a == b else "different")
                """, files: [String(buffer: yaml.body), OpenAPIDocument.json])
            #expect(same == "same")

            let page = try await app.client.execute(uri: APIReference.docs, method: .get)
            #expect(page.status == .ok)
            #expect(page.headers[.contentType]?.hasPrefix("text/html") == true)
            #expect(page.headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true)
            let html = String(buffer: page.body)
            for operation in try Self.documentedOperations(asServed: false) {
                #expect(html.contains(">\(operation.method.lowercased())</span><span class=\"path\">\(APIReferencePage.escape(operation.path))<"),
                        "\(operation) is missing from /docs")
            }
            #expect(!html.contains("<script"), "a page with no script")
            #expect(!html.contains("http://") && !html.contains("https://"), "nothing loaded from elsewhere")
        }
    }

    @Test func document_isServedAsOpenAPI31() async throws {
        try await withApp(.sqlite) { app in
            // MUT
            let response = try await app.client.execute(uri: APIReference.openAPI, method: .get)
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
