import FluentKit
import Foundation
import GatehousePlatform

/// An avatar: its bytes are a blob in the `BlobStore`, named by `blobKey`; the row says whose
/// it is and what type. A new upload gets a new id, so an avatar URL never changes meaning.
package final class AvatarModel: Model, @unchecked Sendable {
    package static let schema = "avatar_images"

    @ID(key: .id) package var id: UUID?
    @Field(key: "account_id") package var accountID: UUID
    @Field(key: "content_type") package var contentType: String
    @Field(key: "blob_key") package var blobKey: String
    @Field(key: "size") package var size: Int
    @Field(key: "created_at") package var createdAt: Date

    package init() {}

    package init(id: UUID = UUID(), accountID: UUID, contentType: String, blob: BlobKey, size: Int, now: Date) {
        self.id = id
        self.accountID = accountID
        self.contentType = contentType
        self.blobKey = blob.hex
        self.size = size
        self.createdAt = now
    }
}
