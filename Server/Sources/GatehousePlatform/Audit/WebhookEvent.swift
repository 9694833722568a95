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
        /// A payment provider's top-up credited to the wallet (the money is there).
        case walletTopUpSucceeded = "wallet.topup.succeeded"

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
    /// A top-up's id, the money credited (kopecks) and the ledger's transfer.
    package var topUp: String?
    package var amountKopecks: Int64?
    package var transfer: String?

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
        case .walletCredited:
            // A credit by a provider's top-up; an operator's credit by hand is not one.
            guard let topUp = event.detail["topup"] else { return nil }
            type = .walletTopUpSucceeded
            self.topUp = topUp
            amountKopecks = event.detail["amount_kopecks"].flatMap { Int64($0) }
            transfer = event.detail["transfer"]
        default: return nil
        }
    }

    /// The body sent, byte for byte what is signed: `{"data":{…},"timestamp":"…","type":"…"}`, members in key order.
    package var payload: String {
        let body = Body(data: .init(accountId: account.uuidString.lowercased(), with: with, changed: changed, factor: factor, topupId: topUp,
                                    amountKopecks: amountKopecks, transferId: transfer),
                        timestamp: WebhookEvent.timestamp(at), type: type.rawValue)
        return String(decoding: (try? Self.encoder.encode(body)) ?? Data("{}".utf8), as: UTF8.self)
    }

    private struct Body: Encodable {
        struct Members: Encodable {
            var accountId: String
            var with: String?
            var changed: [String]?
            var factor: String?
            var topupId: String?
            var amountKopecks: Int64?
            var transferId: String?
        }
        var data: Members
        var timestamp: String
        var type: String
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}
