import Foundation
import GatehouseAPI
import OpenAPIKit
import Yams

/// Builds the OpenAPI document from the declarations: every path, method, path and query
/// parameter (a UUID's format too), shared header, security requirement, JSON body and JSON
/// answer, operation id, summary and tag, and every refusal an operation declares (its status, in
/// its surface's format) and shared answer comes from an ``EndpointDeclaration`` and its types
/// (their schemas from ``WireSchemas``), so the document cannot name an operation, a parameter,
/// an answer or a member the code does not have; what a member, a form field or a parameter takes
/// beyond its type (formats, lengths, patterns, bounds) comes from its declared ``MemberRule``. The
/// prose — descriptions, examples, and the bodies that are neither JSON nor forms (images, pages) — is kept by hand in
/// `Resources/openapi-prose.yaml` and laid over the generated skeleton by ``merge(_:_:at:)``,
/// which refuses prose that adds an operation or a query or path parameter, adds a member to a
/// generated schema, or changes a generated value.
package enum OpenAPIGenerator {
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// The generated skeleton: paths from the declarations, component schemas from their types.
    package static func skeleton(_ operations: [any EndpointDeclaration], components types: [any Decodable.Type] = [],
                                 schemas: WireSchemas = WireSchemas()) throws -> OpenAPI.Document {
        var paths: OrderedDictionary<String, OpenAPI.PathItem> = [:]
        for endpoint in operations {
            var item = paths[endpoint.path] ?? OpenAPI.PathItem()
            let operation = try self.operation(endpoint, schemas: schemas)
            switch endpoint.method {
            case .get: item.get = operation
            case .post: item.post = operation
            case .put: item.put = operation
            case .patch: item.patch = operation
            case .delete: item.delete = operation
            }
            paths[endpoint.path] = item
        }
        for type in types { try schemas.component(type) }
        var pathMap: OpenAPI.PathItem.Map = [:]
        for (path, item) in paths { pathMap[OpenAPI.Path(rawValue: path)] = .b(item) }
        var components: OpenAPI.ComponentDictionary<JSONSchema> = [:]
        for (name, schema) in schemas.components { components[.init(stringLiteral: name)] = schema }
        return OpenAPI.Document(
            openAPIVersion: .v3_1_0,
            info: .init(title: "", version: GatehouseVersion.current),
            servers: [],
            paths: pathMap,
            components: .init(schemas: components, responses: sharedAnswers(), parameters: sharedHeaders(schemas: schemas),
                              headers: responseHeaders(schemas: schemas), securitySchemes: securitySchemes)
        )
    }

    /// The answers operations share (``SharedAnswer``): each in its surface's format, with its headers.
    static func sharedAnswers() -> OpenAPI.ComponentReferenceDictionary<OpenAPI.Response> {
        var answers: OpenAPI.ComponentReferenceDictionary<OpenAPI.Response> = [:]
        for answer in SharedAnswer.allCases {
            var response = refusal(answer.format)
            var headers: OpenAPI.Header.Map = [:]
            for header in answer.headers { headers[header.name] = .a(.component(named: header.rawValue)) }
            response.headers = headers.isEmpty ? nil : headers
            answers[.init(stringLiteral: answer.rawValue)] = .b(response)
        }
        return answers
    }

    /// The request headers operations share (``SharedHeader``).
    static func sharedHeaders(schemas: WireSchemas) -> OpenAPI.ComponentReferenceDictionary<OpenAPI.Parameter> {
        var parameters: OpenAPI.ComponentReferenceDictionary<OpenAPI.Parameter> = [:]
        for header in SharedHeader.allCases {
            parameters[.init(stringLiteral: header.rawValue)] = .b(.header(name: header.name, required: header.required, schema: .string))
            if let rule = header.rule { schemas.place(rule, at: [.key("components"), .key("parameters"), .key(header.rawValue), .key("schema")]) }
        }
        return parameters
    }

    /// The response headers the shared answers carry (``ResponseHeader``).
    static func responseHeaders(schemas: WireSchemas) -> OpenAPI.ComponentReferenceDictionary<OpenAPI.Header> {
        var headers: OpenAPI.ComponentReferenceDictionary<OpenAPI.Header> = [:]
        for header in ResponseHeader.allCases {
            let schema: JSONSchema = switch header {
            case .retryAfter: .integer
            case .wwwAuthenticate: .string
            case .errorCode: .reference(.component(named: WireSchemas.name(of: GatehouseErrorCode.self)))
            }
            headers[.init(stringLiteral: header.rawValue)] = .b(OpenAPI.Header(schema: schema, required: true))
        }
        schemas.place(.count, at: [.key("components"), .key("headers"), .key(ResponseHeader.retryAfter.rawValue), .key("schema")])
        return headers
    }

    /// How operations say who calls them (``Access``): a session's bearer token, or an admin key.
    static var securitySchemes: OpenAPI.ComponentReferenceDictionary<OpenAPI.SecurityScheme> {
        ["adminKeyAuth": .b(.http(scheme: "bearer")), "bearerAuth": .b(.http(scheme: "bearer"))]
    }

    static func operation(_ endpoint: any EndpointDeclaration, schemas: WireSchemas) throws -> OpenAPI.Operation {
        let declared = endpoint.declaration
        let operationPath: [RulePlacement.Step] = [.key("paths"), .key(endpoint.path), .key(endpoint.method.rawValue.lowercased())]
        var parameters: OpenAPI.Parameter.Array = pathParameters(endpoint.path).map { name in
            .b(.path(name: name, schema: declared.pathTypes[name]?.kind == .uuid ? .string(format: .uuid) : .string))
        }
        for (name, type) in declared.pathTypes {
            if case .text(let rule) = type.kind { schemas.place(rule, at: operationPath + [.key("parameters"), .parameter(name: name, in: "path"), .key("schema")]) }
        }
        for parameter in endpoint.queryParameters {
            parameters.append(.b(.query(name: parameter.name, required: parameter.required, schema: schema(of: parameter.kind))))
            let rule: MemberRule? = switch parameter.kind {
            case .described(let rule): rule
            case .choice(let values): .choice(values)
            case .text, .cursor, .limit, .uuid: nil
            }
            if let rule { schemas.place(rule, at: operationPath + [.key("parameters"), .parameter(name: parameter.name, in: "query"), .key("schema")]) }
        }
        for header in declared.headers { parameters.append(.a(.component(named: header.rawValue))) }
        var request: OpenAPI.Request?
        if let input = jsonType(endpoint.inputType), !(endpoint.inputType is any EndpointQuery.Type) {
            request = OpenAPI.Request(content: [.json: .b(.init(schema: try schemas.schema(of: input)))], required: true)
        }
        if let form = declared.form {
            var properties: OrderedDictionary<String, JSONSchema> = [:]
            for field in form.fields {
                properties[field.name] = switch field.kind {
                case .text: .string(required: field.required)
                case .any: .fragment(required: field.required)
                case .jsonOrText(let shape): .one(of: schema(of: shape), .string, required: field.required)
                }
            }
            var schema = JSONSchema.object(properties: properties)
            // Where the fields' schemas are: the form's component, or each media type's body.
            var formPaths: [[RulePlacement.Step]] = form.mediaTypes.map {
                operationPath + [.key("requestBody"), .key("content"), .key($0.rawValue), .key("schema")]
            }
            if let name = form.component {
                schemas.add(name, schema)
                schema = .reference(.component(named: name))
                formPaths = [[.key("components"), .key("schemas"), .key(name)]]
            }
            for field in form.fields {
                guard let rule = field.rule else { continue }
                for path in formPaths { schemas.place(rule, at: path + [.key("properties"), .key(field.name)]) }
            }
            var content: OpenAPI.Content.Map = [:]
            for type in form.mediaTypes { content[OpenAPI.ContentType(rawValue: type.rawValue)!] = .b(.init(schema: schema)) }
            request = OpenAPI.Request(content: content, required: form.required)
        }
        var success = OpenAPI.Response(description: "")
        if let output = jsonType(endpoint.outputType) {
            success.content = [.json: .b(.init(schema: try schemas.schema(of: output)))]
        }
        let security: [OpenAPI.SecurityRequirement] = switch endpoint.access {
        case .session: [[.component(named: "bearerAuth"): []]]
        case .adminKey(let scope): [[.component(named: "adminKeyAuth"): [scope]]]
        case .anyone: []
        }
        var responses: OpenAPI.Response.Map = [OpenAPI.Response.StatusCode(integerLiteral: endpoint.successStatus): .b(success)]
        for error in declared.errors {
            responses[OpenAPI.Response.StatusCode(integerLiteral: error.status)] = .b(refusal(declared.errorFormat))
        }
        for answer in declared.shared {
            responses[OpenAPI.Response.StatusCode(rawValue: answer.status)!] = .a(.component(named: answer.rawValue))
        }
        let tags = declared.tags.isEmpty ? nil : declared.tags
        let id = declared.id.isEmpty ? nil : declared.id
        return if let request {
            OpenAPI.Operation(tags: tags, summary: declared.summary, operationId: id, parameters: parameters, requestBody: request, responses: responses,
                              security: security)
        } else {
            OpenAPI.Operation(tags: tags, summary: declared.summary, operationId: id, parameters: parameters, responses: responses, security: security)
        }
    }

    /// A refusal as its surface writes it (its prose describes it).
    static func refusal(_ format: ErrorFormat) -> OpenAPI.Response {
        let text = OpenAPI.Content(schema: .string)
        return switch format {
        case .problem: OpenAPI.Response(description: "", content: [OpenAPI.ContentType(rawValue: "application/problem+json")!: .b(.init(schema: .reference(.component(named: "Problem"))))])
        case .plainText: OpenAPI.Response(description: "", headers: ["X-Error-Code": .a(.component(named: "XErrorCode"))], content: [.txt: .b(text)])
        case .page: OpenAPI.Response(description: "", content: [.html: .b(text)])
        case .signToLogin: OpenAPI.Response(description: "", content: [.json: .b(.init(schema: .reference(.component(named: "SignToLoginAnswer"))))])
        case .bare: OpenAPI.Response(description: "")
        case .oauth: OpenAPI.Response(description: "", content: [.json: .b(.init(schema: .object(
            properties: ["error": .string, "error_description": .string(required: false)])))])
        }
    }

    /// A type the body or the answer carries as JSON (not ``NoContent``, ``RawBody`` or ``FormBody``).
    static func jsonType(_ type: Any.Type) -> (any Decodable.Type)? {
        if type == NoContent.self || type == RawBody.self || type == FormBody.self { return nil }
        return type as? any Decodable.Type
    }

    /// The `{name}` placeholders of a path, in order.
    package static func pathParameters(_ path: String) -> [String] {
        path.split(separator: "{").dropFirst().compactMap { $0.split(separator: "}", maxSplits: 1).first.map(String.init) }
    }

    /// A form field's JSON value.
    static func schema(of shape: FormField.JSONShape) -> JSONSchema {
        switch shape {
        case .object: .object
        case .number: .number
        case .arrayOfObjects: .array(items: .object)
        case .arrayOfStrings: .array(items: .string)
        }
    }

    static func schema(of kind: QueryParameter.Kind) -> JSONSchema {
        switch kind {
        case .text, .cursor, .described: .string
        case .limit: .integer(minimum: (1, exclusive: false))
        case .uuid: .string(format: .uuid)
        case .choice: .string
        }
    }

    // MARK: The document: skeleton and prose

    /// The document: the skeleton with the prose laid over it. Served as this tree (JSON and
    /// YAML alike), not read back into OpenAPIKit's model, which would fold a schema's own
    /// members into its `allOf`/`anyOf` and lose them; the tests read it back to check it.
    package static func document(_ operations: [any EndpointDeclaration], components: [any Decodable.Type] = [], prose: String) throws -> Node {
        let schemas = WireSchemas()
        let skeleton = try YAMLEncoder().encode(self.skeleton(operations, components: components, schemas: schemas))
        guard var base = try Yams.compose(yaml: skeleton), let overlay = try Yams.compose(yaml: prose) else {
            throw Failure(description: "an empty document")
        }
        for placement in schemas.rules { base = try placement.apply(to: base) }
        return textual(try merge(base, overlay, at: []))
    }

    /// Keys as text, and text that would read as something else (`'200'`, `'true'`) quoted, so
    /// the YAML says what the JSON says.
    static func textual(_ node: Node) -> Node {
        func text(_ string: String) -> Node {
            let plain = Resolver.default.resolveTag(of: Node(string)) == .str
            return Node(string, Tag(.str), plain ? .any : .singleQuoted)
        }
        switch node {
        case .mapping(let mapping):
            return .mapping(.init(mapping.map { (text($0.key.string ?? ""), textual($0.value)) }))
        case .sequence(let sequence):
            return .sequence(.init(sequence.map(textual)))
        case .scalar(let scalar):
            return node.tag.rawValue == Tag.Name.str.rawValue ? text(scalar.string) : node
        case .alias:
            return node
        }
    }

    /// Keys whose text the prose writes (the skeleton leaves them empty).
    static let proseKeys: Set<String> = ["summary", "description", "title", "version"]

    /// Lays `prose` over `generated`: mappings member by member, lists of named parameters by
    /// name; anything else the prose may only repeat, or fill where the skeleton left it empty.
    package static func merge(_ generated: Node, _ prose: Node, at path: [String]) throws -> Node {
        let place = "/" + path.joined(separator: "/")
        switch (generated, prose) {
        case (.mapping(let base), .mapping(let over)):
            // Keys match by their text (`200` and `'200'` are one status); the prose's order
            // first (it reads as written), then what only the skeleton has.
            var merged: [(Node, Node)] = []
            for (key, value) in over {
                guard let name = key.string else { throw Failure(description: "\(place): a key that is not text") }
                if let generated = base.first(where: { $0.key.string == name }) {
                    merged.append((generated.key, try merge(generated.value, value, at: path + [name])))
                } else {
                    try checkAddition(name, value, at: path)
                    merged.append((key, value))
                }
            }
            for (key, value) in base where !over.contains(where: { $0.key.string == key.string }) {
                merged.append((key, value))
            }
            return .mapping(.init(merged))
        case (.sequence(let base), .sequence(let over)) where path.last == "parameters":
            var merged = Array(base)
            for parameter in over {
                guard let name = parameter["name"]?.string else { merged.append(parameter); continue }
                if let index = merged.firstIndex(where: { $0["name"]?.string == name && $0["in"] == parameter["in"] }) {
                    merged[index] = try merge(merged[index], parameter, at: path + [name])
                } else if let location = parameter["in"]?.string, location == "query" || location == "path" {
                    throw Failure(description: "\(place): the prose adds the \(location) parameter \(name), which no declaration has")
                } else {
                    merged.append(parameter)
                }
            }
            return .sequence(.init(merged))
        default:
            if generated == prose { return generated }
            if let key = path.last, proseKeys.contains(key), generated.string == "" { return prose }
            throw Failure(description: "\(place): the prose changes a generated value (\(String(describing: generated.any)) to \(String(describing: prose.any)))")
        }
    }

    /// What the prose may add where the skeleton has nothing: not a path or an operation, and not
    /// a member of a generated schema.
    static func checkAddition(_ key: String, _ value: Node, at path: [String]) throws {
        let place = "/" + (path + [key]).joined(separator: "/")
        if path == ["paths"] { throw Failure(description: "\(place): the prose documents a path no declaration has") }
        if path.count == 2, path[0] == "paths", HTTPVerb(rawValue: key.uppercased()) != nil {
            throw Failure(description: "\(place): the prose documents an operation no declaration has")
        }
        if path.count == 3, path[0] == "components", path[1] == "schemas", key == "properties" || key == "required" {
            throw Failure(description: "\(place): members of a generated schema come from its type")
        }
        if path.count == 4, path[0] == "components", path[1] == "schemas", path[3] == "properties" {
            throw Failure(description: "\(place): the prose adds a member its type does not have")
        }
    }
}
