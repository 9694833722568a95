import FluentKit
import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import SQLKit

/// One concept of the messenger (people, friends, chats, messages, attachments, the wallet's
/// payment messages): the rules they share (memberships, privacy, what a new message tells whom,
/// page sizes), over the three things those rules read. Each concept is given these and the
/// other pieces it uses, by `MessengerModule.make`.
package protocol MessengerConcept: Sendable {
    var store: MessengerStore { get }
    var people: PersonLoader { get }
    var settings: GatehouseConfiguration.Messenger { get }
}

extension MessengerConcept {
    /// My membership of a chat, or 404 `chat_not_found` (another's chat is as unknown as none).
    package func membership(_ chat: UUID, of account: UUID, field: String? = nil, on db: (any GatehouseDatabase)? = nil) async throws -> Membership {
        guard let membership = try await store.membership(chat, of: account, on: db) else {
            throw GatehouseError.notFound(.chatNotFound, "error.chatNotFound", field: field)
        }
        return membership
    }

    /// Whether `sender` may write to `recipient` (their `whoCanMessageMe`, and whether they blocked
    /// `sender`); 403 otherwise.
    package func checkMayMessage(_ recipient: UUID, from sender: UUID, on db: any GatehouseDatabase) async throws {
        guard try await mayMessage(recipient, from: sender, on: db) else { throw Self.messagingNotAllowed }
    }

    package func mayMessage(_ recipient: UUID, from sender: UUID, on db: any GatehouseDatabase) async throws -> Bool {
        let rule = try await store.messagingRule(recipient, from: sender, pair: ordered(sender, recipient), on: db)
        return Self.mayMessage(audience: rule?.audience, friendship: rule?.friendship, blocked: rule?.blocked ?? false)
    }

    /// Whether `recipient` blocked `sender`.
    package func isBlocked(_ sender: UUID, by recipient: UUID, on db: any GatehouseDatabase) async throws -> Bool {
        try await store.isBlocked(sender, by: recipient, on: db)
    }

    /// The privacy rule: a person who takes messages from friends only takes none from anyone
    /// else, and nobody takes anything from someone they blocked.
    package static func mayMessage(audience: String?, friendship: String?, blocked: Bool) -> Bool {
        !blocked && (audience != MessagingAudience.friends.rawValue || friendship == FriendshipState.friends.rawValue)
    }

    package static var messagingNotAllowed: GatehouseError {
        GatehouseError(.forbidden, .messagingNotAllowed, LocalizedText("error.messagingNotAllowed"))
    }

    /// What sending into chats needs to know, for each (chat, author) in one read: the author's
    /// membership, whether the other member takes the author's messages, and whether both see
    /// the chat. A pair missing from the answer is not a membership (404 for its sends).
    package func sendingContexts(_ pairs: [SendPair], on db: any GatehouseDatabase) async throws -> [SendPair: Sending] {
        guard !pairs.isEmpty else { return [:] }
        let rows = try await store.sendingRows(pairs, hasDevices: PushDevices.exist, on: db)
        var found: [SendPair: Sending] = [:]
        for row in rows {
            guard let member = try MessageReader.membership(row) else { continue }
            let (audience, friendship) = (try row.decode(column: "who_can_message", as: String.self), try row.decode(column: "state", as: String?.self))
            found[SendPair(chat: member.chatID, author: member.account)] = Sending(
                member: member,
                mayMessage: Self.mayMessage(audience: audience, friendship: friendship, blocked: try row.decode(column: "blocked", as: Int.self) > 0),
                audience: audience,
                friendship: friendship,
                bothVisible: try member.visible && row.decode(column: "other_visible", as: Bool.self),
                otherHasDevices: try row.decode(column: "other_has_devices", as: Bool.self)
            )
        }
        return found
    }

    /// A new message's `message.created` for both members: the author's copy with its client id, the
    /// other's without, and a push to the other's devices (not for a payment's note: the wallet's
    /// own event pushes that). `otherHasDevices` false (read with the sending context) skips the push,
    /// and with it the read of the devices, as the wallet does for its payees.
    package func recordCreated(_ message: Message, to other: UUID, otherHasDevices: Bool = true, _ recorder: EventRecorder) {
        let mine = message.json
        let push = message.payment == nil && otherHasDevices
        recorder.add(.messageCreated, to: message.authorId, encoded: mine)
        guard message.clientMessageId != nil else { return recorder.add(.messageCreated, to: other, encoded: mine, push: push) }
        var theirs = message
        theirs.clientMessageId = nil
        recorder.add(.messageCreated, to: other, encoded: theirs.json, push: push)
    }

    /// The messenger is for people: accounts with a tag.
    package func requirePerson(_ account: AccountSnapshot) throws {
        guard account.username != nil else {
            throw GatehouseError(.conflict, .tagRequired, LocalizedText("error.tagRequired.messenger"))
        }
    }

    /// A person `viewer` may see (any account with a tag but the viewer); 404 otherwise.
    package func visiblePerson(_ id: UUID, seenBy viewer: UUID, field: String? = nil, on db: (any GatehouseDatabase)? = nil) async throws -> Person {
        guard id != viewer, let person = try await people.person(id, seenBy: viewer, on: db) else {
            throw GatehouseError.notFound(.personNotFound, "error.personNotFound", field: field)
        }
        return person
    }

    /// `limit` within the configured page sizes.
    package func pageSize(_ limit: Int?) -> Int {
        min(max(limit ?? settings.pageSize, 1), settings.maxPageSize)
    }

    /// The two ids of a pair in the order the unique pair columns keep them.
    package func ordered(_ a: UUID, _ b: UUID) -> (low: UUID, high: UUID) {
        a < b ? (a, b) : (b, a)
    }
}

/// A chat and an author sending into it.
package struct SendPair: Hashable, Sendable {
    package var chat: UUID
    package var author: UUID

    package init(chat: UUID, author: UUID) {
        self.chat = chat
        self.author = author
    }
}

/// What a send into a chat needs to know (`sendingContexts`).
package struct Sending: Sendable {
    package var member: Membership
    package var mayMessage: Bool
    /// What `mayMessage` was decided from, besides the block: the other member's audience and the
    /// friendship's state (nil: none).
    package var audience: String
    package var friendship: String?
    package var bothVisible: Bool
    /// Whether the other member has a push device (as of the read): a send to someone with none writes no push.
    package var otherHasDevices: Bool
}
