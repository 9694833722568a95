import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehouseServer
import GatehouseTestSupport
import HTTPTypes
import HummingbirdTesting
import NIOConcurrencyHelpers
import NIOCore
import Testing

/// The restore drill (docs/deploy.md, "Backup and restore"): data of every app written, backed up
/// while the server runs, the database and the blob folder wiped, restored, and every account,
/// message, movement, file and document found as it was.
@Suite("Backup and restore")
struct BackupRestoreTests {
    /// What the people see, read over the wire: the same reads before the backup and after the restore.
    struct Seen: Equatable, Sendable {
        var ann: Account
        var bobsChats: ChatPage
        var history: MessagePage
        var bobsMoves: WalletTransactionPage
        var annsBalance: Int64
        var file: [UInt8]
        var avatar: [UInt8]
        var signers: [String]
        var signatures: [String]
    }

    func seen(_ app: TestHarness, ann: Someone, bob: Someone, chat: UUID, file: UUID, key: String, documentID: String) async throws -> Seen {
        let me = try await app.v1.me(ann.token)
        let avatarPath = try #require(me.avatarUrl.map { String($0.dropFirst(app.configuration.publicURL.count)) })
        let opened = try await app.v1.post("/opendocument/", json: """
            {"apikey":"\(key)","email":"bob@example.com","documentid":"\(documentID)","document_hash":"h1"}
            """)
        let history = try #require(try opened.jsonObject()["history"] as? [[String: Any]], "\(opened.text)")
        return Seen(
            ann: me,
            bobsChats: try await app.v1.chats(of: bob),
            history: try await app.v1.history(chat, for: bob),
            bobsMoves: try await app.v1.get(V1.Wallet.transactions.path, token: bob.token).decoded(as: WalletTransactionPage.self),
            annsBalance: try await app.v1.balance(of: ann),
            file: Array(try await app.v1.get(app.v1.path(V1.Messenger.download, file), token: bob.token).body.readableBytesView),
            avatar: Array(try await app.v1.get(avatarPath).body.readableBytesView),
            signers: history.compactMap { $0["name"] as? String },
            signatures: history.compactMap { $0["signatureid"] as? String }
        )
    }

    @Test("written by every app, backed up while serving, wiped, restored: every account, message, movement, file and document as it was", .tags(.engine), arguments: TestEngine.all)
    func drill(engine: TestEngine) async throws {
        let database = try await TestDatabase.make(engine)
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-drill-\(UUID().uuidString)")
        let blobs = scratch.appendingPathComponent("blobs").path
        let backup = scratch.appendingPathComponent("backup")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let configure: @Sendable (inout GatehouseConfiguration) -> Void = { $0.storage.directory = blobs }
        let written = NIOLockedValueBox<(Seen, Someone, Someone, UUID, UUID, String, String)?>(nil)

        // Every app writes: accounts with an avatar, a chat with a file, money moved, a signed document.
        try await withApp(on: database, configure: configure, keep: true) { app in
            let ann = try await app.v1.walletHolder("ann", phone: "+79160000001")
            let bob = try await app.v1.walletHolder("bob", phone: "+79160000002")
            try await app.v1.befriend(ann, bob)
            let chat = try await app.v1.openChat(ann, with: bob)
            let file = try await app.v1.upload(Array("the notes".utf8), type: "text/plain", name: "notes.txt", by: ann)
            try await app.v1.send("hello Bob", in: chat.id, by: ann, attachments: [file.id])
            let avatar = try await app.v1.put(V1.Accounts.uploadAvatar.path, body: SampleFiles.png, contentType: "image/png", token: ann.token)
            #expect(avatar.status == .ok, "\(avatar.text)")
            _ = try await app.credit("+79160000001", 100_00)
            try await app.v1.paid(30_00, to: bob, by: ann, comment: "за кофе")
            var f = try await SignatureEndpointsTests().fixture(app)
            let signers = try await SignatureEndpointsTests().signed(&f, photo: true)
            let saved = try await f.json("/savedocument/", ["apikey": "\"\(f.key)\"", "email": "\"ann@example.com\"", "previous_hash": "\"\"",
                                                             "document_hash": "\"h1\"", "signatures": "[\"\(signers.ann)\"]", "sessionid": "\"\(signers.annSession)\""])
            let documentID = try #require(saved["documentid"] as? String, "\(saved)")
            let before = try await seen(app, ann: ann, bob: bob, chat: chat.id, file: file.id, key: f.key, documentID: documentID)
            #expect(before.history.items.map(\.text) == ["hello Bob", "за кофе"], "the message and the payment's")
            #expect(before.signers == ["Ann Smith"] && before.signatures == [signers.ann] && before.avatar == SampleFiles.png)

            // MUT 1: the backup, while the server serves
            let manifest = try await BackupCommands.backup(configuration: app.configuration, to: backup)
            #expect(manifest.engine == (engine == .sqlite ? "sqlite" : "postgres") && manifest.gatehouse == GatehouseVersion.current)
            // The avatar and the signature's photo are the same bytes: one blob, beside the file.
            #expect(manifest.blobs == 2, "\(String(describing: manifest.blobs))")
            written.withLockedValue { $0 = (before, ann, bob, chat.id, file.id, f.key, documentID) }
        }
        let (before, ann, bob, chat, file, key, documentID) = try #require(written.withLockedValue { $0 })

        // MUT 2: the database and the blob folder are lost, then restored
        try await database.wipe()
        try FileManager.default.removeItem(atPath: blobs)
        var configuration = GatehouseConfiguration.testing(database: database.location)
        configure(&configuration)
        let manifest = try await BackupCommands.restore(configuration: configuration, from: backup)
        #expect(manifest.database == (engine == .sqlite ? "gatehouse.sqlite" : "gatehouse.pgdump"))

        // validate: the same reads, the same answers; the sessions still sign in; the ledger balances
        try await withApp(on: database, configure: configure, keep: false) { app in
            let after = try await seen(app, ann: ann, bob: bob, chat: chat, file: file, key: key, documentID: documentID)
            #expect(after == before)
            #expect(try await app.services.wallet.wallets.audit().isEmpty)
            #expect(try await app.v1.login("bob", "secret-91!").account.id == bob.id)
        }
        // A backup goes into a folder of its own; a restore needs one.
        await #expect(throws: BackupCommands.Failure.self) { _ = try await BackupCommands.backup(configuration: configuration, to: backup) }
        await #expect(throws: BackupCommands.Failure.self) { _ = try await BackupCommands.restore(configuration: configuration, from: scratch) }
    }
}
