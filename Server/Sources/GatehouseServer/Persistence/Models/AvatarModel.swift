import FluentKit
import Foundation

/// An avatar: its bytes are a blob in the `BlobStore`, named by `blobKey`; the row says whose
/// it is and what type. A new upload gets a new id, so an avatar URL never changes meaning.
final class AvatarModel: Model, @unchecked Sendable {
    static let schema = "avatar_images"

    @ID(key: .id) var id: UUID?
    @Field(key: "account_id") var accountID: UUID
    @Field(key: "content_type") var contentType: String
    @Field(key: "blob_key") var blobKey: String
    @Field(key: "size") var size: Int
    @Field(key: "created_at") var createdAt: Date

    init() {}

    init(id: UUID = UUID(), accountID: UUID, contentType: String, blob: BlobKey, size: Int, now: Date) {
        self.id = id
        self.accountID = accountID
        self.contentType = contentType
        self.blobKey = blob.hex
        self.size = size
        self.createdAt = now
    }
}
