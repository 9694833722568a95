import Foundation
import GatehouseAPI
import GatehouseKit
import GatehouseScreens
import GatehouseServer
import GatehouseTestSupport
import Testing

/// The messenger of the messenger spec through its view models, against a real server over
/// loopback: what an iOS app draws, tab by tab, with the other person acting through the API,
/// live over the realtime socket, and with the network switched off and on.
@Suite("Messenger screens through the view models")
@MainActor
struct MessengerScreensTests {
    func rows(_ model: ChatViewModel) -> [ChatViewModel.MessageRow] {
        model.state.items.compactMap { if case .message(let row) = $0 { row } else { nil } }
    }

    func row(_ model: ChatViewModel, _ text: String) -> ChatViewModel.MessageRow? {
        rows(model).first { $0.text == text }
    }

    /// Ann's chat with Bob opened from her Chats tab.
    func openChat(_ app: MessengerApp, with person: UUID) async throws -> ChatViewModel {
        let main = try app.main
        main.select(.chats)
        let chat = try await app.repository.openChat(with: person)
        main.chats.open(chat.id)
        let model: ChatViewModel = try app.top()
        await model.appear()
        return model
    }

    // MARK: Shell

    @Test("tab bar: three tabs, Chats first; pushes and pops per tab; the Friends badge counts requests to me")
    func tabBar() async throws {
        try await withLiveServer { server in
            let (app, annID, _) = try await server.signedInApp("ann.tabs", firstName: "Ann")
            let bob = try await server.messengerUser("bob.tabs", firstName: "Bob")
            let main = try app.main
            #expect(main.state.selectedTab == .chats)
            #expect(main.state.tabTitles == [.friends: "Friends", .chats: "Chats", .profile: "Profile"])
            #expect(main.state.connectivityNotice == nil)

            // MUT: Bob asks; the Friends tab's badge counts it live.
            try await bob.messenger.requestFriend(annID)
            try await app.waitUntil("the badge counts Bob's request") { try app.main.state.incomingRequests == 1 }

            main.select(.friends)
            main.friends.add()
            #expect(main.state.path.count == 1)
            _ = try app.top(PeopleSearchViewModel.self)
            main.select(.profile)
            #expect(main.state.path.isEmpty)
            main.select(.friends)
            main.pop()
            #expect(main.state.path.isEmpty)
        }
    }

    // MARK: Friends

