import FluentKit
import Foundation
import GatehouseAPI
import SQLKit

/// What every messenger service shares (docs/messenger.md): the database, the clock, the limits,
/// the event log and the people loader.
struct MessengerCore: Sendable {
    let database: DatabaseProvider
    let clock: GatehouseClock
    let settings: GatehouseConfiguration.Messenger
    let publicURL: String
    let rateLimiter: RateLimiter
    let blobs: any BlobStore
    let events: EventLog
    let people: PersonLoader
    let reader: MessageReader
}

/// One concept of the messenger (people, friends, chats, messages, attachments) on the shared core.
protocol MessengerConcept: Sendable {
    var core: MessengerCore { get }
}

extension MessengerConcept {
    var database: DatabaseProvider { core.database }
    var clock: GatehouseClock { core.clock }
    var settings: GatehouseConfiguration.Messenger { core.settings }
    var events: EventLog { core.events }
    var people: PersonLoader { core.people }
    var reader: MessageReader { core.reader }

    /// My membership of a chat, or 404 `chat_not_found` (another's chat is as unknown as none).
    func membership(_ chat: UUID, of account: UUID, field: String? = nil, on db: (any Database)? = nil) async throws -> Membership {
        guard let membership = try await reader.membership(chat, of: account, on: sql(db ?? database.db)) else {
            throw GatehouseError.notFound(.chatNotFound, "error.chatNotFound", field: field)
        }
        return membership
    }

    /// Whether `sender` may write to `recipient` (their `whoCanMessageMe`, and whether they blocked
    /// `sender`); 403 otherwise.
    func checkMayMessage(_ recipient: UUID, from sender: UUID, on db: any Database) async throws {
        guard try await mayMessage(recipient, from: sender, on: db) else { throw Self.messagingNotAllowed }
    }

    func mayMessage(_ recipient: UUID, from sender: UUID, on db: any Database) async throws -> Bool {
        let row = try await sql(db).raw("""
            SELECT p.who_can_message, f.state,
                   (SELECT COUNT(*) FROM messenger_blocks b WHERE b.account_id = \(bind: recipient) AND b.blocked_id = \(bind: sender)) AS blocked
            FROM messenger_people p
            LEFT JOIN friendships f ON f.low_id = \(bind: ordered(sender, recipient).low) AND f.high_id = \(bind: ordered(sender, recipient).high)
            WHERE p.account_id = \(bind: recipient)
            """).first()
        return Self.mayMessage(audience: try row?.decode(column: "who_can_message", as: String.self),
                               friendship: try row?.decode(column: "state", as: String?.self),
                               blocked: (try row?.decode(column: "blocked", as: Int.self) ?? 0) > 0)
    }

    /// Whether `recipient` blocked `sender`.
    func isBlocked(_ sender: UUID, by recipient: UUID, on db: any Database) async throws -> Bool {
        try await sql(db).raw("SELECT 1 AS found FROM messenger_blocks WHERE account_id = \(bind: recipient) AND blocked_id = \(bind: sender)").first() != nil
    }

    /// The privacy rule: a person who takes messages from friends only takes none from anyone
    /// else, and nobody takes anything from someone they blocked.
    static func mayMessage(audience: String?, friendship: String?, blocked: Bool) -> Bool {
        !blocked && (audience != MessagingAudience.friends.rawValue || friendship == FriendshipState.friends.rawValue)
    }

    static var messagingNotAllowed: GatehouseError {
        GatehouseError(.forbidden, .messagingNotAllowed, LocalizedText("error.messagingNotAllowed"))
    }

