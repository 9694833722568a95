import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform

/// Avatars: the image checked to its end, its bytes in the blob store, its row naming them; a new
/// upload gets a fresh id, so its URL never changes meaning and can be cached forever.
package struct AvatarService: Sendable {
    package let database: DatabaseProvider
    package let clock: GatehouseClock
    package let limits: GatehouseConfiguration.Limits
    package let blobs: any BlobStore
    package var store: AccountStore { AccountStore(database: database) }

    package typealias AvatarFormat = ImageFormat

    /// The format a `Content-Type` names (parameters ignored), or `unsupported_media_type`.
    package func avatarFormat(contentType: String?) throws -> AvatarFormat {
        let type = (contentType ?? "").split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        guard let format = AvatarFormat(rawValue: type) else {
            throw GatehouseError(.unsupportedMediaType, .unsupportedMediaType,
                                 LocalizedText("error.unsupportedMediaType", [String(type.prefix(60)), AvatarFormat.allowedList]))
        }
        return format
    }

    /// Replaces the account's avatar. The bytes must be the declared format. The blob is stored
    /// before the row that names it; the old avatar's blob is left to the collector.
    package func setAvatar(accountID: UUID, format: AvatarFormat, bytes: Data) async throws -> AccountSnapshot {
        guard !bytes.isEmpty else { throw GatehouseError.invalid(.invalidImage, "error.emptyImage") }
        guard bytes.count <= limits.avatarMaxBytes else { throw GatehouseError.bodyTooLarge(limits.avatarMaxBytes) }
        guard format.matches(bytes), ImageStructure.isComplete(bytes, format: format) else {
            throw GatehouseError.invalid(.invalidImage, "error.invalidImage", format.rawValue)
        }
        let account = try await store.accountRow(id: accountID)
        let blob = try await blobs.put(bytes)
        let now = clock.now()
        let avatar = AvatarModel(accountID: accountID, contentType: format.rawValue, blob: blob, size: bytes.count, now: now)
        try await database.db.withTransaction { tx in
            try await AvatarModel.query(on: tx).filter(\.$accountID == accountID).delete()
            try await avatar.create(on: tx)
            account.avatarID = avatar.id
            account.updatedAt = now
            try await account.update(on: tx)
        }
        return account.snapshot
    }

    package func removeAvatar(accountID: UUID) async throws -> AccountSnapshot {
        let account = try await store.accountRow(id: accountID)
        guard account.avatarID != nil else { return account.snapshot }
        try await database.db.withTransaction { tx in
            try await AvatarModel.query(on: tx).filter(\.$accountID == accountID).delete()
            account.avatarID = nil
            account.updatedAt = clock.now()
            try await account.update(on: tx)
        }
        return account.snapshot
    }

    /// An avatar's type and bytes, or nil when there is no such avatar.
    package func avatar(id: UUID) async throws -> (contentType: String, bytes: Data)? {
        guard let row = try await AvatarModel.find(id, on: database.db), let key = BlobKey(hex: row.blobKey) else { return nil }
        guard let bytes = try await blobs.get(key) else {
            // Only an operator deleting files or objects by hand can cause this: say so, answer 404.
            database.logger.error("avatar blob missing from the blob store", metadata: ["avatar": "\(id)", "blob": "\(key)"])
            return nil
        }
        return (row.contentType, bytes)
    }

    package init(database: DatabaseProvider, clock: GatehouseClock, limits: GatehouseConfiguration.Limits, blobs: any BlobStore) {
        self.database = database
        self.clock = clock
        self.limits = limits
        self.blobs = blobs
    }
}
