import Foundation
import GatehouseAccounts
import GatehouseServer
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import GatehouseTestSupport
import HummingbirdTesting
import NIOCore
import SQLKit
import Testing

/// Password hashes other systems made (docs/migrating.md), made here by the reference implementations — Python's
/// `bcrypt` and `argon2-cffi`, Django's `make_password`, OpenSSL's scrypt through `hashlib`, and Firebase's published
/// scrypt example — verified by Gatehouse and replaced by its own bcrypt at the login that proves them.
@Suite("Password hashes from other systems")
struct ForeignPasswordHashTests {
    static let password = "old-Secret-7!"

    /// One hash per format, each from its reference implementation, of `password`.
    static func referenceHashes() async throws -> [String: String] {
        let output = try await PythonCheck.run("""
            import base64, hashlib, json, os, sys
            import bcrypt, argon2
            from argon2.low_level import Type
            from django.conf import settings
            settings.configure()
            from django.contrib.auth.hashers import make_password, PBKDF2PasswordHasher
            # Django's own hasher at fewer rounds than its default million: the same format, and a login under a busy
            # test run (where hashing threads yield to requests) stays well inside the test client's read timeout.
            class Django(PBKDF2PasswordHasher):
                iterations = 20000
            password = open(sys.argv[1]).read()
            b = lambda data: base64.b64encode(data).decode().rstrip("=")
            salt = os.urandom(16)
            scrypt = hashlib.scrypt(password.encode(), salt=salt, n=2**12, r=8, p=1, dklen=32)
            print(json.dumps({
                "bcrypt": bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=4)).decode(),
                # PHP's password_hash writes $2y$: the same algorithm under another name.
                "bcrypt-2y": "$2y$" + bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=4)).decode()[4:],
                "argon2id": argon2.PasswordHasher(time_cost=2, memory_cost=256, parallelism=2).hash(password),
                "argon2i": argon2.PasswordHasher(time_cost=3, memory_cost=128, parallelism=1, type=Type.I).hash(password),
                "django": make_password(password, hasher=Django()),
                "scrypt": f"$scrypt$ln=12,r=8,p=1${b(salt)}${b(scrypt)}",
            }))
            """, files: [password])
        return try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: String], "\(output)")
    }

    /// Firebase's published example (github.com/firebase/scrypt, README): a project's parameters, a user's salt,
    /// the password `user1password` and the hash its export holds.
    static let firebase = (
        config: ForeignPasswordHash.FirebaseScrypt(
            signerKey: Array(Data(base64Encoded: "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==")!),
            saltSeparator: Array(Data(base64Encoded: "Bw==")!), rounds: 8, memoryCost: 14),
        salt: "42xEC+ixf3L2lw==", password: "user1password",
        hash: "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ=="
    )

    @Test("each reference implementation's hash verifies its password and no other, and is kept as it reads (Firebase's published example too); an unknown format or a cost past the bounds is refused")
    func formats() async throws {
        let hashes = try await Self.referenceHashes()
        for (name, text) in hashes.sorted(by: { $0.key < $1.key }) {
            let hash = try ForeignPasswordHash(text)
            if case .bcrypt = hash { continue }  // bcrypt is PasswordHasher's: checked through the login below
            #expect(hash.verify(Self.password), "\(name) \(text)")
            #expect(!hash.verify(Self.password + "x"), "\(name)")
            #expect(try ForeignPasswordHash(hash.stored) == hash, "\(name) kept as \(hash.stored)")
        }
        let firebase = try ForeignPasswordHash.firebase(hash: Self.firebase.hash, salt: Self.firebase.salt, config: Self.firebase.config)
        #expect(firebase.verify(Self.firebase.password))
        #expect(!firebase.verify("user1Password"))
        #expect(try ForeignPasswordHash(firebase.stored) == firebase)
        for refused in ["md5$abc$def", "$argon2id$v=19$m=1048576,t=3,p=4$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA", "$argon2d$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$aGFzaA",
                        "$scrypt$ln=25,r=8,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA", "pbkdf2_sha256$99999999$salt$aGFzaGhhc2hoYXNoaGFzaA==", "$2b$04$short"] {
            #expect(throws: ForeignPasswordHash.Refused.self, "\(refused)") { try ForeignPasswordHash(refused) }
        }
    }

    @Test("a login with the old password passes on every format and replaces the hash with Gatehouse's bcrypt in its transaction (bcrypt's own $2b$ stays); a wrong password is refused as any wrong password is", .tags(.engine), arguments: TestEngine.all)
    func upgradedAtLogin(engine: TestEngine) async throws {
        let hashes = try await Self.referenceHashes()
        let firebase = try ForeignPasswordHash.firebase(hash: Self.firebase.hash, salt: Self.firebase.salt, config: Self.firebase.config).stored
        try await withApp(engine) { app in
            let sql = app.services.database.sql
            var people: [(email: String, password: String, hash: String)] = hashes.sorted(by: { $0.key < $1.key }).enumerated().map { index, entry in
                ("p\(index)@example.com", Self.password, entry.value)
            }
            people.append(("firebase@example.com", Self.firebase.password, firebase))
            for (index, person) in people.enumerated() {
                try await app.registerPhoneAccount(phone: "+7912345670\(index)", email: person.email, confirmingEmail: true)
                try await sql.raw("UPDATE accounts SET password_hash = \(bind: person.hash) WHERE email = \(bind: person.email)").run()
            }
            for person in people {
                let wrong = try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: person.email, password: person.password + "x"))
                try expectProblem(wrong, .badRequest, .invalidCredentials)
                let right = try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: person.email, password: person.password))
                #expect(right.status == .created, "\(person.hash): \(right.text)")
                let stored = try #require(try await sql.raw("SELECT password_hash FROM accounts WHERE email = \(bind: person.email)").first()?
                    .decode(column: "password_hash", as: String.self))
                // bcrypt's own `$2b$` is Gatehouse's already and stays; every other hash is replaced.
                #expect(stored.hasPrefix("$2b$") && (stored != person.hash) == !person.hash.hasPrefix("$2b$"), "\(person.hash) → \(stored)")
                let again = try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: person.email, password: person.password))
                #expect(again.status == .created, "with Gatehouse's own hash: \(again.text)")
            }
        }
    }

    @Test("a file longer than a batch: every row once, a row that repeats an earlier one's address (in its batch or an earlier one) is left as existing, a refusal keeps its line; run again, nothing is added; each new account is in the people search, audited and told to a webhook endpoint, as one made alone", .tags(.engine), arguments: TestEngine.all)
    func batches(engine: TestEngine) async throws {
        let receiver = try await PythonPeer.start("webhook_receiver.py", [], hint: " (is standardwebhooks installed in the test venv?)")
        defer { receiver.stop() }
        try await withApp(engine, configure: WebhookTests.configure) { app in
            let (_, secret) = try await app.services.webhooks.create(url: receiver.base + "/hook", description: nil, eventTypes: ["account.created"], by: .system("test"))
            try await WebhookTests.control(receiver, "/_test/secrets", #"{"secrets": ["\#(secret)"]}"#)
            let count = AccountImport.Reader.batchSize * 2 + 203
            var lines = (0..<count).map { #"{"externalId": "b-\#($0)", "email": "bulk\#($0)@example.com", "emailVerified": true}"# }
            lines.insert(#"{"externalId": "dup-same-batch", "email": "bulk5@example.com"}"#, at: 10)
            lines.insert(#"{"externalId": "dup-later-batch", "email": "x@example.com", "tag": "bulkdup", "phone": "+79990001100"}"#, at: AccountImport.Reader.batchSize + 50)
            lines.insert(#"{"externalId": "b-3", "email": "other@example.com"}"#, at: AccountImport.Reader.batchSize * 2 + 10)   // an external id of the first batch
            lines.append(#"{"externalId": "dup-later-batch-2", "tag": "BulkDup"}"#)          // the tag of the row above, folded
            lines.append(#"{"email": "not an address"}"#)
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("import-\(UUID().uuidString).jsonl")
            try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: file) }
            let run = {
                try await AccountCommands.importAccounts(configuration: app.configuration, path: file.path, dryRun: false, firebase: nil, as: "test", progress: { _ in })
            }
            let first = try await run()
            let second = try await run()
            #expect(first.imported == count + 1 && first.existing == 3 && first.refusedCount == 1, "\(first)")
            #expect(first.refused.count == 1 && first.refused[0].hasPrefix("line \(lines.count): email"), "\(first.refused)")
            #expect(second.imported == 0 && second.existing == count + 4, "\(second)")
            let rows = try await app.services.database.sql.raw("SELECT COUNT(*) AS n FROM accounts WHERE external_id IS NOT NULL").first(decodingColumn: "n", as: Int.self)
            #expect(rows == count + 1)
            let sql = app.services.database.sql
            let indexed = try await sql.raw("""
                SELECT COUNT(*) AS n FROM messenger_people p JOIN accounts a ON a.id = p.account_id WHERE a.external_id IS NOT NULL
                """).first(decodingColumn: "n", as: Int.self)
            #expect(indexed == count + 1, "every imported account has its people-search entry")
            var created = AuditLog.Query(kinds: [.accountCreated])
            created.limit = 1000
            let audited = try await app.services.audit.events(created)
            #expect(Set(audited.filter { $0.detail["with"] == "import" }.compactMap(\.account)).count == count + 1)
            let told = try await sql.raw("""
                SELECT COUNT(DISTINCT ordering_key) AS n FROM outbox_messages WHERE kind = 'webhook' AND subject = 'account.created'
                """).first(decodingColumn: "n", as: Int.self)
            #expect(told == count + 1, "one account.created delivery per imported account (delivered or not yet)")
            let tagged = try await sql.raw("SELECT tag_key FROM messenger_people WHERE tag_key = 'bulkdup'").all()
            #expect(tagged.count == 1, "the imported tag is searchable")
        }
    }

    @Test("gatehouse accounts import: JSON lines with every format's hash (Firebase's with its project's parameters) are imported, a dry run writes nothing, a second run adds nothing, bad rows are refused by line; each person signs in with the old password", .tags(.engine), arguments: TestEngine.all)
    func importFile(engine: TestEngine) async throws {
        let hashes = try await Self.referenceHashes()
        try await withApp(engine) { app in
            var lines: [String] = []
            for (index, entry) in hashes.sorted(by: { $0.key < $1.key }).enumerated() {
                let row: [String: Any] = ["externalId": "old-\(index)", "email": "p\(index)@example.com", "emailVerified": true, "firstName": "P\(index)",
                                          "passwordHash": entry.value, "createdAt": "2021-05-01T10:00:00Z"]
                lines.append(String(decoding: try JSONSerialization.data(withJSONObject: row), as: UTF8.self))
            }
            lines.append(#"{"externalId": "fb-1", "email": "firebase@example.com", "emailVerified": true, "passwordHash": "\#(Self.firebase.hash)", "salt": "\#(Self.firebase.salt)"}"#)
            // The reference scrypt hash, given as its parts (a table with salt, n, r and p columns).
            let scryptParts = try #require(hashes["scrypt"]).split(separator: "$").map(String.init)  // ["scrypt", "ln=12,r=8,p=1", salt, key]
            lines.append(#"{"externalId": "parts-1", "email": "parts@example.com", "emailVerified": true, "passwordHash": "\#(scryptParts[3])", "scrypt": {"salt": "\#(scryptParts[2])", "n": 4096, "r": 8, "p": 1}}"#)
            lines.append(#"{"externalId": "no-password", "phone": "+79990001122", "phoneVerified": true, "tag": "nopass"}"#)
            lines.append(#"{"externalId": "bad-1", "email": "bad@example.com", "passwordHash": "md5$1$2"}"#)
            lines.append(#"{"externalId": "bad-2", "firstName": "Nobody"}"#)
            lines.append("not json")
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("import-\(UUID().uuidString).jsonl")
            try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: file) }
            let run = { (dryRun: Bool) in
                try await AccountCommands.importAccounts(configuration: app.configuration, path: file.path, dryRun: dryRun, firebase: Self.firebase.config,
                                                         as: "test", progress: { _ in })
            }

            let dry = try await run(true)
            let afterDry = try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "firebase@example.com", password: Self.firebase.password))
            let first = try await run(false)
            let second = try await run(false)

            #expect(dry.imported == hashes.count + 3 && dry.refusedCount == 3 && dry.dryRun, "\(dry)")
            try expectProblem(afterDry, .badRequest, .invalidCredentials)
            #expect(first.imported == hashes.count + 3 && first.existing == 0 && first.refusedCount == 3, "\(first)")
            #expect(first.refused.contains { $0.hasPrefix("line \(hashes.count + 4): passwordHash: an unknown hash format") }, "\(first.refused)")
            #expect(first.refused.contains { $0.hasPrefix("line \(hashes.count + 5): a row needs an email, a phone or a tag") }, "\(first.refused)")
            #expect(first.refused.contains { $0.hasPrefix("line \(hashes.count + 6): not a JSON object") }, "\(first.refused)")
            #expect(second.imported == 0 && second.existing == hashes.count + 3, "\(second)")
            for index in 0..<hashes.count {
                let login = try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "p\(index)@example.com", password: Self.password))
                #expect(login.status == .created, "\(login.text)")
            }
            let firebase = try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "firebase@example.com", password: Self.firebase.password))
            #expect(firebase.status == .created, "\(firebase.text)")
            let parts = try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "parts@example.com", password: Self.password))
            #expect(parts.status == .created, "scrypt given as its parts: \(parts.text)")
            // Imported without a password: nothing signs in with one until "forgot password" sets it, and trying costs a bcrypt.
            let verificationsBefore = app.services.login.hasher.verifications.count
            try expectProblem(try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "+79990001122", password: "!")), .badRequest, .invalidCredentials)
            #expect(app.services.login.hasher.verifications.count == verificationsBefore + 1)
            let audited = try await app.services.audit.events(AuditLog.Query(kinds: [.accountCreated]))
            #expect(audited.filter { $0.detail["with"] == "import" }.count == hashes.count + 3)
        }
    }

    @Test("POST /admin/v1/accounts/import: the same file with Firebase's hashConfig line, by a key of scope accounts:import (none: 401, another scope: 403), audited as the key; a dry run writes nothing, a second call adds nothing, each person signs in")
    func importThroughTheAdminAPI() async throws {
        let hashes = try await Self.referenceHashes()
        try await withApp(.sqlite) { app in
            let (importer, key) = try await app.services.adminKeys.create(name: "migration", scopes: [.accountsImport], by: .system("test"))
            let (_, clientsKey) = try await app.services.adminKeys.create(name: "crm", scopes: [.clientsWrite], by: .system("test"))
            let file = [
                #"{"externalId": "a-1", "email": "argon@example.com", "emailVerified": true, "passwordHash": "\#(hashes["argon2id"]!)"}"#,
                #"{"hashConfig": {"algorithm": "SCRYPT", "base64_signer_key": "\#(Data(Self.firebase.config.signerKey).base64EncodedString())", "base64_salt_separator": "Bw==", "rounds": 8, "mem_cost": 14}}"#,
                #"{"externalId": "fb-1", "email": "firebase@example.com", "emailVerified": true, "passwordHash": "\#(Self.firebase.hash)", "salt": "\#(Self.firebase.salt)"}"#,
                #"{"externalId": "bad", "email": "not an address"}"#,
            ].joined(separator: "\n")
            func send(_ key: String?, query: String = "") async throws -> TestResponse {
                try await app.v1.post(AdminAPI.importAccountsFile.path + query, body: ByteBuffer(string: file), contentType: "application/x-ndjson", token: key)
            }

            let anonymous = try await send(nil)
            let wrongScope = try await send(clientsKey)
            let dry = try await send(key, query: "?dryRun=true")
            let first = try await send(key)
            let second = try await send(key)

            try expectProblem(anonymous, .unauthorized, .unauthorized)
            try expectProblem(wrongScope, .forbidden, .insufficientScope)
            let dryReport = try dry.decoded(as: AccountImportReport.self)
            #expect(dryReport.imported == 2 && !dryReport.applied && dryReport.refused == [.init(line: 4, reason: "email is not an email address")], "\(dry.text)")
            let report = try first.decoded(as: AccountImportReport.self)
            #expect(report.imported == 2 && report.existing == 0 && report.refusedCount == 1 && report.applied, "\(first.text)")
            #expect(try second.decoded(as: AccountImportReport.self).existing == 2)
            #expect(try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "argon@example.com", password: Self.password)).status == .created)
            #expect(try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "firebase@example.com", password: Self.firebase.password)).status == .created)
            let audited = try await app.services.audit.events(AuditLog.Query(kinds: [.accountCreated]))
            #expect(audited.count == 2 && audited.allSatisfy { $0.actorType == "admin_key" && $0.actorID == importer.id.uuidString.lowercased() && $0.detail["with"] == "import" },
                    "\(audited)")
        }
    }
}
