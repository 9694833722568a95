import FluentKit
import Foundation
import GatehouseFoundation
import SQLKit

/// The messenger's tables (docs/messenger.md, "Model").
package struct M009CreateMessenger: SQLMigration {
    package var name: String { "009_CreateMessenger" }

    package func prepare(on database: any GatehouseDatabase) async throws {
        // One row per account: the folded keys people are searched by, what others see of it
        // (to tell when it changed), and its privacy setting.
        try await database.schema("messenger_people")
            .field("account_id", .uuid, .identifier(auto: false), .references("accounts", "id", onDelete: .cascade))
            .field("tag_key", .string)
            .field("first_key", .string, .required)
            .field("last_key", .string, .required)
            .field("full_key", .string, .required)
            .field("reverse_key", .string, .required)
            .field("sort_name", .string, .required)
            .field("card", .string, .required)
            .field("who_can_message", .string, .required)
            .create()
        try await database.create(index: "ix_messenger_people_tag").on("messenger_people").column("tag_key").run()
        try await database.create(index: "ix_messenger_people_sort").on("messenger_people").column("sort_name").run()

        try await database.schema("friendships")
            .id()
            .field("low_id", .uuid, .required, .references("accounts", "id", onDelete: .cascade))
            .field("high_id", .uuid, .required, .references("accounts", "id", onDelete: .cascade))
            .field("requester_id", .uuid, .required)
            .field("addressee_id", .uuid, .required)
            .field("state", .string, .required)
            .field("created_at", .datetime, .required)
            .field("updated_at", .datetime, .required)
            .unique(on: "low_id", "high_id", name: "uq_friendships_pair")
            .create()
        try await database.create(index: "ix_friendships_requester").on("friendships").column("requester_id").run()
        try await database.create(index: "ix_friendships_addressee").on("friendships").column("addressee_id").run()

        try await database.schema("chats")
            .id()
            .field("low_id", .uuid, .required, .references("accounts", "id", onDelete: .cascade))
            .field("high_id", .uuid, .required, .references("accounts", "id", onDelete: .cascade))
            .field("created_at", .datetime, .required)
            .field("last_message_id", .uuid)
            // The id (a UUIDv7 string) of the newest message, or of the chat itself: the list's order.
            .field("activity_key", .string, .required)
            .unique(on: "low_id", "high_id", name: "uq_chats_pair")
            .create()

        try await database.schema("chat_members")
            .field("chat_id", .uuid, .required, .references("chats", "id", onDelete: .cascade))
            .field("account_id", .uuid, .required, .references("accounts", "id", onDelete: .cascade))
            .field("other_id", .uuid, .required)
            .field("visible", .bool, .required)
            .field("cleared_through", .uuid)
            .field("last_read_id", .uuid)
            .field("muted_until", .datetime)
            .compositeIdentifier(over: "chat_id", "account_id")
            .create()
        try await database.create(index: "ix_chat_members_account").on("chat_members").column("account_id").column("other_id").run()

        try await database.schema("messages")
            .id()
            .field("chat_id", .uuid, .required, .references("chats", "id", onDelete: .cascade))
            .field("author_id", .uuid, .required, .references("accounts", "id", onDelete: .cascade))
            .field("text", .string, .required)
            .field("created_at", .datetime, .required)
            .field("edited_at", .datetime)
            .field("deleted_at", .datetime)
            .field("reply_to_id", .uuid)
            .field("reply_author_id", .uuid)
            .field("reply_excerpt", .string)
            .field("reply_deleted", .bool, .required)
            .field("forward_author_id", .uuid)
            .field("forward_sent_at", .datetime)
            .field("client_message_id", .string)
            .unique(on: "author_id", "client_message_id", name: "uq_messages_client_id")
            .create()
        try await database.create(index: "ix_messages_chat").on("messages").column("chat_id").column("id").run()
        try await database.create(index: "ix_messages_reply").on("messages").column("reply_to_id").run()

        try await database.schema("message_hidden")
            .field("message_id", .uuid, .required, .references("messages", "id", onDelete: .cascade))
            .field("account_id", .uuid, .required, .references("accounts", "id", onDelete: .cascade))
            .compositeIdentifier(over: "message_id", "account_id")
            .create()

        try await database.schema("attachments")
            .id()
            .field("owner_id", .uuid, .required, .references("accounts", "id", onDelete: .cascade))
            .field("blob_key", .string, .required)
            .field("kind", .string, .required)
            .field("content_type", .string, .required)
            .field("file_name", .string, .required)
            .field("size", .int, .required)
            .field("created_at", .datetime, .required)
            .create()
        try await database.create(index: "ix_attachments_blob").on("attachments").column("blob_key").run()
        try await database.create(index: "ix_attachments_owner").on("attachments").column("owner_id").column("created_at").run()

        try await database.schema("message_attachments")
            .field("message_id", .uuid, .required, .references("messages", "id", onDelete: .cascade))
            .field("attachment_id", .uuid, .required, .references("attachments", "id", onDelete: .cascade))
            .field("position", .int, .required)
            .compositeIdentifier(over: "message_id", "attachment_id")
            .create()
        try await database.create(index: "ix_message_attachments_attachment").on("message_attachments").column("attachment_id").run()

        // Each account's events, numbered without gaps by its counter (docs/messenger.md, "Realtime").
        try await database.schema("messenger_event_counters")
            .field("account_id", .uuid, .identifier(auto: false), .references("accounts", "id", onDelete: .cascade))
            .field("last_seq", .int64, .required)
            .create()
        try await database.schema("messenger_events")
            .field("account_id", .uuid, .required, .references("accounts", "id", onDelete: .cascade))
            .field("seq", .int64, .required)
            .field("kind", .string, .required)
            .field("data", .string, .required)
            .field("created_at", .datetime, .required)
            .compositeIdentifier(over: "account_id", "seq")
            .create()
        try await database.create(index: "ix_messenger_events_created").on("messenger_events").column("created_at").run()

        // Every account that exists already becomes a person (searchable once it has a tag).
        try await PeopleIndex.backfill(on: database)
    }

    package func revert(on database: any GatehouseDatabase) async throws {
        for table in ["messenger_events", "messenger_event_counters", "message_attachments", "attachments", "message_hidden",
                      "messages", "chat_members", "chats", "friendships", "messenger_people"] {
            try await database.schema(table).delete()
        }
    }

    package init() {

    }
}

/// The people each person blocked (`PUT /v1/me/blocked/{personId}`): the privacy rule refuses
/// whatever a blocked person would send them.
package struct M016CreateMessengerBlocks: SQLMigration {
    package var name: String { "016_CreateMessengerBlocks" }

    package func prepare(on database: any GatehouseDatabase) async throws {
        try await database.schema("messenger_blocks")
            .field("account_id", .uuid, .required, .references("accounts", "id", onDelete: .cascade))
            .field("blocked_id", .uuid, .required, .references("accounts", "id", onDelete: .cascade))
            .field("created_at", .datetime, .required)
            .compositeIdentifier(over: "account_id", "blocked_id")
            .create()
    }

    package func revert(on database: any GatehouseDatabase) async throws {
        try await database.schema("messenger_blocks").delete()
    }

    package init() {

    }
}
