import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehouseServer
import GatehouseTestSupport
import HTTPTypes
import Testing

/// Push devices (docs/push.md): registered for a session, listed, removed; gone with the session;
/// a token moving to another account; the `/api` spec's `fcm` field; the limit.
@Suite("/v1: push devices")
struct PushDevicesTests {
    static let apnsToken = String(repeating: "0123456789abcdef", count: 4)

    @Test("register, list, remove: an APNs device for this session (a second registration replaces it), another account's id is 404, logout removes the session's device", arguments: TestEngine.once)
    func registerListRemove(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.signedUp(email: "ann@example.com", tag: "ann")
            let laptop = try await app.v1.login("ann@example.com", "secret-91!", device: "Laptop")
            let bob = try await app.v1.signedUp(email: "bob@example.com", tag: "bob")

            // MUT
            let first = try await app.v1.post(V1.Accounts.registerDevice.path, DeviceRegistration(platform: .apns, token: Self.apnsToken.uppercased(), bundleId: "com.example.app", environment: .sandbox), token: ann.token)
            let replaced = try await app.v1.post(V1.Accounts.registerDevice.path, DeviceRegistration(platform: .apns, token: String(Self.apnsToken.reversed()), bundleId: "com.example.app"), token: ann.token)
            let fcm = try await app.v1.post(V1.Accounts.registerDevice.path, DeviceRegistration(platform: .fcm, token: "fcm-token-1", language: "ru"), token: laptop.token)
            let listed = try await app.v1.get(V1.Accounts.devices.path, token: ann.token).decoded(as: PushDeviceList.self)
            let fcmID = try fcm.decoded(as: PushDevice.self).id
            let bobRemoves = try await app.v1.delete(V1.Accounts.removeDevice.path(["id": fcmID.uuidString]), token: bob.token)
            _ = try await app.v1.delete(V1.Sessions.logout.path, token: laptop.token)
            let afterLogout = try await app.v1.get(V1.Accounts.devices.path, token: ann.token).decoded(as: PushDeviceList.self)
            let removed = try await app.v1.delete(V1.Accounts.removeDevice.path(["id": try replaced.decoded(as: PushDevice.self).id.uuidString]), token: ann.token)
            let empty = try await app.v1.get(V1.Accounts.devices.path, token: ann.token).decoded(as: PushDeviceList.self)

            // validate
            let firstDevice = try first.decoded(as: PushDevice.self)
            #expect(first.status == .created && firstDevice.environment == .sandbox)
            #expect(listed.items.count == 2, "the second APNs registration of a session replaced its first")
            let apns = try #require(listed.items.first { $0.platform == .apns })
            #expect(apns.current && apns.tokenHint == String(String(Self.apnsToken.reversed()).suffix(6)) && apns.environment == .production)
            #expect(listed.items.first { $0.platform == .fcm }?.current == false && listed.items.first { $0.platform == .fcm }?.language == "ru")
            #expect(!String(describing: listed).contains("fcm-token-1"), "never the whole token")
            #expect(bobRemoves.status == .notFound && bobRemoves.text.contains("device_not_found"))
            #expect(afterLogout.items.map(\.platform) == [.apns], "the laptop's logout removed its device")
            #expect(removed.status == .noContent && empty.items.isEmpty)
        }
    }

    @Test("a token registered by another account moves to it; a bad token, an APNs device without bundle id and an unknown language are 400; past the limit 422; the /api spec's fcm registers an FCM device", arguments: TestEngine.once)
    func movesRefusalsAndTheSpecField(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.delivery.push.devicesPerAccount = 2 }) { app in
            // setup
            let ann = try await app.v1.signedUp(email: "ann@example.com", tag: "ann")
            let bob = try await app.v1.signedUp(email: "bob@example.com", tag: "bob")
            _ = try await app.v1.post(V1.Accounts.registerDevice.path, DeviceRegistration(platform: .fcm, token: "shared-phone"), token: ann.token)

            // MUT
            let moved = try await app.v1.post(V1.Accounts.registerDevice.path, DeviceRegistration(platform: .fcm, token: "shared-phone"), token: bob.token)
            let annAfter = try await app.v1.get(V1.Accounts.devices.path, token: ann.token).decoded(as: PushDeviceList.self)
            let badToken = try await app.v1.post(V1.Accounts.registerDevice.path, json: #"{"platform":"apns","token":"xyz","bundleId":"a.b"}"#, token: ann.token)
            let noBundle = try await app.v1.post(V1.Accounts.registerDevice.path, json: #"{"platform":"apns","token":"\#(Self.apnsToken)"}"#, token: ann.token)
            let language = try await app.v1.post(V1.Accounts.registerDevice.path, json: #"{"platform":"fcm","token":"t","language":"de"}"#, token: ann.token)
            let platform = try await app.v1.post(V1.Accounts.registerDevice.path, json: #"{"platform":"hms","token":"t"}"#, token: ann.token)
            let second = try await app.v1.login("ann@example.com", "secret-91!")
            let third = try await app.v1.login("ann@example.com", "secret-91!")
            _ = try await app.v1.post(V1.Accounts.registerDevice.path, DeviceRegistration(platform: .fcm, token: "ann-2"), token: second.token)
            _ = try await app.v1.post(V1.Accounts.registerDevice.path, DeviceRegistration(platform: .fcm, token: "ann-3"), token: ann.token)
            let over = try await app.v1.post(V1.Accounts.registerDevice.path, DeviceRegistration(platform: .fcm, token: "ann-4"), token: third.token)
            try await app.registerPhoneAccount(email: nil)
            let apiToken = try await app.login("+79123456789", "secret-91!")
            let change = try await app.postForm(PhoneAccountsAPI.Path.change, [("fcm", "spec-fcm-token")], token: apiToken)
            let apiAccount = try #require(try await app.services.login.findAccount(identifier: "+79123456789")?.id)
            let apiDevices = try await app.services.pushDevices.list(accountID: apiAccount)

            // validate
            #expect(moved.status == .created && annAfter.items.isEmpty, "the token left Ann")
            #expect(badToken.status == .badRequest && badToken.text.contains("\"field\":\"token\""))
            #expect(noBundle.status == .badRequest && noBundle.text.contains("bundleId"))
            #expect(language.status == .badRequest && platform.status == .badRequest)
            #expect(over.status == .unprocessableContent && over.text.contains("too_many_devices"))
            #expect(change.status == .ok, "\(change.text)")
            #expect(apiDevices.map(\.token) == ["spec-fcm-token"] && apiDevices.first?.platform == .fcm)
        }
    }
}
