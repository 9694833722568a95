import Foundation
import GatehouseAPI
import GatehousePlatform
import GatehouseServer
import GatehouseTestSupport
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// The Sign To Login profile after the enrolment (docs/sign-to-login.md, "The profile"): read,
/// edited and deleted with the person's session, and on the site's page behind a mailed code.
@Suite("Sign To Login: the person's profile")
struct SignatureProfileTests {
    static let png = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")!

    /// Ivan enrolled with a picture and some optional fields; his session.
    func enrolled(_ app: TestHarness) async throws -> (SignatureEndpointsTests.Fixture, String) {
        let created = try await app.services.signToLogin.apps.create(NewApp(name: "Signer", bundleId: "com.acme.signer", email: "dev@acme.example"), owner: nil, by: .system(nil))
        var f = SignatureEndpointsTests.Fixture(app: app, key: created.key)
        let answer = try await f.enrol("ivan@example.com", f.genuine(10), edit: { fields in
            fields["photo"] = "\"\(Self.png.base64EncodedString())\""
            fields["position"] = "\"Engineer\""
            fields["city"] = "\"Kazan\""
        })
        return (f, try #require(answer["sessionid"] as? String, "\(answer)"))
    }

    @Test("the profile the enrolment made, its picture included, is read back, edited by its rules, its picture replaced and removed; then deleted with the signatures, and the address no longer signs in", arguments: TestEngine.once)
    func profileOverV1(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            let (f, session) = try await enrolled(app)
            typealias S = V1.Signatures

            // MUT: read
            let read = try await app.v1.get(S.profile.path, token: session)
            let profile = try read.decoded(as: SignatureProfile.self)

            // validate: what /register/ was told, the picture it was sent
            #expect(profile.email == "ivan@example.com" && profile.userName == "Ivan Petrov" && profile.companyName == "Acme" && profile.sex == "male")
            #expect(profile.position == "Engineer" && profile.city == "Kazan" && profile.devices == ["iphone"])
            #expect(profile.photoUrl == app.configuration.publicURL + S.photo.path)
            let picture = try await app.v1.get(S.photo.path, token: session)
            #expect(picture.status == .ok && Data(buffer: picture.body) == Self.png && picture.headers[.contentType] == "image/png")

            // MUT: edit; a refused field; an empty one clears
            let edited = try await app.v1.send(.patch, S.updateProfile.path, body: ByteBuffer(string: #"{"phoneNumber":"+7 (916) 123-45-67","companyName":"","birthday":"17.05.1990"}"#),
                                               contentType: "application/json", token: session)
            let refused = try await app.v1.send(.patch, S.updateProfile.path, body: ByteBuffer(string: #"{"position":"<script>"}"#), contentType: "application/json", token: session)
            #expect(edited.status == .ok, "\(edited.text)")
            let after = try edited.decoded(as: SignatureProfile.self)
            #expect(after.phoneNumber == "+7 (916) 123-45-67" && after.companyName == nil && after.birthday == "17.05.1990" && after.position == "Engineer")
            #expect(refused.status == .badRequest && refused.text.contains("\"field\":\"position\""), "\(refused.text)")

            // MUT: the picture replaced by a non-image (refused), removed
            let notImage = try await app.v1.send(.put, S.setPhoto.path, body: ByteBuffer(string: "hello"), contentType: "image/png", token: session)
            let removed = try await app.v1.send(.delete, S.deletePhoto.path, token: session)
            #expect(notImage.status == .badRequest && notImage.text.contains("invalid_image"))
            let withoutPicture = try removed.decoded(as: SignatureProfile.self)
            #expect(removed.status == .ok && withoutPicture.photoUrl == nil)

            // MUT: delete the profile and the signatures
            let deleted = try await app.v1.send(.delete, S.deleteProfile.path, token: session)
            let afterwards = try await app.v1.get(S.profile.path, token: session)
            let login = try await f.json("/login/", ["apikey": "\"\(f.key)\"", "email": "\"ivan@example.com\""])

            // validate
            #expect(deleted.status == .noContent)
            #expect(afterwards.status == .notFound && afterwards.text.contains("signature_profile_not_found"))
            #expect(login["res"] as? String == "2", "no sample is left: \(login)")
            let kinds = try await app.services.audit.events(.init(account: nil, kinds: [.signatureProfileChanged, .signatureErased])).map(\.kind)
            #expect(kinds.filter { $0 == "signature.erased" }.count == 1 && kinds.filter { $0 == "signature.profile_changed" }.count >= 2)
        }
    }

    @Test("the profile page: a code to the address (the same page for an unknown one), signed in by it, fields saved by their rules, the picture shown, deleted with a confirmation; CSRF", arguments: [TestEngine.sqlite])
    func sitePage(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            let (_, session) = try await enrolled(app)
            var jar: [String: String] = [:]
            func cookies() -> HTTPFields {
                jar.isEmpty ? [:] : [.cookie: jar.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")]
            }
            func keep(_ response: TestResponse) {
                for header in response.headers[values: .setCookie] {
                    let pair = header.split(separator: ";")[0].split(separator: "=", maxSplits: 1)
                    if pair.count == 2 { jar[String(pair[0])] = String(pair[1]) }
                    if header.contains("Max-Age=0") { jar[String(pair[0])] = nil }
                }
            }
            func get(_ path: String) async throws -> TestResponse {
                var headers = cookies()
                headers[.acceptLanguage] = "en"
                let response = try await app.client.execute(uri: path, method: .get, headers: headers)
                keep(response)
                return response
            }
            func post(_ path: String, _ fields: [(String, String)]) async throws -> TestResponse {
                var headers = cookies()
                headers[.contentType] = "application/x-www-form-urlencoded"
                headers[.acceptLanguage] = "en"
                let response = try await app.client.execute(uri: path, method: .post, headers: headers, body: Wire.formBody(fields))
                keep(response)
                return response
            }
            func csrf(_ page: TestResponse) throws -> String {
                let text = page.text
                let marker = try #require(text.range(of: "name=\"csrf\" value=\""))
                return String(text[marker.upperBound...].prefix { $0 != "\"" })
            }

            // MUT: the page signed out; a code for an unknown address, then for Ivan's
            let start = try await get("/signature-profile")
            #expect(start.status == .ok && start.text.contains("id=\"send-code\"") && start.headers[.contentSecurityPolicy]?.contains("script") == false)
            let unknown = try await post("/signature-profile/code", [("csrf", try csrf(start)), ("email", "nobody@example.com")])
            let known = try await post("/signature-profile/code", [("csrf", try csrf(start)), ("email", "ivan@example.com")])
            #expect(unknown.status == .ok && known.status == .ok && unknown.text.contains("id=\"code-sent\"") && known.text.contains("id=\"code-sent\""))
            let mailedToNobody = try await app.outbox(to: "nobody@example.com")
            #expect(mailedToNobody.isEmpty, "nothing tells an unknown address apart")
            let forged = try await app.client.execute(uri: "/signature-profile/code", method: .post,
                                                      headers: [.contentType: "application/x-www-form-urlencoded"], body: Wire.formBody([("csrf", "x"), ("email", "ivan@example.com")]))
            #expect(forged.status == .forbidden)
            let wrong = try await post("/signature-profile/sign-in", [("csrf", try csrf(known)), ("email", "ivan@example.com"), ("code", "000000")])
            #expect(wrong.status == .unauthorized)
            let code = try await app.latestCode(to: "ivan@example.com")
            let signedIn = try await post("/signature-profile/sign-in", [("csrf", try csrf(known)), ("email", "ivan@example.com"), ("code", code)])
            #expect(signedIn.status == .seeOther && jar["gh_profile"] != nil)
            let reused = try await post("/signature-profile/sign-in", [("csrf", try csrf(known)), ("email", "ivan@example.com"), ("code", code)])
            #expect(reused.status == .unauthorized, "a code works once")

            // MUT: the profile; save with a refused field, then a good one
            let page = try await get("/signature-profile")
            #expect(page.status == .ok && page.text.contains("id=\"profile-email\">ivan@example.com") && page.text.contains("value=\"Acme\"")
                    && page.text.contains("src=\"/signature-profile/photo\""))
            let photo = try await get("/signature-profile/photo")
            #expect(photo.status == .ok && Data(buffer: photo.body) == Self.png)
            let token = try csrf(page)
            let bad = try await post("/signature-profile/save", [("csrf", token), ("phone_number", "call me"), ("company_name", "Acme"),
                                                                  ("position", ""), ("birthday", ""), ("sex", "male")])
            #expect(bad.status == .badRequest && bad.text.contains("phone_number"))
            let saved = try await post("/signature-profile/save", [("csrf", token), ("phone_number", "+7 916 000-11-22"), ("company_name", "Acme Ltd"),
                                                                    ("position", "CTO"), ("birthday", "01.02.1985"), ("sex", "male")])
            #expect(saved.status == .seeOther && saved.headers[.location] == "/signature-profile?done=saved")
            let profile = try await app.v1.get(V1.Signatures.profile.path, token: session).decoded(as: SignatureProfile.self)
            #expect(profile.phoneNumber == "+7 916 000-11-22" && profile.companyName == "Acme Ltd" && profile.position == "CTO" && profile.birthday == "01.02.1985")

            // MUT: delete without the box, then with it
            let unconfirmed = try await post("/signature-profile/delete", [("csrf", token)])
            let deleted = try await post("/signature-profile/delete", [("csrf", token), ("confirm", "yes")])
            #expect(unconfirmed.status == .badRequest)
            #expect(deleted.status == .ok && deleted.text.contains("Your profile and signatures are deleted.") && jar["gh_profile"] == nil)
            let after = try await get("/signature-profile")
            #expect(after.text.contains("id=\"send-code\""), "signed out")
        }
    }
}
