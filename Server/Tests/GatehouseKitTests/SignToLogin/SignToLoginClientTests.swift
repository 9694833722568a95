import Crypto
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import GatehouseAPI
import GatehouseKit
import GatehouseSignature
import GatehouseTestSupport
import Testing

/// Signatures for the SDK tests: a writer's curve, its shape and size a little different each time
/// as a hand's are (the server refuses a copy of points it has seen), with a little jitter (seeded),
/// and a stranger's other curve.
struct TestPen {
    var state: UInt64
    mutating func next() -> Double {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return Double(state >> 11) / Double(1 << 53)
    }

    /// The pen's own signature, a stranger's, or its own in a hurry (the shape bent: it scores
    /// between the server's signing floor, 0.3, and its threshold, 0.5; 0.36–0.48 on this pen).
    mutating func signature(stranger: Bool = false, hurried: Bool = false) -> SignaturePointList {
        let count = 110 + Int(next() * 20)
        let scale = 0.95 + next() * 0.1
        let (a, b) = (1 + (next() - 0.5) * 0.08, 1 + (next() - 0.5) * 0.08)
        let (p, q) = ((next() - 0.5) * 0.12, (next() - 0.5) * 0.12)
        let h = hurried ? 0.3 : 0
        return (0..<count).map { i in
            let t = Double(i) / Double(count) * 2 * .pi
            let x = stranger ? 40 * a * cos(3 * t + p) + 30 * t : 60 * a * cos(t + p) + 25 * (1 + h) * sin(2.3 * t) + 20 * t
            let y = stranger ? 35 * b * sin(2 * t + q) : 40 * b * sin(1.7 * t + q + h) + 10 * (1 - h) * cos(4 * t)
            return (x: 200 + scale * x + next() - 0.5, y: 150 + scale * y + next() - 0.5)
        }
    }
}

/// A one-page PDF written by hand, with a correct cross-reference table.
func minimalPDF(text: String = "Agreement", rotate: Int = 0) -> Data {
    let content = "BT /F1 18 Tf 72 720 Td (\(text)) Tj ET"
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Rotate \(rotate) /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
        "<< /Length \(content.utf8.count) >>\nstream\n\(content)\nendstream",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    var out = "%PDF-1.4\n"
    var offsets: [Int] = []
    for (index, object) in objects.enumerated() {
        offsets.append(out.utf8.count)
        out += "\(index + 1) 0 obj\n\(object)\nendobj\n"
    }
    let xref = out.utf8.count
    out += "xref\n0 \(objects.count + 1)\n0000000000 65535 f\r\n"
    for offset in offsets { out += String(format: "%010d 00000 n\r\n", offset) }
    out += "trailer\n<< /Size \(objects.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
    return Data(out.utf8)
}

extension LiveServer {
    /// An app registered through `/v1/apps` by a developer account, and a client with its key.
    func signToLoginClient(device: String = "iPhone16,2") async throws -> SignToLoginClient {
        let (developer, _, _) = try await messengerUser("dev\(Int.random(in: 1000...9999))")
        let created = try await developer.core.call(V1.Apps.create, NewApp(name: "Signer", bundleId: "com.acme.signer", email: "dev@acme.example"))
        return SignToLoginClient(server: baseURL, apiKey: created.apiKey,
                                 device: FixedDeviceFacts(DeviceFacts(osVersion: "18.1", deviceModel: device, screenWidth: 393, screenHeight: 852,
                                                                      location: (55.75, 37.61), city: "Moscow")))
    }
}

extension LiveServer {
    /// Every enrolment proves the address: the first `register` sends a code (`emailCodeRequired`),
    /// the same call with the code enrols (or asks for more signatures).
    func enrol(_ client: SignToLoginClient, _ profile: SignToLoginProfile, signatures: [SignaturePointList]) async throws -> SignToLoginClient.Registration {
        let asked = try await client.register(profile, signatures: signatures)
        guard asked == .emailCodeRequired else { throw LiveServerError("no code asked for: \(asked)") }
        return try await client.register(profile, signatures: signatures, emailCode: try await latestCodeV1(to: profile.email))
    }
}

