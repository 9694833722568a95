import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import SQLKit

/// One thing to tell a person on their devices, before it is written for each device (docs/push.md).
package struct PushNotice: Sendable {
    package var account: UUID
    package var title: LocalizedText
    package var body: LocalizedText
    /// The thread and collapse key (a chat's id, `friends`, `wallet`).
    package var thread: String?
    package var data: [String: String]
    /// A message: whether its text may be shown; with previews off, `hiddenBody` and a neutral title stand in.
    package var isMessage: Bool
    package var hiddenBody: LocalizedText?

    package init(account: UUID, title: LocalizedText, body: LocalizedText, thread: String?, data: [String: String],
                 isMessage: Bool = false, hiddenBody: LocalizedText? = nil) {
        self.account = account
        self.title = title
        self.body = body
        self.thread = thread
        self.data = data
        self.isMessage = isMessage
        self.hiddenBody = hiddenBody
    }

    /// A person as a push names them: first and last name, else the tag.
    package static func name(_ first: String?, _ last: String?, _ tag: String?) -> String {
        let name = [first, last].compactMap { $0?.isEmpty == false ? $0 : nil }.joined(separator: " ")
        return name.isEmpty ? (tag.map { "@" + $0 } ?? "—") : name
    }

    /// An amount as a push writes it.
    package static func money(_ kopecks: Int64) -> String { Kopecks.format(kopecks, grouping: " ") + " ₽" }
}

/// What one app pushes for its events: the messenger its messages and friend requests, the wallet its money.
package protocol PushComposer: Sendable {
    /// The notices `events` make (events of accounts with a device only).
    func notices(for events: [PendingEvent], on tx: any GatehouseDatabase) async throws -> [PushNotice]
}

/// What the apps push (docs/push.md), composed from the queue (`PushQueue`, `PushComposition`) after the commit of
/// the events that call for it, and written into the outbox in the transaction that takes them off the queue: each
/// app's `PushComposer` says what its events tell whom; this writes it for every device of the person, in the
/// device's language, with the badge (`badges`: the messenger's unread chats), the thread as collapse key.
///
/// **Coalescing:** a push waits `window` from when its event was written before it is sent; a newer push for the same
/// device and thread (or kind) arriving meanwhile replaces it in place, so a burst of messages is one push, the last,
/// with the last badge.
package struct EventPushes: EventPusher {
    package let devices: PushDevices
    package let outbox: Outbox
    package let composers: [any PushComposer]
    /// The badge per account.
    package let badges: @Sendable ([UUID], any GatehouseDatabase) async throws -> [UUID: Int]
    package let window: TimeInterval

    package init(devices: PushDevices, outbox: Outbox, composers: [any PushComposer],
                 badges: @escaping @Sendable ([UUID], any GatehouseDatabase) async throws -> [UUID: Int], window: TimeInterval) {
        self.devices = devices
        self.outbox = outbox
        self.composers = composers
        self.badges = badges
        self.window = window
    }

    package func push(_ pushes: [QueuedPush], on tx: any GatehouseDatabase) async throws {
        guard let first = pushes.map(\.queuedAt).min() else { return }
        let found = Dictionary(grouping: try await devices.devices(of: Array(Set(pushes.map(\.event.account))), on: tx), by: \.accountID)
        guard !found.isEmpty else { return }
        // A device hears of what happened once it was there (its id made before the push's row: both are ordered
        // ids, finer than a database's timestamps). Nearly always every device of the account was: those pushes are
        // composed together; a push some device came after goes on its own, to the devices it may reach.
        var together: [PendingEvent] = []
        for push in pushes {
            let mine = found[push.event.account] ?? []
            let reached = mine.filter { $0.id < push.id }
            if reached.count == mine.count {
                together.append(push.event)
            } else if !reached.isEmpty {
                try await compose([push.event], devices: [push.event.account: reached], from: first, on: tx)
            }
        }
        try await compose(together, devices: found, from: first, on: tx)
    }

    /// The pushes `events` make for `devices` (per account), into the outbox.
    private func compose(_ events: [PendingEvent], devices byAccount: [UUID: [PushDeviceRecord]], from first: Date, on tx: any GatehouseDatabase) async throws {
        let reached = events.filter { byAccount[$0.account] != nil }
        var notices: [PushNotice] = []
        for composer in composers { notices += try await composer.notices(for: reached, on: tx) }
        guard !notices.isEmpty else { return }
        let recipients = Array(Set(notices.map(\.account)))
        let badges = try await self.badges(recipients, tx)
        let previewsOff = try await devices.previewsOff(recipients, on: tx)
        var envelopes: [(envelope: PushEnvelope, key: String)] = []
        for notice in notices {
            for device in byAccount[notice.account] ?? [] {
                let language = device.language.flatMap(AppLanguage.init(rawValue:)) ?? .en
                let hidden = previewsOff.contains(notice.account)
                let title = notice.isMessage && hidden ? LocalizedText("push.message.title") : notice.title
                let body = hidden ? (notice.hiddenBody ?? notice.body) : notice.body
                let envelope = PushEnvelope(
                    device: device.id, platform: device.platform, token: device.token, topic: device.bundleID, environment: device.environment,
                    title: title.render(language), body: body.render(language), badge: badges[notice.account] ?? 0, thread: notice.thread,
                    collapseKey: notice.thread, data: notice.data)
                envelopes.append((envelope, "\(device.id)/\(notice.thread ?? notice.data["kind"] ?? "")"))
            }
        }
        try await outbox.enqueuePushes(envelopes, window: window, from: first, on: tx)
    }
}
