import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import SQLKit

/// Reads people as one viewer sees them: the card, my relation to them and our chat. Every list
/// of people (search, friends, chats, events) selects the same columns and decodes them here.
package struct PersonLoader: Sendable {
    package let database: DatabaseProvider
    package let publicURL: String

    /// The columns of a person `a` (an account) with `f` (our friendship) and `cm` (my membership
    /// of our chat) joined by `joins(viewer:)`.
    package static let columns: SQLQueryString = """
        a.id AS person_id, a.first_name AS person_first, a.last_name AS person_last, a.username AS person_tag,
        a.avatar_id AS person_avatar, f.id AS friendship_id, f.state AS friendship_state,
        f.requester_id AS friendship_requester, cm.chat_id AS person_chat, a.erased_at AS person_erased
        """

    /// Joins our friendship and my membership of our chat to a person `a`.
    package static func joins(viewer: UUID) -> SQLQueryString {
        """
        LEFT JOIN friendships f ON ((f.requester_id = a.id AND f.addressee_id = \(bind: viewer)) \
        OR (f.requester_id = \(bind: viewer) AND f.addressee_id = a.id)) \
        LEFT JOIN chat_members cm ON cm.account_id = \(bind: viewer) AND cm.other_id = a.id
        """
    }

    package func decode(_ row: any SQLRow, viewer: UUID) throws -> Person {
        let id = try row.decode(column: "person_id", as: UUID.self)
        let friendship = try row.decode(column: "friendship_id", as: UUID?.self)
        let state = try row.decode(column: "friendship_state", as: String?.self)
        let requester = try row.decode(column: "friendship_requester", as: UUID?.self)
        let relation: PersonRelation = switch (friendship, state) {
        case (nil, _): .none
        case (_, FriendshipState.friends.rawValue?): .friend
        default: requester == viewer ? .outgoing : .incoming
        }
        return Person(
            id: id,
            firstName: try row.decode(column: "person_first", as: String?.self),
            lastName: try row.decode(column: "person_last", as: String?.self),
            tag: try row.decode(column: "person_tag", as: String?.self) ?? "",
            avatarUrl: try row.decode(column: "person_avatar", as: UUID?.self).map { publicURL + V1.Accounts.avatarImage.path(id: $0) },
            relation: relation,
            requestId: relation == .incoming || relation == .outgoing ? friendship : nil,
            chatId: try row.decode(column: "person_chat", as: UUID?.self),
            deleted: try row.decode(column: "person_erased", as: Date?.self) != nil ? true : nil
        )
    }

    /// A person (an account with a tag, not being deleted) as `viewer` sees them; nil for no such person.
    package func person(_ id: UUID, seenBy viewer: UUID, on db: (any GatehouseDatabase)? = nil) async throws -> Person? {
        let sql = db ?? database.db
        guard let row = try await sql.raw("""
            SELECT \(Self.columns) FROM accounts a \(Self.joins(viewer: viewer))
            WHERE a.id = \(bind: id) AND a.username IS NOT NULL AND a.deletion_requested_at IS NULL
            """).first() else { return nil }
        return try decode(row, viewer: viewer)
    }

    /// Everyone who sees the account in a list of theirs: friends, requests either way, chat partners.
    package func acquaintances(of id: UUID, on db: (any GatehouseDatabase)? = nil) async throws -> [UUID] {
        let sql = db ?? database.db
        let rows = try await sql.raw("""
            SELECT addressee_id AS other FROM friendships WHERE requester_id = \(bind: id)
            UNION SELECT requester_id AS other FROM friendships WHERE addressee_id = \(bind: id)
            UNION SELECT other_id AS other FROM chat_members WHERE account_id = \(bind: id)
            """).all()
        return try rows.map { try $0.decode(column: "other", as: UUID.self) }
    }

    package init(database: DatabaseProvider, publicURL: String) {
        self.database = database
        self.publicURL = publicURL
    }
}

package enum FriendshipState: String {
    case pending, friends
}
