import AsyncHTTPClient
import FluentKit
import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehousePlatform
import GatehouseServer
import GatehouseTestSupport
import HummingbirdTesting
import NIOConcurrencyHelpers
import NIOCore
import SQLKit
import Testing

/// The two blob stores, each against the real thing: a folder, and moto's S3 server.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case files, s3
    var testDescription: String { rawValue }
}

/// A fresh, empty store of the kind; `body` gets it, the folder or bucket is left behind for the OS or moto.
func withStore(_ kind: StoreKind, s3PageSize: Int = 1_000, _ body: (any BlobStore) async throws -> Void) async throws {
    switch kind {
    case .files:
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("blobs-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try await body(try FileBlobStore(root: root))
    case .s3:
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            var settings = S3BlobStore.Settings(endpoint: try await MotoServer.endpoint(), bucket: "t-\(UUID().uuidString.lowercased().prefix(18))",
                                                accessKey: "test-access", secretKey: "test-secret")
            settings.listPageSize = s3PageSize
            let store = try S3BlobStore(settings: settings, client: client)
            try await store.createBucket()
            try await body(store)
        } catch {
            try await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }
}

@Suite("Blob store")
struct BlobStoreTests {
    @Test("put, get and delete; the same bytes are one blob; listing by age", arguments: StoreKind.allCases)
    func roundTrip(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let bytes = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            let key = try await store.put(bytes)
            #expect(key == BlobKey(of: bytes))
            #expect(try await store.put(bytes) == key, "a second put of the same bytes is the same blob")
            #expect(try await store.get(key) == bytes)
            let other = try await store.put(Data("other".utf8))
            #expect(try await store.get(BlobKey(of: Data("never stored".utf8))) == nil)

            #expect(Set(try await store.keys(putBefore: Date().addingTimeInterval(60))) == [key, other])
            #expect(try await store.keys(putBefore: Date().addingTimeInterval(-3_600)).isEmpty)

            try await store.delete(key)
            #expect(try await store.get(key) == nil)
            try await store.delete(key)   // deleting twice is fine
            #expect(try await store.keys(putBefore: Date().addingTimeInterval(60)) == [other])
        }
    }

    @Test("streamed: the whole blob and a range, in chunks no larger than asked, each written before the next is read", arguments: StoreKind.allCases)
    func stream_inChunks(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            // setup
            let bytes = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) })
            let key = try await store.put(bytes)
            let chunks = NIOLockedValueBox<[Int]>([])
            let received = NIOLockedValueBox(Data())

            // MUT
            try await store.stream(key, range: nil, chunkSize: 65_536) { chunk in
                chunks.withLockedValue { $0.append(chunk.readableBytes) }
                received.withLockedValue { $0.append(contentsOf: chunk.readableBytesView) }
            }
            var part = Data()
            try await store.stream(key, range: 70_000...70_099, chunkSize: 64) { part.append(contentsOf: $0.readableBytesView) }

            // validate
            #expect(received.withLockedValue { $0 } == bytes)
            #expect(chunks.withLockedValue { $0 }.allSatisfy { $0 <= 65_536 } && chunks.withLockedValue { $0 }.count >= 5, "\(chunks.withLockedValue { $0 })")
            #expect(part == bytes[70_000...70_099])
        }
    }

    @Test("a streamed blob whose bytes changed on disk throws before its last chunk: the reader never gets a whole-looking wrong file")
    func stream_corruptFile_withholdsTheLastChunk() async throws {
        try await withStore(.files) { store in
            // setup
            let files = try #require(store as? FileBlobStore)
            let bytes = Data(repeating: 7, count: 200_000)
            let key = try await store.put(bytes)
            var tampered = bytes
            tampered[150_000] = 8
            try tampered.write(to: files.path(key))
            var written = 0

            // MUT + validate
            await #expect(throws: BlobStoreError.self) {
                try await store.stream(key, range: nil, chunkSize: 65_536) { written += $0.readableBytes }
            }
            #expect(written < bytes.count, "the last chunk is held back: \(written)")
        }
    }

    @Test("a listing longer than one page is read to its end (continuation tokens)")
    func s3Listing_followsContinuationTokens() async throws {
        try await withStore(.s3, s3PageSize: 2) { store in
            // setup
            var keys: Set<BlobKey> = []
            for n in 0..<7 { keys.insert(try await store.put(Data("blob \(n)".utf8))) }
            // MUT
            let listed = try await store.keys(putBefore: Date().addingTimeInterval(60))
            // validate: four pages of two
            #expect(listed.count == 7 && Set(listed) == keys)
        }
    }

    @Test("a file blob whose bytes changed on disk is refused, not served")
    func corruptFile_isRefused() async throws {
        try await withStore(.files) { store in
            let files = try #require(store as? FileBlobStore)
            let key = try await store.put(Data("avatar bytes".utf8))
            try Data("tampered bytes".utf8).write(to: files.path(key))
            await #expect(throws: BlobStoreError.self) { try await store.get(key) }
        }
    }

    @Test("SigV4: our signature is botocore's for the same requests")
    func signature_matchesBotocore() async throws {
        let signer = SigV4(accessKey: "AKIDEXAMPLE", secretKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", region: "eu-west-1")
        let date = Date(timeIntervalSince1970: 1_767_323_045)   // 2026-01-02T03:04:05Z
        let cases: [(method: String, path: String, query: [(String, String)], body: String)] = [
            ("PUT", "/bucket/blobs/\(String(repeating: "ab", count: 32))", [], "hello"),
            ("GET", "/bucket", [("list-type", "2"), ("prefix", "blobs/"), ("continuation-token", "a b+c/=")], ""),
            ("DELETE", "/my bucket/ключ", [], ""),
        ]
        for c in cases {
            let payload = SigV4.hex(Data(c.body.utf8).sha256)
            let ours = signer.sign(method: c.method, host: "s3.example.com:9000", path: c.path, query: c.query, payloadSHA256: payload, date: date)
            let query = c.query.map { "\(SigV4.encode($0.0, keepSlash: false))=\(SigV4.encode($0.1, keepSlash: false))" }.joined(separator: "&")
            let url = "https://s3.example.com:9000\(SigV4.encode(c.path, keepSlash: true))" + (query.isEmpty ? "" : "?\(query)")
            let theirs = try BotocoreSigner.authorization(method: c.method, url: url, body: c.body, payloadSHA256: payload, amzDate: "20260102T030405Z",
                                                          accessKey: signer.accessKey, secretKey: signer.secretKey, region: signer.region)
            #expect(ours.first { $0.0 == "authorization" }?.1 == theirs, "\(c.method) \(c.path)")
            #expect(ours.first { $0.0 == "x-amz-date" }?.1 == "20260102T030405Z")
        }
    }
}

