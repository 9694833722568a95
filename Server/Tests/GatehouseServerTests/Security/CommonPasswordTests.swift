import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import GatehouseServer
import GatehouseSurfaces
import GatehouseTestSupport
import HummingbirdTesting
import Testing

/// New passwords that are common or breached are refused on every surface (docs/security.md, "Common and breached
/// passwords"): the list shipped with the server, and Have I Been Pwned's range API when one is configured (here
/// `pwned_range_peer.py`, a local server speaking the documented API).
@Suite("Common and breached passwords")
struct CommonPasswordTests {
    static let commonMessage = "This password is one of the most common passwords"
    static let breachedMessage = "This password has appeared in a data breach"

    /// A sign-up by email with `password`: the raw answer.
    func signup(_ app: TestHarness, _ email: String, _ password: String) async throws -> TestResponse {
        let sent = try await app.v1.requestSignupCode(email: email)
        let code = try await app.v1.code(sentTo: sent.destination)
        return try await app.v1.post(V1.Accounts.signup.path, SignupRequest(email: email, code: code, password: password))
    }

    @Test("the shipped list: 20,000 passwords, read once; a thousand sampled from it are refused as they are, and with special characters around them")
    func shippedList_refusesItsEntries() async throws {
        let list = try CommonPasswords.shipped()
        let words = try Self.shippedWords()
        #expect(list.count == Set(words.map { CommonPasswords.decoded($0).lowercased() }).count && list.count > 19_000, "\(list.count)")
        // Only the rule that is being tested: the composition rules off, so every entry reaches the list.
        var relaxed = GatehouseConfiguration.PasswordPolicy()
        (relaxed.minLength, relaxed.requireDigit, relaxed.requireSpecial) = (4, false, false)
        let rules = PasswordRules(policy: relaxed, common: list)
        // Every 1/1000th entry that the composition rules (relaxed) take and that is more than special characters.
        let eligible = words.map(CommonPasswords.decoded).filter { rules.rule.problem(with: $0) == nil && !CommonPasswords.core($0).isEmpty }
        let sample = stride(from: 0, to: eligible.count, by: eligible.count / 1_000).prefix(1_000).map { eligible[$0] }
        #expect(sample.count == 1_000)
        #expect(eligible.filter { !list.contains($0) }.isEmpty, "and every entry, looked up alone")
        var accepted: [String] = []
        for word in sample {
            for form in [word, word.uppercased(), "!" + word + "!!", word.capitalized + "#"] where rules.rule.problem(with: form) == nil {
                do {
                    try await rules.validate(form)
                    accepted.append(form)
                } catch let error as GatehouseError {
                    #expect(error.code == .weakPassword && error.message.key == "error.passwordCommon" && error.field == "password", "\(form): \(error)")
                }
            }
        }
        #expect(accepted.isEmpty, "accepted: \(accepted.prefix(10))")
        // The list's `$HEX[…]` lines stand for the passwords they encode.
        #expect(CommonPasswords.decoded("$HEX[50617373776f7264]") == "Password" && CommonPasswords.decoded("$hex[zz]") == "$hex[zz]")
        let encoded = try #require(words.first { $0.hasPrefix("$hex[") && CommonPasswords.decoded($0) != $0 })
        #expect(list.contains(CommonPasswords.decoded(encoded)), "\(encoded)")
    }

