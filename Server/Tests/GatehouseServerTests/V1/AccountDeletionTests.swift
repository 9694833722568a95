import Foundation
import GatehouseAPI
import GatehousePlatform
import GatehouseServer
import GatehouseTestSupport
import HTTPTypes
import HummingbirdTesting
import NIOCore
import SQLKit
import Testing

/// `DELETE /v1/me` through every app: what stops at once, what a password login takes back, and
/// what the erasure leaves in the database and the blob store (docs/security.md, "Account deletion").
@Suite("Account deletion")
struct AccountDeletionTests {
    static let grace: TimeInterval = 3 * 86_400

    func deleteMe(_ app: TestHarness, _ someone: Someone, password: String = "secret-91!") async throws -> TestResponse {
        try await app.v1.send(.delete, V1.Accounts.deleteMe.path, body: V1Client.encode(AccountDeletionRequest(currentPassword: password)),
                              contentType: "application/json", token: someone.token)
    }

    func count(_ app: TestHarness, _ query: SQLQueryString) async throws -> Int {
        try await app.services.database.sql.raw("SELECT COUNT(*) AS n FROM \(query)").first(decodingColumn: "n", as: Int.self) ?? -1
    }

    @Test("deleting through every app: refusals first, then sessions end at once, nobody finds the person, and the erasure leaves only what others keep", .tags(.engine), arguments: TestEngine.all)
    func deletion_throughEveryApp(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.limits.accountDeletionGrace = Self.grace }) { app in
            // setup: Ann and Bob with wallets, friends with a chat; Ann has an avatar, a sent and an unsent upload,
            // money, an open request to Bob, a Sign To Login enrolment and a document she signed.
            let ann = try await app.v1.walletHolder("ann", phone: "+79160000001")
            var bob = try await app.v1.walletHolder("bob", phone: "+79160000002")
            try await app.v1.befriend(ann, bob)
            let chat = try await app.v1.openChat(ann, with: bob)
            let sentFile = try await app.v1.upload(Array("the notes Ann sent".utf8), type: "text/plain", name: "notes.txt", by: ann)
            let unsentFile = try await app.v1.upload(Array("a draft Ann never sent".utf8), type: "text/plain", name: "draft.txt", by: ann)
            let message = try await app.v1.send("hello Bob", in: chat.id, by: ann, attachments: [sentFile.id])
            let avatar = try await app.v1.put(V1.Accounts.uploadAvatar.path, body: SampleFiles.png, contentType: "image/png", token: ann.token)
            #expect(avatar.status == .ok, "avatar: \(avatar.text)")
            _ = try await app.credit("+79160000001", 10_00)
            _ = try await app.v1.ask(5_00, from: bob, by: ann)
            var f = try await SignatureEndpointsTests().fixture(app)
            let signers = try await SignatureEndpointsTests().signed(&f, photo: true)
            let saved = try await f.json("/savedocument/", ["apikey": "\"\(f.key)\"", "email": "\"ann@example.com\"", "previous_hash": "\"\"",
                                                             "document_hash": "\"h1\"", "signatures": "[\"\(signers.ann)\"]", "sessionid": "\"\(signers.annSession)\""])
            let documentID = try #require(saved["documentid"] as? String, "\(saved)")
            // The blobs only Ann's data names: her avatar (the same bytes as her signature's photo) and the unsent upload.
            let annsAvatar = try #require(try await app.services.database.sql.raw("SELECT blob_key FROM avatar_images WHERE account_id = \(bind: ann.id)")
                .first(decodingColumn: "blob_key", as: String.self))
            let unsentBlob = try await blobKey(app, "attachments", unsentFile.id)
            let sentBlob = try await blobKey(app, "attachments", sentFile.id)

            // MUT 1: the refusals — a wrong password, then money in the wallet
            try expectProblem(try await deleteMe(app, ann, password: "wrong-1!"), .badRequest, .invalidCredentials)
            try expectProblem(try await deleteMe(app, ann), .conflict, .walletNotEmpty)
            #expect(try await app.v1.me(ann.token).email == "ann@example.com", "a refusal changes nothing")

            // MUT 2: paid out, the deletion is accepted
            try await app.v1.paid(10_00, to: bob, by: ann)
            let accepted = try await deleteMe(app, ann)

            // validate: every way in stops at once; nobody finds or pays Ann; Bob still sees the chat
            #expect(accepted.status == .accepted, "\(accepted.text)")
            let deletion = try accepted.decoded(as: AccountDeletion.self)
            #expect(abs(deletion.erasureAt.timeIntervalSince(app.clock.now.addingTimeInterval(Self.grace))) < 1)
            #expect(try await app.v1.get(V1.Accounts.me.path, token: ann.token).status == .unauthorized)
            #expect(try await app.v1.get(V1.Accounts.me.path, token: signers.annSession).status == .unauthorized, "the Sign To Login session too")
            let signatureLogin = try await f.json("/login/", ["apikey": "\"\(f.key)\"", "email": "\"ann@example.com\"", "device_version": "\"iPhone 15\""])
            #expect(signatureLogin["res"] as? String == "2", "a signature does not sign in to an account being deleted: \(signatureLogin)")
            let search = try await app.v1.get(V1.Messenger.people.path + "?q=ann", token: bob.token).decoded(as: PeoplePage.self)
            #expect(search.items.isEmpty)
            try expectProblem(try await app.v1.pay(1, to: PartyReference(tag: "ann"), by: bob), .notFound, .recipientNotFound)
            #expect(try await app.v1.chats(of: bob).items.map(\.id) == [chat.id])

            // MUT 3: the grace period passes, the erasure runs (twice: the second finds nothing)
            app.clock.advance(by: Self.grace + 1)
            let erased = try await app.services.accountDeletion.eraseDue()
            let again = try await app.services.accountDeletion.eraseDue()

            // validate: the account row stays, anonymous; Ann's own data is gone
            #expect(erased == 1 && again == 0)
            let row = try #require(try await app.services.database.sql.raw("""
                SELECT email, phone, username, first_name, last_name, avatar_id, password_hash, erased_at FROM accounts WHERE id = \(bind: ann.id)
                """).first())
            for column in ["email", "phone", "username", "first_name", "last_name"] {
                #expect(try row.decode(column: column, as: String?.self) == nil, "\(column) erased")
            }
            #expect(try row.decode(column: "avatar_id", as: UUID?.self) == nil && row.decode(column: "password_hash", as: String.self) == "!")
            #expect(try row.decode(column: "erased_at", as: Date?.self) != nil)
            let annID = ann.id
            for (what, query) in [
                ("sessions", "sessions WHERE account_id = \(bind: annID)"),
                ("codes", "verification_codes WHERE account_id = \(bind: annID)"),
                ("avatars", "avatar_images WHERE account_id = \(bind: annID)"),
                ("mails and SMS", "outbox_messages WHERE destination IN ('ann@example.com', '+79160000001')"),
                ("friendships", "friendships WHERE low_id = \(bind: annID) OR high_id = \(bind: annID)"),
                ("events", "messenger_events WHERE account_id = \(bind: annID)"),
                ("the unsent upload", "attachments WHERE id = \(bind: unsentFile.id)"),
                ("open requests", "money_requests WHERE (requester_id = \(bind: annID) OR payer_id = \(bind: annID)) AND state = 'open'"),
                ("idempotency keys", "idempotency_keys WHERE account_id = \(bind: annID)"),
                ("signature models", "signature_models WHERE account_id = \(bind: annID)"),
                ("signature profiles", "signature_profiles WHERE account_id = \(bind: annID)"),
                ("attempts no document names", "signature_attempts WHERE account_id = \(bind: annID) AND id <> \(bind: signers.ann)"),
                ("the kept attempt's points, photo and place",
                 "signature_attempts WHERE id = \(bind: signers.ann) AND (points <> '[]' OR photo_blob_key IS NOT NULL OR city IS NOT NULL)"),
                ("the wallet's phone", "wallets WHERE account_id = \(bind: annID) AND phone IS NOT NULL"),
            ] as [(String, SQLQueryString)] {
                #expect(try await count(app, query) == 0, "\(what) erased")
            }
            // what others keep: the message in Bob's chat (from a deleted account), the ledger, the document's signing
            // (Bob logs in again: three days passed, his session's lifetime is one)
            bob = Someone(token: try await app.v1.login("bob", "secret-91!").token, id: bob.id, tag: bob.tag)
            #expect(try await count(app, "attachments WHERE id = \(bind: sentFile.id)") == 1, "the file Bob received stays")
            let bobsChat = try #require(try await app.v1.chats(of: bob).items.first)
            #expect(bobsChat.person.id == ann.id && bobsChat.person.deleted == true && bobsChat.person.tag == "" && bobsChat.person.firstName == nil)
            #expect(try await app.v1.history(chat.id, for: bob).items.contains { $0.id == message.id && $0.text == "hello Bob" })
            #expect(try await app.services.wallet.wallets.audit().isEmpty)
            let bobsMoves = try await app.v1.get(V1.Wallet.transactions.path, token: bob.token).decoded(as: WalletTransactionPage.self)
            #expect(bobsMoves.items.first?.amount == 10_00 && bobsMoves.items.first?.counterparty?.id == ann.id)
            let opened = try await f.form("/opendocument/", [("apikey", f.key), ("email", "bob@example.com"), ("documentid", documentID), ("document_hash", "h1")])
            let history = try #require(opened["history"] as? [[String: Any]], "\(opened)")
            #expect(history.map { $0["name"] as? String } == ["Deleted account"] && history.first?["photo"] is NSNull)

            // the blob store: once unreferenced blobs are past their grace, the avatar, the unsent
            // upload and the signature photo are gone; the file Bob received is not
            let blobs = app.services.blobs
            let collected = try await app.services.blobCollector.collect(now: Date().addingTimeInterval(app.services.blobCollector.grace + 60))
            #expect(collected >= 2, "the avatar and signature photo, the unsent upload: \(collected)")
            #expect(try await blobs.get(try #require(BlobKey(hex: annsAvatar))) == nil)
            #expect(try await blobs.get(try #require(BlobKey(hex: unsentBlob))) == nil)
            #expect(try await blobs.get(try #require(BlobKey(hex: sentBlob))) != nil)
            let remaining = try await blobs.keys(putBefore: Date().addingTimeInterval(86_400))
            for key in remaining {
                #expect(try await BlobReferences.isReferenced(key, on: app.services.database.sql), "a blob nobody names: \(key.hex)")
            }

            // the address and the tag are free again
            let again2 = try await app.v1.signedUp(email: "ann@example.com", tag: "ann")
            #expect(again2.account.id != ann.id)
        }
    }

    func blobKey(_ app: TestHarness, _ table: String, _ id: UUID) async throws -> String {
        try #require(try await app.services.database.sql.raw("SELECT blob_key FROM \(ident: table) WHERE id = \(bind: id)")
            .first(decodingColumn: "blob_key", as: String.self))
    }

    @Test("a password login within the grace period takes the account back; after it, nothing is erased", .tags(.engine), arguments: TestEngine.all)
    func passwordLogin_cancelsDeletion(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.limits.accountDeletionGrace = Self.grace }) { app in
            let ann = try await app.v1.person("ann")
            #expect(try await deleteMe(app, ann).status == .accepted)
            let repeated = try await app.v1.send(.delete, V1.Accounts.deleteMe.path, body: V1Client.encode(AccountDeletionRequest(currentPassword: "secret-91!")),
                                                 contentType: "application/json", token: ann.token)
            #expect(repeated.status == .unauthorized, "the session that asked ended too")

            // MUT
            app.clock.advance(by: Self.grace - 60)
            let session = try await app.v1.login("ann", "secret-91!")
            app.clock.advance(by: 120)
            let erased = try await app.services.accountDeletion.eraseDue()

            // validate
            #expect(erased == 0)
            #expect(try await app.v1.me(session.token).email == "ann@example.com")
            #expect(try await count(app, "accounts WHERE id = \(bind: ann.id) AND deletion_requested_at IS NULL AND erased_at IS NULL") == 1)
            // Not in silence: recorded, and told to the owner, who may not be the one who signed in.
            let cancelled = try await app.services.audit.events(AuditLog.Query(kinds: [.accountDeletionCancelled]))
            #expect(cancelled.map(\.account) == [ann.id] && cancelled.first?.detail == ["by": "login"], "\(cancelled)")
            let told = try await app.outbox(to: "ann@example.com").filter { $0.subject == "Your account will not be deleted" }
            #expect(told.count == 1 && told.first?.body.contains("signed in again, so the deletion was cancelled") == true, "\(told)")
            // A second login finds nothing to take back: nothing more recorded or told.
            _ = try await app.v1.login("ann", "secret-91!")
            #expect(try await app.services.audit.events(AuditLog.Query(kinds: [.accountDeletionCancelled])).count == 1)
        }
    }

    @Test("an owner of an enabled app is refused until it is disabled; without the password, 400")
    func appsEnabled_refuses() async throws {
        try await withApp(.sqlite, configure: { $0.limits.accountDeletionGrace = Self.grace }) { app in
            let dev = try await app.v1.person("dev")
            let created = try await app.v1.post(V1.Apps.create.path, NewApp(name: "Signer", bundleId: "com.acme.signer", email: "dev@acme.example"), token: dev.token)
            #expect(created.status == .created, "\(created.text)")
            let appID = try created.decoded(as: AppWithKey.self).app.id

            try expectProblem(try await deleteMe(app, dev, password: ""), .badRequest, .currentPasswordRequired)
            try expectProblem(try await deleteMe(app, dev), .conflict, .appsEnabled)
            let disabled = try await app.v1.patch(app.v1.path(V1.Apps.update, appID), AppUpdate(enabled: false), token: dev.token)
            #expect(disabled.status == .ok, "\(disabled.text)")
            #expect(try await deleteMe(app, dev).status == .accepted)
        }
    }
}