@Suite("Sign To Login: the SDK's client against a live server")
struct SignToLoginClientTests {
    @Test("the profile registered, its picture included, is read back with the person's session, edited, its picture replaced; deleting it leaves the address without a sample")
    func profileReadBack() async throws {
        try await withLiveServer { server in
            // setup: Ann registers with a picture
            let client = try await server.signToLoginClient()
            var pen = TestPen(state: 3)
            let png = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")!
            let registration = SignToLoginProfile(email: "ann@example.com", userName: "Ann Lee", phone: "+7 912 345-67-89", company: "Acme",
                                                  position: "Engineer", birthday: "17.05.1990", sex: "female", photo: png)
            _ = try await server.enrol(client, registration, signatures: (0..<10).map { _ in pen.signature() })

            // MUT + validate: read back
            let profile = try await client.profile()
            #expect(profile.email == "ann@example.com" && profile.userName == "Ann Lee" && profile.phoneNumber == "+7 912 345-67-89")
            #expect(profile.companyName == "Acme" && profile.position == "Engineer" && profile.birthday == "17.05.1990" && profile.sex == "female")
            #expect(profile.photoUrl != nil && profile.devices == ["iphone"])
            let picture = try await client.profilePhoto()
            #expect(picture.data == png && picture.contentType == "image/png")

            // edit, a field refused by its rule, the picture replaced
            let edited = try await client.updateProfile(SignatureProfileUpdate(companyName: "Acme Ltd", position: ""))
            #expect(edited.companyName == "Acme Ltd" && edited.position == nil)
            do {
                _ = try await client.updateProfile(SignatureProfileUpdate(birthday: "31.02.1990"))
                Issue.record("an impossible birthday was taken")
            } catch let error as GatehouseClientError {
                #expect(error.code == .invalidParameter)
            }
            let gif = Data(base64Encoded: "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7")!
            _ = try await client.setProfilePhoto(gif, contentType: "image/gif")
            #expect(try await client.profilePhoto().data == gif)

            // delete
            try await client.deleteProfile()
            #expect(try await client.login(email: "ann@example.com") == .unknownUser)
            do {
                _ = try await client.profile()
                Issue.record("a deleted profile was read")
            } catch let error as GatehouseClientError {
                #expect(error.code == .signatureProfileNotFound)
            }
        }
    }

    @Test("register with ten signatures, log in by type of device, authenticate: the writer high, a stranger low")
    func registerLoginAuthenticate() async throws {
        try await withLiveServer { server in
            // setup
            let client = try await server.signToLoginClient()
            var pen = TestPen(state: 1)
            let profile = SignToLoginProfile(email: "ann@example.com", userName: "Ann Lee", phone: "+79123456789", company: "Acme", sex: "female")

            // MUT
            let registered = try await server.enrol(client, profile, signatures: (0..<10).map { _ in pen.signature() })
            let own = try await client.authenticate(email: profile.email, signature: pen.signature())
            let stranger = try await client.authenticate(email: profile.email, signature: pen.signature(stranger: true))

            // validate
            guard case .registered(let session) = registered else { Issue.record("\(registered)"); return }
            #expect(session.count >= 20 && client.hasSession, "the client keeps the session")
            #expect(try await client.login(email: profile.email) == .enrolled)
            #expect(try await client.login(email: "nobody@example.com") == .unknownUser)
            let other = SignToLoginClient(server: client.server, apiKey: client.apiKey,
                                          device: FixedDeviceFacts(DeviceFacts(osVersion: "18.1", deviceModel: "iPad13,4", screenWidth: 820, screenHeight: 1180)))
            #expect(try await other.login(email: profile.email) == .enrolmentRequired)
            guard case .scored(let high, let id) = own, case .scored(let low, _) = stranger else { Issue.record("\(own) \(stranger)"); return }
            #expect(high >= 0.5 && low < high && id.count == 20, "\(high) \(low)")
            #expect(try await client.authenticate(email: "nobody@example.com", signature: pen.signature()) == .unknownUser)
        }
    }

