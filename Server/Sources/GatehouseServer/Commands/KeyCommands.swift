import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform

/// `gatehouse keys …`: the keys that sign the tokens other services verify (docs/oidc.md, "Keys"), straight from the
/// database (no server needed; a running server sees a new key within half a minute).
public enum KeyCommands {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// A published key as `gatehouse keys list` prints it.
    public struct Line: Codable, Sendable {
        public var kid: String
        /// `signing`, `next` (published, not signing yet) or `retired` (published until its tokens expire).
        public var state: String
        public var signsFrom: Date
        public var publishedUntil: Date?
    }

    /// Makes the next key: published now, signing after one access-token lifetime. Its id.
    public static func rotate(configuration: GatehouseConfiguration, as person: String?) async throws -> String {
        try await OperatorCommands.withServices(configuration, failure: { Failure(description: $0) }) { services in
            _ = try await services.tokens.keys.signer()   // a first key, if there is none, so that the next one is next
            return try await services.tokens.keys.rotate(by: .system(person), reason: "gatehouse keys rotate")
        }
    }

    /// Every published key, the oldest first.
    public static func list(configuration: GatehouseConfiguration) async throws -> [Line] {
        try await OperatorCommands.withServices(configuration, failure: { Failure(description: $0) }) { services in
            let signing = try await services.tokens.keys.signer().id
            return try await services.tokens.keys.rows().map { row in
                Line(kid: row.id, state: row.id == signing ? "signing" : row.retiredAt != nil ? "retired" : "next", signsFrom: row.signsFrom,
                     publishedUntil: row.publishedUntil)
            }
        }
    }
}
