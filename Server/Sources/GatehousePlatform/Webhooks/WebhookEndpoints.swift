import Crypto
import Foundation
import GatehouseFoundation

/// An endpoint of the business's that hears account events (docs/webhooks.md); never its secret, which is shown once.
package struct WebhookEndpoint: Sendable, Equatable, Codable {
    package var id: UUID
    package var url: String
    package var description: String?
    /// The event types it hears; empty: every type.
    package var eventTypes: [String]
    package var createdAt: Date
    package var createdBy: String?
    package var disabledAt: Date?
}

/// The business's webhook endpoints: added with a URL the address rules take (`WebhookAddress`), a signing secret made
/// here and shown once (`whsec_`, Standard Webhooks), kept sealed with `GATEHOUSE_SECRET`; listed, disabled, and given
/// a new secret while the old one keeps signing for `GATEHOUSE_WEBHOOK_SECRET_OVERLAP_SECONDS`. Each change audited.
package struct WebhookEndpoints: Sendable {
    package let database: DatabaseProvider
    package let clock: GatehouseClock
    package let secrets: Secrets
    package let settings: GatehouseConfiguration.Webhooks
    package let address: WebhookAddress
    private var store: WebhookEndpointStore { WebhookEndpointStore(database: database) }
    private var audit: AuditLog { AuditLog(database: database, clock: clock) }
    static let sealing = "webhook secret"

    package init(database: DatabaseProvider, clock: GatehouseClock, secrets: Secrets, settings: GatehouseConfiguration.Webhooks) {
        self.database = database
        self.clock = clock
        self.secrets = secrets
        self.settings = settings
        self.address = WebhookAddress(settings: settings)
    }

    package static func invalid(_ text: String, field: String) -> GatehouseError {
        GatehouseError(.invalidInput, .invalidParameter, LocalizedText("error.plain", [text])).on(field: field)
    }

    /// A new endpoint and its secret (`whsec_` and the base64 of 32 random bytes), shown this once.
    package func create(url: String, description: String?, eventTypes: [String], by actor: AuditActor) async throws -> (WebhookEndpoint, secret: String) {
        let url = try await address.check(url)
        let description = description?.trimmingCharacters(in: .whitespacesAndNewlines)
        if let description, description.count > 200 || InputText.hasNUL(description) { throw Self.invalid("a description is at most 200 characters", field: "description") }
        let known = Set(WebhookEvent.EventType.allCases.map(\.rawValue))
        guard eventTypes.allSatisfy(known.contains) else {
            throw Self.invalid("event types are among \(WebhookEvent.EventType.allCases.map(\.rawValue).joined(separator: ", "))", field: "eventTypes")
        }
        guard try await store.enabledCount() < settings.maxEndpoints else {
            throw Self.invalid("at most \(settings.maxEndpoints) enabled endpoints (GATEHOUSE_WEBHOOK_MAX_ENDPOINTS)", field: "url")
        }
        let key = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
        let endpoint = WebhookEndpoint(id: UUID(), url: url, description: description?.isEmpty == true ? nil : description,
                                       eventTypes: WebhookEvent.EventType.allCases.map(\.rawValue).filter(Set(eventTypes).contains),
                                       createdAt: clock.now(), createdBy: actor.id, disabledAt: nil)
        let sealed = try secrets.seal(key, purpose: Self.sealing)
        try await database.db.withTransaction { tx in
            try await store.insert(endpoint, secretSealed: sealed, on: tx)
            try await audit.record(AuditEvent(.webhookEndpointCreated, by: actor, account: nil,
                                              detail: ["endpoint": endpoint.id.uuidString.lowercased(), "url": url,
                                                       "types": endpoint.eventTypes.isEmpty ? "all" : endpoint.eventTypes.joined(separator: " ")]), on: tx)
        }
        return (endpoint, StandardWebhooks.secretPrefix + Data(key).base64EncodedString())
    }

    package func list() async throws -> [WebhookEndpoint] { try await store.all() }

    package func endpoint(_ id: UUID) async throws -> WebhookEndpoint? { try await store.find(id)?.endpoint }

    /// Disables it for good: nothing more is queued for it, and what is queued fails as undeliverable. False when there
    /// is no such enabled endpoint.
    package func disable(_ id: UUID, by actor: AuditActor) async throws -> Bool {
        let now = clock.now()
        return try await database.db.withTransaction { tx in
            guard let url = try await store.disable(id, at: now, on: tx) else { return false }
            try await audit.record(AuditEvent(.webhookEndpointDisabled, by: actor, account: nil, detail: ["endpoint": id.uuidString.lowercased(), "url": url]), on: tx)
            return true
        }
    }

    /// A new secret, shown this once; the old one signs beside it until the overlap ends, so a receiver can move over
    /// without losing a delivery. Nil when there is no such enabled endpoint.
    package func rotateSecret(_ id: UUID, by actor: AuditActor) async throws -> String? {
        let key = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
        let sealed = try secrets.seal(key, purpose: Self.sealing)
        let until = clock.now().addingTimeInterval(settings.secretOverlap)
        let done = try await database.db.withTransaction { tx -> Bool in
            guard try await store.rotate(id, secretSealed: sealed, previousUntil: until, on: tx) else { return false }
            try await audit.record(AuditEvent(.webhookSecretRotated, by: actor, account: nil,
                                              detail: ["endpoint": id.uuidString.lowercased(), "previousUntil": WebhookEvent.timestamp(until)]), on: tx)
            return true
        }
        return done ? StandardWebhooks.secretPrefix + Data(key).base64EncodedString() : nil
    }

    /// The endpoint's URL and the keys that sign for it now (the current one first), for the channel.
    func signing(_ id: UUID) async throws -> (endpoint: WebhookEndpoint, keys: [[UInt8]])? {
        guard let row = try await store.find(id) else { return nil }
        var keys = [try secrets.open(row.secretSealed, purpose: Self.sealing)]
        if let previous = row.previousSealed, let until = row.previousUntil, until > clock.now() {
            keys.append(try secrets.open(previous, purpose: Self.sealing))
        }
        return (row.endpoint, keys)
    }
}

/// The Standard Webhooks signature (standardwebhooks.com): HMAC-SHA256 of `id.timestamp.body` under the secret's bytes,
/// base64, after `v1,`; several, space-separated, while an old secret still signs.
package enum StandardWebhooks {
    package static let secretPrefix = "whsec_"

    package static func signature(id: String, timestamp: Int, body: String, keys: [[UInt8]]) -> String {
        keys.map { key in
            let mac = HMAC<SHA256>.authenticationCode(for: Data("\(id).\(timestamp).\(body)".utf8), using: SymmetricKey(data: key))
            return "v1," + Data(mac).base64EncodedString()
        }.joined(separator: " ")
    }
}
