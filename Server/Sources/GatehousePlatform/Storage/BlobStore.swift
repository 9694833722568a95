import Crypto
import Foundation
import NIOCore
import NIOPosix

/// The name of a blob: the SHA-256 of its bytes, in lowercase hex. The same bytes are stored
/// once, whoever uploads them, and a name never changes meaning.
package struct BlobKey: Hashable, Sendable, CustomStringConvertible {
    package let hex: String

    package init(of data: Data) {
        self.init(digest: SHA256.hash(data: data))
    }

    /// The key of bytes hashed piece by piece (a blob read as a stream).
    package init(digest: SHA256.Digest) {
        hex = digest.map { String(format: "%02x", $0) }.joined()
    }

    /// A key read back (from a row or a listing); nil unless it is 64 lowercase hex digits.
    package init?(hex: String) {
        guard hex.utf8.count == 64, hex.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else { return nil }
        self.hex = hex
    }

    package var description: String { hex }
}

/// Where large bytes live (DESIGN §7 "Storage"): avatars today, then message attachments, photos
/// and PDFs. Rows in the database name blobs by key; the store only keeps bytes.
///
/// Blobs are immutable and content-addressed, so a `put` is idempotent (a retry, or the same
/// image from two people, stores one copy) and there is no update. A blob is deleted only by the
/// collector (`BlobCollector`), when no row names it and it has not been put for a grace period,
/// so an upload racing a delete can never lose its bytes.
package protocol BlobStore: Sendable {
    /// Stores the bytes (or refreshes the time of a blob already there) and returns their key.
    @discardableResult
    func put(_ data: Data) async throws -> BlobKey
    /// The bytes, or nil when there is no such blob.
    func get(_ key: BlobKey) async throws -> Data?
    func delete(_ key: BlobKey) async throws
    /// Every blob last put before `date`.
    func keys(putBefore date: Date) async throws -> [BlobKey]
    /// Hands the bytes of `range` (the whole blob when nil) to `write`, at most `chunkSize` at a
    /// time, reading ahead by one chunk only: a download holds a chunk or two however slowly its
    /// reader takes them, never the file. A whole blob is checked against its key as it goes and
    /// its last chunk is held back until the check passed: a blob that does not match, or ends
    /// early, throws (`corrupt`) and its reader gets a cut answer, never a wrong one that looks whole.
    func stream(_ key: BlobKey, range: ClosedRange<Int>?, chunkSize: Int, to write: (ByteBuffer) async throws -> Void) async throws
}

/// The read-ahead-by-one rule of `BlobStore.stream`, for every store: chunks in, the check of a
/// whole blob, and the last chunk written only once it passed.
package struct BlobStreamChecker {
    package let key: BlobKey
    private var hasher: SHA256?
    private var pending: ByteBuffer?
    package private(set) var count = 0

    package init(key: BlobKey, whole: Bool) {
        self.key = key
        hasher = whole ? SHA256() : nil
    }

    /// Takes a chunk; writes the one before it.
    package mutating func take(_ chunk: ByteBuffer, _ write: (ByteBuffer) async throws -> Void) async throws {
        guard chunk.readableBytes > 0 else { return }
        chunk.withUnsafeReadableBytes { hasher?.update(bufferPointer: $0) }
        count += chunk.readableBytes
        if let previous = pending { try await write(previous) }
        pending = chunk
    }

    /// The check, then the last chunk. `expected`: how many bytes there had to be (nil: any).
    package mutating func finish(expected: Int?, _ write: (ByteBuffer) async throws -> Void) async throws {
        if let expected, count != expected { throw BlobStoreError.corrupt(key) }
        if let hasher, BlobKey(digest: hasher.finalize()) != key { throw BlobStoreError.corrupt(key) }
        if let last = pending { try await write(last) }
        pending = nil
    }
}

package enum BlobStoreError: Error, CustomStringConvertible {
    case corrupt(BlobKey)
    case backend(String)

    package var description: String {
        switch self {
        case .corrupt(let key): "blob \(key) does not match its key"
        case .backend(let message): message
        }
    }
}

