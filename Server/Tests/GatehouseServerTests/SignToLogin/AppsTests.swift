import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import GatehouseServer
import GatehouseSignToLogin
import GatehouseTestSupport
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// The Sign To Login service's apps and API keys: `/v1/apps` at the wire level on both
/// engines, and `gatehouse apps` on the same database.
@Suite("Sign To Login: apps and API keys")
struct AppsTests {
    typealias A = V1.Apps

    func create(_ app: TestHarness, _ new: NewApp, token: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> AppWithKey {
        let response = try await app.v1.post(A.create.path, new, token: token)
        #expect(response.status == .created, "create: \(response.text)", sourceLocation: sourceLocation)
        return try response.decoded(as: AppWithKey.self)
    }

    func path(_ endpoint: some EndpointDeclaration, _ id: UUID) -> String {
        V1.filling(endpoint.path, ["id": id.uuidString.lowercased()])
    }

    static let signer = NewApp(name: "Acme Signer", bundleId: "com.acme.signer", email: "Dev@Acme.example", website: "https://acme.example/signer")

    @Test("register an app: its key once (256 random bits, stored only as a hash); list, read, change, disable, rotate", arguments: TestEngine.once)
    func lifecycle(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.signedUp(email: "ann@example.com")

            // MUT: register
            let created = try await create(app, Self.signer, token: ann.token)

            // validate: the answer and what is stored
            #expect(created.apiKey.hasPrefix("stl_") && created.apiKey.count == 4 + 43)
            #expect(created.app.name == "Acme Signer" && created.app.bundleId == "com.acme.signer" && created.app.email == "dev@acme.example")
            #expect(created.app.website == "https://acme.example/signer" && created.app.enabled && created.app.iconUrl == nil)
            #expect(created.app.keyHint == String(created.apiKey.prefix(10)) + "…")
            let row = try #require(try await AppModel.find(created.app.id, on: app.services.database.db))
            #expect(row.keyHash == Secrets.sha256Hex(created.apiKey) && row.keyHash != created.apiKey && row.ownerID == ann.account.id)
            #expect(try await app.services.signToLogin.apps.enabledApp(key: created.apiKey)?.id == created.app.id)

            // list and read: never the key again
            let list = try await app.v1.get(A.list.path, token: ann.token)
            #expect(list.status == .ok && !list.text.contains(created.apiKey))
            #expect(try list.decoded(as: AppList.self).items.map(\.id) == [created.app.id])
            let one = try await app.v1.get(path(A.app, created.app.id), token: ann.token)
            #expect(try one.decoded(as: DeveloperApp.self) == created.app)

            // change, disable: the key stops working; enable: it works again
            let renamed = try await app.v1.patch(path(A.update, created.app.id), AppUpdate(name: "Acme Sign", website: ""), token: ann.token)
            #expect(try renamed.decoded(as: DeveloperApp.self).name == "Acme Sign")
            #expect(try renamed.decoded(as: DeveloperApp.self).website == nil)
            let disabled = try await app.v1.patch(path(A.update, created.app.id), AppUpdate(enabled: false), token: ann.token)
            #expect(try disabled.decoded(as: DeveloperApp.self).enabled == false)
            #expect(try await app.services.signToLogin.apps.enabledApp(key: created.apiKey) == nil)
            _ = try await app.v1.patch(path(A.update, created.app.id), AppUpdate(enabled: true), token: ann.token)
            #expect(try await app.services.signToLogin.apps.enabledApp(key: created.apiKey) != nil)

            // rotate: a new key, shown once; the old one is refused at once
            let rotated = try await app.v1.post(path(A.rotateKey, created.app.id), json: "{}", token: ann.token)
            let fresh = try rotated.decoded(as: AppWithKey.self)
            #expect(rotated.status == .ok && fresh.apiKey != created.apiKey && fresh.app.keyHint != created.app.keyHint)
            #expect(try await app.services.signToLogin.apps.enabledApp(key: created.apiKey) == nil)
            #expect(try await app.services.signToLogin.apps.enabledApp(key: fresh.apiKey)?.id == created.app.id)
        }
    }