extension Data {
    var sha256: [UInt8] { Array(BlobKeyDigest.sha256(self)) }
}

enum BlobKeyDigest {
    static func sha256(_ data: Data) -> [UInt8] {
        [UInt8](hex: BlobKey(of: data).hex)
    }
}

@Suite("Avatars in the blob store")
struct AvatarBlobTests {
    static let png = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")!

    @Test("an avatar's bytes are a blob; a replaced one is collected after the grace period, the current one never", .tags(.engine), arguments: TestEngine.all)
    func replacedAvatar_isCollected(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            let session = try await app.v1.signedUp(email: "pic@example.com")
            let first = try await app.v1.put(V1.Accounts.uploadAvatar.path, body: Array(Self.png), contentType: "image/png", token: session.token)
            #expect(first.status == .ok)
            let firstKey = BlobKey(of: Self.png)
            #expect(try await app.services.blobs.get(firstKey) == Self.png)

            let second = try #require(Data(base64Encoded: "R0lGODlhAgACAPAAAMgeHgAAACH5BAAAAAAALAAAAAACAAIAAAIChFEAOw=="))  // a 2×2 GIF
            let replaced = try await app.v1.put(V1.Accounts.uploadAvatar.path, body: Array(second), contentType: "image/gif", token: session.token)
            #expect(replaced.status == .ok, "\(replaced.text)")
            let avatarURL = try #require(try replaced.decoded(as: Account.self).avatarUrl)

            // Within the grace period nothing goes; past it, only the blob no row names.
            #expect(try await app.services.blobCollector.collect(now: Date()) == 0)
            #expect(try await app.services.blobCollector.collect(now: Date().addingTimeInterval(app.configuration.storage.collectorGrace + 1)) == 1)
            #expect(try await app.services.blobs.get(firstKey) == nil)
            let served = try await app.v1.get(try #require(URL(string: avatarURL)?.path))
            #expect(served.status == .ok && Data(buffer: served.body) == second)
        }
    }

