import Foundation
import GatehouseAPI
import OpenAPIKit
import Yams

/// Builds the OpenAPI document from the declarations: every path, method, path and query
/// parameter (a UUID's format too), shared header, security requirement, JSON body and JSON
/// answer, operation id, summary and tag, and every refusal an operation declares (its status, in
/// its surface's format) and shared answer comes from an ``EndpointDeclaration`` and its types
/// (their schemas from ``WireSchemas``), so the document cannot name an operation, a parameter,
/// an answer or a member the code does not have. The prose — descriptions, patterns and lengths,
/// examples, and the bodies that are not JSON (forms, images, pages) — is kept by hand in
/// `Resources/openapi-prose.yaml` and laid over the generated skeleton by ``merge(_:_:at:)``,
/// which refuses prose that adds an operation or a query or path parameter, adds a member to a
/// generated schema, or changes a generated value.
package enum OpenAPIGenerator {
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// The generated skeleton: paths from the declarations, component schemas from their types.
    package static func skeleton(_ operations: [any EndpointDeclaration], components types: [any Decodable.Type] = []) throws -> OpenAPI.Document {
        let schemas = WireSchemas()
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
            components: .init(schemas: components)
        )
    }

    static func operation(_ endpoint: any EndpointDeclaration, schemas: WireSchemas) throws -> OpenAPI.Operation {
        let declared = endpoint.declaration
        var parameters: OpenAPI.Parameter.Array = pathParameters(endpoint.path).map { name in
            .b(.path(name: name, schema: declared.pathTypes[name]?.kind == .uuid ? .string(format: .uuid) : .string))
        }
        for parameter in endpoint.queryParameters {
            parameters.append(.b(.query(name: parameter.name, required: parameter.required, schema: schema(of: parameter.kind))))
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
                }
            }
            var schema = JSONSchema.object(properties: properties)
            if let name = form.component {
                schemas.add(name, schema)
                schema = .reference(.component(named: name))
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

    static func schema(of kind: QueryParameter.Kind) -> JSONSchema {
        switch kind {
        case .text, .cursor: .string
        case .limit: .integer(minimum: (1, exclusive: false))
        case .uuid: .string(format: .uuid)
        case .choice(let values): .string(allowedValues: values.map { AnyCodable($0) })
        }
    }

    // MARK: The document: skeleton and prose

    /// The document: the skeleton with the prose laid over it. Served as this tree (JSON and
    /// YAML alike), not read back into OpenAPIKit's model, which would fold a schema's own
    /// members into its `allOf`/`anyOf` and lose them; the tests read it back to check it.
    package static func document(_ operations: [any EndpointDeclaration], components: [any Decodable.Type] = [], prose: String) throws -> Node {
        let skeleton = try YAMLEncoder().encode(self.skeleton(operations, components: components))
        guard let base = try Yams.compose(yaml: skeleton), let overlay = try Yams.compose(yaml: prose) else {
            throw Failure(description: "an empty document")
        }
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