/// The embedded default: files in a folder (beside the SQLite file), `ab/cd/<key>`. A blob is
/// written to a temporary file, fsynced, renamed into place and its folder fsynced, so a crash
/// leaves either the whole blob or none. Reads check the bytes against the key.
package struct FileBlobStore: BlobStore {
    package let root: URL

    /// Touches nothing on disk: the folders appear with the first blob.
    package init(root: URL) throws {
        self.root = root
    }

    package func path(_ key: BlobKey) -> URL {
        let hex = key.hex
        return root.appendingPathComponent(String(hex.prefix(2)))
            .appendingPathComponent(String(hex.dropFirst(2).prefix(2)))
            .appendingPathComponent(hex)
    }

    package func put(_ data: Data) async throws -> BlobKey {
        let key = BlobKey(of: data)
        let target = path(key)
        try await Self.offLoop {
            let manager = FileManager.default
            if manager.fileExists(atPath: target.path) {
                try manager.setAttributes([.modificationDate: Date()], ofItemAtPath: target.path)
                return
            }
            let folder = target.deletingLastPathComponent()
            try manager.createDirectory(at: folder, withIntermediateDirectories: true)
            let temporaries = root.appendingPathComponent("tmp")
            try manager.createDirectory(at: temporaries, withIntermediateDirectories: true)
            let temporary = temporaries.appendingPathComponent(UUID().uuidString)
            try Self.writeSynced(data, to: temporary)
            guard rename(temporary.path, target.path) == 0 else {
                let failure = errno
                try? manager.removeItem(at: temporary)
                throw BlobStoreError.backend("rename into \(folder.path): \(String(cString: strerror(failure)))")
            }
            Self.syncFolder(folder)
        }
        return key
    }

    package func get(_ key: BlobKey) async throws -> Data? {
        let file = path(key)
        return try await Self.offLoop {
            guard let data = FileManager.default.contents(atPath: file.path) else { return nil }
            guard BlobKey(of: data) == key else { throw BlobStoreError.corrupt(key) }
            return data
        }
    }

    package func stream(_ key: BlobKey, range: ClosedRange<Int>?, chunkSize: Int, to write: (ByteBuffer) async throws -> Void) async throws {
        let file = path(key)
        let fd = try await Self.offLoop { () -> Int32 in
            let fd = open(file.path, O_RDONLY)
            guard fd >= 0 else { throw BlobStoreError.backend("open \(file.path): \(String(cString: strerror(errno)))") }
            return fd
        }
        defer { close(fd) }
        var checker = BlobStreamChecker(key: key, whole: range == nil)
        var offset = range?.lowerBound ?? 0
        let end = range.map { $0.upperBound + 1 } ?? Int.max
        let size = max(1, chunkSize)
        while offset < end {
            let want = min(size, end - offset), at = offset
            let chunk = try await Self.offLoop { () -> ByteBuffer in
                var buffer = ByteBufferAllocator().buffer(capacity: want)
                var failure: Int32 = 0
                buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: want) { pointer in
                    let read = pread(fd, pointer.baseAddress, want, off_t(at))
                    if read < 0 { failure = errno }
                    return max(0, read)
                }
                guard failure == 0 else { throw BlobStoreError.backend("read \(file.path): \(String(cString: strerror(failure)))") }
                return buffer
            }
            if chunk.readableBytes == 0 { break }
            offset += chunk.readableBytes
            try await checker.take(chunk, write)
        }
        try await checker.finish(expected: range.map(\.count), write)
    }

    package func delete(_ key: BlobKey) async throws {
        let file = path(key)
        try await Self.offLoop {
            if unlink(file.path) != 0, errno != ENOENT {
                throw BlobStoreError.backend("delete \(file.path): \(String(cString: strerror(errno)))")
            }
        }
    }

    package func keys(putBefore date: Date) async throws -> [BlobKey] {
        let root = self.root
        return try await Self.offLoop {
            var found: [BlobKey] = []
            let manager = FileManager.default
            for first in (try? manager.contentsOfDirectory(atPath: root.path)) ?? [] where first.count == 2 {
                let level1 = root.appendingPathComponent(first)
                for second in (try? manager.contentsOfDirectory(atPath: level1.path)) ?? [] {
                    let level2 = level1.appendingPathComponent(second)
                    for name in (try? manager.contentsOfDirectory(atPath: level2.path)) ?? [] {
                        guard let key = BlobKey(hex: name),
                              let modified = try? manager.attributesOfItem(atPath: level2.appendingPathComponent(name).path)[.modificationDate] as? Date,
                              modified < date
                        else { continue }
                        found.append(key)
                    }
                }
            }
            return found
        }
    }

    private static func writeSynced(_ data: Data, to url: URL) throws {
        let fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else { throw BlobStoreError.backend("create \(url.path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        try data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw BlobStoreError.backend("write \(url.path): \(String(cString: strerror(errno)))")
                }
                offset += written
            }
        }
        guard fsync(fd) == 0 else { throw BlobStoreError.backend("fsync \(url.path): \(String(cString: strerror(errno)))") }
    }

    private static func syncFolder(_ folder: URL) {
        let fd = open(folder.path, O_RDONLY)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }

    /// File I/O blocks: it runs on NIO's blocking-I/O pool, never on an event loop or the cooperative pool.
    private static func offLoop<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await NIOThreadPool.singleton.runIfActive(work)
    }
}
