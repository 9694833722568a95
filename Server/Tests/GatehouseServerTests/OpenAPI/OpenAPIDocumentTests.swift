import Foundation
import GatehouseAPI
import GatehouseServer
import GatehouseSurfaces
import Hummingbird
import HummingbirdTesting
import Testing

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
        let document = try #require(try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.json.utf8)) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        let methods: Set<String> = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
        var operations: Set<Operation> = []
        for (path, item) in paths {
            // The router takes a path with or without its trailing slash alike (the signature spec's
            // `/register/`), and names it without.
            let served = asServed && path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
            for key in item.keys where methods.contains(key) {
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
            // validate
            #expect(served.subtracting(documented).isEmpty, "routes missing from the OpenAPI document: \(served.subtracting(documented).sorted { $0.description < $1.description })")
            #expect(documented.subtracting(served).isEmpty, "documented routes the server does not have: \(documented.subtracting(served).sorted { $0.description < $1.description })")
            #expect(served.contains(Operation(method: "PATCH", path: V1.Accounts.me.path)))
        }
    }

    @Test("every /v1 route is a declared endpoint, and the document gives each its method, success status, access and query parameters")
    func declaredEndpoints_matchRouterAndDocument() async throws {
        try await withApp(.sqlite) { app in
            // setup
            let declared = V1.Accounts.all + V1.Sessions.all + V1.Messenger.all + V1.Apps.all + V1.Wallet.all
            let document = try #require(OpenAPIDocument.value["paths"])
            // MUT
            let routes = Set(makeRouter(services: app.services).routes
                .map { Operation(method: $0.method.rawValue, path: $0.path.description) }
                .filter { $0.path.hasPrefix("/v1/") })
            // validate
            #expect(routes == Set(declared.map { Operation(method: $0.method.rawValue, path: $0.path) }))
            #expect(Set(declared.map(\.description)).count == declared.count, "an operation declared twice")
            for endpoint in declared {
                let operation = try #require(document[endpoint.path]?[endpoint.method.rawValue.lowercased()], "\(endpoint) is not in the document")
                let statuses = Set(operation["responses"]?.members.map(\.0) ?? [])
                #expect(statuses.contains(String(endpoint.successStatus)), "\(endpoint): declared \(endpoint.successStatus), documented \(statuses.sorted())")
                let bearer = !(operation["security"]?.elements ?? []).isEmpty
                #expect(bearer == (endpoint.access == .session), "\(endpoint): access \(endpoint.access), documented bearer: \(bearer)")
                // The query parameters: the declared ones, each as required, and a choice with its values.
                let pathItem = try #require(document[endpoint.path])
                let parameters = ((operation["parameters"]?.elements ?? []) + (pathItem["parameters"]?.elements ?? []))
                    .map { APIReferencePage.resolved($0, in: OpenAPIDocument.value) }
                    .filter { $0["in"]?.string == "query" }
                let documented = Dictionary(uniqueKeysWithValues: parameters.map { ($0["name"]?.string ?? "", $0) })
                #expect(Set(documented.keys) == Set(endpoint.queryParameters.map(\.name)),
                        "\(endpoint): query declared \(endpoint.queryParameters.map(\.name)), documented \(documented.keys.sorted())")
                for parameter in endpoint.queryParameters {
                    guard let entry = documented[parameter.name] else { continue }
                    let required = entry["required"].map { $0 == .bool(true) } ?? false
                    #expect(required == parameter.required, "\(endpoint) ?\(parameter.name): declared required \(parameter.required)")
                    if case .choice(let values) = parameter.kind {
                        let schema = APIReferencePage.resolved(entry["schema"] ?? .null, in: OpenAPIDocument.value)
                        let listed = (schema["enum"]?.elements ?? []).compactMap(\.string)
                        #expect(listed == values, "\(endpoint) ?\(parameter.name): declared \(values), documented \(listed)")
                    }
                }
            }
        }
    }

    /// Every schema with properties, and the wire type whose keys it lists. (Forms of the `/api`
    /// surface are read by name from form fields and have no Codable type.)
    static let wireTypes: [String: any Decodable.Type] = [
        "Problem": Problem.self, "CodeRequest": CodeRequest.self, "CodeSent": CodeSent.self, "SignupRequest": SignupRequest.self,
        "LoginRequest": LoginRequest.self, "Account": Account.self, "AuthSession": AuthSession.self,
        "TagAvailability": TagAvailability.self, "SessionInfo": SessionInfo.self, "SessionList": SessionList.self,
        "SessionsRevoked": SessionsRevoked.self, "RecoveryRequest": RecoveryRequest.self, "ProfileUpdate": ProfileUpdate.self,
        "PasswordChange": PasswordChange.self, "EmailChangeRequest": EmailChangeRequest.self,
        "PhoneVerificationRequest": PhoneVerificationRequest.self, "PhoneCodeVerification": CodeVerification.self,
        "PhoneRegisterResponse": PhoneRegisterResponse.self, "PhoneLoginResponse": PhoneLoginResponse.self,
        "PhonePartnerZone": PhonePartnerZone.self, "PhoneUser": PhoneUser.self,
        "Person": Person.self, "PeoplePage": PeoplePage.self, "FriendsOverview": FriendsOverview.self, "PersonReference": PersonReference.self,
        "PrivacySettings": PrivacySettings.self, "PrivacyUpdate": PrivacyUpdate.self, "Attachment": GatehouseAPI.Attachment.self,
        "ReplyPreview": ReplyPreview.self, "ForwardOrigin": ForwardOrigin.self, "Message": Message.self, "MessagePage": MessagePage.self,
        "SendMessage": SendMessage.self, "EditMessage": EditMessage.self, "ForwardRequest": ForwardRequest.self, "ForwardResult": ForwardResult.self,
        "Chat": Chat.self, "ChatPage": ChatPage.self, "ChatUpdate": ChatUpdate.self, "ReadMark": ReadMark.self, "ReadState": ReadState.self,
        "ChatAttachment": ChatAttachment.self, "ChatAttachmentPage": ChatAttachmentPage.self, "MessageDeletion": MessageDeletion.self,
        "SupersededEdit": SupersededEdit.self, "ChatDeletion": ChatDeletion.self, "FriendRemoval": FriendRemoval.self,
        "DeveloperApp": DeveloperApp.self, "AppWithKey": AppWithKey.self, "AppList": AppList.self, "NewApp": NewApp.self, "AppUpdate": AppUpdate.self,
        "WalletInfo": WalletInfo.self, "PartyReference": PartyReference.self, "WalletParty": WalletParty.self, "NewTransfer": NewTransfer.self,
        "Transfer": Transfer.self, "TransferResult": TransferResult.self, "WalletTransaction": WalletTransaction.self,
        "WalletTransactionPage": WalletTransactionPage.self, "NewMoneyRequest": NewMoneyRequest.self, "MoneyRequest": MoneyRequest.self,
        "MoneyRequestPage": MoneyRequestPage.self, "RequestPayment": RequestPayment.self, "PaymentNote": PaymentNote.self,
    ]
    /// Schemas that document a narrower use of a wire type: their properties must be among its keys.
    static let narrowed: [String: any Decodable.Type] = ["EmailCodeVerification": CodeVerification.self]
    // SignatureAnswer is written member by member (SignToLoginController.answer), in the spec's order.
    static let forms: Set<String> = ["PhoneSendSMSForm", "PhoneRegisterForm", "PhoneLoginForm", "PhoneChangeForm", "PhoneRestoreForm", "SignatureAnswer"]

    static func keys(_ type: any Decodable.Type) throws -> Set<String> {
        func open<T: Decodable>(_ type: T.Type) throws -> Set<String> { try KeyRecorder.keys(of: type) }
        return try open(type)
    }

    @Test("every schema lists exactly the keys its wire type encodes, so the document cannot drift from the code")
    func schemas_matchTheWireTypes() throws {
        let schemas = try #require(OpenAPIDocument.value["components"]?["schemas"]).members
        for (name, schema) in schemas {
            let properties = Set(schema["properties"]?.members.map(\.0) ?? [])
            if properties.isEmpty || Self.forms.contains(name) { continue }
            if let type = Self.wireTypes[name] {
                let encoded = try Self.keys(type)
                #expect(properties == encoded, "\(name): documented \(properties.sorted()), \(type) encodes \(encoded.sorted())")
            } else if let type = Self.narrowed[name] {
                let encoded = try Self.keys(type)
                #expect(properties.isSubset(of: encoded), "\(name): documented \(properties.sorted()), \(type) encodes \(encoded.sorted())")
            } else {
                Issue.record("schema \(name) has properties but no wire type is named for it in this test")
            }
            let required = Set((schema["required"]?.elements ?? []).compactMap(\.string))
            #expect(required.isSubset(of: properties), "\(name): required \(required.subtracting(properties).sorted()) are not properties")
        }
        // The recorder itself: a key added to a type shows up.
        #expect(try Self.keys(LoginRequest.self) == ["identifier", "password", "device"])
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
