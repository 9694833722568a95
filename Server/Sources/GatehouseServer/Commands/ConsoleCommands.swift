import Foundation
import GatehouseAccounts
import GatehouseFoundation
import GatehousePlatform

/// `gatehouse operators …` and `gatehouse admin-keys …`: who may use the operator console and
/// the admin API (docs/operators.md), straight on the database. Each change is in the audit trail
/// as the system, on behalf of `--as`.
public enum ConsoleCommands {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// A new operator: their TOTP secret, shown this once.
    public struct NewOperator: Codable, Sendable {
        public var id: UUID
        public var name: String
        public var role: String
        /// The `otpauth://` URI an authenticator app scans (or takes pasted).
        public var otpauth: String
        /// The same secret in base32, to type into an app by hand.
        public var secret: String
    }

    public struct OperatorLine: Codable, Sendable {
        public var name: String
        public var role: String
        public var disabled: Bool
        public var createdAt: Date
    }

    public static func createOperator(configuration: GatehouseConfiguration, name: String, role: String, password: String, as person: String?) async throws -> NewOperator {
        guard let role = OperatorRole(rawValue: role) else {
            throw Failure(description: "--role is one of \(OperatorRole.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return try await OperatorCommands.withServices(configuration, failure: { Failure(description: $0) }) { services in
            let (record, uri, secret) = try await services.operators.create(name: name, role: role, password: password, by: .system(person.map { String($0.prefix(100)) }))
            return NewOperator(id: record.id, name: record.name, role: record.role.rawValue, otpauth: uri, secret: secret)
        }
    }

    public static func disableOperator(configuration: GatehouseConfiguration, name: String, as person: String?) async throws -> Bool {
        try await OperatorCommands.withServices(configuration, failure: { Failure(description: $0) }) { services in
            try await services.operators.disable(name: name, by: .system(person.map { String($0.prefix(100)) }))
        }
    }

    public static func listOperators(configuration: GatehouseConfiguration) async throws -> [OperatorLine] {
        try await OperatorCommands.withServices(configuration, failure: { Failure(description: $0) }) { services in
            try await services.operators.list().map { OperatorLine(name: $0.name, role: $0.role.rawValue, disabled: $0.disabledAt != nil, createdAt: $0.createdAt) }
        }
    }

    /// An admin key as listed; `key` only right after it is made.
    public struct KeyLine: Codable, Sendable {
        public var id: UUID
        public var name: String
        public var hint: String
        public var scopes: [String]
        public var disabled: Bool
        public var lastUsedAt: Date?
        public var key: String?
    }

    public static func createKey(configuration: GatehouseConfiguration, name: String, scopes: [String], as person: String?) async throws -> KeyLine {
        let parsed = try scopes.flatMap { $0.split(separator: ",") }.map { text in
            guard let scope = AdminScope(rawValue: text.trimmingCharacters(in: .whitespaces)) else {
                throw Failure(description: "--scope is one of \(AdminScope.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return scope
        }
        return try await OperatorCommands.withServices(configuration, failure: { Failure(description: $0) }) { services in
            let (record, key) = try await services.adminKeys.create(name: name, scopes: parsed, by: .system(person.map { String($0.prefix(100)) }))
            return KeyLine(id: record.id, name: record.name, hint: record.hint, scopes: record.scopes.map(\.rawValue), disabled: false, lastUsedAt: nil, key: key)
        }
    }

    public static func listKeys(configuration: GatehouseConfiguration) async throws -> [KeyLine] {
        try await OperatorCommands.withServices(configuration, failure: { Failure(description: $0) }) { services in
            try await services.adminKeys.list().map {
                KeyLine(id: $0.id, name: $0.name, hint: $0.hint, scopes: $0.scopes.map(\.rawValue), disabled: $0.disabledAt != nil, lastUsedAt: $0.lastUsedAt, key: nil)
            }
        }
    }

    public static func disableKey(configuration: GatehouseConfiguration, id: String, as person: String?) async throws -> Bool {
        guard let id = UUID(uuidString: id) else { throw Failure(description: "an admin key's id is a UUID (gatehouse admin-keys list)") }
        return try await OperatorCommands.withServices(configuration, failure: { Failure(description: $0) }) { services in
            try await services.adminKeys.disable(id, by: .system(person.map { String($0.prefix(100)) }))
        }
    }
}