    @Test("Password1! and qwerty123! are refused on /v1 and /api, naming the reason; a random 12-character password is taken",
          arguments: TestEngine.once)
    func signup_commonPassword_isRefusedOnEverySurface(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // MUT + validate: /v1 sign-up
            for (index, password) in ["Password1!", "qwerty123!", "P@ssw0rd", "iloveyou1!"].enumerated() {
                let response = try await signup(app, "ann\(index)@example.com", password)
                #expect(response.status == .badRequest, "\(password): \(response.text)")
                #expect(response.text.contains("\"code\":\"weak_password\"") && response.text.contains("\"field\":\"password\""))
                #expect(response.text.contains(Self.commonMessage), "\(password): \(response.text)")
            }

            // MUT + validate: /api registration (the phone spec's form), its error header and message
            let sms = try await app.postForm(PhoneAccountsAPI.Path.sendSMS, [("phone", "+79123456789")])
            #expect(sms.status == .ok)
            let code = try await app.latestCode(to: "+79123456789")
            let register = try await app.postForm(PhoneAccountsAPI.Path.register, [("phone", "+79123456789"), ("code", code), ("password", "Password1!")])
            #expect(register.status == .badRequest && register.headers[.init("X-Error-Code")!] == "weak_password")
            #expect(register.text.contains("самых распространённых"), "in the /api's language: \(register.text)")

            // MUT + validate: a random password of 12 characters is no common one
            let alphabet = Array("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789!#%-")
            let random = "a1!" + String((0..<9).map { _ in alphabet.randomElement()! })
            let taken = try await signup(app, "bob@example.com", random)
            #expect(taken.status == .created, "\(random): \(taken.text)")

            // MUT + validate: a password change and a recovery to a common password are refused too
            let session = try taken.decoded(as: AuthSession.self)
            let change = try await app.v1.post(V1.Accounts.changePassword.path, PasswordChange(currentPassword: random, newPassword: "Welcome1!"), token: session.token)
            #expect(change.status == .badRequest && change.text.contains(Self.commonMessage) && change.text.contains("\"field\":\"newPassword\""), "\(change.text)")
            let sent = try await app.v1.post(V1.Accounts.recoveryCode.path, json: #"{"email":"bob@example.com"}"#)
            #expect(sent.status == .accepted)
            let recoveryCode = try await app.latestCode(to: "bob@example.com")
            let recover = try await app.v1.post(V1.Accounts.recover.path, RecoveryRequest(email: "bob@example.com", code: recoveryCode, password: "Password1!"))
            #expect(recover.status == .badRequest && recover.text.contains(Self.commonMessage), "\(recover.text)")
            _ = try await app.v1.login("bob@example.com", random)
        }
    }

    @Test("the list can be switched off by configuration (GATEHOUSE_PASSWORD_REFUSE_COMMON=false)")
    func commonList_off_takesListedPasswords() async throws {
        let configuration = try GatehouseConfiguration.fromEnvironment(["GATEHOUSE_PASSWORD_REFUSE_COMMON": "false"])
        #expect(configuration.passwords.refuseCommon == false)
        try await withApp(.sqlite, configure: { $0.passwords.refuseCommon = false }) { app in
            let response = try await signup(app, "ann@example.com", "Password1!")
            #expect(response.status == .created, "\(response.text)")
        }
    }

    @Test("with a range API configured: a breached password is refused, only five hex characters of its SHA-1 leave the server, the count threshold holds, and an unreachable API lets the password through",
          arguments: TestEngine.once)
    func breachedPasswords_rangeAPI(engine: TestEngine) async throws {
        let breached = "correct-Horse-7!"
        let peer = try await PwnedRangePeer.start(breached: [breached: 42, "rarely-Seen-7!": 2])
        defer { peer.stop() }
        try await withApp(engine, configure: { $0.passwords.breachRangeURL = peer.base; $0.passwords.breachMinimumCount = 3 }) { app in
            // MUT
            let refused = try await signup(app, "ann@example.com", breached)
            let rare = try await signup(app, "bob@example.com", "rarely-Seen-7!")
            let clean = try await signup(app, "eve@example.com", "unseen-Battery-9!")

            // validate: the answers
            #expect(refused.status == .badRequest && refused.text.contains(Self.breachedMessage) && refused.text.contains("weak_password"), "\(refused.text)")
            #expect(rare.status == .created, "seen twice, under the threshold of 3: \(rare.text)")
            #expect(clean.status == .created, "\(clean.text)")

            // validate: what the range API saw
            let hash = PwnedPasswordsRange.sha1Hex(breached)
            let requests = try await peer.requests()
            #expect(requests.count == 3)
            #expect(requests.allSatisfy { ($0["path"] as? String)?.range(of: #"^/range/[0-9A-F]{5}$"#, options: .regularExpression) != nil })
            #expect(requests.first?["path"] as? String == "/range/" + hash.prefix(5))
            #expect(requests.allSatisfy { (($0["headers"] as? [String: String])?["add-padding"]) == "true" })
            let everything = String(describing: requests)
            #expect(!everything.contains(String(hash.dropFirst(5))) && !everything.contains(breached), "nothing but the prefix left")
        }

        // MUT + validate: the API slower than the timeout: judged without it (the peer would have said "breached")
        let slow = try await PwnedRangePeer.start(breached: [breached: 42], delay: 5)
        defer { slow.stop() }
        try await withApp(.sqlite, configure: { $0.passwords.breachRangeURL = slow.base; $0.passwords.breachTimeoutSeconds = 1 }) { app in
            let response = try await signup(app, "ann@example.com", breached)
            #expect(response.status == .created, "the timeout let it through: \(response.text)")
        }

        // MUT + validate: the API away (nothing listens): judged on the shipped list alone
        try await withApp(.sqlite, configure: { $0.passwords.breachRangeURL = "http://127.0.0.1:9"; $0.passwords.breachTimeoutSeconds = 2 }) { app in
            let response = try await signup(app, "ann@example.com", breached)
            #expect(response.status == .created, "\(response.text)")
            let common = try await signup(app, "bob@example.com", "Password1!")
            #expect(common.status == .badRequest && common.text.contains(Self.commonMessage))
        }
    }

