import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehouseServer
import GatehouseTestSupport
import GatehouseVerifier
import HTTPTypes
import NIOCore
import SQLKit
import Testing

/// The adversarial probe's findings on the Sign To Login surface (docs/security.md, "Sign To
/// Login"), each at the wire level on both engines: an attacker holds an app key of their own (or
/// the victim's app's, which ships inside the app) and the victim's email address.
@Suite("Sign To Login: security")
struct SignatureSecurityTests {
    typealias Fixture = SignatureEndpointsTests.Fixture

    func fixture(_ app: TestHarness) async throws -> (Fixture, attackerKey: String) {
        let victims = try await app.services.signToLogin.apps.create(NewApp(name: "Signer", bundleId: "com.acme.signer", email: "dev@acme.example"), owner: nil, by: .system(nil))
        let attackers = try await app.services.signToLogin.apps.create(NewApp(name: "Mallory", bundleId: "com.evil.signer", email: "m@evil.example"), owner: nil, by: .system(nil))
        return (Fixture(app: app, key: victims.key), attackers.key)
    }

    static func wire(_ s: SignaturePoints) -> String { SignatureEndpointsTests.wire(s) }

    func attempt(_ f: Fixture, _ email: String, _ signature: SignaturePoints, key: String? = nil, session: String? = nil,
                 ip: String? = nil) async throws -> [String: Any] {
        var fields = ["apikey": "\"\(key ?? f.key)\"", "email": "\"\(email)\"", "signature": Self.wire(signature)]
        if let session { fields["sessionid"] = "\"\(session)\"" }
        return try await f.json("/authenticate/", fields, headers: ip.map { [HTTPField.Name("X-Forwarded-For")!: $0] } ?? [:])
    }

    func count(_ app: TestHarness, _ query: String) async throws -> Int {
        try await app.services.database.sql.raw("\(unsafeRaw: query)").first(decodingColumn: "n", as: Int.self) ?? -1
    }

