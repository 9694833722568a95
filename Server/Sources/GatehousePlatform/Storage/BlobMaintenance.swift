import FluentKit
import Foundation
import GatehouseFoundation
import Logging
import NIOConcurrencyHelpers
import SQLKit

/// The rows that name blobs. A blob is kept while any of these columns holds its key; a new
/// kind of blob (attachments, documents) adds its table here.
package enum BlobReferences {
    package static let columns: [(table: String, column: String)] = [
        ("avatar_images", "blob_key"),
        ("attachments", "blob_key"),
        ("apps", "icon_blob_key"),
        ("signature_attempts", "photo_blob_key"),
        ("signature_profiles", "photo_blob_key"),
    ]

    package static func isReferenced(_ key: BlobKey, on sql: any SQLDatabase) async throws -> Bool {
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
package final class BlobCollector: Sendable {
    package let store: any BlobStore
    package let database: DatabaseProvider
    package let grace: TimeInterval
    package let interval: TimeInterval
    package let logger: Logger
    private let lastRun = NIOLockedValueBox<Date?>(nil)

    package init(store: any BlobStore, database: DatabaseProvider, grace: TimeInterval, interval: TimeInterval = 3_600, logger: Logger) {
        self.store = store
        self.database = database
        self.grace = grace
        self.interval = interval
        self.logger = logger
    }

    package func runIfDue(now: Date = Date()) async throws {
        let due = lastRun.withLockedValue { last -> Bool in
            if let last, now.timeIntervalSince(last) < interval { return false }
            last = now
            return true
        }
        if due { try await collect(now: now) }
    }

    /// One pass; the number of blobs deleted.
    @discardableResult
    package func collect(now: Date = Date()) async throws -> Int {
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
