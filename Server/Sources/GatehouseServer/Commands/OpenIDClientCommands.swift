import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform

/// `gatehouse oidc-clients …`: the clients of the OpenID Connect provider (docs/oidc.md, "Clients"), straight from the
/// database (no server needed).
public enum OpenIDClientCommands {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// A client as the commands print it (never its secret, except the once it is made or rotated).
    public struct Line: Codable, Sendable {
        public var clientID: String
        public var name: String
        /// `confidential` or `public`.
        public var kind: String
        public var redirectURIs: [String]
        public var postLogoutRedirectURIs: [String]
        public var scopes: [String]
        public var firstParty: Bool
        public var disabled: Bool
        /// Shown once: when the client is made, or its secret rotated.
        public var clientSecret: String?

        init(_ client: OpenIDClient, secret: String? = nil) {
            clientID = client.id
            name = client.name
            kind = client.isConfidential ? "confidential" : "public"
            redirectURIs = client.redirectURIs
            postLogoutRedirectURIs = client.postLogoutRedirectURIs
            scopes = client.scopes
            firstParty = client.firstParty
            disabled = client.disabledAt != nil
            clientSecret = secret
        }
    }

    public static func create(configuration: GatehouseConfiguration, name: String, redirectURIs: [String], postLogoutRedirectURIs: [String],
                              confidential: Bool, scopes: [String], firstParty: Bool, as person: String?) async throws -> Line {
        try await OperatorCommands.withServices(configuration, failure: { Failure(description: $0) }) { services in
            do {
                let (client, secret) = try await services.openID.register(
                    .init(name: name, redirectURIs: redirectURIs, postLogoutRedirectURIs: postLogoutRedirectURIs, confidential: confidential,
                          scopes: scopes.flatMap { $0.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init) }, firstParty: firstParty),
                    by: .system(person))
                return Line(client, secret: secret)
            } catch let refused as OpenIDProvider.ClientRefused {
                throw Failure(description: refused.description)
            }
        }
    }

    public static func list(configuration: GatehouseConfiguration) async throws -> [Line] {
        try await OperatorCommands.withServices(configuration, failure: { Failure(description: $0) }) { services in
            try await services.openID.clients().map { Line($0) }
        }
    }

    /// Disables a client for good: its sign-ins and token calls are refused at once. Whether it changed anything.
    public static func disable(configuration: GatehouseConfiguration, id: String, as person: String?) async throws -> Bool {
        try await OperatorCommands.withServices(configuration, failure: { Failure(description: $0) }) { services in
            try await services.openID.disable(id, by: .system(person))
        }
    }

    /// A new secret for a confidential client (the old one stops at once).
    public static func rotateSecret(configuration: GatehouseConfiguration, id: String, as person: String?) async throws -> String {
        try await OperatorCommands.withServices(configuration, failure: { Failure(description: $0) }) { services in
            guard let secret = try await services.openID.rotateSecret(id, by: .system(person)) else {
                throw Failure(description: "no confidential client \(id)")
            }
            return secret
        }
    }
}
