import FluentKit
import Foundation
import GatehouseFoundation
import SQLKit

/// What the messenger's pushes read, in the transaction of the events they tell of (`MessengerPushes`).
extension MessengerStore {
    /// People's first and last names and tags, by id.
    package static func nameParts(of ids: [UUID], on db: any GatehouseDatabase) async throws -> [UUID: (String?, String?, String?)] {
        guard !ids.isEmpty else { return [:] }
        var parts: [UUID: (String?, String?, String?)] = [:]
        for row in try await db.raw("SELECT id, first_name, last_name, username FROM accounts WHERE id IN (\(SQLList(ids.map { SQLBind($0) })))").all() {
            parts[try row.decode(column: "id", as: UUID.self)] = (try row.decode(column: "first_name", as: String?.self),
                                                                  try row.decode(column: "last_name", as: String?.self),
                                                                  try row.decode(column: "username", as: String?.self))
        }
        return parts
    }

    /// Of these chats and members, the pairs muted at `now`, as `chat/account`.
    package static func muted(chats: Set<UUID>, members: Set<UUID>, at now: Date, on db: any GatehouseDatabase) async throws -> Set<String> {
        Set(try await db.raw("""
            SELECT chat_id, account_id FROM chat_members
            WHERE chat_id IN (\(SQLList(chats.map { SQLBind($0) }))) AND account_id IN (\(SQLList(members.map { SQLBind($0) })))
              AND muted_until IS NOT NULL AND muted_until > \(bind: now)
            """).all().map { "\(try $0.decode(column: "chat_id", as: UUID.self))/\(try $0.decode(column: "account_id", as: UUID.self))" })
    }

    /// Chats with a message from the other person that the account has not read, per account.
    package static func unreadChats(of accounts: [UUID], on db: any GatehouseDatabase) async throws -> [UUID: Int] {
        var unread: [UUID: Int] = [:]
        for row in try await db.raw("""
            SELECT cm.account_id, COUNT(*) AS unread FROM chat_members cm
            JOIN chats c ON c.id = cm.chat_id JOIN messages m ON m.id = c.last_message_id
            WHERE cm.account_id IN (\(SQLList(accounts.map { SQLBind($0) }))) AND cm.visible AND m.author_id <> cm.account_id
              AND (cm.last_read_id IS NULL OR cm.last_read_id < c.last_message_id)
              AND (cm.cleared_through IS NULL OR cm.cleared_through < c.last_message_id)
            GROUP BY cm.account_id
            """).all() {
            unread[try row.decode(column: "account_id", as: UUID.self)] = try row.decode(column: "unread", as: Int.self)
        }
        return unread
    }
}
