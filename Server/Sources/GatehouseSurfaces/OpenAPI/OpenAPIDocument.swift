import Foundation
import GatehouseAPI
import GatehouseFoundation
import Yams

/// The OpenAPI 3.1 document of every HTTP surface, built at start-up by ``OpenAPIGenerator``
/// from the declared operations and their wire types, with the prose of
/// `Resources/openapi-prose.yaml` laid over it. Served at `/openapi.json`, as YAML at
/// `/openapi.yaml` and as a reference page at `/docs`; `gatehouse openapi` prints it.
///
/// The prose ships in the server's resource bundle (`gatehouse-server_GatehouseSurfaces.resources`,
/// which SwiftPM puts beside the `gatehouse` binary: deploy the two together).
package enum OpenAPIDocument {
    /// Every operation the server serves: the controllers route these same declarations.
    package static let operations: [any EndpointDeclaration] =
        ServerPages.APIDocument.all + ServerPages.Health.all + ServerPages.Console.all + ServerPages.OperatorConsole.all + SignToLoginAPI.Endpoints.all
        + PhoneAccountsAPI.Endpoints.all + V1.Accounts.all + V1.Sessions.all + V1.SecondFactors.all + V1.Passkeys.all + V1.Messenger.all + V1.Apps.all + V1.Signatures.all + V1.Wallet.all
        + AdminAPI.all + ServerPages.Payments.all + ServerPages.SignatureProfile.all

    /// Wire types no operation names: the problem document of every `/v1` error and the payloads
    /// of the realtime events.
    package static var components: [any Decodable.Type] {
        [Problem.self, MessageDeletion.self, SupersededEdit.self, ChatDeletion.self, FriendRemoval.self]
    }

    /// The hand-kept prose.
    package static let prose: String = {
        guard let url = Bundle.module.url(forResource: "openapi-prose", withExtension: "yaml"),
              let text = try? String(contentsOf: url, encoding: .utf8)
        else {
            fatalError("openapi-prose.yaml is missing from the server's resource bundle: deploy gatehouse-server_GatehouseSurfaces.resources beside the binary")
        }
        return text
    }()

    /// The document as a tree whose mappings keep their order.
    nonisolated(unsafe) package static let value: Node = {
        do {
            return try OpenAPIGenerator.document(operations, components: components, prose: prose)
        } catch {
            fatalError("the OpenAPI document cannot be built: \(error)")
        }
    }()

    package static let yaml: String = {
        do { return try Yams.serialize(node: value, width: -1, allowUnicode: true) } catch { fatalError("the OpenAPI document cannot be written as YAML: \(error)") }
    }()

    package static let json: String = JSONText.write(value)
    package static let html: String = APIReferencePage.render(value)
}

/// JSON text of a YAML tree, mappings in their order (scalars as their resolved tags say).
package enum JSONText {
    package static func write(_ node: Node) -> String {
        var out = ""
        write(node, into: &out, indent: 0)
        return out + "\n"
    }

    private static func write(_ node: Node, into out: inout String, indent: Int) {
        let pad = String(repeating: "  ", count: indent + 1), end = String(repeating: "  ", count: indent)
        switch node {
        case .mapping(let mapping):
            guard !mapping.isEmpty else { out += "{}"; return }
            out += "{\n"
            for (index, pair) in mapping.enumerated() {
                out += pad + quoted(pair.key.string ?? "") + ": "
                write(pair.value, into: &out, indent: indent + 1)
                out += index == mapping.count - 1 ? "\n" : ",\n"
            }
            out += end + "}"
        case .sequence(let sequence):
            guard !sequence.isEmpty else { out += "[]"; return }
            out += "[\n"
            for (index, element) in sequence.enumerated() {
                out += pad
                write(element, into: &out, indent: indent + 1)
                out += index == sequence.count - 1 ? "\n" : ",\n"
            }
            out += end + "]"
        case .scalar(let scalar):
            switch node.tag.rawValue {
            case Tag.Name.null.rawValue: out += "null"
            case Tag.Name.bool.rawValue: out += node.bool.map { $0 ? "true" : "false" } ?? quoted(scalar.string)
            case Tag.Name.int.rawValue: out += node.int.map(String.init) ?? quoted(scalar.string)
            case Tag.Name.float.rawValue: out += node.float.map { $0.isFinite ? ($0 == $0.rounded() && abs($0) < 1e15 ? String(Int64($0)) : String($0)) : "null" } ?? quoted(scalar.string)
            default: out += quoted(scalar.string)
            }
        case .alias:
            out += "null"
        }
    }

    private static func quoted(_ text: String) -> String { JSONString.quoted(text) }
}

extension Node {
    /// A mapping's members in order (keys as text); none for anything else.
    package var members: [(String, Node)] { mapping.map { $0.map { ($0.key.string ?? "", $0.value) } } ?? [] }
    /// A sequence's elements; none for anything else.
    package var elements: [Node] { sequence.map { Array($0) } ?? [] }
}
