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
    package static let operations: [any EndpointDeclaration] = {
        let groups: [[any EndpointDeclaration]] = [
            ServerPages.APIDocument.all, ServerPages.Health.all, ServerPages.Console.all, ServerPages.OperatorConsole.all, SignToLoginAPI.Endpoints.all,
            PhoneAccountsAPI.Endpoints.all, V1.Accounts.all, V1.Sessions.all, V1.SecondFactors.all, V1.Passkeys.all, V1.Identities.all, V1.Messenger.all, V1.Apps.all,
            V1.Signatures.all, V1.Wallet.all, AdminAPI.all, ServerPages.Payments.all, ServerPages.SignatureProfile.all, ServerPages.WellKnown.all,
            ServerPages.OpenID.all,
        ]
        return groups.flatMap { $0 }
    }()

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

    package static let json: String = {
        do { return try OrderedJSONEncoder.encode(JSONNode(node: value)) + "\n" } catch { fatalError("the OpenAPI document cannot be written as JSON: \(error)") }
    }()
    package static let html: String = APIReferencePage.render(value)
}

/// A YAML tree as `OrderedJSONEncoder` writes it: mappings in their order, scalars as their
/// resolved tags say (a number that is not finite, or an alias, is `null`).
struct JSONNode: Encodable {
    let node: Node

    struct Key: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    func encode(to encoder: any Encoder) throws {
        switch node {
        case .mapping(let mapping):
            var container = encoder.container(keyedBy: Key.self)
            for (key, value) in mapping { try container.encode(JSONNode(node: value), forKey: Key(stringValue: key.string ?? "")) }
        case .sequence(let sequence):
            var container = encoder.unkeyedContainer()
            for element in sequence { try container.encode(JSONNode(node: element)) }
        case .scalar(let scalar):
            var container = encoder.singleValueContainer()
            switch node.tag.rawValue {
            case Tag.Name.null.rawValue: try container.encodeNil()
            case Tag.Name.bool.rawValue: if let flag = node.bool { try container.encode(flag) } else { try container.encode(scalar.string) }
            case Tag.Name.int.rawValue: if let number = node.int { try container.encode(number) } else { try container.encode(scalar.string) }
            case Tag.Name.float.rawValue:
                if let number = node.float { if number.isFinite { try container.encode(number) } else { try container.encodeNil() } } else { try container.encode(scalar.string) }
            default: try container.encode(scalar.string)
            }
        case .alias:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        }
    }
}

extension Node {
    /// A mapping's members in order (keys as text); none for anything else.
    package var members: [(String, Node)] { mapping.map { $0.map { ($0.key.string ?? "", $0.value) } } ?? [] }
    /// A sequence's elements; none for anything else.
    package var elements: [Node] { sequence.map { Array($0) } ?? [] }
}
