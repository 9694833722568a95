import FluentKit
import Foundation

/// A session: the token itself is never stored, only its SHA-256.
package final class SessionModel: Model, @unchecked Sendable {
    package static let schema = "sessions"

    @ID(key: .id) package var id: UUID?
    @Field(key: "account_id") package var accountID: UUID
    @Field(key: "token_hash") package var tokenHash: String
    @Field(key: "created_at") package var createdAt: Date
    @Field(key: "expires_at") package var expiresAt: Date
    @Field(key: "last_used_at") package var lastUsedAt: Date
    @OptionalField(key: "device") package var device: String?
    @OptionalField(key: "ip") package var ip: String?

    package init() {}

    package init(id: UUID = UUID(), accountID: UUID, tokenHash: String, now: Date, expiresAt: Date, device: String?, ip: String?) {
        self.id = id
        self.accountID = accountID
        self.tokenHash = tokenHash
        self.createdAt = now
        self.expiresAt = expiresAt
        self.lastUsedAt = now
        self.device = device
        self.ip = ip
    }
}
