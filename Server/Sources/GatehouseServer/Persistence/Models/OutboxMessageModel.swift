import FluentKit
import Foundation

/// A message waiting for, or done with, delivery. Written in the same transaction as the code it
/// carries, so a crash between the two cannot lose or orphan either.
final class OutboxMessageModel: Model, @unchecked Sendable {
    static let schema = "outbox_messages"

    @ID(key: .id) var id: UUID?
    /// `sms` or `email`.
    @Field(key: "kind") var kind: String
    @Field(key: "destination") var destination: String
    @OptionalField(key: "subject") var subject: String?
    @Field(key: "body") var body: String
    /// The one-time code or password the message carries (for the development outbox);
    /// cleared with the body once delivered in production.
    @OptionalField(key: "code") var code: String?
    @Field(key: "status") var status: String
    @Field(key: "attempts") var attempts: Int
    @Field(key: "next_attempt_at") var nextAttemptAt: Date
    @OptionalField(key: "claimed_until") var claimedUntil: Date?
    @OptionalField(key: "last_error") var lastError: String?
    @Field(key: "created_at") var createdAt: Date
    @OptionalField(key: "sent_at") var sentAt: Date?
    /// The channel that delivered it (`dev`, `smtp`, `sms-http`).
    @OptionalField(key: "channel") var channel: String?

    init() {}

    enum Status: String { case pending, sent, failed }
}