    @Test("unusable signatures: res 2 asks for exactly the missing ones, which complete the model")
    func missingSignatures() async throws {
        try await withLiveServer { server in
            // setup
            let client = try await server.signToLoginClient()
            var pen = TestPen(state: 2)
            var first = (0..<10).map { _ in pen.signature() }
            first[3] = [(x: 1, y: 1), (x: 2, y: 2)]
            first[8] = [(x: 5, y: 5)]
            let profile = SignToLoginProfile(email: "bob@example.com", userName: "Bob")

            // MUT: the client holds the enrolment's token between the calls
            let step = try await server.enrol(client, profile, signatures: first)
            let code = try await server.latestCodeV1(to: profile.email)
            let done = try await client.register(profile, signatures: (0..<2).map { _ in pen.signature() }, emailCode: code)

            // validate
            #expect(step == .moreSignaturesNeeded(required: 2, exist: 8, model: 10, incorrect: 2))
            guard case .registered = done else { Issue.record("\(done)"); return }
        }
    }

    @Test("an address that already has an account: the email code flow (res 13, a wrong code res 14, the right one enrols)")
    func emailCodeFlow() async throws {
        try await withLiveServer { server in
            // setup
            let client = try await server.signToLoginClient()
            _ = try await server.makeV1Account(email: "cat@example.com", tag: "cat")
            var pen = TestPen(state: 3)
            let signatures = (0..<10).map { _ in pen.signature() }
            let profile = SignToLoginProfile(email: "cat@example.com", userName: "Cat")

            // MUT + validate
            #expect(try await client.register(profile, signatures: signatures) == .emailCodeRequired)
            do {
                _ = try await client.register(profile, signatures: signatures, emailCode: "000000")
                Issue.record("a wrong code enrolled")
            } catch SignToLoginError.invalidEmailCode(let message) {
                #expect(!message.isEmpty)
            }
            let code = try await server.latestCodeV1(to: "cat@example.com")
            guard case .registered = try await client.register(profile, signatures: signatures, emailCode: code) else {
                Issue.record("not registered with the right code"); return
            }
            #expect(try await client.login(email: "cat@example.com") == .enrolled)
        }
    }

    @Test("low scores past GATEHOUSE_SIGNATURE_ATTEMPTS_PER_ACCOUNT (20 by default) are res 12: rateLimited with the seconds to wait")
    func rateLimited() async throws {
        try await withLiveServer { server in
            // setup: a client that signs in as nobody (no session) tries a stranger's signatures
            let client = try await server.signToLoginClient()
            var pen = TestPen(state: 6)
            _ = try await server.enrol(client, SignToLoginProfile(email: "fay@example.com", userName: "Fay"), signatures: (0..<10).map { _ in pen.signature() })
            let stranger = SignToLoginClient(server: client.server, apiKey: client.apiKey,
                                             device: FixedDeviceFacts(DeviceFacts(osVersion: "18.1", deviceModel: "iPhone16,2", screenWidth: 393, screenHeight: 852)))
            for _ in 0..<20 {
                guard case .scored = try await stranger.authenticate(email: "fay@example.com", signature: pen.signature(stranger: true)) else {
                    Issue.record("not scored"); return
                }
            }

            // MUT + validate
            do {
                _ = try await stranger.authenticate(email: "fay@example.com", signature: pen.signature(stranger: true))
                Issue.record("the 21st attempt was scored")
            } catch SignToLoginError.rateLimited(let retryAfter) {
                #expect((retryAfter ?? 0) > 0 && (retryAfter ?? 0) <= 900)
            }
        }
    }