    @Test("avatars kept in the database by an older version move to the blob store, under the same URL", arguments: TestEngine.once)
    func legacyAvatars_move(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            let session = try await app.v1.signedUp(email: "old@example.com")
            // What version 007 wrote: the bytes in `avatars`, the account pointing at the row.
            let id = UUID()
            let sql = app.services.database.sql
            try await sql.raw("""
                INSERT INTO avatars (id, account_id, content_type, bytes, created_at)
                VALUES (\(bind: id), \(bind: session.account.id), 'image/png', \(bind: Self.png), \(bind: Date()))
                """).run()
            try await sql.raw("UPDATE accounts SET avatar_id = \(bind: id) WHERE id = \(bind: session.account.id)").run()

            try await app.services.migrate()   // what the next start does

            #expect(try await sql.raw("SELECT id FROM avatars").all().isEmpty)
            let served = try await app.v1.get(V1.filling(V1.Accounts.avatarImage.path, ["id": id.uuidString.lowercased()]))
            #expect(served.status == .ok)
            #expect(Data(buffer: served.body) == Self.png)
            #expect(try await app.services.blobs.get(BlobKey(of: Self.png)) == Self.png)
            #expect(try await AvatarMove(database: app.services.database, store: app.services.blobs).run() == 0, "a second run has nothing to move")
        }
    }

    @Test("with GATEHOUSE_S3_BUCKET set, avatars go to the bucket and come back from it")
    func s3Configured_servesAvatars() async throws {
        let endpoint = try await MotoServer.endpoint()
        let bucket = "avatars-\(UUID().uuidString.lowercased().prefix(12))"
        try await withApp(.sqlite, configure: {
            $0.storage.s3 = .init(endpoint: endpoint, bucket: bucket, accessKey: "test-access", secretKey: "test-secret")
        }) { app in
            let store = try #require(app.services.blobs as? S3BlobStore)
            try await store.createBucket()
            let session = try await app.v1.signedUp(email: "s3@example.com")
            let uploaded = try await app.v1.put(V1.Accounts.uploadAvatar.path, body: Array(Self.png), contentType: "image/png", token: session.token)
            #expect(uploaded.status == .ok)
            let avatarURL = try #require(try uploaded.decoded(as: Account.self).avatarUrl)
            #expect(try await store.keys(putBefore: Date().addingTimeInterval(60)) == [BlobKey(of: Self.png)])
            let served = try await app.v1.get(try #require(URL(string: avatarURL)?.path))
            #expect(served.status == .ok && Data(buffer: served.body) == Self.png)

            // The collector on the bucket: a replaced avatar's object goes after the grace period.
            let gif = try #require(Data(base64Encoded: "R0lGODlhAgACAPAAAMgeHgAAACH5BAAAAAAALAAAAAACAAIAAAIChFEAOw=="))
            let replaced = try await app.v1.put(V1.Accounts.uploadAvatar.path, body: Array(gif), contentType: "image/gif", token: session.token)
            #expect(replaced.status == .ok)
            #expect(try await app.services.blobCollector.collect(now: Date()) == 0)
            #expect(try await app.services.blobCollector.collect(now: Date().addingTimeInterval(app.configuration.storage.collectorGrace + 1)) == 1)
            #expect(try await store.keys(putBefore: Date().addingTimeInterval(60)) == [BlobKey(of: gif)])
        }
    }
}
