import Foundation
import GatehouseAPI
import GatehousePlatform
import GatehouseServer
import GatehouseTestSupport
import GatehouseVerifier
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// The spec's `/register/`, `/login/` and `/authenticate/` at the wire level on both engines,
/// with JSON, urlencoded and multipart bodies, and signatures of synthetic writers.
@Suite("Sign To Login: the spec's endpoints")
struct SignatureEndpointsTests {
    /// A writer's signatures as the spec's JSON: `{pressure, "dot count", signature_contents: [{x, y, p}]}`.
    static func wire(_ signature: SignaturePoints, spacedKey: Bool = false) -> String {
        let points = zip(signature.x, signature.y).map { String(format: "{\"x\":%.1f,\"y\":%.1f,\"p\":0}", $0, $1) }.joined(separator: ",")
        return "{\"pressure\":0,\"\(spacedKey ? "dot count" : "dot_count")\":\(signature.count),\"signature_contents\":[\(points)]}"
    }

    static func signatures(_ list: [SignaturePoints]) -> String { "[" + list.map { wire($0) }.joined(separator: ",") + "]" }

    struct Fixture {
        let app: TestHarness
        let key: String
        var rng = SyntheticWriter.Generator(state: 11)
        let writer = SyntheticWriter(seed: 4242)
        let stranger = SyntheticWriter(seed: 777)

        mutating func genuine(_ count: Int) -> [SignaturePoints] { (0..<count).map { _ in writer.sign(&rng, shapeNoise: 0.03) } }
        mutating func other() -> SignaturePoints { stranger.sign(&rng, shapeNoise: 0.03) }

        /// The device facts the spec marks required on `/register/`, `/login/` and `/authenticate/`,
        /// as the SDK sends them with every call (JSON values): added when a test's fields lack them.
        static let deviceFacts: [String: [String: String]] = [
            "/register/": ["os_version": "\"18.1\"", "device_version": "\"iPhone 15\"", "resolution": "{\"width\":393,\"height\":852}", "pressure": "0"],
            "/login/": ["os_version": "\"18.1\"", "device_version": "\"iPhone 15\""],
            "/authenticate/": ["time": "\"22.01.2026 15:30:00\"", "resolution": "{\"width\":393,\"height\":852}", "pressure": "0"],
        ]

        static func withDeviceFacts(_ path: String, _ fields: [String: String]) -> [String: String] {
            fields.merging(deviceFacts[path] ?? [:]) { mine, _ in mine }
        }

        static func withDeviceFacts(_ path: String, _ fields: [(String, String)]) -> [(String, String)] {
            let missing = (deviceFacts[path] ?? [:]).filter { name, _ in !fields.contains { $0.0 == name } }
            return fields + missing.sorted { $0.key < $1.key }.map { name, value in (name, value.hasPrefix("\"") ? String(value.dropFirst().dropLast()) : value) }
        }

        func json(_ path: String, _ fields: [String: String], headers: HTTPFields = [:]) async throws -> [String: Any] {
            let fields = Self.withDeviceFacts(path, fields)
            let body = "{" + fields.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"
            let response = try await app.v1.post(path, json: body, headers: headers)
            #expect(response.status == .ok && response.headers[.contentType]?.hasPrefix("application/json") == true)
            return try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as! [String: Any]
        }

        func form(_ path: String, _ fields: [(String, String)], multipart: Bool = false) async throws -> [String: Any] {
            let fields = Self.withDeviceFacts(path, fields)
            let response = multipart ? try await app.postMultipart(path, fields) : try await app.postForm(path, fields)
            #expect(response.status == .ok)
            return try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as! [String: Any]
        }

        /// Every enrolment proves the address: the request without a code (`res 13`), then with the
        /// code the mail carried. Answers the second answer.
        func enrol(_ email: String, _ list: [SignaturePoints], device: String = "iPhone 15", key: String? = nil,
                   edit: (inout [String: String]) -> Void = { _ in }) async throws -> [String: Any] {
            var fields = registerFields(email, list, device: device, key: key)
            edit(&fields)
            app.clock.advance(by: 61)  // past the resend cooldown of an address enrolled before
            let asked = try await json("/register/", fields)
            #expect(asked["res"] as? String == "13", "\(asked)")
            fields["email_code"] = "\"\(try await app.v1.code(sentTo: email.lowercased()))\""
            return try await json("/register/", fields)
        }

