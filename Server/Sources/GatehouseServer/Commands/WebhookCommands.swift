import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform

/// `gatehouse webhooks …`: the business's webhook endpoints and their deliveries (docs/webhooks.md), straight from the
/// database (no server needed); the same services as `/admin/v1/webhooks`.
public enum WebhookCommands {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// An endpoint as the commands print it; its secret only the once it is made or rotated.
    public struct Line: Codable, Sendable {
        public var id: UUID
        public var url: String
        public var description: String?
        public var eventTypes: [String]
        public var disabled: Bool
        public var secret: String?
    }

    /// A delivery as the commands print it.
    public struct Delivery: Codable, Sendable {
        public var id: UUID
        public var type: String
        public var state: String
        public var attempts: Int
        public var lastError: String?
        public var createdAt: Date
    }

    static func line(_ endpoint: WebhookEndpoint, secret: String? = nil) -> Line {
        Line(id: endpoint.id, url: endpoint.url, description: endpoint.description, eventTypes: endpoint.eventTypes,
             disabled: endpoint.disabledAt != nil, secret: secret)
    }

    public static func create(configuration: GatehouseConfiguration, url: String, description: String?, eventTypes: [String], as person: String?) async throws -> Line {
        try await OperatorCommands.withServices(configuration, failure: { Failure(description: $0) }) { services in
            let (endpoint, secret) = try await services.webhooks.create(url: url, description: description, eventTypes: eventTypes, by: .system(person))
            return line(endpoint, secret: secret)
        }
    }

    public static func list(configuration: GatehouseConfiguration) async throws -> [Line] {
        try await OperatorCommands.withServices(configuration, failure: { Failure(description: $0) }) { services in
            try await services.webhooks.list().map { line($0) }
        }
    }

    public static func disable(configuration: GatehouseConfiguration, id: UUID, as person: String?) async throws -> Bool {
        try await OperatorCommands.withServices(configuration, failure: { Failure(description: $0) }) { services in
            try await services.webhooks.disable(id, by: .system(person))
        }
    }

    public static func rotateSecret(configuration: GatehouseConfiguration, id: UUID, as person: String?) async throws -> String {
        try await OperatorCommands.withServices(configuration, failure: { Failure(description: $0) }) { services in
            guard let secret = try await services.webhooks.rotateSecret(id, by: .system(person)) else { throw Failure(description: "no enabled endpoint \(id)") }
            return secret
        }
    }

    /// The endpoint's newest deliveries; `failed` only those given up on (the dead letters).
    public static func deliveries(configuration: GatehouseConfiguration, id: UUID, failedOnly: Bool) async throws -> [Delivery] {
        try await OperatorCommands.withServices(configuration, failure: { Failure(description: $0) }) { services in
            try await services.operatorOutbox.webhookDeliveries(endpoint: id, status: failedOnly ? .failed : nil)
                .map { Delivery(id: $0.id, type: $0.subject ?? "", state: $0.status, attempts: $0.attempts, lastError: $0.lastError, createdAt: $0.createdAt) }
        }
    }

    /// Sends a delivery given up on again, from its first attempt; false when it is not one.
    public static func retry(configuration: GatehouseConfiguration, delivery: UUID, reason: String, as person: String?) async throws -> Bool {
        try await OperatorCommands.withServices(configuration, failure: { Failure(description: $0) }) { services in
            try await services.operatorOutbox.retryWebhook(delivery, reason: reason, by: .system(person), origin: AuditOrigin())
        }
    }
}
