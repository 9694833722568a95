import FluentKit
import Foundation
import GatehouseFoundation
import GatehousePlatform

/// Moves avatars kept in the database before blobs existed (table `avatars`) into the blob store
/// and `avatar_images`, keeping their ids (so their URLs still work). One avatar at a time: its
/// blob is stored first, then its new row is written and its old row deleted in one
/// transaction, so a crash anywhere leaves it either moved or still to move. Runs after the
/// migrations; a no-op once the old table is empty.
package struct AvatarMove {
    package let database: DatabaseProvider
    package let store: any BlobStore

    package struct Row: Decodable {
        package var id: UUID
        package var account_id: UUID
        package var content_type: String
        package var bytes: Data
        package var created_at: Date
    }

    @discardableResult
    package func run() async throws -> Int {
        var moved = 0
        let accounts = AccountStore(database: database)
        while let row = try await accounts.avatarInDatabase() {
            let key = try await store.put(row.bytes)
            try await database.db.withTransaction { tx in
                try await AvatarModel(id: row.id, accountID: row.account_id, contentType: row.content_type, blob: key, size: row.bytes.count, now: row.created_at)
                    .create(on: tx)
                try await accounts.removeAvatarFromDatabase(row.id, on: tx)
            }
            moved += 1
        }
        if moved > 0 { database.logger.info("moved avatars from the database to the blob store", metadata: ["count": "\(moved)"]) }
        return moved
    }

    package init(database: DatabaseProvider, store: any BlobStore) {
        self.database = database
        self.store = store
    }
}
