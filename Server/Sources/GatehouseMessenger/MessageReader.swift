import FluentKit
import Foundation
import GatehouseAPI
import SQLKit

/// A member's view of a chat: what of it they see.
package struct Membership: Sendable {
    package var chatID: UUID
    package var account: UUID
    package var other: UUID
    package var visible: Bool
    package var clearedThrough: UUID?
    package var lastRead: UUID?
    package var mutedUntil: Date?
}

/// Reads messages and attachments as one member sees them. Visibility is one SQL condition
/// (`visible`) used by every read, so history, previews, unread counts and downloads agree.
package struct MessageReader: Sendable {
    package let publicURL: String

    package static let columns: SQLQueryString = """
        m.id, m.chat_id, m.author_id, m.text, m.created_at, m.edited_at, m.deleted_at, m.reply_to_id, m.reply_author_id,
        m.reply_excerpt, m.reply_deleted, m.forward_author_id, m.forward_sent_at, m.client_message_id, m.payment
        """

    /// Messages `m` the account sees: after what they cleared, and not deleted for them.
    /// `cleared` is an expression for the account's `cleared_through` in that chat.
    package static func visible(to account: UUID, cleared: SQLQueryString) -> SQLQueryString {
        """
        (\(cleared) IS NULL OR m.id > \(cleared)) \
        AND NOT EXISTS (SELECT 1 FROM message_hidden h WHERE h.message_id = m.id AND h.account_id = \(bind: account))
        """
    }

    package func membership(_ chat: UUID, of account: UUID, on sql: any SQLDatabase) async throws -> Membership? {
        try await Self.membership(sql.raw("""
            SELECT chat_id, account_id, other_id, visible, cleared_through, last_read_id, muted_until
            FROM chat_members WHERE chat_id = \(bind: chat) AND account_id = \(bind: account)
            """).first())
    }

    /// A `chat_members` row (its own column names) as a membership.
    package static func membership(_ row: (any SQLRow)?) throws -> Membership? {
        guard let row else { return nil }
        return Membership(
            chatID: try row.decode(column: "chat_id", as: UUID.self), account: try row.decode(column: "account_id", as: UUID.self),
            other: try row.decode(column: "other_id", as: UUID.self), visible: try row.decode(column: "visible", as: Bool.self),
            clearedThrough: try row.decode(column: "cleared_through", as: UUID?.self), lastRead: try row.decode(column: "last_read_id", as: UUID?.self),
            mutedUntil: try row.decode(column: "muted_until", as: Date?.self)
        )
    }

    /// Messages matching `condition` (on `m`) in `order`, with their attachments, as `viewer` gets them.
    package func messages(where condition: SQLQueryString, order: SQLQueryString = "m.id", limit: Int? = nil, viewer: UUID,
                  on sql: any SQLDatabase) async throws -> [Message] {
        let limitClause: SQLQueryString = limit.map { "LIMIT \(literal: $0)" } ?? ""
        let rows = try await sql.raw("SELECT \(Self.columns) FROM messages m WHERE \(condition) ORDER BY \(order) \(limitClause)").all()
        var messages = try rows.map { try decode($0, viewer: viewer) }
        let ids = messages.filter { !$0.deleted }.map(\.id)
        if !ids.isEmpty {
            let attached = try await attachments(of: ids, on: sql)
            for index in messages.indices { messages[index].attachments = attached[messages[index].id] ?? [] }
        }
        return messages
    }

    package func message(_ id: UUID, viewer: UUID, on sql: any SQLDatabase) async throws -> Message? {
        try await messages(where: "m.id = \(bind: id)", viewer: viewer, on: sql).first
    }

    private func decode(_ row: any SQLRow, viewer: UUID) throws -> Message {
        let author = try row.decode(column: "author_id", as: UUID.self)
        let deleted = try row.decode(column: "deleted_at", as: Date?.self) != nil
        let reply: ReplyPreview? = try row.decode(column: "reply_to_id", as: UUID?.self).map { id in
            ReplyPreview(messageId: id, authorId: try row.decode(column: "reply_author_id", as: UUID?.self) ?? id,
                         excerpt: try row.decode(column: "reply_excerpt", as: String?.self),
                         deleted: try row.decode(column: "reply_deleted", as: Bool.self))
        }
        let forward: ForwardOrigin? = try row.decode(column: "forward_author_id", as: UUID?.self).map { id in
            ForwardOrigin(authorId: id, sentAt: try row.decode(column: "forward_sent_at", as: Date?.self) ?? Date(timeIntervalSince1970: 0))
        }
        return Message(
            id: try row.decode(column: "id", as: UUID.self), chatId: try row.decode(column: "chat_id", as: UUID.self), authorId: author,
            text: deleted ? "" : try row.decode(column: "text", as: String.self), createdAt: try row.decode(column: "created_at", as: Date.self),
            editedAt: try row.decode(column: "edited_at", as: Date?.self), deleted: deleted,
            replyTo: deleted ? nil : reply, forwardedFrom: deleted ? nil : forward, attachments: [],
            clientMessageId: author == viewer ? try row.decode(column: "client_message_id", as: String?.self) : nil,
            payment: try row.decode(column: "payment", as: String?.self).flatMap { try? V1.decoder.decode(PaymentNote.self, from: Data($0.utf8)) }
        )
    }

    package static let attachmentColumns: SQLQueryString = "att.id AS att_id, att.kind AS att_kind, att.content_type AS att_type, att.file_name AS att_name, att.size AS att_size"

    package func attachment(_ row: any SQLRow) throws -> Attachment {
        let id = try row.decode(column: "att_id", as: UUID.self)
        return Attachment(
            id: id, kind: Attachment.Kind(rawValue: try row.decode(column: "att_kind", as: String.self)) ?? .file,
            contentType: try row.decode(column: "att_type", as: String.self), fileName: try row.decode(column: "att_name", as: String.self),
            size: try row.decode(column: "att_size", as: Int.self), url: publicURL + V1.Messenger.download.path(id: id)
        )
    }

    private func attachments(of messages: [UUID], on sql: any SQLDatabase) async throws -> [UUID: [Attachment]] {
        let rows = try await sql.raw("""
            SELECT ma.message_id, \(Self.attachmentColumns) FROM message_attachments ma JOIN attachments att ON att.id = ma.attachment_id
            WHERE ma.message_id IN (\(binds: messages)) ORDER BY ma.message_id, ma.position
            """).all()
        var found: [UUID: [Attachment]] = [:]
        for row in rows { found[try row.decode(column: "message_id", as: UUID.self), default: []].append(try attachment(row)) }
        return found
    }

    package init(publicURL: String) {
        self.publicURL = publicURL
    }
}