    @Test("a range answer is read as documented: CRLF lines, upper-case suffixes, padding rows of 0, malformed lines skipped")
    func rangeAnswer_parsing() {
        let hash = PwnedPasswordsRange.sha1Hex("password")
        #expect(hash == "5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8")
        let suffix = String(hash.dropFirst(5))
        let answer = "0018A45C4D1DEF81644B54AB7F969B88D65:1\r\n\(suffix.lowercased()):9659365\r\nnonsense\r\n00D4F6E8FA6EECAD2A3AA415EEC418D38EC:0"
        #expect(PwnedPasswordsRange.count(of: suffix, in: answer) == 9_659_365)
        #expect(PwnedPasswordsRange.count(of: "00D4F6E8FA6EECAD2A3AA415EEC418D38EC", in: answer) == 0)
        #expect(PwnedPasswordsRange.count(of: "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF", in: answer) == 0)
        #expect(throws: ConfigurationError.self) { try GatehouseConfiguration.fromEnvironment(["GATEHOUSE_PASSWORD_BREACH_API": "ftp://x"]) }
        let configured = try! GatehouseConfiguration.fromEnvironment([
            "GATEHOUSE_PASSWORD_BREACH_API": "https://api.pwnedpasswords.com/", "GATEHOUSE_PASSWORD_BREACH_MIN_COUNT": "10",
            "GATEHOUSE_PASSWORD_BREACH_TIMEOUT_SECONDS": "5",
        ]).passwords
        #expect(configured.breachRangeURL == "https://api.pwnedpasswords.com" && configured.breachMinimumCount == 10 && configured.breachTimeoutSeconds == 5)
        let defaults = GatehouseConfiguration.PasswordPolicy()
        #expect(defaults.refuseCommon && defaults.breachRangeURL == nil && defaults.breachMinimumCount == 1 && defaults.breachTimeoutSeconds == 3)
        #expect(throws: ConfigurationError.self) { try GatehouseConfiguration.fromEnvironment(["GATEHOUSE_PASSWORD_BREACH_TIMEOUT_SECONDS": "0"]) }
    }

    /// The shipped list's lines, as the file holds them.
    static func shippedWords() throws -> [String] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/GatehouseSurfaces/Resources/common-passwords.txt.gz")
        let unzip = Process()
        unzip.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        unzip.arguments = ["gzip", "-dc", url.path]
        let pipe = Pipe()
        unzip.standardOutput = pipe
        try unzip.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        unzip.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}

/// `pwned_range_peer.py` running on a free port, with the breached passwords it knows.
enum PwnedRangePeer {
    static func start(breached: [String: Int], delay: Int = 0) async throws -> PythonPeer {
        try await PythonPeer.start("pwned_range_peer.py", breached.flatMap { ["--breached", "\($0.key):\($0.value)"] } + ["--delay", String(delay)])
    }
}

extension PythonPeer {
    /// Every request a peer that records them received (`GET /_test/requests`): path and headers.
    func requests() async throws -> [[String: Any]] {
        var request = URLRequest(url: URL(string: "\(base)/_test/requests")!)
        request.timeoutInterval = 30
        let (data, _) = try await URLSession.shared.data(for: request)
        return (try JSONSerialization.jsonObject(with: data) as? [[String: Any]]) ?? []
    }
}