    @Test("friends: empty message, people search by tag, add, the other accepts live; the three sections in the spec's order (friends, my requests, requests to me), search, sort remembered")
    func friends() async throws {
        try await withLiveServer { server in
            let (app, annID, annMessenger) = try await server.signedInApp("ann.f", firstName: "Ann")
            let bob = try await server.messengerUser("bob.f", firstName: "Bob")
            let cat = try await server.messengerUser("cat.f", firstName: "Ann")
            let dan = try await server.messengerUser("dan.f", firstName: "Dan")
            let main = try app.main
            // The spec's first page of the tab bar.
            #expect(MessengerMainViewModel.Tab.allCases.first == .friends)
            main.select(.friends)
            let friends = main.friends
            #expect(friends.state.sections.isEmpty)
            #expect(friends.state.emptyMessage == "You have no friends yet. Tap + to find people.")

            // People search by tag, then the profile.
            friends.add()
            let search: PeopleSearchViewModel = try app.top()
            #expect(search.state.emptyMessage == "Type a name or a tag.")
            search.setQuery("@bob.f")
            await search.settle()
            #expect(search.state.rows.map(\.tag) == ["@bob.f"])
            #expect(search.state.rows.first?.name == "Bob Smith" && search.state.rows.first?.initials == "BS")
            search.setQuery("nobody-like-this")
            await search.settle()
            #expect(search.state.rows.isEmpty && search.state.emptyMessage == "Nobody found.")
            search.setQuery("bob")
            await search.settle()
            search.open(try #require(search.state.rows.first { $0.tag == "@bob.f" }).id)
            let profile: PersonProfileViewModel = try app.top()
            await profile.appear()
            #expect(profile.state.person.name == "Bob Smith" && profile.state.relationText == nil)
            #expect(profile.state.actions.map(\.action) == [.add, .block])
            #expect(profile.state.messageTitle == "Write a message")

            // MUT: add.
            await profile.perform(.add)
            #expect(profile.state.relationText == "Request sent" && profile.state.actions.map(\.action) == [.cancel, .block])

            // Bob accepts through the API while his profile is open: it says so live, and the list moves him
            // to friends. Cat asks Ann.
            try await bob.messenger.requestFriend(annID)
            try await app.waitUntil("the open profile follows Bob's answer") {
                profile.state.relationText == "Your friend" && profile.state.actions.map(\.action) == [.remove, .block]
            }
            main.pop()
            main.pop()
            try await cat.messenger.requestFriend(annID)
            try await annMessenger.requestFriend(dan.id)
            try await app.waitUntil("Bob is a friend, Ann's request to Dan and Cat's to Ann are in") {
                friends.state.sections.map(\.kind) == [.friends, .outgoing, .incoming]
            }
            #expect(friends.state.sections.map { $0.rows.map(\.tag) } == [["@bob.f"], ["@dan.f"], ["@cat.f"]])
            #expect(friends.state.sections.map(\.title) == ["Friends", "Requests sent", "Want to be your friends"])

            // Search on the device, by name or tag.
            friends.setQuery("ann")
            #expect(friends.state.sections.flatMap(\.rows).map(\.tag) == ["@cat.f"])
            friends.setQuery("zzz")
            #expect(friends.state.sections.isEmpty && friends.state.emptyMessage == "Nobody matches your search.")
            friends.setQuery("")

            // Sort by tag, remembered for the next launch.
            friends.setSort(.tag)
            #expect(friends.state.sort == .tag)
            let relaunched = app.relaunched(server)
            try await relaunched.launch()
            #expect(try relaunched.main.friends.state.sort == .tag)
            #expect(try relaunched.main.friends.state.sortOptions.map(\.title) == ["By name", "By tag"])
        }
    }

    @Test("person profile: accept and decline requests, remove a friend only after confirming")
    func personActions() async throws {
        try await withLiveServer { server in
            let (app, annID, _) = try await server.signedInApp("ann.p")
            let bob = try await server.messengerUser("bob.p")
            let cat = try await server.messengerUser("cat.p")
            try await bob.messenger.requestFriend(annID)
            try await cat.messenger.requestFriend(annID)
            let main = try app.main
            main.select(.friends)
            try await app.waitUntil("both requests are in") { main.friends.state.sections.first?.rows.count == 2 }

            // Accept Bob.
            main.friends.open(bob.id)
            let bobProfile: PersonProfileViewModel = try app.top()
            #expect(bobProfile.state.relationText == "Wants to be your friend")
            #expect(bobProfile.state.actions.map(\.action) == [.accept, .decline, .block])
            await bobProfile.perform(.accept)
            #expect(bobProfile.state.relationText == "Your friend" && bobProfile.state.actions.map(\.action) == [.remove, .block])

            // Block asks first; a blocked friend's messages are refused; unblock lets them in again.
            let chat = try await bob.messenger.openChat(with: annID)
            await bobProfile.perform(.block)
            #expect(bobProfile.state.confirmation?.title == "Block bob.p Smith?" && bobProfile.state.confirmation?.message?.contains("They are not told") == true)
            await bobProfile.confirm()
            #expect(bobProfile.state.actions.map(\.action) == [.remove, .unblock] && bobProfile.state.blockedText == "Blocked: nothing of theirs reaches you")
            await #expect(throws: (any Error).self) { try await bob.messenger.send("hi", in: chat.id, clientMessageId: "b1") }
            await bobProfile.perform(.unblock)
            #expect(bobProfile.state.actions.map(\.action) == [.remove, .block] && bobProfile.state.blockedText == nil)
            _ = try await bob.messenger.send("hi", in: chat.id, clientMessageId: "b2")

            // Remove asks first; cancel keeps him.
            await bobProfile.perform(.remove)
            #expect(bobProfile.state.confirmation?.title == "Remove bob.p Smith from friends?")
            bobProfile.cancelConfirmation()
            #expect(try await bob.messenger.friends().friends.map(\.id) == [annID])
            await bobProfile.perform(.remove)
            await bobProfile.confirm()
            #expect(bobProfile.state.actions.map(\.action) == [.add, .block])
            #expect(try await bob.messenger.friends().friends.isEmpty)
            main.pop()

            // Decline Cat.
            main.friends.open(cat.id)
            let catProfile: PersonProfileViewModel = try app.top()
            await catProfile.perform(.decline)
            #expect(catProfile.state.actions.map(\.action) == [.add, .block])
            #expect(try await cat.messenger.friends().outgoing.isEmpty)
            main.pop()
            #expect(main.friends.state.sections.isEmpty)

        }
    }

    // MARK: Chats and chat

    @Test("write a message from a profile: the chat opens on the Chats tab; live both ways, read receipts, the list's preview and flag")
    func chatLive() async throws {
        try await withLiveServer { server in
            let (app, annID, ann) = try await server.signedInApp("ann.c", firstName: "Ann")
            let bob = try await server.messengerUser("bob.c", firstName: "Bob")
            try await befriend(ann, annID, bob.messenger, bob.id)
            let main = try app.main
            main.select(.friends)
            try await app.waitUntil("Bob is listed") { main.friends.state.sections.first?.rows.count == 1 }
            #expect(main.chats.state.emptyMessage == "No chats yet. Tap + to write to a friend.")

            // "Write a message" from Bob's profile.
            main.friends.open(bob.id)
            let profile: PersonProfileViewModel = try app.top()
            await profile.writeMessage()
            #expect(main.state.selectedTab == .chats)
            let chat: ChatViewModel = try app.top()
            await chat.appear()
            #expect(chat.state.title == "Bob Smith")
            #expect(chat.state.emptyMessage == "No messages yet. Say hello!")
            #expect(!chat.state.isSendEnabled)

            // MUT: Ann writes; Bob answers through the API.
            chat.setDraft("Hello, Bob")
            #expect(chat.state.isSendEnabled)
            chat.send()
            #expect(chat.state.draft.isEmpty)
            try await app.waitUntil("Ann's message is sent") { self.row(chat, "Hello, Bob")?.delivery == .sent }
            let bobChat = try await bob.messenger.openChat(with: annID)
            #expect(try await bob.messenger.messages(in: bobChat.id).items.map(\.text) == ["Hello, Bob"])
            _ = try await bob.messenger.send("Hi Ann", in: bobChat.id)
            try await app.waitUntil("Bob's answer appears live") { self.row(chat, "Hi Ann") != nil }

            // validate: sides, the day separator, times; read both ways.
            let mine = try #require(row(chat, "Hello, Bob"))
            let theirs = try #require(row(chat, "Hi Ann"))
            #expect(mine.isMine && !theirs.isMine)
            #expect(chat.state.items.first == .day("Today"))
            #expect(theirs.time.count == 5)
            try await app.waitUntil("Bob's message is marked read on the server") {
                false == (try? app.repository.chat(bobChat.id)?.unread) ?? true
            }
            let newest = try await bob.messenger.messages(in: bobChat.id).items.last?.id
            // The app shows the chat read at once and tells the server right after: wait for the server.
            let serverHasTheRead = await eventually(within: .seconds(10)) {
                (try? await bob.messenger.chat(bobChat.id).otherLastReadMessageId) == newest
            }
            #expect(serverHasTheRead, "the server never recorded Ann's read")
            let annMessage = try #require(try await bob.messenger.messages(in: bobChat.id).items.first)
            try await bob.messenger.markRead(bobChat.id, upTo: annMessage.id)
            try await app.waitUntil("Ann sees her message read") { self.row(chat, "Hello, Bob")?.delivery == .read }
            #expect(row(chat, "Hello, Bob")?.deliveryText == "Read")

            // The list: the preview, the time, unread when Bob writes while the chat is closed.
            chat.back()
            chat.disappear()
            _ = try await bob.messenger.send("Are you there?", in: bobChat.id)
            try await app.waitUntil("the list shows Bob's new message unread") { main.chats.state.rows.first?.isUnread == true }
            let listed = try #require(main.chats.state.rows.first)
            #expect(listed.person.name == "Bob Smith" && listed.lastMessage == "Are you there?" && listed.unreadCount == 1)
            #expect(main.state.unreadChats == 1)
            main.chats.open(listed.id)
            let reopened: ChatViewModel = try app.top()
            await reopened.appear()
            #expect(main.chats.state.rows.first?.isUnread == false)
            reopened.setDraft("Yes")
            reopened.send()
            try await app.waitUntil("the list shows my answer") { main.chats.state.rows.first?.lastMessage == "You: Yes" }
        }
    }

    @Test("chat menu: reply quotes, edit mine, delete for me and for everyone, forward to two chats")
    func chatMenu() async throws {
        try await withLiveServer { server in
            let (app, annID, ann) = try await server.signedInApp("ann.m", firstName: "Ann")
            let bob = try await server.messengerUser("bob.m", firstName: "Bob")
            let cat = try await server.messengerUser("cat.m", firstName: "Cat")
            let dan = try await server.messengerUser("dan.m", firstName: "Dan")
            for other in [bob, cat, dan] { try await befriend(ann, annID, other.messenger, other.id) }
            for other in [cat, dan] { _ = try await app.repository.openChat(with: other.id) }
            let bobChat = try await bob.messenger.openChat(with: annID)
            _ = try await bob.messenger.send("Lunch at one?", in: bobChat.id)
            let chat = try await openChat(app, with: bob.id)
            try await app.waitUntil("Bob's message is shown") { self.row(chat, "Lunch at one?") != nil }

            // Reply.
            let lunch = try #require(row(chat, "Lunch at one?"))
            chat.select(lunch.id)
            #expect(chat.state.actions.map(\.action) == [.reply, .forward, .deleteForMe])
            chat.perform(.reply)
            #expect(chat.state.composerTitle == "Reply to Bob Smith")
            chat.setDraft("Sure")
            chat.send()
            try await app.waitUntil("the reply is sent") { self.row(chat, "Sure")?.delivery == .sent }
            #expect(row(chat, "Sure")?.quote?.author == "Bob Smith" && row(chat, "Sure")?.quote?.text == "Lunch at one?")
            #expect(chat.state.composer == .new)

            // Edit mine.
            let sure = try #require(row(chat, "Sure"))
            chat.select(sure.id)
            #expect(chat.state.actions.map(\.action) == [.reply, .edit, .forward, .deleteForMe, .deleteForEveryone])
            chat.perform(.edit)
            #expect(chat.state.draft == "Sure" && chat.state.composerTitle == "Editing")
            chat.setDraft("Sure, at one")
            chat.send()
            try await app.waitUntil("the edit is saved") { self.row(chat, "Sure, at one")?.delivery == .sent }
            #expect(row(chat, "Sure, at one")?.isEdited == true)
            #expect(try await bob.messenger.messages(in: bobChat.id).items.last?.text == "Sure, at one")

            // Forward Bob's message to Cat and Dan.
            chat.select(lunch.id)
            chat.perform(.forward)
            let forward: ForwardPickerViewModel = try app.top()
            #expect(Set(forward.state.rows.map(\.person.name)) == ["Bob Smith", "Cat Smith", "Dan Smith"])
            #expect(!forward.state.isSendEnabled)
            for name in ["Cat Smith", "Dan Smith"] { forward.toggle(try #require(forward.state.rows.first { $0.person.name == name }).id) }
            await forward.send()
            #expect(try app.top(ChatViewModel.self) === chat)
            for other in [cat, dan] {
                let theirChat = try await other.messenger.openChat(with: annID)
                let forwarded = try #require(try await other.messenger.messages(in: theirChat.id).items.last)
                #expect(forwarded.text == "Lunch at one?" && forwarded.forwardedFrom?.authorId == bob.id)
            }

            // Delete mine for everyone: Bob sees a tombstone; delete Bob's for me: gone here only.
            chat.select(sure.id)
            chat.perform(.deleteForEveryone)
            try await app.waitUntil("my message is deleted for everyone") { self.row(chat, "Message deleted")?.delivery == .sent }
            #expect(try await bob.messenger.messages(in: bobChat.id).items.last?.deleted == true)
            chat.select(lunch.id)
            chat.perform(.deleteForMe)
            try await app.waitUntil("Bob's message is gone here") { self.row(chat, "Lunch at one?") == nil && (try? app.repository.store.messages(in: chat.chatId).count) == 1 }
            #expect(try await bob.messenger.messages(in: bobChat.id).items.first?.text == "Lunch at one?")

            // The header opens Bob's profile with the chat's attachments.
            chat.openProfile()
            let profile: PersonProfileViewModel = try app.top()
            await profile.appear()
            #expect(profile.state.attachmentsTitle == "Attachments" && profile.state.person.name == "Bob Smith")
        }
    }

    @Test("a wallet payment in a chat reads as the payment, and offers only reply and delete for me")
    func paymentMessage_inTheChat() async throws {
        try await withLiveServer { server in
            // setup: Ann with a wallet (verifying her phone ends her other sessions, so before the app
            // signs in), then in the messenger app; Bob pays her from his wallet
            let ann = try await server.walletUser("ann.w", phone: "+79160000011")
            let app = server.messengerApp(signedIn: ann.accounts, timeZone: TimeZone(identifier: "UTC")!)
            try await app.launch()
            let bob = try await server.walletUser("bob.w", phone: "+79160000012")
            try await server.credit("+79160000012", "10")
            _ = try await bob.wallet.send(NewTransfer(to: PartyReference(tag: "ann.w"), amount: 1_00, comment: "rent"), intent: PaymentIntent())

            // MUT
            let chat = try await openChat(app, with: bob.id)
            try await app.waitUntil("the payment is shown") { self.row(chat, "Bob.W Smith sent you 1.00 ₽ · rent") != nil }
            chat.select(try #require(row(chat, "Bob.W Smith sent you 1.00 ₽ · rent")).id)

            // validate
            #expect(chat.state.actions.map(\.action) == [.reply, .deleteForMe])
        }
    }

    @Test("chats: search, delete with confirmation, + picks a friend and opens the existing chat or a new one")
    func chatsList() async throws {
        try await withLiveServer { server in
            let (app, annID, ann) = try await server.signedInApp("ann.l", firstName: "Ann")
            let bob = try await server.messengerUser("bob.l", firstName: "Bob")
            let cat = try await server.messengerUser("cat.l", firstName: "Cat")
            for other in [bob, cat] { try await befriend(ann, annID, other.messenger, other.id) }
            let main = try app.main
            try await app.waitUntil("two friends") { (try? app.repository.friends.friends.count) == 2 }

            // "+" → Bob: a new chat.
            main.chats.newChat()
            let picker: FriendPickerViewModel = try app.top()
            #expect(picker.state.rows.map(\.name) == ["Bob Smith", "Cat Smith"])
            picker.setQuery("ca")
            #expect(picker.state.rows.map(\.name) == ["Cat Smith"])
            picker.setQuery("")
            await picker.pick(bob.id)
            let chat: ChatViewModel = try app.top()
            #expect(chat.state.title == "Bob Smith")
            #expect(main.state.path.count == 1)
            main.pop()
            main.chats.newChat()
            await (try app.top(FriendPickerViewModel.self)).pick(bob.id)
            #expect(try app.top(ChatViewModel.self).chatId == chat.chatId)
            main.pop()
            main.chats.newChat()
            await (try app.top(FriendPickerViewModel.self)).pick(cat.id)
            main.pop()
            #expect(main.chats.state.rows.count == 2)
            #expect(main.chats.state.rows.first?.lastMessage == "No messages yet")

            // Search.
            main.chats.setQuery("bob")
            #expect(main.chats.state.rows.map(\.person.name) == ["Bob Smith"])
            main.chats.setQuery("")

            // Delete asks; cancel keeps it; confirm removes it from my list only.
            main.chats.requestDelete(chat.chatId)
            #expect(main.chats.state.confirmation?.title == "Delete the chat with Bob Smith?")
            main.chats.cancelDelete()
            #expect(main.chats.state.rows.count == 2)
            main.chats.requestDelete(chat.chatId)
            await main.chats.confirmDelete()
            #expect(main.chats.state.rows.map(\.person.name) == ["Cat Smith"])
            #expect(try await app.repository.messenger.chats().items.count == 1)
        }
    }

    @Test("history pages back 50 at a time with day separators")
    func paging() async throws {
        try await withLiveServer { server in
            // A time zone where it is 23:00 now: two hours on is the next day.
            let secondsToday = Int(server.clock.now.timeIntervalSince1970) % 86_400
            var offset = (23 * 3_600 - secondsToday) % 86_400
            if offset > 12 * 3_600 { offset -= 86_400 } else if offset <= -12 * 3_600 { offset += 86_400 }
            let (app, annID, ann) = try await server.signedInApp("ann.h", timeZone: try #require(TimeZone(secondsFromGMT: offset)))
            let bob = try await server.messengerUser("bob.h")
            try await befriend(ann, annID, bob.messenger, bob.id)
            let bobChat = try await bob.messenger.openChat(with: annID)
            for index in 1...60 {
                if index == 31 { server.clock.advance(by: 2 * 3_600) }
                _ = try await bob.messenger.send("m\(index)", in: bobChat.id)
            }
            let chat = try await openChat(app, with: bob.id)
            #expect(rows(chat).count == 50 && rows(chat).first?.text == "m11" && chat.state.canLoadOlder)

            // MUT
            await chat.loadOlder()

            // validate
            #expect(rows(chat).map(\.text) == (1...60).map { "m\($0)" })
            #expect(!chat.state.canLoadOlder)
            let days = chat.state.items.compactMap { if case .day(let day) = $0 { day } else { nil } }
            #expect(days == ["Yesterday", "Today"])
        }
    }

    // MARK: Offline

    @Test("offline: lists stay with a notice; sends, an edit and a delete wait as pending and reach the server exactly once, in order, when the network is back")
    func offlineOutbox() async throws {
        try await withLiveServer { server in
            let (app, annID, ann) = try await server.signedInApp("ann.o", firstName: "Ann")
            let bob = try await server.messengerUser("bob.o", firstName: "Bob")
            try await befriend(ann, annID, bob.messenger, bob.id)
            let chat = try await openChat(app, with: bob.id)
            for text in ["before", "gone soon"] {
                chat.setDraft(text)
                chat.send()
                try await app.waitUntil("sent") { self.row(chat, text)?.delivery == .sent }
            }
            let main = try app.main

            // MUT: the network goes.
            await app.network.goOffline()
            try await app.waitUntil("offline") { main.state.connectivityNotice != nil }
            #expect(chat.state.notice == "Offline: showing saved data. New messages will be sent when the connection is back.")
            #expect(main.chats.state.rows.count == 1 && main.friends.state.sections.first?.rows.count == 1)
            chat.setDraft("one")
            chat.send()
            chat.setDraft("two")
            chat.send()
            chat.select(try #require(row(chat, "before")).id)
            chat.perform(.edit)
            chat.setDraft("before, edited")
            chat.send()
            chat.select(try #require(row(chat, "gone soon")).id)
            chat.perform(.deleteForEveryone)
            #expect(row(chat, "gone soon")?.delivery == .pending && row(chat, "gone soon")?.deliveryText == "Deleting…")
            #expect(row(chat, "one")?.delivery == .pending && row(chat, "one")?.deliveryText == "Sending…")
            #expect(row(chat, "two")?.delivery == .pending)
            #expect(row(chat, "before, edited")?.delivery == .pending && row(chat, "before, edited")?.deliveryText == "Saving the edit…")
            try await Task.sleep(for: .milliseconds(300))
            #expect(row(chat, "one")?.delivery == .pending)

            // The network comes back.
            app.network.goOnline()
            try await app.waitUntil("everything is sent", within: .seconds(15)) {
                self.rows(chat).allSatisfy { $0.delivery == .sent } && main.state.connectivityNotice == nil
            }

            // validate: exactly once, in order, on the other side.
            let bobChat = try await bob.messenger.openChat(with: annID)
            #expect(try await bob.messenger.messages(in: bobChat.id).items.map(\.text) == ["before, edited", "", "one", "two"])
            #expect(try await bob.messenger.messages(in: bobChat.id).items[1].deleted)
            #expect(rows(chat).map(\.text) == ["before, edited", "Message deleted", "one", "two"])
        }
    }

    /// A 1×1 PNG: an image by its bytes.
    static let png = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")!

    @Test("attachments from the chat: a file and a photo picked, pending with upload progress, sent once; one written offline goes up when the network is back; the profile behind the header lists them and opens them byte for byte")
    func attachmentsFromTheChat() async throws {
        try await withLiveServer { server in
            // setup
            let (app, annID, ann) = try await server.signedInApp("ann.f", firstName: "Ann")
            let bob = try await server.messengerUser("bob.f", firstName: "Bob")
            try await befriend(ann, annID, bob.messenger, bob.id)
            let chat = try await openChat(app, with: bob.id)
            let report = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })

            // MUT: a file and a photo with a caption
            #expect(!chat.state.isSendEnabled && chat.state.isAttachEnabled && chat.state.attachTitle == "Attach")
            chat.attach(report, fileName: "report.bin", contentType: "application/octet-stream")
            #expect(chat.state.isSendEnabled && chat.state.draftFiles.map(\.fileName) == ["report.bin"])
            chat.attach(Self.png, fileName: "photo.png", contentType: "image/png")
            #expect(chat.state.draftFiles.map(\.isImage) == [false, true])
            chat.setDraft("the files")
            var progress: [Double] = []
            let watching = chat.observe { state in
                for case .message(let row) in state.items { if let step = row.uploadProgress { progress.append(step) } }
            }
            chat.send()
            #expect(chat.state.draftFiles.isEmpty && !chat.state.isSendEnabled)
            #expect(row(chat, "the files")?.attachments == ["report.bin", "photo.png"] && row(chat, "the files")?.delivery == .pending)
            try await app.waitUntil("sent") { self.row(chat, "the files")?.delivery == .sent }
            watching.cancel()

            // validate: the upload was shown going up, and the row no longer says so
            #expect(!progress.isEmpty && progress == progress.sorted(), "\(progress)")
            #expect(row(chat, "the files")?.uploadProgress == nil && row(chat, "the files")?.uploadText == nil)

            // MUT: offline, a file alone
            await app.network.goOffline()
            try await app.waitUntil("offline") { try app.main.state.connectivityNotice != nil }
            chat.attach(Data("written on the train".utf8), fileName: "note.txt", contentType: "text/plain")
            chat.send()
            let waiting = try #require(rows(chat).last)
            #expect(waiting.attachments == ["note.txt"] && waiting.delivery == .pending && waiting.text.isEmpty)
            try await Task.sleep(for: .milliseconds(200))
            #expect(rows(chat).last?.delivery == .pending, "nothing goes while offline")
            app.network.goOnline()
            try await app.waitUntil("everything is sent", within: .seconds(15)) { self.rows(chat).allSatisfy { $0.delivery == .sent } }

            // validate: Bob has each message once, with its files
            let bobChat = try await bob.messenger.openChat(with: annID)
            let history = try await bob.messenger.messages(in: bobChat.id).items
            #expect(history.map { $0.attachments.map(\.fileName) } == [["report.bin", "photo.png"], ["note.txt"]])
            #expect(history.first?.attachments.map(\.kind) == [.file, .image] && history.first?.text == "the files")
            let noteID = try #require(history.last?.attachments.first?.id)
            #expect(try await bob.messenger.download(noteID).data == Data("written on the train".utf8))

            // MUT: the profile behind the chat's header
            chat.openProfile()
            let profile: PersonProfileViewModel = try app.top()
            await profile.appear()
            var opened: [PersonProfileViewModel.OpenedAttachment] = []
            profile.onOpenAttachment = { opened.append($0) }
            await profile.open(try #require(profile.state.attachments.first { $0.fileName == "report.bin" }).id)

            // validate
            #expect(Set(profile.state.attachments.map(\.fileName)) == ["report.bin", "photo.png", "note.txt"])
            #expect(profile.state.attachments.first { $0.fileName == "photo.png" }?.isImage == true)
            #expect(opened.count == 1 && opened.first?.data == report && opened.first?.fileName == "report.bin")
        }
    }

    @Test("a message with a file the server refuses shows as failed with its file; retry, once the other side takes messages, sends it")
    func attachmentRefused() async throws {
        try await withLiveServer { server in
            let (app, _, _) = try await server.signedInApp("ann.y")
            let bob = try await server.messengerUser("bob.y")
            let chat = try await openChat(app, with: bob.id)
            _ = try await bob.messenger.setPrivacy(whoCanMessageMe: .friends)

            // MUT
            chat.attach(Data("hello".utf8), fileName: "hello.txt", contentType: "text/plain")
            chat.send()
            try await app.waitUntil("refused") { if case .failed = self.rows(chat).last?.delivery { true } else { false } }

            // validate
            let failed = try #require(rows(chat).last)
            #expect(failed.attachments == ["hello.txt"] && failed.deliveryText?.hasPrefix("Not sent: ") == true)
            chat.select(failed.id)
            #expect(chat.state.actions.map(\.action) == [.retry, .discard])
            _ = try await bob.messenger.setPrivacy(whoCanMessageMe: .everyone)
            chat.perform(.retry)
            try await app.waitUntil("sent on retry") { self.rows(chat).last?.delivery == .sent }
            #expect(try await bob.messenger.messages(in: try await bob.messenger.openChat(with: app.repository.account.id).id).items.map { $0.attachments.map(\.fileName) } == [["hello.txt"]])
        }
    }

    @Test("offline: a send the server refuses shows as failed with retry and discard")
    func failedSend() async throws {
        try await withLiveServer { server in
            let (app, annID, _) = try await server.signedInApp("ann.x")
            let bob = try await server.messengerUser("bob.x")
            let chat = try await openChat(app, with: bob.id)
            _ = try await bob.messenger.setPrivacy(whoCanMessageMe: .friends)
            _ = annID

            // MUT
            chat.setDraft("let me in")
            chat.send()
            try await app.waitUntil("the send failed") { if case .failed = self.row(chat, "let me in")?.delivery { true } else { false } }

            // validate
            let failed = try #require(row(chat, "let me in"))
            #expect(failed.deliveryText?.hasPrefix("Not sent: ") == true)
            chat.select(failed.id)
            #expect(chat.state.actions.map(\.action) == [.retry, .discard])
            chat.perform(.retry)
            try await app.waitUntil("failed again") { if case .failed = self.row(chat, "let me in")?.delivery { true } else { false } }
            chat.select(failed.id)
            chat.perform(.discard)
            #expect(row(chat, "let me in") == nil)
            #expect(try app.repository.store.messages(in: chat.chatId).isEmpty)
        }
    }

    @Test("relaunch without a network goes into the messenger from the saved store; what is written then arrives once when online")
    func offlineLaunch() async throws {
        try await withLiveServer { server in
            let (app, annID, ann) = try await server.signedInApp("ann.r", firstName: "Ann")
            let bob = try await server.messengerUser("bob.r", firstName: "Bob")
            try await befriend(ann, annID, bob.messenger, bob.id)
            let bobChat = try await bob.messenger.openChat(with: annID)
            _ = try await bob.messenger.send("see you", in: bobChat.id)
            let first = try await openChat(app, with: bob.id)
            try await app.waitUntil("Bob's message is saved") { self.row(first, "see you") != nil }
            try await app.repository.stop()

            // MUT: the phone relaunches with no network.
            await app.network.goOffline()
            let relaunched = app.relaunched(server)
            try await relaunched.launch()

            // validate: into the messenger, offline, with the saved lists and messages.
            let main = try relaunched.main
            #expect(main.state.connectivityNotice?.hasPrefix("Offline") == true)
            #expect(main.chats.state.rows.map(\.person.name) == ["Bob Smith"])
            #expect(main.friends.state.sections.first?.rows.map(\.name) == ["Bob Smith"])
            main.chats.open(bobChat.id)
            let chat: ChatViewModel = try relaunched.top()
            await chat.appear()
            #expect(row(chat, "see you") != nil)
            chat.setDraft("offline hello")
            chat.send()
            #expect(row(chat, "offline hello")?.delivery == .pending)

            relaunched.network.goOnline()
            try await relaunched.waitUntil("sent once online", within: .seconds(15)) { self.row(chat, "offline hello")?.delivery == .sent }
            #expect(try await bob.messenger.messages(in: bobChat.id).items.map(\.text) == ["see you", "offline hello"])
        }
    }

    // MARK: Profile

    @Test("profile: names and tag (checked as typed), privacy, theme kept on the device, email changed with a code")
    func profile() async throws {
        try await withLiveServer { server in
            let (app, annID, _) = try await server.signedInApp("ann.e", firstName: "Ann")
            _ = try await server.messengerUser("bob.e")
            let main = try app.main
            main.select(.profile)
            let profile = main.profile
            #expect(profile.state.name == "Ann Smith" && profile.state.tag == "@ann.e" && profile.state.email == "ann.e@example.com")
            #expect(profile.state.settings.map(\.title) == ["Edit my data", "Privacy", "Theme", "Log out", "Delete account"])
            // The launch is online once the realtime socket is; the privacy it reads may land a moment later.
            try await app.waitUntil("the privacy is read") { profile.state.settings.map(\.value) == [nil, "Everyone", "As the system", nil, nil] }

            // Edit: the tag is checked; Bob's is taken, mine is fine.
            profile.open(.editProfile)
            let edit: EditProfileViewModel = try app.top()
            #expect(edit.state.firstName == "Ann" && edit.state.tag == "ann.e" && !edit.state.isSaveEnabled)
            edit.setTag("bob.e")
            await edit.settleTagCheck()
            #expect(edit.state.tagStatus == .taken && !edit.state.isSaveEnabled)
            edit.setTag("ann.e")
            await edit.settleTagCheck()
            #expect(edit.state.tagStatus == .available && edit.state.tagMessage == "This is your tag.")
            edit.setTag("anna.e")
            edit.setFirstName("Anna")
            await edit.settleTagCheck()
            #expect(edit.state.tagStatus == .available && edit.state.isSaveEnabled)
            await edit.save()
            #expect(edit.state.infoMessage == "Saved." && !edit.state.isSaveEnabled)
            #expect(profile.state.name == "Anna Smith" && profile.state.tag == "@anna.e")

            // Avatar: set, shown on the Profile tab, removed.
            #expect(edit.state.avatarURL == nil && profile.state.initials == "AS")
            await edit.setAvatar(AccountsClientLiveTests.png, contentType: "image/png")
            #expect(edit.state.avatarURL != nil && profile.state.avatarURL == edit.state.avatarURL, "\(edit.state.errorMessage ?? "")")
            await edit.removeAvatar()
            #expect(edit.state.avatarURL == nil && profile.state.avatarURL == nil)

            // Email: the current password, a code to the new address.
            edit.startEmailChange()
            edit.setNewEmail("anna@example.com")
            edit.setCurrentPassword("Secret-42!")
            await edit.requestEmailCode()
            #expect(edit.state.emailStep == .code, "\(edit.state.errorMessage ?? "")")
            edit.setCode(try await server.latestCodeV1(to: "anna@example.com"))
            await edit.confirmEmail()
            #expect(edit.state.emailStep == .idle && edit.state.email == "anna@example.com", "\(edit.state.errorMessage ?? "")")
            #expect(profile.state.email == "anna@example.com")
            edit.back()

            // Privacy.
            profile.open(.privacy)
            let privacy: PrivacyViewModel = try app.top()
            #expect(privacy.state.options.map(\.title) == ["Everyone", "Friends only"])
            await privacy.choose(.friends)
            #expect(privacy.state.options.first { $0.isSelected }?.audience == .friends)
            #expect(try await app.repository.messenger.privacy().whoCanMessageMe == .friends)
            #expect(profile.state.settings[1].value == "Friends only")
            main.pop()

            // Theme: kept on the device, applied through the flow.
            profile.open(.theme)
            let theme: ThemeViewModel = try app.top()
            #expect(theme.state.options.map(\.title) == ["Light", "Dark", "As the system"])
            #expect(app.flow.state.theme == .system)
            theme.choose(.dark)
            #expect(app.flow.state.theme == .dark && theme.state.options.first { $0.isSelected }?.theme == .dark)
            #expect(profile.state.settings[2].value == "Dark")
            #expect(app.relaunched(server).flow.state.theme == .dark)
            _ = annID
        }
    }

    @Test("logout asks, ends the session and wipes the device's store; a session ended elsewhere does the same")
    func logoutWipes() async throws {
        try await withLiveServer { server in
            let (app, _, _) = try await server.signedInApp("ann.w")
            let storeFile = try app.repository.store.url
            #expect(FileManager.default.fileExists(atPath: storeFile.path))
            let profile = try app.main.profile
            profile.open(.logout)
            #expect(profile.state.confirmation?.confirmTitle == "Log out")
            await profile.confirmLogout()
            // The way back to login is the repository's "session ended" notice, which the realtime
            // socket's close can deliver too: wait for the screen rather than expect it at once.
            try await app.waitUntil("back at login") { if case .login = app.flow.state.screen { true } else { false } }
            #expect(!FileManager.default.fileExists(atPath: storeFile.path))
            #expect(app.stores.openLast() == nil)
            #expect(try app.sessions.load() == nil)

            // Ended from another device.
            let (other, _, _) = try await server.signedInApp("bob.w")
            let otherFile = try other.repository.store.url
            let elsewhere = server.accountsClient()
            _ = try await elsewhere.login(identifier: "bob.w", password: "Secret-42!")
            _ = try await elsewhere.endOtherSessions()
            try await other.waitUntil("back at login") { if case .login = other.flow.state.screen { true } else { false } }
            #expect(!FileManager.default.fileExists(atPath: otherFile.path))
        }
    }

    @Test("delete account: its own screen asks for the password; a wrong one is shown; then the sessions end, the store is wiped, and login says until when a password login takes it back")
    func deleteAccount() async throws {
        try await withLiveServer { server in
            let (app, annID, _) = try await server.signedInApp("ann.del")
            let storeFile = try app.repository.store.url
            // Bob has a chat with Ann: after her account is erased, it stays his, from "Deleted account".
            let (bobApp, _, _) = try await server.signedInApp("bob.del")
            let bobsChat = try await bobApp.repository.openChat(with: annID)
            _ = try await bobApp.repository.messenger.send("see you", in: bobsChat.id)
            let profile = try app.main.profile
            let row = try #require(profile.state.settings.last)
            #expect(row.item == .deleteAccount && row.title == "Delete account" && row.isDestructive)

            // MUT: open it, a wrong password, then the right one
            profile.open(.deleteAccount)
            let screen: DeleteAccountViewModel = try app.top()
            #expect(!screen.state.isConfirmEnabled && screen.state.passwordContentType == .password)
            screen.setPassword("Wrong-42!")
            await screen.confirm()
            #expect(screen.state.errorMessage == "Wrong login or password.")
            #expect(try app.top(DeleteAccountViewModel.self) === screen, "a refusal keeps the screen")
            screen.setPassword("Secret-42!")
            await screen.confirm()

            // validate
            try await app.waitUntil("back at login") { if case .login = app.flow.state.screen { true } else { false } }
            guard case .login(let login) = app.flow.state.screen else { return }
            #expect(login.state.infoMessage?.hasPrefix("Your account is being deleted: its data is erased on ") == true, "\(String(describing: login.state.infoMessage))")
            #expect(!FileManager.default.fileExists(atPath: storeFile.path))
            #expect(try app.sessions.load() == nil)
            // A password login within the grace period takes it back.
            let back = server.accountsClient()
            let session = try await back.login(identifier: "ann.del", password: "Secret-42!")
            #expect(session.account.id == annID)

            // Deleted again, and erased once the grace period is over: Bob's chat names a deleted account.
            _ = try await back.deleteAccount(currentPassword: "Secret-42!")
            var now = server.configuration
            now.limits.accountDeletionGrace = 0
            #expect(try await ServerCommands.eraseDeletedAccounts(configuration: now) == 1)
            await (try bobApp.repository).refresh()
            let bobs = try bobApp.main.chats
            try await bobApp.waitUntil("Bob's chat shows the deleted account") { bobs.state.rows.first?.person.name == "Deleted account" }
            #expect(bobs.state.rows.first?.person.tag == "" && bobs.state.rows.first?.person.id == annID)
        }
    }

    // MARK: Strings

    @Test("every string the screens use exists in English and Russian")
    func localization() throws {
        let en = Localizer.keys("en")
        let ru = Localizer.keys("ru")
        #expect(en.subtracting(ru).isEmpty, "missing in ru: \(en.subtracting(ru).sorted())")
        #expect(ru.subtracting(en).isEmpty, "missing in en: \(ru.subtracting(en).sorted())")
        // Every literal key in the screens' sources, and every prefix of an interpolated one.
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../../Sources/GatehouseScreens").standardized
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        #expect(files.count > 10)
        let pattern = try Regex(#"(?:\bl|localizer)\("([a-zA-Z.]+)(\\\()?"#)
        var checked = 0
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: pattern) {
                let key = String(match.output[1].substring ?? "")
                if match.output[2].substring != nil {
                    #expect(en.contains { $0.hasPrefix(key) }, "no key starts with \(key) (\(file.lastPathComponent))")
                } else {
                    #expect(en.contains(key), "missing key \(key) (\(file.lastPathComponent))")
                }
                checked += 1
            }
        }
        #expect(checked > 100)
    }
}
