import Foundation
import GatehouseFoundation

/// What the business's systems hear of a change (docs/webhooks.md): the audit event, as a Standard Webhooks payload.
/// Made from the audit trail, so every door a change comes through — `/v1`, `/api`, the console, the admin API, an
/// import, the erasure — tells them, in the change's own transaction. The payload is thin: the account's id and what
/// kind of change; the receiver reads the rest with the admin API (no address or name travels in a webhook).
package struct WebhookEvent: Sendable, Equatable {
    /// The event types an endpoint may subscribe to.
    package enum EventType: String, Sendable, CaseIterable, Codable {
        case accountCreated = "account.created"
        case accountUpdated = "account.updated"
        case accountLocked = "account.locked"
        case accountUnlocked = "account.unlocked"
        case accountDeletionRequested = "account.deletion_requested"
        case accountDeletionCancelled = "account.deletion_cancelled"
        case accountErased = "account.erased"
        case secondFactorAdded = "second_factor.added"
        case secondFactorRemoved = "second_factor.removed"
        /// Every sign-in: frequent, so an endpoint hears it only when it names it.
        case sessionCreated = "session.created"

        /// What an endpoint that names no type hears: every type but the frequent ones.
        package var inDefault: Bool { self != .sessionCreated }
    }

    package var type: EventType
    package var account: UUID
    package var at: Date
    /// `data` beside the account's id: how it was made or signed in to (`with`), which members changed (`changed`),
    /// which second factor (`factor`: `totp` or `passkey`).
    package var with: String?
    package var changed: [String]?
    package var factor: String?

    package init?(_ event: AuditEvent, at: Date) {
        guard let account = event.account else { return nil }
        self.account = account
        self.at = at
        switch event.kind {
        case .accountCreated:
            type = .accountCreated
            with = event.detail["with"]
        case .accountUpdated:
            type = .accountUpdated
            changed = event.detail["changed"].map { $0.split(separator: " ").map(String.init) } ?? []
        case .emailChanged:
            type = .accountUpdated
            changed = ["email"]
        case .phoneChanged:
            type = .accountUpdated
            changed = ["phone"]
        case .accountLocked: type = .accountLocked
        case .accountUnlocked: type = .accountUnlocked
        case .accountDeletionRequested: type = .accountDeletionRequested
        case .accountDeletionCancelled: type = .accountDeletionCancelled
        case .accountErased: type = .accountErased
        case .secondFactorAdded:
            type = .secondFactorAdded
            factor = event.detail["factor"]
        case .secondFactorRemoved:
            type = .secondFactorRemoved
            factor = event.detail["factor"]
        case .loginSucceeded:
            type = .sessionCreated
            with = event.detail["with"]
        default: return nil
        }
    }

    /// The body sent, byte for byte what is signed: `{"data":{…},"timestamp":"…","type":"…"}`.
    package var payload: String {
        var data: [String: Any] = ["accountId": account.uuidString.lowercased()]
        if let with { data["with"] = with }
        if let changed { data["changed"] = changed }
        if let factor { data["factor"] = factor }
        let object: [String: Any] = ["type": type.rawValue, "timestamp": WebhookEvent.timestamp(at), "data": data]
        let bytes = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return String(decoding: bytes, as: UTF8.self)
    }

    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}