        /// `enrol`'s session.
        func enrolled(_ email: String, _ list: [SignaturePoints], device: String = "iPhone 15", key: String? = nil) async throws -> String {
            let answer = try await enrol(email, list, device: device, key: key)
            return try #require(answer["sessionid"] as? String, "\(answer)")
        }

        func registerFields(_ email: String, _ list: [SignaturePoints], code: String? = nil, device: String = "iPhone 15", key: String? = nil) -> [String: String] {
            var fields = ["apikey": "\"\(key ?? self.key)\"", "email": "\"\(email)\"", "user_name": "\"Ivan Petrov\"", "time": "\"22.01.2026 15:23:56\"",
                          "os_version": "\"18.1\"", "device_version": "\"\(device)\"", "resolution": "{\"width\":1179,\"height\":2556}",
                          "pressure": "0", "signatures": SignatureEndpointsTests.signatures(list), "company_name": "\"Acme\"", "sex": "\"male\""]
            if let code { fields["email_code"] = "\"\(code)\"" }
            return fields
        }
    }

    func fixture(_ app: TestHarness) async throws -> Fixture {
        let created = try await app.services.signToLogin.apps.create(NewApp(name: "Signer", bundleId: "com.acme.signer", email: "dev@acme.example"), owner: nil, by: .system(nil))
        return Fixture(app: app, key: created.key)
    }