    @Test("another account's app is 404 on every operation, like one that does not exist; without a session, 401", arguments: TestEngine.once)
    func othersApps(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.signedUp(email: "ann@example.com")
            let bob = try await app.v1.signedUp(email: "bob@example.com")
            let anns = try await create(app, Self.signer, token: ann.token)
            let id = anns.app.id

            // MUT
            let answers = [
                try await app.v1.get(path(A.app, id), token: bob.token),
                try await app.v1.patch(path(A.update, id), AppUpdate(enabled: false), token: bob.token),
                try await app.v1.post(path(A.rotateKey, id), json: "{}", token: bob.token),
                try await app.v1.put(path(A.uploadIcon, id), body: SampleFiles.png, contentType: "image/png", token: bob.token),
                try await app.v1.get(path(A.app, UUID()), token: ann.token),
            ]
            let bobsList = try await app.v1.get(A.list.path, token: bob.token)
            let anonymous = try await app.v1.get(A.list.path)

            // validate
            for answer in answers {
                #expect(answer.status == .notFound && (try? answer.decoded(as: Problem.self).code) == .appNotFound, "\(answer.text)")
            }
            #expect(try bobsList.decoded(as: AppList.self).items.isEmpty)
            #expect(anonymous.status == .unauthorized)
            #expect(try await app.services.signToLogin.apps.enabledApp(key: anns.apiKey) != nil, "Bob changed nothing")
        }
    }

    @Test("the fields are checked: name, bundle ID, email, website; an account has at most GATEHOUSE_APPS_PER_ACCOUNT apps", arguments: TestEngine.once)
    func validation(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.signature.appsPerAccount = 2 }) { app in
            // setup
            let ann = try await app.v1.signedUp(email: "ann@example.com")
            let cases: [(NewApp, GatehouseErrorCode, String)] = [
                (NewApp(name: "  ", bundleId: "com.a.b", email: "a@b.example"), .missingParameter, "name"),
                (NewApp(name: "A", bundleId: "signer", email: "a@b.example"), .invalidBundleId, "bundleId"),
                (NewApp(name: "A", bundleId: "com..signer", email: "a@b.example"), .invalidBundleId, "bundleId"),
                (NewApp(name: "A", bundleId: "com.acme.sign_er", email: "a@b.example"), .invalidBundleId, "bundleId"),
                (NewApp(name: "A", bundleId: "com.acme.signer", email: "not an email"), .invalidEmail, "email"),
                (NewApp(name: "A", bundleId: "com.acme.signer", email: "a@b.example", website: "javascript:alert(1)"), .invalidURL, "website"),
                (NewApp(name: "A", bundleId: "com.acme.signer", email: "a@b.example", website: "ftp://acme.example"), .invalidURL, "website"),
            ]

            // MUT + validate
            for (new, code, field) in cases {
                let answer = try await app.v1.post(A.create.path, new, token: ann.token)
                let problem = try? answer.decoded(as: Problem.self)
                #expect(answer.status == .badRequest && problem?.code == code && problem?.field == field, "\(new): \(answer.text)")
            }
            _ = try await create(app, Self.signer, token: ann.token)
            _ = try await create(app, Self.signer, token: ann.token)
            let third = try await app.v1.post(A.create.path, Self.signer, token: ann.token)
            #expect(third.status == .conflict && (try? third.decoded(as: Problem.self).code) == .tooManyApps, "\(third.text)")
        }
    }

    @Test("the icon: an image checked to its end goes to the blob store and is served publicly; anything else is refused", arguments: TestEngine.once)
    func icon(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.signedUp(email: "ann@example.com")
            let created = try await create(app, Self.signer, token: ann.token)
            let upload = path(A.uploadIcon, created.app.id)

            // MUT
            let notImage = try await app.v1.put(upload, body: Array("hello".utf8), contentType: "image/png", token: ann.token)
            let wrongType = try await app.v1.put(upload, body: SampleFiles.png, contentType: "text/plain", token: ann.token)
            let stored = try await app.v1.put(upload, body: SampleFiles.png, contentType: "image/png", token: ann.token)
            let withIcon = try stored.decoded(as: DeveloperApp.self)
            let served = try await app.v1.get(path(A.icon, created.app.id))
            let none = try await app.v1.get(path(A.icon, UUID()))

            // validate
            #expect(notImage.status == .badRequest && (try? notImage.decoded(as: Problem.self).code) == .invalidImage)
            #expect(wrongType.status == .unsupportedMediaType)
            #expect(stored.status == .ok)
            let url = try #require(withIcon.iconUrl)
            #expect(url.hasPrefix(app.configuration.publicURL + path(A.icon, created.app.id) + "?v="))
            #expect(served.status == .ok && Array(served.body.readableBytesView) == SampleFiles.png && served.headers[.contentType] == "image/png")
            #expect(served.headers[.contentSecurityPolicy]?.contains("sandbox") == true)
            #expect(none.status == .notFound)
            let hex = try #require(try await AppModel.find(created.app.id, on: app.services.database.db)?.iconBlobKey)
            let key = try #require(BlobKey(hex: hex))
            #expect(try await BlobReferences.isReferenced(key, on: app.services.database.sql), "the collector keeps an icon in use")
        }
    }

    @Test("gatehouse apps: create (with an owner and an icon) prints the key once; list, disable and enable by key or id, rotate", arguments: TestEngine.once)
    func commands(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.signedUp(email: "ann@example.com")
            let icon = FileManager.default.temporaryDirectory.appendingPathComponent("icon-\(UUID().uuidString).png")
            try Data(SampleFiles.png).write(to: icon)
            defer { try? FileManager.default.removeItem(at: icon) }
            let configuration = app.configuration

            // MUT
            let created = try await AppCommands.create(configuration: configuration, name: "Ops App", bundleID: "com.ops.app", email: "ops@example.com",
                                                       website: nil, iconPath: icon.path, ownerEmail: "ann@example.com")
            let key = try #require(created.apikey)
            let listed = try await AppCommands.list(configuration: configuration)
            let disabled = try await AppCommands.setEnabled(configuration: configuration, idOrKey: key, enabled: false)
            let refusedWhileDisabled = try await app.services.signToLogin.apps.enabledApp(key: key)
            let enabled = try await AppCommands.setEnabled(configuration: configuration, idOrKey: created.id.uuidString, enabled: true)
            let rotated = try await AppCommands.rotate(configuration: configuration, idOrKey: key)
            let unknownOwner = await #expect(throws: AppCommands.Failure.self) {
                try await AppCommands.create(configuration: configuration, name: "X", bundleID: "com.x.y", email: "x@example.com",
                                             website: nil, iconPath: nil, ownerEmail: "nobody@example.com")
            }
            let badBundle = await #expect(throws: AppCommands.Failure.self) {
                try await AppCommands.create(configuration: configuration, name: "X", bundleID: "x", email: "x@example.com",
                                             website: nil, iconPath: nil, ownerEmail: nil)
            }

            // validate
            #expect(created.owner == "ann@example.com" && created.enabled)
            #expect(listed.map(\.id) == [created.id] && listed.first?.apikey == nil)
            #expect(!disabled.enabled && refusedWhileDisabled == nil && enabled.enabled)
            let newKey = try #require(rotated.apikey)
            #expect(newKey != key)
            #expect(try await app.services.signToLogin.apps.enabledApp(key: key) == nil)
            #expect(try await app.services.signToLogin.apps.enabledApp(key: newKey)?.id == created.id)
            #expect(unknownOwner?.description == "no account has the confirmed email nobody@example.com")
            #expect(badBundle?.description.contains("is not a bundle ID") == true)
            let mine = try await app.v1.get(A.list.path, token: ann.token).decoded(as: AppList.self)
            #expect(mine.items.map(\.id) == [created.id] && mine.items.first?.iconUrl != nil)
        }
    }
}
