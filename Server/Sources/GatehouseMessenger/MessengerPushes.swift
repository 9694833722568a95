import FluentKit
import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import SQLKit

/// What the messenger and the wallet push (docs/push.md): a new message (its sender and text, or
/// "New message" when the person turned previews off), a friend request and its acceptance, money
/// received, a money request and its answer. Written into the outbox in the transaction of the
/// event, one per device, in the device's language, with the badge (chats with unread messages),
/// the chat as thread and collapse key; a muted chat pushes nothing.
///
/// **Coalescing:** a push waits `window` before it is sent; a newer push for the same device and
/// chat (or kind) arriving meanwhile replaces it in place, so a burst of messages is one push,
/// the last, with the last badge.
package struct MessengerPushes: EventPusher {
    package let devices: PushDevices
    package let outbox: Outbox
    package let clock: GatehouseClock
    package let window: TimeInterval

    package init(devices: PushDevices, outbox: Outbox, clock: GatehouseClock, window: TimeInterval) {
        self.devices = devices
        self.outbox = outbox
        self.clock = clock
        self.window = window
    }

    /// One thing to tell a person, before it is written for a device.
    private struct Notice {
        var account: UUID
        var title: LocalizedText
        var body: LocalizedText
        var thread: String?
        var data: [String: String]
        /// A message: its chat (for mutes) and whether its text may be shown.
        var chat: UUID?
        var hiddenBody: LocalizedText?
    }

    private static func name(_ first: String?, _ last: String?, _ tag: String?) -> String {
        let name = [first, last].compactMap { $0?.isEmpty == false ? $0 : nil }.joined(separator: " ")
        return name.isEmpty ? (tag.map { "@" + $0 } ?? "—") : name
    }

    /// What a push of money needs of its payload: the transfer.
    private struct Moved: Decodable {
        var transfer: Transfer
    }

    private static func money(_ kopecks: Int64) -> String { Kopecks.format(kopecks, grouping: " ") + " ₽" }

    package func push(_ events: [PendingEvent], on tx: any Database) async throws {
        let accounts = Array(Set(events.map(\.account)))
        let found = try await devices.devices(of: accounts, on: tx)
        guard !found.isEmpty else { return }
        let byAccount = Dictionary(grouping: found, by: \.accountID)
        let sql = tx as! any SQLDatabase
        var notices: [Notice] = []
        var authors: Set<UUID> = []
        var messages: [(UUID, Message)] = []
        for event in events where byAccount[event.account] != nil {
            let data = Data(event.data.utf8)
            switch event.kind {
            case .messageCreated:
                guard let message = try? V1.decoder.decode(Message.self, from: data) else { continue }
                authors.insert(message.authorId)
                messages.append((event.account, message))
            case .friendRequested, .friendAccepted:
                guard let person = try? V1.decoder.decode(Person.self, from: data) else { continue }
                let who = Self.name(person.firstName, person.lastName, person.tag)
                let requested = event.kind == .friendRequested
                notices.append(Notice(account: event.account,
                                      title: LocalizedText(requested ? "push.friendRequested.title" : "push.friendAccepted.title"),
                                      body: LocalizedText(requested ? "push.friendRequested.body" : "push.friendAccepted.body", [who]),
                                      thread: "friends", data: ["kind": requested ? "friend_request" : "friend_accepted", "person": person.id.uuidString]))
            case .walletTransfer:
                // The event's `TransferResult`, or a push written before the balance was known (`{"transfer": …}`).
                guard let transfer = try? V1.decoder.decode(Moved.self, from: data).transfer, transfer.to.id == event.account else { continue }
                let body = transfer.from.map { LocalizedText("push.money.body", [Self.name($0.firstName, $0.lastName, $0.tag), Self.money(transfer.amount)]) }
                    ?? LocalizedText("push.money.topUp", [Self.money(transfer.amount)])
                notices.append(Notice(account: event.account, title: LocalizedText("push.money.title"), body: body, thread: "wallet",
                                      data: ["kind": "money", "transfer": transfer.id.uuidString]))
            case .walletRequestCreated, .walletRequestUpdated:
                guard let request = try? V1.decoder.decode(MoneyRequest.self, from: data) else { continue }
                let other = request.requester.id == event.account ? request.payer : request.requester
                let who = Self.name(other.firstName, other.lastName, other.tag)
                let key: String = switch (event.kind, request.state) {
                case (.walletRequestCreated, _): "push.request.asked"
                case (_, .declined): "push.request.declined"
                case (_, .cancelled): "push.request.cancelled"
                case (_, .paid): "push.request.paid"
                case (_, .repaid): "push.request.repaid"
                default: "push.request.changed"
                }
                notices.append(Notice(account: event.account, title: LocalizedText("push.request.title"),
                                      body: LocalizedText(key, [who, Self.money(request.amount)]), thread: "wallet",
                                      data: ["kind": "money_request", "request": request.id.uuidString]))
            default:
                continue
            }
        }
        if !messages.isEmpty {
            let names = try await self.names(Array(authors), on: sql)
            let now = clock.now()
            let chats = SQLList(Set(messages.map(\.1.chatId)).map { SQLBind($0) })
            let members = SQLList(Set(messages.map(\.0)).map { SQLBind($0) })
            let muted = try await sql.raw("""
                SELECT chat_id, account_id FROM chat_members
                WHERE chat_id IN (\(chats)) AND account_id IN (\(members)) AND muted_until IS NOT NULL AND muted_until > \(bind: now)
                """).all().map { "\(try $0.decode(column: "chat_id", as: UUID.self))/\(try $0.decode(column: "account_id", as: UUID.self))" }
            let mutedSet = Set(muted)
            for (account, message) in messages where !mutedSet.contains("\(message.chatId)/\(account)") {
                let text = message.text.isEmpty ? LocalizedText(message.attachments.isEmpty ? "push.message.hidden" : "push.message.attachment")
                    : LocalizedText("error.plain", [String(message.text.prefix(1_000))])
                notices.append(Notice(account: account, title: LocalizedText("error.plain", [names[message.authorId] ?? "—"]), body: text,
                                      thread: message.chatId.uuidString,
                                      data: ["kind": "message", "chat": message.chatId.uuidString, "message": message.id.uuidString],
                                      chat: message.chatId, hiddenBody: LocalizedText("push.message.hidden")))
            }
        }
        guard !notices.isEmpty else { return }
        let recipients = Array(Set(notices.map(\.account)))
        let badges = try await self.badges(recipients, on: sql)
        let previewsOff = try await self.previewsOff(recipients, on: sql)
        for notice in notices {
            for device in byAccount[notice.account] ?? [] {
                let language = device.language.flatMap(AppLanguage.init(rawValue:)) ?? .en
                let title = notice.chat != nil && previewsOff.contains(notice.account) ? LocalizedText("push.message.title") : notice.title
                let body = previewsOff.contains(notice.account) ? (notice.hiddenBody ?? notice.body) : notice.body
                let envelope = PushEnvelope(
                    device: device.id, platform: device.platform, token: device.token, topic: device.bundleID, environment: device.environment,
                    title: title.render(language), body: body.render(language), badge: badges[notice.account] ?? 0, thread: notice.thread,
                    collapseKey: notice.thread, data: notice.data)
                try await enqueue(envelope, key: "\(device.id)/\(notice.thread ?? notice.data["kind"] ?? "")", on: sql)
            }
        }
    }

    /// Writes the push, or replaces the same device's and thread's push still waiting for its window.
    private func enqueue(_ envelope: PushEnvelope, key: String, on sql: any SQLDatabase) async throws {
        let now = clock.now()
        let body = String(decoding: try PushEnvelope.encoder.encode(envelope), as: UTF8.self)
        // A window of 0 turns coalescing off: one push per event.
        let replaced = window <= 0 ? [] : try await sql.raw("""
            UPDATE outbox_messages SET body = \(bind: body), subject = \(bind: envelope.title)
            WHERE coalesce_key = \(bind: key) AND status = 'pending' AND attempts = 0 AND claimed_until IS NULL
            RETURNING id
            """).all()
        guard replaced.isEmpty else { return }
        try await sql.raw("""
            INSERT INTO outbox_messages (id, kind, destination, subject, body, status, attempts, next_attempt_at, created_at, coalesce_key)
            VALUES (\(bind: OrderedID.make()), 'push', \(bind: envelope.device.uuidString.lowercased()), \(bind: envelope.title), \(bind: body),
                    'pending', 0, \(bind: now.addingTimeInterval(max(0, window))), \(bind: now), \(bind: window <= 0 ? nil : key))
            """).run()
    }

    private func names(_ ids: [UUID], on sql: any SQLDatabase) async throws -> [UUID: String] {
        guard !ids.isEmpty else { return [:] }
        var names: [UUID: String] = [:]
        for row in try await sql.raw("SELECT id, first_name, last_name, username FROM accounts WHERE id IN (\(SQLList(ids.map { SQLBind($0) })))").all() {
            names[try row.decode(column: "id", as: UUID.self)] = Self.name(try row.decode(column: "first_name", as: String?.self),
                                                                           try row.decode(column: "last_name", as: String?.self),
                                                                           try row.decode(column: "username", as: String?.self))
        }
        return names
    }

    /// Chats with a message from the other person that I have not read, per account.
    private func badges(_ accounts: [UUID], on sql: any SQLDatabase) async throws -> [UUID: Int] {
        var badges: [UUID: Int] = [:]
        for row in try await sql.raw("""
            SELECT cm.account_id, COUNT(*) AS unread FROM chat_members cm
            JOIN chats c ON c.id = cm.chat_id JOIN messages m ON m.id = c.last_message_id
            WHERE cm.account_id IN (\(SQLList(accounts.map { SQLBind($0) }))) AND cm.visible AND m.author_id <> cm.account_id
              AND (cm.last_read_id IS NULL OR cm.last_read_id < c.last_message_id)
              AND (cm.cleared_through IS NULL OR cm.cleared_through < c.last_message_id)
            GROUP BY cm.account_id
            """).all() {
            badges[try row.decode(column: "account_id", as: UUID.self)] = try row.decode(column: "unread", as: Int.self)
        }
        return badges
    }

    private func previewsOff(_ accounts: [UUID], on sql: any SQLDatabase) async throws -> Set<UUID> {
        Set(try await sql.raw("""
            SELECT account_id FROM push_settings WHERE account_id IN (\(SQLList(accounts.map { SQLBind($0) }))) AND previews = \(bind: false)
            """).all().map { try $0.decode(column: "account_id", as: UUID.self) })
    }
}