    @Test("1. nobody keeps signatures for an address without its code; kept ones are the sending client's only, never combined with another's", arguments: TestEngine.once)
    func enrolmentPoisoning(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            var (f, attackerKey) = try await fixture(app)
            let attacker = (0..<7).map { _ in f.other() }

            // MUT: the attacker sends seven of his own for her (new) address from his app
            let poisoned = try await f.json("/register/", f.registerFields("olga@example.com", attacker, key: attackerKey))

            // validate: a code went to her; nothing of his is kept
            #expect(poisoned["res"] as? String == "13", "\(poisoned)")
            #expect(try await count(app, "SELECT COUNT(*) AS n FROM signature_enrolment_batches") == 0)

            // She starts, with her code, and sends six (res 2, a token); a request without the token
            // (the attacker's, even with four of his) is a batch of its own; hers completes with it.
            let code = try await app.v1.code(sentTo: "olga@example.com")
            var mine = f.registerFields("olga@example.com", f.genuine(6))
            mine["email_code"] = "\"\(code)\""
            let started = try await f.json("/register/", mine)
            let token = try #require(started["enrolment_token"] as? String, "\(started)")
            var theirs = mine
            theirs["signatures"] = SignatureEndpointsTests.signatures(Array(attacker.prefix(4)))
            let without = try await f.json("/register/", theirs)
            theirs["enrolment_token"] = "\"\(token)\""
            theirs["apikey"] = "\"\(attackerKey)\""
            let otherApp = try await f.json("/register/", theirs)
            #expect(started["res"] as? String == "2" && started["count_exist"] as? Int == 6)
            #expect(without["res"] as? String == "2" && without["count_exist"] as? Int == 4, "not combined with hers: \(without)")
            #expect(otherApp["res"] as? String == "2" && otherApp["count_exist"] as? Int == 4, "her token from another app keeps nothing of hers: \(otherApp)")
            mine["signatures"] = SignatureEndpointsTests.signatures(f.genuine(4))
            mine["enrolment_token"] = "\"\(token)\""
            let done = try await f.json("/register/", mine)
            #expect(done["res"] as? String == "0", "\(done)")
            let his = try await attempt(f, "olga@example.com", f.other())
            #expect((his["similarity"] as? Double ?? 1) < 0.5 && his["sessionid"] == nil, "\(his)")
        }
    }

    @Test("2. an unproven model authenticates nobody; the owner's proof removes it and every session opened before", arguments: TestEngine.once)
    func squattedModel(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            var (f, attackerKey) = try await fixture(app)
            // MUT: the squatter tries to enrol her new address from an iPad: a code goes to her, nothing else happens
            let squat = try await f.json("/register/", f.registerFields("owner@example.com", (0..<10).map { _ in f.other() }, device: "iPad Pro", key: attackerKey))
            #expect(squat["res"] as? String == "13" && squat["sessionid"] == nil)
            #expect(try await app.services.signToLogin.signatures.account(email: "owner@example.com") == nil, "no account for an unproven address")

            // A squatter's model and session from before this rule: her confirmed account holds an
            // iPad model nobody proved and a session he opened with it.
            let session = try await f.enrolled("owner@example.com", f.genuine(10))
            let owner = try #require(try await app.services.signToLogin.signatures.account(email: "owner@example.com"))
            let stranger = (0..<10).map { _ in f.other() }
            let strangerModel = "{\"version\":\(SignatureVerifier.version),\"spread\":1,\"references\":"
                + String(decoding: try JSONEncoder().encode(stranger), as: UTF8.self) + "}"
            try await app.services.database.sql.raw("""
                INSERT INTO signature_models (id, account_id, device_class, app_id, model, device, created_at, proven_at)
                VALUES (\(bind: UUID()), \(bind: owner.id!), 'ipad', NULL, \(bind: strangerModel), '{}', \(bind: Date()), NULL)
                """).run()
            let before = try await app.services.sessions.create(accountID: owner.id!, methods: [.pwd], device: "Sign To Login (iPad)", ip: nil)
            let unproven = try await attempt(f, "owner@example.com", f.other())
            var ipadAttempt = ["apikey": "\"\(f.key)\"", "email": "\"owner@example.com\"", "device_version": "\"iPad Pro\"",
                               "signature": Self.wire(stranger[0])]
            let onIpad = try await f.json("/authenticate/", ipadAttempt)
            #expect((unproven["similarity"] as? Double ?? 1) < 0.5, "his model is not the one scored: \(unproven)")
            #expect((onIpad["similarity"] as? Double ?? 1) < 0.5 && onIpad["sessionid"] == nil, "the iPad falls back to her proven model: \(onIpad)")

            // her proof (an enrolment from the iPad with her code) removes his model and ends the sessions opened before it
            let proven = try await f.enrol("owner@example.com", f.genuine(10), device: "iPad Air")
            #expect(proven["res"] as? String == "0")
            #expect(try await count(app, "SELECT COUNT(*) AS n FROM signature_models WHERE proven_at IS NULL") == 0)
            #expect(try await app.v1.get(V1.Accounts.me.path, token: before.token).status == .unauthorized)
            #expect(try await app.v1.get(V1.Accounts.me.path, token: session).status == .unauthorized)
            #expect(try await app.v1.get(V1.Accounts.me.path, token: try #require(proven["sessionid"] as? String)).status == .ok)
            ipadAttempt["signature"] = Self.wire(f.genuine(1)[0])
            #expect((try await f.json("/authenticate/", ipadAttempt)["similarity"] as? Double ?? 0) >= 0.5)
        }
    }

    @Test("3. copies of a reference or of an earlier attempt are refused; another app needs the person's own enrolment through it", arguments: TestEngine.once)
    func replaysAndAppScope(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            var (f, attackerKey) = try await fixture(app)
            let references = f.genuine(10)
            _ = try await f.enrolled("pavel@example.com", references)
            let fresh = f.genuine(1)[0]

            // MUT
            let copy = try await attempt(f, "pavel@example.com", references[3])
            let moved = try await attempt(f, "pavel@example.com", SignaturePoints(x: references[5].x.map { $0 * 1.2 + 30 }, y: references[5].y.map { $0 * 1.2 }))
            let first = try await attempt(f, "pavel@example.com", fresh)
            let again = try await attempt(f, "pavel@example.com", fresh)
            let otherLogin = try await f.json("/login/", ["apikey": "\"\(attackerKey)\"", "email": "\"pavel@example.com\"", "device_version": "\"iPhone 15\""])
            let otherAuth = try await attempt(f, "pavel@example.com", f.genuine(1)[0], key: attackerKey)

            // validate
            for refused in [copy, moved, again] {
                #expect(refused["res"] as? String == "17" && refused["signatureid"] == nil && refused["sessionid"] == nil, "\(refused)")
            }
            #expect(first["res"] as? String == "0" && (first["similarity"] as? Double ?? 0) >= 0.5)
            #expect(otherLogin["res"] as? String == "3" && otherAuth["res"] as? String == "3", "no silent reuse by another app: \(otherLogin) \(otherAuth)")
            #expect(try await count(app, "SELECT COUNT(*) AS n FROM signature_attempts") == 1, "refused attempts are not kept")
            // his own enrolment through the other app (with his code) is his consent
            _ = try await f.enrolled("pavel@example.com", f.genuine(10), key: attackerKey)
            #expect(try await attempt(f, "pavel@example.com", f.genuine(1)[0], key: attackerKey)["res"] as? String == "0")
        }
    }

    @Test("4. a signing record needs the person's session and their own passing, unused attempt through this app; a stranger's first save never joins the owner's chain", arguments: TestEngine.once)
    func forgedSigningRecords(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            var (f, attackerKey) = try await fixture(app)
            let session = try await f.enrolled("vera@example.com", f.genuine(10))
            let malloryOwn = (0..<10).map { _ in f.other() }
            let mallory = try await f.enrolled("mallory@example.com", malloryOwn)
            _ = try await f.enrolled("vera@example.com", f.genuine(10), key: attackerKey)
            let scribble = try await attempt(f, "vera@example.com", f.other())
            let low = try #require(scribble["signatureid"] as? String)
            let good = try #require(try await attempt(f, "vera@example.com", f.genuine(1)[0])["signatureid"] as? String)
            let elsewhere = try #require(try await attempt(f, "vera@example.com", f.genuine(1)[0], key: attackerKey)["signatureid"] as? String)
            func save(_ fields: [(String, String)]) async throws -> [String: Any] {
                // A first save unless the fields say from which version.
                let previous = fields.contains { $0.0 == "previous_hash" } ? [] : [("previous_hash", "")]
                return try await f.form("/savedocument/", [("apikey", f.key), ("email", "vera@example.com")] + previous + fields)
            }

            // MUT
            let noSession = try await save([("document_hash", "d1"), ("signatures", "[\"\(good)\"]")])
            let hisSession = try await save([("document_hash", "d1"), ("signatures", "[\"\(good)\"]"), ("sessionid", mallory)])
            let lowScore = try await save([("document_hash", "d1"), ("signatures", "[\"\(low)\"]"), ("sessionid", session)])
            let otherApp = try await save([("document_hash", "d1"), ("signatures", "[\"\(elsewhere)\"]"), ("sessionid", session)])
            let saved = try await save([("document_hash", "d1"), ("signatures", "[\"\(good)\"]"), ("sessionid", session)])
            let reused = try await save([("document_hash", "d2"), ("signatures", "[\"\(good)\"]"), ("sessionid", session)])

            // validate
            #expect(noSession["res"] as? String == "18" && hisSession["res"] as? String == "18", "\(noSession) \(hisSession)")
            #expect(scribble["sessionid"] == nil, "a low score signs nobody in")
            for refused in [lowScore, otherApp, reused] { #expect(refused["res"] as? String == "10", "\(refused)") }
            #expect(saved["res"] as? String == "0")
            #expect(try await count(app, "SELECT COUNT(*) AS n FROM signature_version_signatures") == 1, "the refused saves left nothing behind")

            // Mallory registers the hash of a PDF he has seen before Vera does; her save from it starts her own document.
            let malloryAttempt = try await attempt(f, "mallory@example.com", f.other())
            let hisSignature = try #require(malloryAttempt["signatureid"] as? String, "\(malloryAttempt)")
            let squatted = try await f.form("/savedocument/", [("apikey", f.key), ("email", "mallory@example.com"), ("previous_hash", ""), ("document_hash", "H"),
                                                               ("signatures", "[\"\(hisSignature)\"]"), ("sessionid", mallory)])
            let hers = try #require(try await attempt(f, "vera@example.com", f.genuine(1)[0])["signatureid"] as? String)
            let extended = try await save([("previous_hash", "H"), ("document_hash", "H2"), ("signatures", "[\"\(hers)\"]"), ("sessionid", session)])
            let squattedID = try #require(squatted["documentid"] as? String)
            let herID = try #require(extended["documentid"] as? String)
            #expect(herID != squattedID, "a fork, not his chain")
            let history = try await f.form("/opendocument/", [("apikey", f.key), ("email", "vera@example.com"), ("documentid", herID), ("document_hash", "H2")])
            #expect((history["history"] as? [[String: Any]])?.map { $0["signatureid"] as? String } == [hers], "\(history)")
            #expect(try await app.services.database.sql.raw("SELECT forked_from FROM signature_documents WHERE id = \(bind: herID)")
                .first(decodingColumn: "forked_from", as: String?.self) == squattedID)
        }
    }

    @Test("4b. an app's own threshold: PATCH minSimilarity (never below the server's); an attempt below it signs nobody in, and signs only with the person's session, warned of by that threshold for good", arguments: TestEngine.once)
    func appThreshold(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup: an app of Dev's, and Vera enrolled through it
            let dev = try await app.v1.signedUp(email: "dev@example.com")
            let created = try await app.v1.post(V1.Apps.create.path, NewApp(name: "Strict", bundleId: "com.acme.strict", email: "dev@example.com"),
                                                token: dev.token).decoded(as: AppWithKey.self)
            var f = Fixture(app: app, key: created.apiKey)
            let session = try await f.enrolled("vera@example.com", f.genuine(10))
            let path = V1.filling(V1.Apps.update.path, ["id": created.app.id.uuidString.lowercased()])

            // MUT
            let lower = try await app.v1.patch(path, AppUpdate(minSimilarity: 0.2), token: dev.token)
            let strict = try await app.v1.patch(path, AppUpdate(minSimilarity: 1), token: dev.token)
            let attempt = try await attempt(f, "vera@example.com", f.genuine(1)[0])
            let id = try #require(attempt["signatureid"] as? String)
            let saved = try await f.form("/savedocument/", [("apikey", f.key), ("email", "vera@example.com"), ("previous_hash", ""), ("document_hash", "d"),
                                                            ("signatures", "[\"\(id)\"]"), ("sessionid", session)])

            // validate
            try expectProblem(lower, .badRequest, .invalidParameter)
            #expect(try strict.decoded(as: DeveloperApp.self).minSimilarity == 1)
            let similarity = try #require(attempt["similarity"] as? Double)
            #expect(similarity >= 0.5 && similarity < 1, "a good genuine attempt, below this app's threshold: \(similarity)")
            #expect(attempt["sessionid"] == nil, "below the app's threshold: no sign-in")
            let documentID = try #require(saved["documentid"] as? String, "her session signs with it: \(saved)")
            // The app lowers its threshold again: the signing made under the strict one stays a low match.
            _ = try await app.v1.patch(path, AppUpdate(minSimilarity: 0.5), token: dev.token)
            let opened = try await f.form("/opendocument/", [("apikey", f.key), ("email", "vera@example.com"), ("documentid", documentID), ("document_hash", "d")])
            let entry = try #require((opened["history"] as? [[String: Any]])?.first, "\(opened)")
            #expect(entry["warning"] as? Bool == true && entry["similarity"] as? Double == similarity, "\(entry)")
        }
    }

    @Test("4c. a low-match signing: the person's own session signs with an attempt between the signing floor and the app's threshold, and every reader is warned; below the floor, or without her session, nothing is signed", .tags(.engine), arguments: TestEngine.all)
    func lowMatchSigning(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup: Vera enrolled (her session); a hurried signature of hers, the first of rising
            // shape noise that scores between the floor (0.3) and the threshold (0.5), and a stranger's
            var (f, _) = try await fixture(app)
            let session = try await f.enrolled("vera@example.com", f.genuine(10))
            var hurried: (id: String, similarity: Double)?
            for noise in stride(from: 0.06, through: 0.6, by: 0.03) where hurried == nil {
                let answer = try await attempt(f, "vera@example.com", f.writer.sign(&f.rng, shapeNoise: noise), session: session)
                if let similarity = answer["similarity"] as? Double, (0.3..<0.5).contains(similarity) {
                    hurried = (try #require(answer["signatureid"] as? String), similarity)
                    #expect(answer["sessionid"] == nil, "below the threshold: no sign-in")
                }
            }
            let low = try #require(hurried, "no signature of hers scored between the floor and the threshold")
            let scribble = try await attempt(f, "vera@example.com", f.other(), session: session)
            let scribbleID = try #require(scribble["signatureid"] as? String)
            let good = try #require(try await attempt(f, "vera@example.com", f.genuine(1)[0], session: session)["signatureid"] as? String)
            func save(_ hash: String, _ ids: [String], session: String?, previous: String = "") async throws -> [String: Any] {
                var fields = [("apikey", f.key), ("email", "vera@example.com"), ("previous_hash", previous), ("document_hash", hash),
                              ("signatures", "[" + ids.map { "\"\($0)\"" }.joined(separator: ",") + "]")]
                if let session { fields.append(("sessionid", session)) }
                return try await f.form("/savedocument/", fields)
            }

            // MUT
            let withoutSession = try await save("d1", [low.id], session: nil)
            let belowFloor = try await save("d1", [scribbleID], session: session)
            let saved = try await save("d1", [low.id], session: session)
            let documentID = try #require(saved["documentid"] as? String, "\(saved)")
            let extended = try await save("d2", [good], session: session, previous: "d1")
            let opened = try await f.form("/opendocument/", [("apikey", f.key), ("email", "vera@example.com"), ("documentid", documentID), ("document_hash", "d2")])
            let page = try await app.v1.get("/documents/?documentid=\(documentID)").text

            // validate
            #expect((scribble["similarity"] as? Double ?? 1) < 0.3, "a stranger's signature is below the floor: \(scribble)")
            #expect(withoutSession["res"] as? String == "18", "\(withoutSession)")
            #expect(belowFloor["res"] as? String == "10" && (belowFloor["error"] as? String ?? "").contains("signing floor"), "\(belowFloor)")
            #expect(extended["documentid"] as? String == documentID, "\(extended)")
            let history = try #require(opened["history"] as? [[String: Any]], "\(opened)")
            #expect(history.map { $0["signatureid"] as? String } == [low.id, good])
            #expect(history.map { $0["warning"] as? Bool } == [true, false], "the reader is warned of the low match only")
            #expect(history.first?["similarity"] as? Double == low.similarity)
            #expect(page.components(separatedBy: "low match").count - 1 == 1, "the history page marks the one low match")
            #expect(try await count(app, "SELECT COUNT(*) AS n FROM signature_version_signatures") == 2, "the refused saves left nothing behind")
        }
    }

    @Test("4d. the signing floor is configurable and never above the acceptance threshold")
    func signingFloorSetting() throws {
        let floor = try GatehouseConfiguration.fromEnvironment(["GATEHOUSE_SIGNATURE_SIGN_FLOOR": "0.2"])
        let lowered = try GatehouseConfiguration.fromEnvironment(["GATEHOUSE_SIGNATURE_ACCEPT_AT": "0.25"])
        #expect(GatehouseConfiguration().signature.signFloor == 0.3 && floor.signature.signFloor == 0.2)
        #expect(lowered.signature.signFloor == 0.25, "a lower threshold lowers the default floor with it")
        #expect(throws: ConfigurationError.self) {
            try GatehouseConfiguration.fromEnvironment(["GATEHOUSE_SIGNATURE_SIGN_FLOOR": "0.6"])
        }
    }

    @Test("5. a stranger's flood of low scores locks out the stranger, never the person's signed-in device; passing attempts spend nothing", arguments: TestEngine.once)
    func lockOut(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.trustForwardedFor = true; $0.signature.attemptsPerAccount = 5; $0.signature.attemptsPerIP = 8 }) { app in
            var (f, _) = try await fixture(app)
            let session = try await f.enrolled("irina@example.com", f.genuine(10))

            // MUT: the stranger floods from two addresses; she signs from her own device meanwhile
            var flood: [String?] = []
            for i in 0..<12 { flood.append(try await attempt(f, "irina@example.com", f.other(), ip: "203.0.113.\(i % 2 + 1)")["res"] as? String) }
            var hers: [String?] = []
            for _ in 0..<12 { hers.append(try await attempt(f, "irina@example.com", f.genuine(1)[0], session: session, ip: "198.51.100.7")["res"] as? String) }

            // validate
            #expect(flood.prefix(5).allSatisfy { $0 == "0" } && flood.suffix(7).allSatisfy { $0 == "12" }, "\(flood)")
            #expect(hers.allSatisfy { $0 == "0" }, "her own device is not locked out, and passing attempts spend nothing: \(hers)")
            let perAddress = try await attempt(f, "nobody@example.com", f.other(), ip: "203.0.113.1")
            #expect(perAddress["res"] as? String == "2", "\(perAddress)")
        }
    }

    @Test("6. an address with an account elsewhere answers as an unknown one, byte for byte; lookups are budgeted per client address", arguments: TestEngine.once)
    func enumeration(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.trustForwardedFor = true; $0.signature.lookupsPerIP = 6 }) { app in
            var (f, _) = try await fixture(app)
            _ = try await app.v1.signedUp(email: "known@example.com")
            func raw(_ path: String, _ email: String, _ extra: String = "") async throws -> String {
                try await app.v1.post(path, json: "{\"apikey\":\"\(f.key)\",\"email\":\"\(email)\",\"device_version\":\"iPhone\",\"os_version\":\"18.1\"\(extra)}",
                                      headers: [HTTPField.Name("X-Forwarded-For")!: "192.0.2.9"]).text
            }

            // MUT
            let known = try await raw("/login/", "known@example.com")
            let unknown = try await raw("/login/", "unknown@example.com")
            let knownDoc = try await raw("/opendocument/", "known@example.com", ",\"documentid\":\"00ff\",\"document_hash\":\"x\"")
            let unknownDoc = try await raw("/opendocument/", "unknown@example.com", ",\"documentid\":\"00ff\",\"document_hash\":\"x\"")
            var more: [String] = []
            for _ in 0..<3 { more.append(try await raw("/login/", "probe@example.com")) }

            // validate
            #expect(known == unknown && known == "{\"res\":\"2\",\"error\":\"User does not exist\"}", "\(known) \(unknown)")
            #expect(knownDoc == unknownDoc, "\(knownDoc) \(unknownDoc)")
            #expect(more.dropLast().allSatisfy { $0.hasPrefix("{\"res\":\"2\"") } && more.last!.hasPrefix("{\"res\":\"12\""), "\(more)")
            var proofs: [String?] = []
            for email in ["known@example.com", "unknown@example.com"] {
                proofs.append(try await f.json("/register/", f.registerFields(email, f.genuine(10)))["res"] as? String)
            }
            #expect(proofs == ["13", "13"], "every enrolment proves the address first: \(proofs)")
        }
    }

    @Test("11. an API key in the query string is not read: keys travel in the body only", arguments: TestEngine.once)
    func keyInQuery(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            let (f, _) = try await fixture(app)

            // MUT
            let answer = try await app.postForm("/login/?apikey=\(f.key)&email=a@b.example", [("device_version", "iPhone")])

            // validate
            #expect(answer.text == "{\"res\":\"1\",\"error\":\"Application with key '' is not registered or disabled\"}", "\(answer.text)")
        }
    }
}
