import FluentKit
import Foundation

/// A session: the token itself is never stored, only its SHA-256.
final class SessionModel: Model, @unchecked Sendable {
    static let schema = "sessions"

    @ID(key: .id) var id: UUID?
    @Field(key: "account_id") var accountID: UUID
    @Field(key: "token_hash") var tokenHash: String
    @Field(key: "created_at") var createdAt: Date
    @Field(key: "expires_at") var expiresAt: Date
    @Field(key: "last_used_at") var lastUsedAt: Date
    @OptionalField(key: "device") var device: String?
    @OptionalField(key: "ip") var ip: String?

    init() {}

    init(id: UUID = UUID(), accountID: UUID, tokenHash: String, now: Date, expiresAt: Date, device: String?, ip: String?) {
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
