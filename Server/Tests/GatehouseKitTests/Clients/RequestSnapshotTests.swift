import Foundation
import GatehouseAPI
import GatehouseKit
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The SDK's fast seam: every call of every client, its request as it leaves the app — method, path and query, the
/// headers the client sets, the body — recorded by a transport that answers without a server, and compared with
/// `Support/Fixtures/requests.txt` (request snapshots, as supabase-swift keeps them). A change of what a call sends
/// shows as a diff of that file; `GATEHOUSE_RECORD_SNAPSHOTS=1` writes it anew, to read in review. What the server
/// makes of a request stays the live-server suites' to show.
@Suite("GatehouseKit: every call's request, without a server")
struct RequestSnapshotTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Support/Fixtures/requests.txt")
    static let server = URL(string: "https://gatehouse.example")!
    static let someone = UUID(uuidString: "00000000-0000-4000-8000-000000000001")!
    static let thing = UUID(uuidString: "00000000-0000-4000-8000-000000000002")!
    static let other = UUID(uuidString: "00000000-0000-4000-8000-000000000003")!
    static let when = Date(timeIntervalSince1970: 1_900_000_000)
    /// The clients' clock: a minute before the stored sessions expire.
    static let deviceNow = when.addingTimeInterval(-60)
    /// The language a client without one set sends: the device's, Russian or English.
    static let deviceLanguage = (Locale.preferredLanguages.first ?? "en").lowercased().hasPrefix("ru") ? "ru" : "en"

    /// Every request a client sends is kept; each is answered with a problem the client reads as a refusal, so no
    /// call needs a body it can decode.
    static func recorder() -> ScriptedTransport {
        ScriptedTransport { _ in (418, ["Content-Type": "application/problem+json"],
                                  #"{"type":"about:blank","title":"Refused","status":418,"code":"snapshot","detail":"recorded"}"#) }
    }

    /// A request as the fixture writes it: the first line, the headers by name (the user agent left out: it names the
    /// machine), the body. A JSON body with its members sorted (their order means nothing to a reader of JSON, and
    /// one client writes a dictionary), bytes that are not text in base64, a multipart boundary (random per request)
    /// as `BOUNDARY`, and the device's clock (Sign To Login sends local time) as `DEVICE-TIME`.
    static func text(_ request: URLRequest) -> String {
        let url = request.url!
        var lines = ["\(request.httpMethod ?? "GET") \(url.path)\(url.query.map { "?" + $0 } ?? "")"]
        var boundary: String?
        for (name, value) in (request.allHTTPHeaderFields ?? [:]).sorted(by: { $0.key.lowercased() < $1.key.lowercased() })
            where name.lowercased() != "user-agent" {
            if let range = value.range(of: "boundary=") { boundary = String(value[range.upperBound...]) }
            lines.append("\(name): \(boundary.map { value.replacingOccurrences(of: $0, with: "BOUNDARY") } ?? value)")
        }
        if let body = request.httpBody, !body.isEmpty {
            var text: String
            if request.value(forHTTPHeaderField: "Content-Type")?.contains("json") == true,
               let object = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]),
               let sorted = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes, .fragmentsAllowed]) {
                text = String(decoding: sorted, as: UTF8.self)
            } else if let utf8 = String(data: body, encoding: .utf8) {
                text = utf8
            } else {
                text = "base64:" + body.base64EncodedString()
            }
            text = text.replacingOccurrences(of: SignToLoginAPI.specTime(deviceNow), with: "DEVICE-TIME")
            if let boundary { text = text.replacingOccurrences(of: boundary, with: "BOUNDARY") }
            lines.append("")
            lines.append(text.replacingOccurrences(of: "\r\n", with: "⏎\n"))
        }
        return lines.joined(separator: "\n")
    }

    typealias Call = (name: String, run: @Sendable (Clients) async throws -> Void)

    struct Clients: Sendable {
        let accounts: AccountsClient
        let messenger: MessengerClient
        let wallet: WalletClient
        let phone: PhoneAccountsClient
        let signatures: SignToLoginClient
    }

    static let challenge = SecondFactorChallenge(challenge: "challenge-1", methods: ["totp", "recovery_code"], expiresAt: when)
    static let assertion = PasskeyAssertion(id: "cred-1", rawId: "cred-1",
                                            response: .init(clientDataJSON: "eyJ9", authenticatorData: "AAAA", signature: "MEUC", userHandle: "dXNlcg"))
    static let registration = PasskeyRegistrationCredential(id: "cred-1", rawId: "cred-1",
                                                            response: .init(clientDataJSON: "eyJ9", attestationObject: "o2Nm", transports: ["internal"]))
    static let intent = PaymentIntent(key: "intent-1")

    static let calls: [Call] = [
        // /v1 accounts and sessions
        ("accounts.requestSignupCode(email:)", { _ = try await $0.accounts.requestSignupCode(email: "ivan@example.com") }),
        ("accounts.requestSignupCode(phone:)", { _ = try await $0.accounts.requestSignupCode(phone: "+79161234567") }),
        ("accounts.signup", { _ = try await $0.accounts.signup(SignupRequest(email: "ivan@example.com", code: "123456", password: "Secret-42!", firstName: "Ivan",
                                                                           tag: "ivan", locale: "ru", device: "iPhone")) }),
        ("accounts.tagAvailability", { _ = try await $0.accounts.tagAvailability("ivan.p") }),
        ("accounts.login", { _ = try await $0.accounts.login(identifier: "@ivan", password: "Secret-42!", device: "iPhone") }),
        ("accounts.beginLogin", { _ = try await $0.accounts.beginLogin(identifier: "ivan@example.com", password: "Secret-42!") }),
        ("accounts.completeLogin", { _ = try await $0.accounts.completeLogin(challenge: challenge, code: "123456", device: "iPhone") }),
        ("accounts.sessions", { _ = try await $0.accounts.sessions() }),
        ("accounts.endSession", { _ = try await $0.accounts.endSession(id: thing) }),
        ("accounts.endOtherSessions", { _ = try await $0.accounts.endOtherSessions() }),
        ("accounts.securityEvents", { _ = try await $0.accounts.securityEvents(cursor: "c1", limit: 20) }),
        ("accounts.registerDevice", { _ = try await $0.accounts.registerDevice(DeviceRegistration(platform: .apns, token: "0a1b2c", bundleId: "com.example.app",
                                                                                              environment: .sandbox, language: "ru")) }),
        ("accounts.devices", { _ = try await $0.accounts.devices() }),
        ("accounts.removeDevice", { _ = try await $0.accounts.removeDevice(id: thing) }),
        ("accounts.notificationSettings", { _ = try await $0.accounts.notificationSettings() }),
        ("accounts.updateNotificationSettings", { _ = try await $0.accounts.updateNotificationSettings(NotificationSettingsUpdate(previews: false)) }),
        ("accounts.requestRecoveryCode(email:)", { _ = try await $0.accounts.requestRecoveryCode(email: "ivan@example.com") }),
        ("accounts.requestRecoveryCode(phone:)", { _ = try await $0.accounts.requestRecoveryCode(phone: "+79161234567") }),
        ("accounts.recoverPassword", { _ = try await $0.accounts.recoverPassword(RecoveryRequest(email: "ivan@example.com", code: "123456", password: "New-Secret-1")) }),
        ("accounts.me", { _ = try await $0.accounts.me() }),
        ("accounts.updateProfile", { _ = try await $0.accounts.updateProfile(ProfileUpdate(firstName: "Ivan", lastName: .some(nil), tag: "ivan.p")) }),
        ("accounts.changePassword", { _ = try await $0.accounts.changePassword(current: "Secret-42!", new: "New-Secret-1") }),
        ("accounts.deleteAccount", { _ = try await $0.accounts.deleteAccount(currentPassword: "Secret-42!") }),
        ("accounts.passkeyCreationOptions", { _ = try await $0.accounts.passkeyCreationOptions(currentPassword: "Secret-42!", code: "123456") }),
        ("accounts.passkeyStepUpOptions", { _ = try await $0.accounts.passkeyStepUpOptions() }),
        ("accounts.registerPasskey", { _ = try await $0.accounts.registerPasskey(registration, name: "iPhone") }),
        ("accounts.passkeys", { _ = try await $0.accounts.passkeys() }),
        ("accounts.removePasskey", { _ = try await $0.accounts.removePasskey(id: thing, currentPassword: "Secret-42!", recoveryCode: "abcde-fghjk") }),
        ("accounts.passkeyLoginOptions", { _ = try await $0.accounts.passkeyLoginOptions(for: challenge) }),
        ("accounts.loginWithPasskey", { _ = try await $0.accounts.loginWithPasskey(assertion, device: "iPhone") }),
        ("accounts.secondFactors", { _ = try await $0.accounts.secondFactors() }),
        ("accounts.enrolTOTP", { _ = try await $0.accounts.enrolTOTP(currentPassword: "Secret-42!") }),
        ("accounts.confirmTOTP", { _ = try await $0.accounts.confirmTOTP(code: "123456") }),
        ("accounts.disableTOTP", { _ = try await $0.accounts.disableTOTP(currentPassword: "Secret-42!", passkey: assertion) }),
        ("accounts.renewRecoveryCodes", { _ = try await $0.accounts.renewRecoveryCodes(currentPassword: "Secret-42!", code: "123456") }),
        ("accounts.requestEmailChange", { _ = try await $0.accounts.requestEmailChange("new@example.com", currentPassword: "Secret-42!") }),
        ("accounts.verifyEmailChange", { _ = try await $0.accounts.verifyEmailChange(code: "123456") }),
        ("accounts.cancelEmailChange", { _ = try await $0.accounts.cancelEmailChange() }),
        ("accounts.requestPhoneVerification", { _ = try await $0.accounts.requestPhoneVerification("+79161234567", currentPassword: "Secret-42!") }),
        ("accounts.verifyPhone", { _ = try await $0.accounts.verifyPhone("+79161234567", code: "123456") }),
        ("accounts.uploadAvatar", { _ = try await $0.accounts.uploadAvatar(data: Data([0x89, 0x50, 0x4E, 0x47]), contentType: "image/png") }),
        ("accounts.removeAvatar", { _ = try await $0.accounts.removeAvatar() }),
        ("accounts.logout", { _ = try await $0.accounts.logout() }),
        // /v1 messenger
        ("messenger.searchPeople", { _ = try await $0.messenger.searchPeople("Ann Lee", cursor: "c1", limit: 10) }),
        ("messenger.person", { _ = try await $0.messenger.person(someone) }),
        ("messenger.privacy", { _ = try await $0.messenger.privacy() }),
        ("messenger.setPrivacy", { _ = try await $0.messenger.setPrivacy(whoCanMessageMe: .friends) }),
        ("messenger.blockedPeople", { _ = try await $0.messenger.blockedPeople() }),
        ("messenger.block", { _ = try await $0.messenger.block(someone) }),
        ("messenger.unblock", { _ = try await $0.messenger.unblock(someone) }),
        ("messenger.friends", { _ = try await $0.messenger.friends(sortedBy: .tag, matching: "an") }),
        ("messenger.requestFriend", { _ = try await $0.messenger.requestFriend(someone) }),
        ("messenger.acceptRequest", { _ = try await $0.messenger.acceptRequest(thing) }),
        ("messenger.declineRequest", { _ = try await $0.messenger.declineRequest(thing) }),
        ("messenger.cancelRequest", { _ = try await $0.messenger.cancelRequest(thing) }),
        ("messenger.removeFriend", { _ = try await $0.messenger.removeFriend(someone) }),
        ("messenger.chats", { _ = try await $0.messenger.chats(matching: "ann", cursor: "c1", limit: 20) }),
        ("messenger.openChat", { _ = try await $0.messenger.openChat(with: someone) }),
        ("messenger.chat", { _ = try await $0.messenger.chat(thing) }),
        ("messenger.mute", { _ = try await $0.messenger.mute(thing, until: when) }),
        ("messenger.mute(until: nil)", { _ = try await $0.messenger.mute(thing, until: nil) }),
        ("messenger.deleteChat", { _ = try await $0.messenger.deleteChat(thing) }),
        ("messenger.markRead", { _ = try await $0.messenger.markRead(thing, upTo: other) }),
        ("messenger.attachments", { _ = try await $0.messenger.attachments(of: thing, cursor: "c1", limit: 5) }),
        ("messenger.messages", { _ = try await $0.messenger.messages(in: thing, before: other, limit: 50) }),
        ("messenger.send", { _ = try await $0.messenger.send("Hello, «world»\n", in: thing, replyTo: other, attachments: [someone], clientMessageId: "m-1") }),
        ("messenger.edit", { _ = try await $0.messenger.edit(other, text: "Hello again") }),
        ("messenger.delete", { _ = try await $0.messenger.delete(other, for: .everyone) }),
        ("messenger.forward", { _ = try await $0.messenger.forward(other, to: [thing, someone], clientMessageId: "f-1") }),
        ("messenger.upload", { _ = try await $0.messenger.upload(Data("a file".utf8), contentType: "text/plain", fileName: "note.txt") }),
        ("messenger.download", { _ = try await $0.messenger.download(other) }),
        // /v1 wallet
        ("wallet.wallet", { _ = try await $0.wallet.wallet() }),
        ("wallet.attach", { _ = try await $0.wallet.attach() }),
        ("wallet.transactions", { _ = try await $0.wallet.transactions(cursor: "c1", limit: 30) }),
        ("wallet.recipient", { _ = try await $0.wallet.recipient(PartyReference(phone: "+79161234567")) }),
        ("wallet.transfer", { _ = try await $0.wallet.transfer(thing) }),
        ("wallet.send", { _ = try await $0.wallet.send(NewTransfer(to: PartyReference(tag: "ann"), amount: 25_050, comment: "lunch"), intent: intent) }),
        ("wallet.ask", { _ = try await $0.wallet.ask(NewMoneyRequest(from: PartyReference(email: "ann@example.com"), amount: 10_000, kind: .loan), intent: intent) }),
        ("wallet.confirm", { _ = try await $0.wallet.confirm(thing, intent: intent) }),
        ("wallet.decline", { _ = try await $0.wallet.decline(thing, intent: intent) }),
        ("wallet.cancel", { _ = try await $0.wallet.cancel(thing, intent: intent) }),
        ("wallet.repay", { _ = try await $0.wallet.repay(thing, intent: intent) }),
        ("wallet.requests", { _ = try await $0.wallet.requests(direction: .incoming, state: .open, with: someone) }),
        ("wallet.request", { _ = try await $0.wallet.request(thing) }),
        ("wallet.startTopUp", { _ = try await $0.wallet.startTopUp(amount: 50_000, intent: intent) }),
        ("wallet.topUp", { _ = try await $0.wallet.topUp(thing) }),
        // /api (the phone-first spec)
        ("phone.sendRegistrationCode", { _ = try await $0.phone.sendRegistrationCode(phone: "8 (916) 123-45-67") }),
        ("phone.register", { _ = try await $0.phone.register(PhoneRegisterRequest(phone: "+79161234567", code: "1234", login: "ivan", password: "Secret-42!",
                                                                               firstName: "Иван")) }),
        ("phone.login", { _ = try await $0.phone.login(login: "+79161234567", password: "Secret-42!") }),
        ("phone.currentUser", { _ = try await $0.phone.currentUser() }),
        ("phone.changeProfile", { _ = try await $0.phone.changeProfile(PhoneProfileChange(firstName: "Иван", email: "ivan@example.com")) }),
        ("phone.sendConfirmationEmail", { _ = try await $0.phone.sendConfirmationEmail() }),
        ("phone.restorePassword", { _ = try await $0.phone.restorePassword(.email("ivan@example.com"), viaSMS: false) }),
        ("phone.logout", { await $0.phone.logout() }),
        // Sign To Login
        ("signatures.login", { _ = try await $0.signatures.login(email: "ivan@example.com") }),
        ("signatures.authenticate", { _ = try await $0.signatures.authenticate(email: "ivan@example.com", signature: [(x: 1, y: 2), (x: 3.5, y: 4)]) }),
        ("signatures.saveDocument", { _ = try await $0.signatures.saveDocument(email: "ivan@example.com", documentHash: "ab12", previousHash: nil,
                                                                           signatureIDs: ["s-1"]) }),
        ("signatures.openDocument", { _ = try await $0.signatures.openDocument(email: "ivan@example.com", documentID: "d-1", documentHash: "ab12") }),
        ("signatures.profile", { _ = try await $0.signatures.profile() }),
        ("signatures.updateProfile", { _ = try await $0.signatures.updateProfile(SignatureProfileUpdate(companyName: "ООО Ромашка", position: "CEO")) }),
        ("signatures.deleteProfile", { _ = try await $0.signatures.deleteProfile() }),
        ("signatures.profilePhoto", { _ = try await $0.signatures.profilePhoto() }),
        ("signatures.setProfilePhoto", { _ = try await $0.signatures.setProfilePhoto(Data([0xFF, 0xD8, 0xFF, 0xE0]), contentType: "image/jpeg") }),
        ("signatures.register", { _ = try await $0.signatures.register(SignToLoginProfile(email: "ivan@example.com", userName: "Ivan Petrov", company: "ООО Ромашка"),
                                                                   signatures: [[(x: 1, y: 2), (x: 3, y: 4)]], emailCode: "123456") }),
    ]

    @Test("each call sends exactly its recorded request: method, path, query, headers and body")
    func everyCallSendsItsRecordedRequest() async throws {
        let recorder = Self.recorder()
        let store = InMemorySessionStore()
        try store.save(GatehouseSession(token: "session-token", expiresAt: Self.when))
        let core = GatehouseClient(baseURL: Self.server, sessionStore: store, transport: recorder, language: "ru", now: { Self.deviceNow })
        let facts = FixedDeviceFacts(DeviceFacts(osVersion: "18.1", deviceModel: "iPhone16,1", screenWidth: 393, screenHeight: 852))
        let signatureStore = InMemorySessionStore()
        try signatureStore.save(GatehouseSession(token: "signature-session", expiresAt: Self.when))
        let clients = Clients(accounts: AccountsClient(core: core), messenger: MessengerClient(core: core), wallet: WalletClient(core: core, retries: 0),
                              phone: PhoneAccountsClient(core: core),
                              signatures: SignToLoginClient(server: Self.server, apiKey: "app-key", device: facts, transport: recorder,
                                                            sessionStore: signatureStore, now: { Self.deviceNow }))
        var written: [String] = []
        for call in Self.calls {
            let before = recorder.requests.count
            try? await call.run(clients)
            let requests = Array(recorder.requests.dropFirst(before))
            #expect(!requests.isEmpty, "\(call.name) sent nothing")
            var text = requests.map(Self.text).joined(separator: "\n--\n")
            if call.name.hasPrefix("signatures.") {
                // The Sign To Login client's profile calls speak the device's language (the app does not set one).
                text = text.replacingOccurrences(of: "Accept-Language: \(Self.deviceLanguage)\n", with: "Accept-Language: DEVICE-LANGUAGE\n")
            }
            written.append("## \(call.name)\n" + text)
            try? store.save(GatehouseSession(token: "session-token", expiresAt: Self.when))   // a call may forget it (a refused token, logout)
        }
        let text = written.joined(separator: "\n\n") + "\n"
        if ProcessInfo.processInfo.environment["GATEHOUSE_RECORD_SNAPSHOTS"] == "1" {
            try text.write(to: Self.fixture, atomically: true, encoding: .utf8)
        }
        let recorded = try String(contentsOf: Self.fixture, encoding: .utf8)
        let (have, want) = (text.components(separatedBy: "\n\n## "), recorded.components(separatedBy: "\n\n## "))
        for (index, section) in have.enumerated() where index >= want.count || want[index] != section {
            Issue.record("the request differs from Support/Fixtures/requests.txt:\n\(section)\n-- recorded --\n\(index < want.count ? want[index] : "(none)")")
            break
        }
        #expect(have.count == want.count, "\(have.count) calls recorded now, \(want.count) in the fixture")
    }

    /// A transport whose first `failures` sends are lost (a transport error), then answers `status` with `body`.
    final class Flaky: HTTPTransport, @unchecked Sendable {
        private let lock = NSLock()
        private var sent: [URLRequest] = []
        private let failures: Int
        private let status: Int
        private let body: String

        init(failures: Int, status: Int, body: String) {
            (self.failures, self.status, self.body) = (failures, status, body)
        }

        var requests: [URLRequest] { lock.withLock { sent } }

        func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
            let count = lock.withLock { sent.append(request); return sent.count }
            if count <= failures { throw URLError(.networkConnectionLost) }
            return (Data(body.utf8), HTTPURLResponse(url: request.url!, statusCode: status, httpVersion: "HTTP/1.1",
                                                     headerFields: ["Content-Type": "application/problem+json"])!)
        }
    }

    @Test("a payment whose answer is lost is sent again with the same Idempotency-Key, at most `retries` times; a refusal is not resent")
    func lostAnswers_areResentWithTheSameKey() async throws {
        let refusal = #"{"type":"about:blank","title":"Refused","status":422,"code":"insufficient_funds","detail":"not enough"}"#
        let transfer = NewTransfer(to: PartyReference(tag: "ann"), amount: 100)
        func signedIn(_ transport: Flaky) throws -> GatehouseClient {
            let store = InMemorySessionStore()
            try store.save(GatehouseSession(token: "session-token", expiresAt: Self.when))
            return GatehouseClient(baseURL: Self.server, sessionStore: store, transport: transport, language: "en", now: { Self.deviceNow })
        }
        // one lost answer, then the server's refusal: two sends of one key, the refusal is the answer, and it is not
        // sent a third time though `retries` would allow it
        let flaky = Flaky(failures: 1, status: 422, body: refusal)
        let wallet = WalletClient(core: try signedIn(flaky), retries: 2, retryDelay: 0.001)
        let error = await clientError { try await wallet.send(transfer, intent: PaymentIntent(key: "k-1")) }
        #expect(error?.code == .insufficientFunds)
        #expect(flaky.requests.map { $0.value(forHTTPHeaderField: "Idempotency-Key") } == ["k-1", "k-1"])
        // more lost answers than retries: the transport error, after 1 + retries sends
        let lost = Flaky(failures: 10, status: 422, body: refusal)
        let giving = WalletClient(core: try signedIn(lost), retries: 2, retryDelay: 0.001)
        let transportError = await clientError { try await giving.send(transfer, intent: PaymentIntent(key: "k-2")) }
        if case .transport? = transportError {} else { Issue.record("expected a transport error, got \(String(describing: transportError))") }
        #expect(lost.requests.count == 3)
        // a read is never resent: one send
        let read = Flaky(failures: 10, status: 200, body: "{}")
        let reader = WalletClient(core: try signedIn(read), retries: 2, retryDelay: 0.001)
        _ = await clientError { try await reader.wallet() }
        #expect(read.requests.count == 1)
    }

    @Test("a refused token (401) forgets the stored session: the next call is not logged in and sends nothing; an unauthenticated call's 401 forgets nothing")
    func aRefusedToken_forgetsTheSession() async throws {
        let expired = #"{"type":"about:blank","title":"Unauthorized","status":401,"code":"unauthorized","detail":"expired"}"#
        let store = InMemorySessionStore()
        try store.save(GatehouseSession(token: "old-token", expiresAt: Self.when))
        let transport = ScriptedTransport { _ in (401, ["Content-Type": "application/problem+json"], expired) }
        let accounts = AccountsClient(core: GatehouseClient(baseURL: Self.server, sessionStore: store, transport: transport, language: "en",
                                                            now: { Self.deviceNow }))
        // a login refused with 401 (no token sent) leaves the stored session alone
        _ = await clientError { try await accounts.login(identifier: "ann", password: "wrong") }
        #expect(try store.load()?.token == "old-token")
        // a call with the token, refused: the session is forgotten and the next call goes without it
        let error = await clientError { try await accounts.me() }
        if case .sessionExpired? = error {} else { Issue.record("expected sessionExpired, got \(String(describing: error))") }
        #expect(try store.load() == nil)
        let next = await clientError { try await accounts.me() }
        if case .notLoggedIn? = next {} else { Issue.record("expected notLoggedIn, got \(String(describing: next))") }
        #expect(transport.requests.map { $0.value(forHTTPHeaderField: "Authorization") } == [nil, "Bearer old-token"], "the last call is refused before it is sent")
    }
}
