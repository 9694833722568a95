import FluentKit
import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform

/// What the messenger pushes (docs/push.md): a new message (its sender and text, or "New message" when the person
/// turned previews off; a muted chat pushes nothing; the chat is the thread), a friend request and its acceptance.
/// `EventPushes` writes them for each device; `badges` is the badge every push carries (chats with unread messages).
package struct MessengerPushes: PushComposer {
    package let clock: GatehouseClock

    package init(clock: GatehouseClock) {
        self.clock = clock
    }

    package func notices(for events: [PendingEvent], on tx: any GatehouseDatabase) async throws -> [PushNotice] {
        var notices: [PushNotice] = []
        var authors: Set<UUID> = []
        var messages: [(UUID, Message)] = []
        for event in events {
            let data = Data(event.data.utf8)
            switch event.kind {
            case .messageCreated:
                guard let message = try? V1.decoder.decode(Message.self, from: data) else { continue }
                authors.insert(message.authorId)
                messages.append((event.account, message))
            case .friendRequested, .friendAccepted:
                guard let person = try? V1.decoder.decode(Person.self, from: data) else { continue }
                let who = PushNotice.name(person.firstName, person.lastName, person.tag)
                let requested = event.kind == .friendRequested
                notices.append(PushNotice(account: event.account,
                                          title: LocalizedText(requested ? "push.friendRequested.title" : "push.friendAccepted.title"),
                                          body: LocalizedText(requested ? "push.friendRequested.body" : "push.friendAccepted.body", [who]),
                                          thread: "friends", data: ["kind": requested ? "friend_request" : "friend_accepted", "person": person.id.uuidString]))
            default:
                continue
            }
        }
        guard !messages.isEmpty else { return notices }
        let names = try await MessengerStore.nameParts(of: Array(authors), on: tx).mapValues { PushNotice.name($0.0, $0.1, $0.2) }
        let muted = try await MessengerStore.muted(chats: Set(messages.map(\.1.chatId)), members: Set(messages.map(\.0)), at: clock.now(), on: tx)
        for (account, message) in messages where !muted.contains("\(message.chatId)/\(account)") {
            let text = message.text.isEmpty ? LocalizedText(message.attachments.isEmpty ? "push.message.hidden" : "push.message.attachment")
                : LocalizedText("error.plain", [String(message.text.prefix(1_000))])
            notices.append(PushNotice(account: account, title: LocalizedText("error.plain", [names[message.authorId] ?? "—"]), body: text,
                                      thread: message.chatId.uuidString,
                                      data: ["kind": "message", "chat": message.chatId.uuidString, "message": message.id.uuidString],
                                      isMessage: true, hiddenBody: LocalizedText("push.message.hidden")))
        }
        return notices
    }

    /// Chats with a message from the other person that I have not read, per account: every push's badge.
    @Sendable package static func badges(_ accounts: [UUID], on db: any GatehouseDatabase) async throws -> [UUID: Int] {
        try await MessengerStore.unreadChats(of: accounts, on: db)
    }
}