    @Test("sign a PDF, save it, a second version, a conflicting save, open the newest and an outdated copy; a refused key")
    func documents() async throws {
        try await withLiveServer { server in
            // setup: Ann signs a document with a captured signature
            let client = try await server.signToLoginClient()
            var pen = TestPen(state: 4)
            let email = "dan@example.com"
            _ = try await server.enrol(client, SignToLoginProfile(email: email, userName: "Dan Brown"), signatures: (0..<10).map { _ in pen.signature() })
            func sign(_ pdf: Data, at x: Double, photo: Data? = nil) async throws -> (Data, String) {
                let signature = pen.signature()
                guard case .scored(_, let id) = try await client.authenticate(email: email, signature: signature, photo: photo) else {
                    throw LiveServerError("not scored")
                }
                var capture = SignatureCapture()
                for (index, point) in signature.enumerated() {
                    let sample = SignatureCapture.Sample(x: point.x, y: point.y, time: Double(index) / 60)
                    if index == 0 { capture.begin(sample) } else { capture.move(sample) }
                }
                capture.end()
                let signed = try PDFSigner.sign(pdf, page: 0, rect: PDFRect(x: x, y: 80, width: 200, height: 80),
                                                stamp: SignatureStamp(ink: capture.ink(width: 400, height: 300), link: "https://example.com/documents/?documentid=pending"))
                return (signed, id)
            }
            func hash(_ data: Data) -> String { SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined() }
            let original = minimalPDF()
            let (v1, s1) = try await sign(original, at: 60, photo: AccountsClientLiveTests.png)

            // MUT
            let first = try await client.saveDocument(email: email, documentHash: hash(v1), previousHash: nil, signatureIDs: [s1])
            guard case .saved(let documentID) = first else { Issue.record("\(first)"); return }
            let (v2, s2) = try await sign(v1, at: 320)
            let second = try await client.saveDocument(email: email, documentHash: hash(v2), previousHash: hash(v1), signatureIDs: [s2])
            let (v2b, s3) = try await sign(v1, at: 320)
            let conflicting = try await client.saveDocument(email: email, documentHash: hash(v2b), previousHash: hash(v1), signatureIDs: [s3])
            let newest = try await client.openDocument(email: email, documentID: documentID, documentHash: hash(v2))
            let outdated = try await client.openDocument(email: email, documentID: documentID, documentHash: hash(v1))

            // validate
            #expect(v2.starts(with: v1) && v1.starts(with: original))
            #expect(second == .saved(documentID: documentID))
            #expect(conflicting == .conflict)
            guard case .current(let history) = newest else { Issue.record("\(newest)"); return }
            #expect(history.map(\.signatureID) == [s1, s2] && history.map(\.documentHash) == [hash(v1), hash(v2)])
            #expect(history.allSatisfy { $0.name == "Dan Brown" && $0.city == "Moscow" })
            // The first signer's photo is served where the history says; the second sent none.
            // (on the server's public base URL; fetched here from the test server by its path)
            let photoPath = try #require(history[0].photo.flatMap(URL.init(string:))?.path)
            #expect(photoPath.hasPrefix(SignToLoginAPI.Path.photos))
            let (photo, response) = try await URLSession.shared.data(from: server.baseURL.appendingPathComponent(String(photoPath.dropFirst())))
            #expect((response as? HTTPURLResponse)?.statusCode == 200 && photo == AccountsClientLiveTests.png)
            #expect(history[1].photo == nil)
            guard case .changedOutside(let same) = outdated else { Issue.record("\(outdated)"); return }
            #expect(same == history)
            #expect(try await client.openDocument(email: email, documentID: "00000000000000000000", documentHash: hash(v2)) == .notFound)
            #expect(client.historyURL(documentID: documentID).absoluteString == "\(server.baseURL.absoluteString)/documents/?documentid=\(documentID)")
            #expect(SignToLoginAPI.documentID(from: URL(string: SignToLoginAPI.deepLink(documentID: documentID))!) == documentID)

            let refused = SignToLoginClient(server: server.baseURL, apiKey: "stl_nope", device: FixedDeviceFacts(DeviceFacts(osVersion: "18", deviceModel: "iPhone", screenWidth: 1, screenHeight: 1)))
            await #expect(throws: SignToLoginError.applicationRefused(message: "Application with key 'stl_nope' is not registered or disabled")) {
                try await refused.login(email: email)
            }
        }
    }
}
