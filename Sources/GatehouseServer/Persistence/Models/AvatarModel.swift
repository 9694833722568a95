import FluentKit
import Foundation

/// An avatar image, kept in the database so every instance serves it without shared storage.
final class AvatarModel: Model, @unchecked Sendable {
    static let schema = "avatars"

    @ID(key: .id) var id: UUID?
    @Field(key: "account_id") var accountID: UUID
    @Field(key: "content_type") var contentType: String
    @Field(key: "bytes") var bytes: Data
    @Field(key: "created_at") var createdAt: Date

    init() {}

    init(accountID: UUID, contentType: String, bytes: Data, now: Date) {
        self.id = UUID()
        self.accountID = accountID
        self.contentType = contentType
        self.bytes = bytes
        self.createdAt = now
    }
}
