import Foundation
import GatehouseAPI
import GatehouseKit
import GatehouseScreens
import GatehouseTestSupport
import Testing

/// The SDK's side of push (docs/push.md): `PushRegistration` hands the OS's token over for the
/// session (once, again after a new login), a push the server wrote opens the right screen
/// (`PushRoute`), and the notification settings screen switches previews and lists muted chats.
@Suite("GatehouseKit: push registration, routes and settings against a live server")
struct PushClientTests {
    @Test("a token is registered once for a session, not again for the same one; after logout and login it is registered for the new session; a message's push routes to its chat")
    func registrationAndRoute() async throws {
        try await withLiveServer { server in
            // setup
            let ann = try await server.messengerUser("ann")
            let bob = try await server.messengerUser("bob", firstName: "Bob")
            try await befriend(bob.messenger, bob.id, ann.messenger, ann.id)
            let push = PushRegistration(accounts: ann.accounts, platform: .apns, bundleId: "com.example.app", environment: .sandbox, language: "en")

            // MUT
            let first = try await push.tokenReceived(Data((0..<32).map { UInt8($0) }))
            let again = try await push.sessionStarted()
            let chat = try await bob.messenger.openChat(with: ann.id)
            let sent = try await bob.messenger.send("hi Ann", in: chat.id)
            // The push is composed by the server's push lane after the send's commit (docs/push.md): wait for it.
            var pushes = try await server.outbox.messages(to: try #require(first?.id).uuidString.lowercased())
            for _ in 0..<100 where pushes.isEmpty {
                try await Task.sleep(for: .milliseconds(50))
                pushes = try await server.outbox.messages(to: try #require(first?.id).uuidString.lowercased())
            }
            try await ann.accounts.logout()
            await push.loggedOut()
            try await ann.accounts.login(identifier: "ann", password: "Secret-42!")
            let afterLogin = try await push.sessionStarted()
            let devices = try await ann.accounts.devices()

            // validate
            #expect(first?.platform == .apns && first?.current == true && first?.tokenHint == "1b1c1d1e1f".suffix(6).description)
            #expect(again == nil, "the same token and session: nothing sent again")
            let body = try #require(pushes.first?.body)
            let envelope = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
            let route = PushRoute(userInfo: try #require(envelope["data"] as? [String: String]))
            #expect(route == .chat(chat.id, message: sent.id), "\(envelope)")
            #expect(envelope["title"] as? String == "Bob Smith" && envelope["body"] as? String == "hi Ann")
            #expect(afterLogin != nil && devices.count == 1 && devices.first?.current == true, "the old session's device went with it")
            #expect(PushRoute(userInfo: ["kind": "money", "transfer": "not-an-id"]) == nil && PushRoute(userInfo: ["aps": [:]]) == nil)
            #expect(PushRoute(userInfo: ["kind": "friend_request", "person": bob.id.uuidString]) == .friends(person: bob.id))
        }
    }

    @Test("the settings screen: previews off is saved on the server; a muted chat is listed with its end and unmuted")
    @MainActor
    func settingsScreen() async throws {
        try await withLiveServer { server in
            // setup
            let ann = try await server.messengerUser("ann")
            let bob = try await server.messengerUser("bob", firstName: "Bob")
            try await befriend(bob.messenger, bob.id, ann.messenger, ann.id)
            let chat = try await ann.messenger.openChat(with: bob.id)
            let screen = NotificationSettingsViewModel(localizer: Localizer(language: "en"), timeZone: TimeZone(identifier: "UTC")!,
                                                       accounts: ann.accounts, messenger: ann.messenger, message: { "\($0)" })

            // MUT
            await screen.load()
            let loaded = screen.state
            await screen.setPreviews(false)
            let until = Date(timeIntervalSince1970: 4_102_444_800)  // 2100-01-01
            await screen.mute(chat.id, until: until)
            let muted = screen.state.muted
            await screen.load()
            let reloaded = screen.state.muted
            await screen.unmute(chat.id)

            // validate
            #expect(loaded.previews && loaded.muted.isEmpty && loaded.title == "Notifications")
            #expect(try await ann.accounts.notificationSettings().previews == false)
            #expect(muted.map(\.name) == ["Bob Smith"] && reloaded.map(\.id) == [chat.id])
            #expect(reloaded.first?.until == "until you unmute it", "a mute to 2100 is for good: \(reloaded)")
            #expect(screen.state.muted.isEmpty && screen.state.errorMessage == nil)
            #expect(try await ann.messenger.chat(chat.id).mutedUntil == nil)
        }
    }

    @Test("opening a push lands on its chat in the messenger (one this device has not loaded yet), and a friend request's on the Friends tab")
    @MainActor
    func openingAPushLandsOnTheChat() async throws {
        try await withLiveServer { server in
            // setup: Ann's messenger is open; Bob writes to her for the first time
            let (ann, annID, annMessenger) = try await server.signedInApp("ann")
            let bob = try await server.messengerUser("bob", firstName: "Bob")
            try await befriend(bob.messenger, bob.id, annMessenger, annID)
            let chat = try await bob.messenger.openChat(with: annID)
            let sent = try await bob.messenger.send("hi", in: chat.id)
            let main = try ann.main

            // MUT
            let opened = await main.open(.chat(chat.id, message: sent.id))
            let top = main.top
            let friends = await main.open(.friends(person: bob.id))
            let money = await main.open(.walletTransfer(UUID()))

            // validate
            #expect(opened)
            guard case .chat(let screen)? = top else { Issue.record("not on a chat: \(String(describing: top))"); return }
            #expect(screen.chatId == chat.id && main.state.selectedTab == .friends && friends && !money)
        }
    }
}