    /// What sending into chats needs to know, for each (chat, author) in one read: the author's
    /// membership, whether the other member takes the author's messages, and whether both see
    /// the chat. A pair missing from the answer is not a membership (404 for its sends).
    func sendingContexts(_ pairs: [SendPair], on db: any Database) async throws -> [SendPair: Sending] {
        guard !pairs.isEmpty else { return [:] }
        let rows = try await sql(db).raw("""
            SELECT cm.chat_id, cm.account_id, cm.other_id, cm.visible, cm.cleared_through, cm.last_read_id, cm.muted_until,
                   p.who_can_message, f.state, theirs.visible AS other_visible,
                   (SELECT COUNT(*) FROM messenger_blocks b WHERE b.account_id = cm.other_id AND b.blocked_id = cm.account_id) AS blocked
            FROM chat_members cm JOIN messenger_people p ON p.account_id = cm.other_id
            JOIN chat_members theirs ON theirs.chat_id = cm.chat_id AND theirs.account_id = cm.other_id
            LEFT JOIN friendships f ON (f.low_id = cm.account_id AND f.high_id = cm.other_id) OR (f.low_id = cm.other_id AND f.high_id = cm.account_id)
            WHERE \(pairs.map { "(cm.chat_id = \(bind: $0.chat) AND cm.account_id = \(bind: $0.author))" as SQLQueryString }.joined(separator: " OR "))
            """).all()
        var found: [SendPair: Sending] = [:]
        for row in rows {
            guard let member = try MessageReader.membership(row) else { continue }
            found[SendPair(chat: member.chatID, author: member.account)] = Sending(
                member: member,
                mayMessage: Self.mayMessage(audience: try row.decode(column: "who_can_message", as: String.self),
                                            friendship: try row.decode(column: "state", as: String?.self),
                                            blocked: try row.decode(column: "blocked", as: Int.self) > 0),
                bothVisible: try member.visible && row.decode(column: "other_visible", as: Bool.self)
            )
        }
        return found
    }

    /// A new message's `message.created` for both members: the author's copy with its client id, the other's without.
    func recordCreated(_ message: Message, to other: UUID, _ recorder: EventRecorder) throws {
        let mine = try V1.encoder.encode(message)
        recorder.add(.messageCreated, to: message.authorId, encoded: mine)
        guard message.clientMessageId != nil else { return recorder.add(.messageCreated, to: other, encoded: mine) }
        var theirs = message
        theirs.clientMessageId = nil
        try recorder.add(.messageCreated, to: other, theirs)
    }

    /// The messenger is for people: accounts with a tag.
    func requirePerson(_ account: AccountSnapshot) throws {
        guard account.username != nil else {
            throw GatehouseError(.conflict, .tagRequired, LocalizedText("error.tagRequired.messenger"))
        }
    }

    /// A person `viewer` may see (any account with a tag but the viewer); 404 otherwise.
    func visiblePerson(_ id: UUID, seenBy viewer: UUID, field: String? = nil, on db: (any Database)? = nil) async throws -> Person {
        guard id != viewer, let person = try await people.person(id, seenBy: viewer, on: db) else {
            throw GatehouseError.notFound(.personNotFound, "error.personNotFound", field: field)
        }
        return person
    }

    /// `limit` within the configured page sizes.
    func pageSize(_ limit: Int?) -> Int {
        min(max(limit ?? settings.pageSize, 1), settings.maxPageSize)
    }

    func sql(_ db: any Database) -> any SQLDatabase { db as! any SQLDatabase }

    /// The two ids of a pair in the order the unique pair columns keep them.
    func ordered(_ a: UUID, _ b: UUID) -> (low: UUID, high: UUID) {
        a < b ? (a, b) : (b, a)
    }
}

/// A chat and an author sending into it.
struct SendPair: Hashable, Sendable {
    var chat: UUID
    var author: UUID
}

/// What a send into a chat needs to know (`sendingContexts`).
struct Sending: Sendable {
    var member: Membership
    var mayMessage: Bool
    var bothVisible: Bool
}

/// Opaque page cursors: the sort key of the last item, base64url, checked on the way back.
enum PageCursor {
    static func make(_ parts: [String]) -> String {
        Data(parts.joined(separator: "\u{1F}").utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func read(_ cursor: String?, parts count: Int) throws -> [String]? {
        guard let cursor, !cursor.isEmpty else { return nil }
        var base64 = cursor.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard cursor.utf8.count <= 1_024, let data = Data(base64Encoded: base64), let text = String(data: data, encoding: .utf8),
              !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\u{1F}" })
        else { throw invalid }
        let parts = text.components(separatedBy: "\u{1F}")
        guard parts.count == count else { throw invalid }
        return parts
    }

    static var invalid: GatehouseError {
        GatehouseError(.invalidInput, .invalidParameter, LocalizedText("error.invalidCursor"), field: "cursor")
    }
}