    @Test("an unknown, disabled or rotated key gets the spec's answer on every endpoint", arguments: TestEngine.once)
    func apiKey(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            let f = try await fixture(app)
            let row = try #require(try await app.services.signToLogin.apps.enabledApp(key: f.key))
            _ = try await app.services.signToLogin.apps.update(row, AppUpdate(enabled: false), by: .system(nil))
            for path in ["/register/", "/login/", "/authenticate/"] {
                let unknown = try await f.json(path, ["apikey": "\"550e8400-e29b-41d4-a716-446655440000\"", "email": "\"a@b.example\""])
                #expect(unknown["res"] as? String == "1")
                #expect(unknown["error"] as? String == "Application with key '550e8400-e29b-41d4-a716-446655440000' is not registered or disabled")
                let disabled = try await f.form(path, [("apikey", f.key), ("email", "a@b.example")])
                #expect(disabled["error"] as? String == "Application with key '\(f.key)' is not registered or disabled")
            }
            let raw = try await app.v1.post("/login/", json: "{\"apikey\":\"x\",\"email\":\"a@b.example\"}")
            #expect(raw.text == "{\"res\":\"1\",\"error\":\"Application with key 'x' is not registered or disabled\"}", "byte for byte: \(raw.text)")
        }
    }

    @Test("register a new email: a code first, then ten signatures make a session of the core on a confirmed address; login by type of device", arguments: TestEngine.once)
    func registerAndLogin(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            var f = try await fixture(app)
            let before = try await f.json("/login/", ["apikey": "\"\(f.key)\"", "email": "\"ivan@example.com\"", "device_version": "\"iPhone 15\""])
            #expect(before["res"] as? String == "2" && before["error"] as? String == "User does not exist")

            // MUT
            let answer = try await f.enrol("Ivan@Example.com", f.genuine(10))

            // validate
            #expect(answer["res"] as? String == "0", "\(answer)")
            let session = try #require(answer["sessionid"] as? String)
            let me = try await app.v1.get(V1.Accounts.me.path, token: session)
            let account = try me.decoded(as: Account.self)
            #expect(me.status == .ok && account.email == "ivan@example.com" && account.emailConfirmed, "the code proved the address")
            let iphone = try await f.form("/login/", [("apikey", f.key), ("email", "ivan@example.com"), ("device_version", "iPhone 13 Pro")])
            let ipad = try await f.form("/login/", [("apikey", f.key), ("email", "ivan@example.com"), ("device_version", "iPad Air")])
            #expect(iphone["res"] as? String == "0" && iphone.count == 1)
            #expect(ipad["res"] as? String == "3" && ipad["error"] as? String == "Registration is required for this type of device")
        }
    }

    @Test("signatures that do not fit: res 2 with the counts; the missing ones complete the model (form, then multipart)", arguments: TestEngine.once)
    func incompleteEnrolment(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            var f = try await fixture(app)
            var first = f.genuine(10)
            first[2] = SignaturePoints(points: [(1, 1), (2, 2)])
            first[6] = f.other()
            var fields = f.registerFields("anna@example.com", first).map { ($0.key, $0.value) }
            fields = fields.map { name, value in (name, value.hasPrefix("\"") ? String(value.dropFirst().dropLast()) : value) }
            let asked = try await f.form("/register/", fields)
            fields.append(("email_code", try await app.v1.code(sentTo: "anna@example.com")))

            // MUT: a urlencoded form with the structured fields as JSON text
            let incomplete = try await f.form("/register/", fields)

            // validate
            #expect(asked["res"] as? String == "13")
            #expect(incomplete["res"] as? String == "2" && incomplete["error"] as? String == "Not all signatures a valid")
            #expect(incomplete["count_required"] as? Int == 2 && incomplete["count_exist"] as? Int == 8)
            #expect(incomplete["count_model"] as? Int == 10 && incomplete["count_incorrect"] as? Int == 2)
            let token = try #require(incomplete["enrolment_token"] as? String)
            #expect(token.count >= 40, "a token of 256 random bits: \(token)")
            let login = try await f.form("/login/", [("apikey", f.key), ("email", "anna@example.com"), ("device_version", "iPhone")])
            #expect(login["res"] as? String == "2", "no account before the model is complete")

            // the two missing, in a multipart form, with the token
            var rest = fields.filter { $0.0 != "signatures" }
            rest.append(("signatures", SignatureEndpointsTests.signatures(f.genuine(2))))
            rest.append(("enrolment_token", token))
            let done = try await f.form("/register/", rest, multipart: true)
            #expect(done["res"] as? String == "0", "\(done)")
        }
    }

    @Test("an email that already has an account needs the code mailed to it: res 13, a wrong code res 14, the right one enrols", arguments: TestEngine.once)
    func proofForExistingEmail(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            var f = try await fixture(app)
            let owner = try await app.v1.signedUp(email: "olga@example.com")
            let signatures = f.genuine(10)

            // MUT
            let asked = try await f.json("/register/", f.registerFields("olga@example.com", signatures))
            let code = try await app.v1.code(sentTo: "olga@example.com")
            let wrong = try await f.json("/register/", f.registerFields("olga@example.com", signatures, code: code == "000000" ? "111111" : "000000"))
            let enrolled = try await f.json("/register/", f.registerFields("olga@example.com", signatures, code: code))

            // validate
            #expect(asked["res"] as? String == "13" && (asked["error"] as? String)?.hasPrefix("Email confirmation required") == true, "\(asked)")
            #expect(wrong["res"] as? String == "14", "\(wrong)")
            #expect(enrolled["res"] as? String == "0", "\(enrolled)")
            let session = try #require(enrolled["sessionid"] as? String)
            #expect(try await app.v1.get(V1.Accounts.me.path, token: session).decoded(as: Account.self).id == owner.account.id)
            let again = try await f.json("/register/", f.registerFields("olga@example.com", signatures, code: code))
            #expect(again["res"] as? String == "14", "a code works once: \(again)")
        }
    }

    @Test("authenticate: the writer scores high, another writer low; every attempt kept; unknown and not enrolled; rate limited", arguments: TestEngine.once)
    func authenticate(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.signature.attemptsPerAccount = 4 }) { app in
            var f = try await fixture(app)
            _ = try await f.enrolled("petr@example.com", f.genuine(10))
            let png = Data(SampleFiles.png).base64EncodedString()

            // MUT
            let genuine = try await f.json("/authenticate/", ["apikey": "\"\(f.key)\"", "email": "\"petr@example.com\"", "time": "\"22.01.2026 15:30:00\"",
                                                              "resolution": "{\"width\":1179,\"height\":2556}", "pressure": "0", "photo": "\"\(png)\"",
                                                              "location": "{\"lat\":55.75,\"lon\":37.61}", "city": "\"Moscow\"",
                                                              "signature": SignatureEndpointsTests.wire(f.genuine(1)[0], spacedKey: true)])
            let forged = try await f.form("/authenticate/", [("apikey", f.key), ("email", "petr@example.com"), ("time", "22.01.2026 15:31:00"),
                                                              ("pressure", "0"), ("signature", SignatureEndpointsTests.wire(f.other()))], multipart: true)
            let notImage = try await f.form("/authenticate/", [("apikey", f.key), ("email", "petr@example.com"), ("photo", "aGVsbG8="),
                                                                ("signature", SignatureEndpointsTests.wire(f.other()))])
            let unknown = try await f.form("/authenticate/", [("apikey", f.key), ("email", "nobody@example.com"), ("signature", SignatureEndpointsTests.wire(f.other()))])

            // validate
            #expect(genuine["res"] as? String == "0", "\(genuine)")
            let similarity = try #require(genuine["similarity"] as? Double)
            #expect(similarity >= 0.5 && similarity <= 1 && abs(similarity * 100 - (similarity * 100).rounded()) < 1e-9, "two decimals: \(similarity)")
            let id = try #require(genuine["signatureid"] as? String)
            #expect(id.count == 20 && id.allSatisfy { $0.isHexDigit && !$0.isUppercase })
            #expect(forged["res"] as? String == "0" && (forged["similarity"] as? Double ?? 1) < 0.5, "\(forged)")
            #expect(notImage["res"] as? String == "10")
            #expect(unknown["res"] as? String == "2" && unknown["error"] as? String == "User does not exist")
            let kept = try await app.services.database.sql.raw("SELECT COUNT(*) AS n FROM signature_attempts").first(decodingColumn: "n", as: Int.self)
            #expect(kept == 2)

            #expect(genuine["sessionid"] is String && forged["sessionid"] == nil, "a passing attempt signs the person in; a low one does not")
            let trail = try await app.services.audit.events(AuditLog.Query(kinds: [.accountCreated, .signatureEnrolled, .loginSucceeded]))
            #expect(trail.map(\.kind) == ["login.succeeded", "signature.enrolled", "account.created"],
                    "the enrolment made the account and enrolled it; the passing attempt signed in, the low one did not")
            #expect(trail.first?.detail["with"] == "signature" && trail.first?.detail["app"] == trail.last?.detail["app"] && trail.last?.detail["app"] != nil)

            // four low scores per window (the genuine one gave its slot back): the fifth is refused
            for _ in 0..<3 { _ = try await f.form("/authenticate/", [("apikey", f.key), ("email", "petr@example.com"), ("signature", SignatureEndpointsTests.wire(f.other()))]) }
            let limited = try await f.form("/authenticate/", [("apikey", f.key), ("email", "petr@example.com"), ("signature", SignatureEndpointsTests.wire(f.other()))])
            #expect(limited["res"] as? String == "12" && limited["retry_after"] as? Int != nil, "\(limited)")
        }
    }

    @Test("bad input answers a res with an error, never a 5xx: missing fields, broken JSON, a bad signature, a body too large", arguments: TestEngine.once)
    func badInput(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.signature.maxBodyBytes = 65_536 }) { app in
            let f = try await fixture(app)
            let noEmail = try await f.form("/login/", [("apikey", f.key)])
            let broken = try await app.v1.post("/register/", json: "{\"apikey\": ")
            let badSignature = try await f.form("/authenticate/", [("apikey", f.key), ("email", "a@b.example"), ("signature", "{\"signature_contents\":[{\"x\":\"left\"}]}")])
            let badTime = try await f.json("/register/", ["apikey": "\"\(f.key)\"", "email": "\"a@b.example\"", "user_name": "\"A\"", "time": "\"yesterday\"", "signatures": "[]"])
            let huge = try await app.postForm("/login/", [("apikey", f.key), ("email", "a@b.example"), ("padding", String(repeating: "x", count: 70_000))])

            #expect(noEmail["res"] as? String == "10" && (noEmail["error"] as? String)?.contains("email") == true)
            #expect(broken.status == .ok && broken.text.hasPrefix("{\"res\":\"10\""), "\(broken.text)")
            #expect(badSignature["res"] as? String == "10")
            #expect(badTime["res"] as? String == "10")
            #expect(huge.status == .ok && huge.text.hasPrefix("{\"res\":\"11\""), "\(huge.text)")
        }
    }

    @Test("the spec's required parameters (marked *): each one missing is res 10 naming it; profile fields take only their characters", arguments: TestEngine.once)
    func requiredParameters(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            var f = try await fixture(app)
            let signatures = "[" + f.genuine(10).map { SignatureEndpointsTests.wire($0) }.joined(separator: ",") + "]"
            let register = Fixture.withDeviceFacts("/register/", f.registerFields("iva@example.com", []).merging(["signatures": signatures]) { _, new in new })
            let login = Fixture.withDeviceFacts("/login/", ["apikey": "\"\(f.key)\"", "email": "\"iva@example.com\""])
            let authenticate = Fixture.withDeviceFacts("/authenticate/", ["apikey": "\"\(f.key)\"", "email": "\"iva@example.com\"",
                                                                          "signature": SignatureEndpointsTests.wire(f.other())])
            func post(_ path: String, _ fields: [String: String]) async throws -> [String: Any] {
                let response = try await app.v1.post(path, json: "{" + fields.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}")
                return try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as! [String: Any]
            }

            // MUT + validate: each required parameter left out in turn
            for (path, fields, required) in [("/register/", register, ["os_version", "device_version", "resolution", "pressure", "time", "user_name"]),
                                             ("/login/", login, ["os_version", "device_version"]),
                                             ("/authenticate/", authenticate, ["time", "resolution", "pressure"])] {
                for name in required {
                    var without = fields
                    without[name] = nil
                    let answer = try await post(path, without)
                    #expect(answer["res"] as? String == "10" && (answer["error"] as? String)?.contains(name) == true, "\(path) without \(name): \(answer)")
                }
                let whole = try await post(path, fields)
                #expect(whole["res"] as? String != "10", "\(path) with every required parameter: \(whole)")
            }
            // Profile fields: only their characters.
            for (name, value) in [("phone_number", "\"+7 916 abc\""), ("company_name", "\"<b>Acme</b>\""), ("birthday", "\"31.02.1990\""),
                                  ("sex", "\"other\""), ("user_name", "\"Ivan2\"")] {
                let answer = try await post("/register/", register.merging([name: value]) { _, new in new })
                #expect(answer["res"] as? String == "10" && (answer["error"] as? String)?.contains(name) == true, "\(name)=\(value): \(answer)")
            }
            app.clock.advance(by: 61)  // past the code's resend cooldown (the whole request above sent one)
            let fine = try await post("/register/", register.merging(["phone_number": "\"+7 (916) 123-45-67\"", "company_name": "\"ООО «Ромашка» & Co.\"",
                                                                      "position": "\"Head of R&D\"", "birthday": "\"17.05.1990\"", "sex": "\"Female\""]) { _, new in new })
            #expect(fine["res"] as? String == "13", "a whole profile goes on to the email code: \(fine)")
        }
    }

    /// Ann's and Bob's models (Bob signs as the tests' stranger writer), and a passing
    /// authentication of each: their signature ids and sessions.
    struct Signers {
        var ann: String, bob: String, annSession: String, bobSession: String
    }

    func signed(_ f: inout Fixture, photo: Bool = false) async throws -> Signers {
        let annSession = try await f.enrolled("ann@example.com", f.genuine(10))
        let bobSignatures = (0..<10).map { _ in f.other() }
        let bobEnrolled = try await f.enrol("bob@example.com", bobSignatures) { $0["user_name"] = "\"Bob Brown\"" }
        let bobSession = try #require(bobEnrolled["sessionid"] as? String, "\(bobEnrolled)")
        var annAttempt = ["apikey": "\"\(f.key)\"", "email": "\"ann@example.com\"", "city": "\"Kazan\"", "time": "\"22.01.2026 10:00:00\"",
                          "signature": SignatureEndpointsTests.wire(f.genuine(1)[0])]
        if photo { annAttempt["photo"] = "\"\(Data(SampleFiles.png).base64EncodedString())\"" }
        let ann = try await f.json("/authenticate/", annAttempt)
        let bob = try await f.json("/authenticate/", ["apikey": "\"\(f.key)\"", "email": "\"bob@example.com\"", "signature": SignatureEndpointsTests.wire(f.other())])
        return Signers(ann: try #require(ann["signatureid"] as? String), bob: try #require(bob["signatureid"] as? String, "\(bob)"),
                       annSession: annSession, bobSession: bobSession)
    }

    @Test("documents: the first save makes a document, the next extend its chain; open answers the history, res 1 when changed outside", arguments: TestEngine.once)
    func documents(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            var f = try await fixture(app)
            let s = try await signed(&f, photo: true)
            let (annSig, bobSig) = (s.ann, s.bob)

            // MUT: Ann signs and saves; Bob opens (the PDF names the document), signs and saves the next version (a form, signatures as JSON text)
            let first = try await f.json("/savedocument/", ["apikey": "\"\(f.key)\"", "email": "\"ann@example.com\"", "previous_hash": "\"\"",
                                                             "document_hash": "\"h1\"", "signatures": "[\"\(annSig)\"]", "sessionid": "\"\(s.annSession)\""])
            let documentID = try #require(first["documentid"] as? String)
            let second = try await f.form("/savedocument/", [("apikey", f.key), ("email", "bob@example.com"), ("previous_hash", "h1"), ("documentid", documentID),
                                                              ("document_hash", "h2"), ("signatures", "[\"\(bobSig)\"]"), ("sessionid", s.bobSession)])
            let current = try await f.form("/opendocument/", [("apikey", f.key), ("email", "bob@example.com"), ("documentid", documentID), ("document_hash", "h2")])
            let outside = try await f.form("/opendocument/", [("apikey", f.key), ("email", "ann@example.com"), ("documentid", documentID), ("document_hash", "tampered")])

            // validate
            #expect(first["res"] as? String == "0" && documentID.count == 20 && documentID.allSatisfy(\.isHexDigit))
            #expect(second["res"] as? String == "0" && second["documentid"] as? String == documentID, "\(second)")
            #expect(current["res"] as? String == "0", "\(current)")
            let history = try #require(current["history"] as? [[String: Any]])
            #expect(history.map { $0["name"] as? String } == ["Ivan Petrov", "Bob Brown"])
            #expect(history.map { $0["signatureid"] as? String } == [annSig, bobSig])
            #expect(history.map { $0["document_hash"] as? String } == ["h1", "h2"])
            #expect(history.allSatisfy { $0["warning"] as? Bool == false }, "only passing signatures sign")
            #expect(history[0]["city"] as? String == "Kazan" && history[0]["client_time"] as? String == "22.01.2026 10:00:00")
            #expect((history[0]["time"] as? String)?.count == 19)
            let photo = try #require(history[0]["photo"] as? String)
            #expect(history[1]["photo"] is NSNull)
            let image = try await app.client.execute(uri: String(photo.dropFirst(app.configuration.publicURL.count)), method: .get)
            #expect(image.status == .ok && image.headers[.contentType] == "image/png" && Array(image.body.readableBytesView) == SampleFiles.png)
            #expect(outside["res"] as? String == "1" && outside["error"] as? String == "Document has been updated outside of the application")
            #expect((outside["history"] as? [Any])?.count == 2)
        }
    }

    @Test("two saves from the same version make one chain: the second is refused with res 15; foreign signatures, unknown documents, a save without previous_hash", arguments: TestEngine.once)
    func documentConflicts(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            var f = try await fixture(app)
            let s = try await signed(&f)
            let (annSig, bobSig) = (s.ann, s.bob)
            let first = try await f.json("/savedocument/", ["apikey": "\"\(f.key)\"", "email": "\"ann@example.com\"", "previous_hash": "\"\"", "document_hash": "\"v1\"", "signatures": "[]",
                                                             "sessionid": "\"\(s.annSession)\""])
            let documentID = try #require(first["documentid"] as? String)

            // MUT: two saves from v1 at once
            let key = f.key
            async let a = app.postForm("/savedocument/", [("apikey", key), ("email", "ann@example.com"), ("previous_hash", "v1"), ("document_hash", "v2a"),
                                                          ("signatures", "[\"\(annSig)\"]"), ("sessionid", s.annSession)])
            async let b = app.postForm("/savedocument/", [("apikey", key), ("email", "bob@example.com"), ("previous_hash", "v1"), ("document_hash", "v2b"),
                                                          ("signatures", "[\"\(bobSig)\"]"), ("sessionid", s.bobSession), ("documentid", documentID)])
            let answers = try await [a, b].map { try JSONSerialization.jsonObject(with: Data(buffer: $0.body)) as! [String: Any] }
            let foreign = try await f.form("/savedocument/", [("apikey", f.key), ("email", "ann@example.com"), ("previous_hash", ""), ("document_hash", "x"), ("signatures", "[\"\(bobSig)\"]"),
                                                              ("sessionid", s.annSession)])
            let unknown = try await f.form("/opendocument/", [("apikey", f.key), ("email", "ann@example.com"), ("documentid", "00ff00ff00ff00ff00ff"), ("document_hash", "x")])
            let stranger = try await f.form("/savedocument/", [("apikey", f.key), ("email", "nobody@example.com"), ("previous_hash", ""), ("document_hash", "x"), ("sessionid", s.annSession)])
            // previous_hash is required (the spec marks it), empty for a first save: left out, the save is refused naming it.
            let withoutPrevious = try await f.form("/savedocument/", [("apikey", f.key), ("email", "ann@example.com"), ("document_hash", "x"),
                                                                      ("sessionid", s.annSession)])

            // validate
            #expect(Set(answers.compactMap { $0["res"] as? String }) == ["0", "15"], "\(answers)")
            let winner = try #require(answers.first { $0["res"] as? String == "0" })
            #expect(winner["documentid"] as? String == documentID)
            let versions = try await app.services.database.sql.raw("SELECT COUNT(*) AS n FROM signature_document_versions WHERE document_id = \(bind: documentID)")
                .first(decodingColumn: "n", as: Int.self)
            #expect(versions == 2)
            #expect(foreign["res"] as? String == "10" && (foreign["error"] as? String)?.contains(bobSig) == true)
            #expect(unknown["res"] as? String == "16")
            #expect(stranger["res"] as? String == "18", "a session of another person saves nothing: \(stranger)")
            #expect(withoutPrevious["res"] as? String == "10" && (withoutPrevious["error"] as? String)?.contains("previous_hash") == true, "\(withoutPrevious)")
        }
    }

    @Test("with the authenticator app on, Sign To Login has no second step: the person's signature (res 20 on /authenticate/) and a new enrolment with the mailed code (res 20 on /register/) open no session, and nothing of the enrolment is kept", arguments: TestEngine.once)
    func secondFactorAccount(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup: enrolled while the password alone signed in, then the app turned on
            var f = try await fixture(app)
            try await app.registerPhoneAccount(email: "fpi@bk.ru", confirmingEmail: true)
            _ = try await f.enrolled("fpi@bk.ru", f.genuine(10))
            let token = try await app.v1.login("fpi@bk.ru", "secret-91!").token
            let enrolment = try await app.v1.post(V1.SecondFactors.enrolTOTP.path, TOTPEnrolmentRequest(currentPassword: "secret-91!"), token: token)
                .decoded(as: TOTPEnrolment.self)
            let confirmed = try await app.v1.post(V1.SecondFactors.confirmTOTP.path,
                                                  CodeVerification(code: try await SecondFactorTests.appCode(enrolment.uri, at: app.clock.now)), token: token)
            #expect(confirmed.status == .ok, "\(confirmed.text)")
            let sessionsBefore = try await app.v1.sessions(token).count

            // MUT
            let signedIn = try await f.json("/authenticate/", ["apikey": "\"\(f.key)\"", "email": "\"fpi@bk.ru\"",
                                                               "signature": SignatureEndpointsTests.wire(f.genuine(1)[0])])
            let again = try await f.enrol("fpi@bk.ru", f.genuine(10), device: "iPad Pro")

            // validate
            #expect(signedIn["res"] as? String == "20" && signedIn["sessionid"] == nil, "\(signedIn)")
            #expect((signedIn["error"] as? String)?.contains("two-step login") == true, "\(signedIn)")
            #expect(again["res"] as? String == "20" && again["sessionid"] == nil, "\(again)")
            #expect(try await app.v1.sessions(token).count == sessionsBefore, "no session was opened")
            let login = try await f.json("/login/", ["apikey": "\"\(f.key)\"", "email": "\"fpi@bk.ru\"", "device_version": "\"iPad Pro\""])
            #expect(login["res"] as? String == "3", "the iPad enrolment was not kept: \(login)")
        }
    }
}
