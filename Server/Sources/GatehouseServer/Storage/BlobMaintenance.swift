import FluentKit
import Foundation
import Logging
import NIOConcurrencyHelpers
import SQLKit

/// The rows that name blobs. A blob is kept while any of these columns holds its key; a new
/// kind of blob (attachments, documents) adds its table here.
enum BlobReferences {
    static let columns: [(table: String, column: String)] = [
        ("avatar_images", "blob_key"),
        ("attachments", "blob_key"),
        ("apps", "icon_blob_key"),
        ("signature_attempts", "photo_blob_key"),
        ("signature_profiles", "photo_blob_key"),
    ]

    static func isReferenced(_ key: BlobKey, on sql: any SQLDatabase) async throws -> Bool {
        for (table, column) in columns {
            let row = try await sql.raw("SELECT 1 AS found FROM \(ident: table) WHERE \(ident: column) = \(bind: key.hex) LIMIT 1").first()
            if row != nil { return true }
        }
        return false
    }
}

/// Deletes blobs no row names once they are older than the grace period. Content addressing
/// makes "delete when the last row goes" racy (someone may be uploading the same bytes that
/// moment); the grace period, counted from the blob's last `put`, makes it safe: an upload
/// refreshes the time before its row is written. Runs from the deliverer's maintenance, at most
/// once per `interval`, on every instance (deleting twice is harmless).
final class BlobCollector: Sendable {
    let store: any BlobStore
    let database: DatabaseProvider
    let grace: TimeInterval
    let interval: TimeInterval
    let logger: Logger
    private let lastRun = NIOLockedValueBox<Date?>(nil)

    init(store: any BlobStore, database: DatabaseProvider, grace: TimeInterval, interval: TimeInterval = 3_600, logger: Logger) {
        self.store = store
        self.database = database
        self.grace = grace
        self.interval = interval
        self.logger = logger
    }

    func runIfDue(now: Date = Date()) async throws {
        let due = lastRun.withLockedValue { last -> Bool in
            if let last, now.timeIntervalSince(last) < interval { return false }
            last = now
            return true
        }
        if due { try await collect(now: now) }
    }

    /// One pass; the number of blobs deleted.
    @discardableResult
    func collect(now: Date = Date()) async throws -> Int {
        var deleted = 0
        for key in try await store.keys(putBefore: now.addingTimeInterval(-grace)) {
            guard try await !BlobReferences.isReferenced(key, on: database.sql) else { continue }
            try await store.delete(key)
            deleted += 1
        }
        if deleted > 0 { logger.info("blob collector: deleted unreferenced blobs", metadata: ["count": "\(deleted)"]) }
        return deleted
    }
}

/// Moves avatars kept in the database before blobs existed (table `avatars`) into the blob store
/// and `avatar_images`, keeping their ids (so their URLs still work). One avatar at a time: its
/// blob is stored first, then its new row is written and its old row deleted in one
/// transaction, so a crash anywhere leaves it either moved or still to move. Runs after the
/// migrations; a no-op once the old table is empty.
struct AvatarMove {
    let database: DatabaseProvider
    let store: any BlobStore

    struct Row: Decodable {
        var id: UUID
        var account_id: UUID
        var content_type: String
        var bytes: Data
        var created_at: Date
    }

    @discardableResult
    func run() async throws -> Int {
        var moved = 0
        while let row = try await database.sql.raw("SELECT id, account_id, content_type, bytes, created_at FROM avatars LIMIT 1").first(decoding: Row.self) {
            let key = try await store.put(row.bytes)
            try await database.db.transaction { tx in
                let sql = tx as! any SQLDatabase
                try await AvatarModel(id: row.id, accountID: row.account_id, contentType: row.content_type, blob: key, size: row.bytes.count, now: row.created_at)
                    .create(on: tx)
                try await sql.raw("DELETE FROM avatars WHERE id = \(bind: row.id)").run()
            }
            moved += 1
        }
        if moved > 0 { database.logger.info("moved avatars from the database to the blob store", metadata: ["count": "\(moved)"]) }
        return moved
    }
}
