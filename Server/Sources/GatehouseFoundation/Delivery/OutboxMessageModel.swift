import FluentKit
import Foundation

/// A message waiting for, or done with, delivery. Written in the same transaction as the code it
/// carries, so a crash between the two cannot lose or orphan either.
package final class OutboxMessageModel: Model, @unchecked Sendable {
    package static let schema = "outbox_messages"

    @ID(key: .id) package var id: UUID?
    /// `sms` or `email`.
    @Field(key: "kind") package var kind: String
    @Field(key: "destination") package var destination: String
    @OptionalField(key: "subject") package var subject: String?
    @Field(key: "body") package var body: String
    /// The one-time code or password the message carries (for the development outbox);
    /// cleared with the body once delivered in production.
    @OptionalField(key: "code") package var code: String?
    @Field(key: "status") package var status: String
    @Field(key: "attempts") package var attempts: Int
    @Field(key: "next_attempt_at") package var nextAttemptAt: Date
    @OptionalField(key: "claimed_until") package var claimedUntil: Date?
    @OptionalField(key: "last_error") package var lastError: String?
    @Field(key: "created_at") package var createdAt: Date
    @OptionalField(key: "sent_at") package var sentAt: Date?
    /// The channel that delivered it (`dev`, `smtp`, `sms-http`).
    @OptionalField(key: "channel") package var channel: String?

    package init() {}

    package enum Status: String { case pending, sent, failed }
}
