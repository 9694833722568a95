import Foundation
import GatehouseAPI
import GatehouseMessenger
import GatehousePlatform
import GatehouseServer
import GatehouseSurfaces
import GatehouseTestSupport
import HTTPTypes
import HummingbirdTesting
import NIOConcurrencyHelpers
import NIOCore
import SQLKit
import Testing

/// Chats and messages at the wire level (docs/messenger.md), on every engine.
@Suite("Messenger: chats and messages")
struct ChatsAndMessagesTests {
    typealias M = V1.Messenger

    @Test("opening a chat: the same chat however many open it at once, from either side", .tags(.engine), arguments: TestEngine.all)
    func openChat_isOneChat(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.person("ann")
            let bob = try await app.v1.person("bob")

            // MUT
            let ids = try await Crowd.with(port: try #require(app.client.port), connections: 8) { crowd in
                try await withThrowingTaskGroup(of: UUID.self) { group in
                    for index in 0..<8 {
                        group.addTask {
                            let (me, other) = index % 2 == 0 ? (ann, bob) : (bob, ann)
                            let body = String(buffer: try V1Client.encode(PersonReference(personId: other.id)))
                            let answer = try await crowd.post(M.openChat.path, body: body, token: me.token)
                            #expect(answer.status == 200, "\(answer.body)")
                            return try answer.decoded(as: Chat.self).id
                        }
                    }
                    return try await group.reduce(into: Set<UUID>()) { $0.insert($1) }
                }
            }

            // validate
            #expect(ids.count == 1, "\(ids)")
            let chat = try await app.v1.openChat(ann, with: bob)
            #expect(ids == [chat.id])
            #expect(chat.person.id == bob.id && chat.person.chatId == chat.id && chat.lastMessage == nil && chat.unreadCount == 0 && !chat.unread)
            #expect(try await app.v1.get(app.v1.path(M.person, bob.id), token: ann.token).decoded(as: Person.self).chatId == chat.id)
            try expectProblem(try await app.v1.post(M.openChat.path, PersonReference(personId: ann.id), token: ann.token), .badRequest, .notYourself)
        }
    }

    @Test("sending: 201 with the message; a retried clientMessageId, even at once, gives the one message", .tags(.engine), arguments: TestEngine.all)
    func send_isIdempotent(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.person("ann")
            let bob = try await app.v1.person("bob")
            let chat = try await app.v1.openChat(ann, with: bob)
            let v1 = app.v1

            // MUT
            let first = try await app.v1.send("Привет\r\nмир", in: chat.id, by: ann, clientID: "msg-1")
            let retry = try await app.v1.send("Привет\r\nмир", in: chat.id, by: ann, clientID: "msg-1")
            let racing = try await Crowd.with(port: try #require(app.client.port), connections: 6) { crowd in
                try await withThrowingTaskGroup(of: UUID.self) { group in
                    let body = String(buffer: try V1Client.encode(SendMessage(text: "race", clientMessageId: "msg-2")))
                    for _ in 0..<6 {
                        group.addTask {
                            let answer = try await crowd.post(v1.path(M.send, chat.id), body: body, token: ann.token)
                            #expect(answer.status == 201, "\(answer.body)")
                            return try answer.decoded(as: Message.self).id
                        }
                    }
                    return try await group.reduce(into: Set<UUID>()) { $0.insert($1) }
                }
            }

            // validate
            #expect(first.text == "Привет\nмир", "CRLF becomes LF")
            #expect(first.clientMessageId == "msg-1" && first.authorId == ann.id && first.chatId == chat.id && !first.deleted)
            #expect(retry == first)
            #expect(racing.count == 1)
            let history = try await app.v1.history(chat.id, for: bob)
            #expect(history.items.map(\.text) == ["Привет\nмир", "race"])
            #expect(history.items.allSatisfy { $0.clientMessageId == nil }, "the client id is the author's own")
            let other = try await app.v1.openChat(ann, with: try await app.v1.person("cat"))
            let reused = try await app.v1.post(app.v1.path(M.send, other.id), SendMessage(text: "x", clientMessageId: "msg-1"), token: ann.token)
            try expectProblem(reused, .conflict, .clientMessageIdReused)
        }
    }

    /// `gatehouse_send_batches_total` of `way` in /metrics. The counters are the process's (tests in parallel add to them):
    /// a test expects each way to grow by at least what it does, which no other test can make up for when a way is never taken.
    static func batches(_ way: String) -> Int {
        let line = GatehouseMetrics.registry.emitToString().split(separator: "\n")
            .first { $0.hasPrefix(#"gatehouse_send_batches_total{way="\#(way)"}"#) }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
    }

    /// `gatehouse_send_batches_lingered_total` in /metrics (the process's: tests in parallel add to it).
    static func lingered() -> Int {
        let line = GatehouseMetrics.registry.emitToString().split(separator: "\n").first { $0.hasPrefix("gatehouse_send_batches_lingered_total ") }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
    }

    @Test("the send writer lingers as configured: with a linger, a steady stream of sends is written partly after waits, each counted in /metrics, every message once; with 0 the writer never waits", arguments: TestEngine.once)
    func sendLinger_reachesTheWriter(engine: TestEngine) async throws {
        for linger in [Duration.milliseconds(100), .zero] {
            try await withApp(engine, configure: { $0.messenger.sendLinger = linger }) { app in
                // setup: four people writing to Bob, each in their own chat
                let bob = try await app.v1.person("bob")
                var chats: [(Someone, UUID)] = []
                for name in ["ann", "cat", "dan", "eve"] {
                    let someone = try await app.v1.person(name)
                    chats.append((someone, try await app.v1.openChat(someone, with: bob).id))
                }
                let batcher = app.services.messenger.messages.batcher
                let before = (lingers: batcher.lingers, metric: Self.lingered())

                // MUT: ten sends each, one after another, the four at once (a steady stream: the pace's average comes down)
                let v1 = app.v1
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (someone, chat) in chats {
                        group.addTask { for i in 0..<10 { try await v1.send("\(someone.id) \(i)", in: chat, by: someone) } }
                    }
                    try await group.waitForAll()
                }
                let lingers = batcher.lingers - before.lingers
                let metric = Self.lingered() - before.metric

                // validate
                if linger > .zero {
                    #expect(lingers > 0, "a linger of 100 ms: some batches waited")
                    #expect(metric >= lingers, "each wait counted in /metrics: \(metric) for \(lingers)")
                } else {
                    #expect(lingers == 0, "a linger of 0: no batch waited")
                }
                for (someone, chat) in chats {
                    let texts = try await app.v1.history(chat, for: bob).items.map(\.text)
                    #expect(texts == (0..<10).map { "\(someone.id) \($0)" }, "each message once, in order")
                }
            }
        }
    }

    @Test("a chat's last message never goes back to an older one: the activity of an older message written after a newer one's (the statement every send and payment uses) leaves the newer in the chat list, and a newer send still moves it", .tags(.engine), arguments: TestEngine.all)
    func chatActivity_neverBackwards(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup: two messages, the second the newer
            let (ann, bob) = (try await app.v1.person("ann"), try await app.v1.person("bob"))
            let chat = try await app.v1.openChat(ann, with: bob)
            let older = try await app.v1.send("older", in: chat.id, by: ann)
            let newer = try await app.v1.send("newer", in: chat.id, by: bob)

            // MUT: the older message's activity written last (what a send held up while the next went through does)
            try await app.services.database.sql.raw(MessengerStore.activity([chat.id: older.id], postgres: app.services.database.isPostgres)).run()
            let kept = try await app.v1.chats(of: ann).items.first { $0.id == chat.id }?.lastMessage?.id
            let latest = try await app.v1.send("latest", in: chat.id, by: ann)
            let moved = try await app.v1.chats(of: bob).items.first { $0.id == chat.id }?.lastMessage?.id

            // validate
            #expect(kept == newer.id)
            #expect(moved == latest.id)
        }
    }

    @Test("PostgreSQL: a plain send is one statement (counted in /metrics by way), to someone with a phone too: the statement queues the push, and the push lane composes it into the outbox; a retry of it takes the general way again and answers the first; a chat's first message and a reply take the general way", .tags(.engine))
    func plainSend_takesOneStatement_retryGoesAgain() async throws {
        guard TestEngine.all.contains(.postgres) else { return }
        try await withApp(.postgres) { app in
            // setup
            let (ann, bob) = (try await app.v1.person("ann"), try await app.v1.person("bob"))
            let chat = try await app.v1.openChat(ann, with: bob)
            let before = (one: Self.batches("one_statement"), again: Self.batches("again"), general: Self.batches("general"))

            // MUT: a chat's first message (it shows the chat to the other member: the general way), a plain send, its
            // retry, a reply, and a plain send once Bob has a phone
            _ = try await app.v1.send("hi there", in: chat.id, by: bob)
            let first = try await app.v1.send("hello", in: chat.id, by: ann, clientID: "c-1")
            let afterFirst = Self.batches("one_statement")
            let retry = try await app.v1.send("hello", in: chat.id, by: ann, clientID: "c-1")
            let afterRetry = Self.batches("again")
            let reply = try await app.v1.send("hi", in: chat.id, by: bob, replyTo: first.id)
            _ = try await app.v1.post(V1.Accounts.registerDevice.path, DeviceRegistration(platform: .fcm, token: "android-bob"), token: bob.token)
            let beforePhone = Self.batches("one_statement")
            _ = try await app.v1.send("you have a phone now", in: chat.id, by: ann, clientID: "c-2")
            let afterPhone = Self.batches("one_statement")
            let queued = try await app.services.database.sql.raw("SELECT account_id, kind, data FROM push_queue").all()
            await app.services.deliverer.deliverDue(kind: .push)
            let pushes = try await app.services.database.sql.raw("SELECT body FROM outbox_messages WHERE kind = 'push'").all()
                .map { try $0.decode(column: "body", as: String.self) }
            let left = try await app.services.database.sql.raw("SELECT count(*) AS n FROM push_queue").first(decodingColumn: "n", as: Int.self)

            // validate
            #expect(afterFirst >= before.one + 1, "the plain send took one statement: \(before.one) → \(afterFirst)")
            #expect(afterRetry >= before.again + 1, "the retry met its client id and went again: \(before.again) → \(afterRetry)")
            #expect(Self.batches("general") >= before.general + 2, "the chat's first message and the reply took the general way (the retry's second try counts as again)")
            #expect(afterPhone >= beforePhone + 1, "a send to someone with a phone is one statement too")
            // The background deliverer may have composed it already; else the statement's row waits in the queue.
            let queuedFor = try queued.first?.decode(column: "account_id", as: UUID.self)
            #expect(queued.count <= 1 && (queuedFor == nil || queuedFor == bob.id), "one push, for Bob")
            #expect(pushes.count == 1 && pushes[0].contains("you have a phone now"), "composed into the outbox once: \(pushes)")
            #expect(left == 0, "taken off the queue")
            #expect(retry == first, "the retry answers the first message")
            #expect(reply.replyTo?.messageId == first.id)
            let history = try await app.v1.history(chat.id, for: bob)
            #expect(history.items.map(\.text) == ["hi there", "hello", "hi", "you have a phone now"], "one message per send, the retry none")
        }
    }

    @Test("PostgreSQL: a plain send's context is remembered and the next plain send reads none, but the statement that writes it checks it: a phone registered meanwhile gets its push, friends-only privacy and a block refuse at once, a chat the other deleted is shown to them again; each miss forgets the pair and the next send reads; with 0 remembered every send reads", .tags(.engine))
    func rememberedSendContext_isCheckedByTheStatement() async throws {
        guard TestEngine.all.contains(.postgres) else { return }
        try await withApp(.postgres) { app in
            // setup: a chat both see (Bob's first message showed it to Ann), and Ann's sends remembered
            let (ann, bob) = (try await app.v1.person("ann"), try await app.v1.person("bob"))
            let chat = try await app.v1.openChat(ann, with: bob)
            _ = try await app.v1.send("hi", in: chat.id, by: bob)
            let writer = app.services.messenger.messages.writer
            let pair = SendPair(chat: chat.id, author: ann.id)
            let v1 = app.v1
            /// Two sends by Ann: the first reads (its pair was forgotten, or never known) and is remembered, the second uses it.
            @Sendable func sendTwice(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> MessageWriter.Remembered? {
                #expect(writer.remembered.value(pair) == nil, "forgotten before \(text)", sourceLocation: sourceLocation)
                _ = try await v1.send(text + " (read)", in: chat.id, by: ann)
                let remembered = writer.remembered.value(pair)
                let counted = writer.rememberedBatches.withLockedValue { $0 }
                _ = try await v1.send(text + " (remembered)", in: chat.id, by: ann)
                #expect(writer.rememberedBatches.withLockedValue { $0 } == counted + 1, "the second send used what the first read", sourceLocation: sourceLocation)
                return remembered
            }
            let send = { (text: String) in try await v1.post(v1.path(M.send, chat.id), SendMessage(text: text, clientMessageId: UUID().uuidString), token: ann.token) }

            // MUT 1: Bob registers a phone after Ann's context (no device) was remembered
            let first = try await sendTwice("one")
            _ = try await app.v1.post(V1.Accounts.registerDevice.path, DeviceRegistration(platform: .fcm, token: "android-bob"), token: bob.token)
            let again = Self.batches("again")
            let toPhone = try await send("to the phone")
            let afterPhone = (again: Self.batches("again"), remembered: writer.remembered.value(pair))
            await app.services.deliverer.deliverDue(kind: .push)
            let pushes = try await app.services.database.sql.raw("SELECT body FROM outbox_messages WHERE kind = 'push'").all()
                .map { try $0.decode(column: "body", as: String.self) }
            let withPhone = try await sendTwice("two")

            // MUT 2: friends-only privacy, then a block, each after Ann's context was remembered
            _ = try await app.v1.patch(M.updatePrivacy.path, json: #"{"whoCanMessageMe":"friends"}"#, token: bob.token)
            let friendsOnly = try await send("to a shy person")
            _ = try await app.v1.patch(M.updatePrivacy.path, json: #"{"whoCanMessageMe":"everyone"}"#, token: bob.token)
            _ = try await sendTwice("three")
            let block = V1.filling(M.block.path, ["personId": ann.id.uuidString.lowercased()])
            _ = try await app.v1.put(block, body: [], contentType: nil, token: bob.token)
            let blocked = try await send("to someone who blocked me")
            _ = try await app.v1.delete(block, token: bob.token)
            _ = try await sendTwice("four")

            // MUT 3: Bob deletes the chat for himself; Ann's next send shows it to him again
            #expect(try await app.v1.delete(app.v1.path(M.deleteChat, chat.id), token: bob.token).status == .noContent)
            let back = try await send("back")
            let bobsChats = try await app.v1.chats(of: bob).items

            // validate
            #expect(first?.other == bob.id && first?.otherHasDevices == false && first?.audience == "everyone" && first?.friendship == nil)
            #expect(toPhone.status == .created && afterPhone.again >= again + 1, "the remembered context missed and the batch went the general way")
            #expect(pushes.count == 1 && pushes[0].contains("to the phone"), "the push for Bob's new phone was written: \(pushes)")
            #expect(withPhone?.otherHasDevices == true, "read again, with the phone")
            try expectProblem(friendsOnly, .forbidden, .messagingNotAllowed)
            try expectProblem(blocked, .forbidden, .messagingNotAllowed)
            #expect(back.status == .created && bobsChats.map(\.id) == [chat.id] && bobsChats.first?.lastMessage?.text == "back")
            #expect(writer.remembered.value(pair) == nil, "the miss forgot the pair")
            let texts = try await app.v1.history(chat.id, for: ann).items.map(\.text)
            #expect(texts.count == 11 && !texts.contains { $0.hasPrefix("to a shy") || $0.hasPrefix("to someone") }, "\(texts)")
        }
        try await withApp(.postgres, configure: { $0.messenger.sendContexts = 0 }) { app in
            let (ann, bob) = (try await app.v1.person("ann"), try await app.v1.person("bob"))
            let chat = try await app.v1.openChat(ann, with: bob)
            _ = try await app.v1.send("hi", in: chat.id, by: bob)
            for text in ["one", "two", "three"] { _ = try await app.v1.send(text, in: chat.id, by: ann) }
            #expect(app.services.messenger.messages.writer.remembered.count == 0, "nothing remembered")
            #expect(try await app.v1.history(chat.id, for: bob).items.map(\.text) == ["hi", "one", "two", "three"])
        }
    }

    @Test("PostgreSQL: a send written in one statement announces each member's event as the event log keeps it, numbered, escapes and all, to this instance and another", .tags(.engine))
    func oneStatementSend_announcesWhatItWrote() async throws {
        guard TestEngine.all.contains(.postgres) else { return }
        try await withApp(.postgres) { app in
            try await withSecondInstance(of: app) { second in
                // setup: a chat with a message in it (the next send is plain), and both instances listening
                let (ann, bob) = (try await app.v1.person("ann"), try await app.v1.person("bob"))
                let chat = try await app.v1.openChat(ann, with: bob)
                _ = try await app.v1.send("first", in: chat.id, by: bob)
                #expect(await eventually { app.services.bus.isConnected && second.services.bus.isConnected })
                let oneStatement = Self.batches("one_statement")
                let here = Received(), there = Received()
                let s1 = app.services.bus.subscribe(topic: EventLog.topic, account: nil) { here.add($0) }
                let s2 = second.services.bus.subscribe(topic: EventLog.topic, account: nil) { there.add($0) }

                // MUT: text that tests the announcement's escapes, and a text long enough that its frame is read from the table
                let tricky = "\"q\" \\ \n Привет, 💸 {\"seq\":1} \u{200B}/"
                _ = try await app.v1.send(tricky, in: chat.id, by: ann, clientID: "tricky")
                _ = try await app.v1.send(String(repeating: "💸", count: 2_000), in: chat.id, by: ann)

                // validate: both sends took the one statement; four announcements on each instance, each the stored event's number and (when it fits) frame
                // (the first message's may arrive after the subscription on a busy machine: numbers above 1 are these sends')
                @Sendable func sent(_ received: Received) -> [BusEvent] {
                    received.all.filter { (Int64($0.body.prefix { $0 != "\n" }) ?? 0) > 1 }
                }
                #expect(Self.batches("one_statement") >= oneStatement + 2, "both sends were written by the one statement")
                #expect(await eventually { sent(here).count == 4 && sent(there).count == 4 })
                let log = app.services.realtime.log
                var expected: [BusEvent] = []
                for account in [ann.id, bob.id] {
                    for event in try await log.events(of: account, after: 0, limit: 10).suffix(2) {
                        let body = event.frame.utf8.count < EventLimits.frameInNotification ? "\(event.seq)\n\(event.frame)" : "\(event.seq)"
                        expected.append(BusEvent(topic: EventLog.topic, account: account, body: body))
                    }
                }
                #expect(expected.count == 4 && expected.filter { !$0.body.contains("\n") }.count == 2, "two frames too large to ride along")
                @Sendable func ordered(_ events: [BusEvent]) -> [BusEvent] { events.sorted { ($0.body, $0.account!.uuidString) < ($1.body, $1.account!.uuidString) } }
                #expect(ordered(sent(here)) == ordered(expected))
                #expect(ordered(sent(there)) == ordered(expected))
                let anns = try await log.events(of: ann.id, after: 0, limit: 10).map(\.seq)
                #expect(anns == Array(1...Int64(anns.count)), "gap-free: \(anns)")
                withExtendedLifetime((s1, s2)) {}
            }
        }
    }

    @Test("a send's context says whether the other member has a push device (a send to someone without one records no push, so the devices are not read), for each side of a chat", .tags(.engine), arguments: TestEngine.all)
    func sendingContext_saysWhetherTheOtherHasADevice(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let (ann, bob) = (try await app.v1.person("ann"), try await app.v1.person("bob"))
            let chat = try await app.v1.openChat(ann, with: bob)
            let pairs = [SendPair(chat: chat.id, author: bob.id), SendPair(chat: chat.id, author: ann.id)]
            let messenger = app.services.messenger.payments  // any MessengerConcept reads the same contexts

            // MUT: before and after Ann registers a phone
            let before = try await messenger.sendingContexts(pairs, on: app.services.database.db)
            _ = try await app.v1.post(V1.Accounts.registerDevice.path, DeviceRegistration(platform: .fcm, token: "android-ann"), token: ann.token)
            let after = try await messenger.sendingContexts(pairs, on: app.services.database.db)

            // validate: Bob writing to Ann learns of her phone; Ann writing to Bob finds none
            #expect(before[pairs[0]]?.otherHasDevices == false && before[pairs[1]]?.otherHasDevices == false)
            #expect(after[pairs[0]]?.otherHasDevices == true, "Ann has a device now")
            #expect(after[pairs[1]]?.otherHasDevices == false, "Bob still has none")
        }
    }

    @Test("many sends at once (written in shared transactions): each gets its own answer, refusals stay alone, events stay gap-free", .tags(.engine), arguments: TestEngine.all)
    func concurrentSends_areIsolatedAndOrdered(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.messenger.messagesPerMinute = 25 }) { app in
            // setup: four senders to one reader; a stranger; a chat whose other side takes friends only
            // (its writer sends nothing else, so that the limit does not answer first).
            let reader = try await app.v1.person("reader")
            var senders: [Someone] = []
            var chats: [UUID] = []
            for index in 0..<4 {
                let sender = try await app.v1.person("sender\(index)")
                senders.append(sender)
                chats.append(try await app.v1.openChat(sender, with: reader).id)
            }
            let stranger = try await app.v1.person("stranger")
            let shy = try await app.v1.person("shyone")
            let talker = try await app.v1.person("talker")
            let shyChat = try await app.v1.openChat(talker, with: shy)
            _ = try await app.v1.patch(M.updatePrivacy.path, json: #"{"whoCanMessageMe":"friends"}"#, token: shy.token)
            let v1 = app.v1
            let (allSenders, allChats) = (senders, chats)
            @Sendable func body(_ text: String, _ clientID: String) throws -> String {
                String(buffer: try V1Client.encode(SendMessage(text: text, clientMessageId: clientID)))
            }

            // MUT: 4 × 30 sends (over the limit of 25 each), a stranger writing into a chat not theirs,
            // and a send to the shy person, all at once, each on its own connection; every send retried once.
            let answers = try await Crowd.with(port: try #require(app.client.port), connections: 122) { crowd in
                try await withThrowingTaskGroup(of: (String, Int, String).self) { group in
                    for (index, sender) in allSenders.enumerated() {
                        for n in 0..<30 {
                            group.addTask {
                                let json = try body("s\(index) #\(n)", "s\(index)-\(n)")
                                let path = v1.path(M.send, allChats[index])
                                let first = try await crowd.post(path, body: json, token: sender.token)
                                let again = try await crowd.post(path, body: json, token: sender.token)
                                #expect(again.status == first.status || first.status == 429, "a retry answers like the first: \(first.status) then \(again.status)")
                                return ("s\(index)", first.status, first.body)
                            }
                        }
                    }
                    group.addTask {
                        let r = try await crowd.post(v1.path(M.send, allChats[0]), body: try body("x", "x"), token: stranger.token)
                        return ("stranger", r.status, r.body)
                    }
                    group.addTask {
                        let r = try await crowd.post(v1.path(M.send, shyChat.id), body: try body("hi", "hi"), token: talker.token)
                        return ("shy", r.status, r.body)
                    }
                    return try await group.reduce(into: [(String, Int, String)]()) { $0.append($1) }
                }
            }

            // validate
            #expect(answers.filter { $0.0 == "stranger" }.map(\.1) == [404])
            #expect(answers.filter { $0.0 == "shy" }.map(\.1) == [403])
            for index in 0..<4 {
                let mine = answers.filter { $0.0 == "s\(index)" }
                #expect(mine.filter { $0.1 == 201 }.count == 25, "sender \(index): the limit lets 25 through: \(mine.map(\.1))")
                #expect(mine.filter { $0.1 == 429 }.count == 5)
                let stored = try await app.v1.history(chats[index], for: reader).items
                #expect(stored.count == 25 && Set(stored.map(\.text)).count == 25, "each accepted message once")
            }
            let events = try await app.services.realtime.log.events(of: reader.id, after: 0, limit: 1_000)
            #expect(events.map(\.seq) == Array(1...Int64(events.count)), "the reader's events are gap-free")
            #expect(events.filter { $0.kind == "message.created" }.count == 100, "one event per message")
        }
    }

    @Test("bad messages: empty, too long, control characters, bad client ids, too many attachments", .tags(.engine), arguments: TestEngine.all)
    func send_rejectsBadInput(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.messenger.maxTextLength = 10; $0.messenger.attachmentsPerMessage = 1 }) { app in
            // setup
            let ann = try await app.v1.person("ann")
            let bob = try await app.v1.person("bob")
            let chat = try await app.v1.openChat(ann, with: bob)
            let path = app.v1.path(M.send, chat.id)

            // MUT + validate
            try expectProblem(try await app.v1.post(path, json: #"{"text":"  \n ","clientMessageId":"a"}"#, token: ann.token), .badRequest, .emptyMessage)
            try expectProblem(try await app.v1.post(path, json: #"{"text":"12345678901","clientMessageId":"a"}"#, token: ann.token), .badRequest, .fieldTooLong)
            try expectProblem(try await app.v1.post(path, json: #"{"text":"bell\u0007","clientMessageId":"a"}"#, token: ann.token), .badRequest, .invalidText)
            try expectProblem(try await app.v1.post(path, json: #"{"text":"hi","clientMessageId":""}"#, token: ann.token), .badRequest, .invalidParameter)
            try expectProblem(try await app.v1.post(path, json: #"{"text":"hi"}"#, token: ann.token), .badRequest, .missingParameter)
            let two = [UUID(), UUID()].map { "\"\($0)\"" }.joined(separator: ",")
            try expectProblem(try await app.v1.post(path, json: #"{"text":"hi","clientMessageId":"a","attachmentIds":[\#(two)]}"#, token: ann.token), .badRequest, .tooManyAttachments)
            try expectProblem(try await app.v1.post(path, json: #"{"text":"hi","clientMessageId":"a","attachmentIds":["\#(UUID())"]}"#, token: ann.token), .notFound, .attachmentNotFound)
            // "é" as e + combining accent is one character after NFC: 10 fit.
            let decomposed = String(repeating: "e\u{301}", count: 10)
            let stored = try await app.v1.send(decomposed, in: chat.id, by: ann)
            #expect(stored.text == String(repeating: "\u{E9}", count: 10))
            // Plain ASCII (taken without normalizing): at the limit it fits, its spaces and line feeds kept as sent.
            #expect(try await app.v1.send("1234567890", in: chat.id, by: ann).text == "1234567890")
            #expect(try await app.v1.send(" hi \n yo ", in: chat.id, by: ann).text == " hi \n yo ")
            try expectProblem(try await app.v1.post(path, json: #"{"text":"hi\r\nyo\tx","clientMessageId":"t"}"#, token: ann.token), .badRequest, .invalidText)
        }
    }

    @Test("every id of another's chat, message, request or attachment is 404 to an outsider", .tags(.engine), arguments: TestEngine.all)
    func outsiders_get404(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.person("ann")
            let bob = try await app.v1.person("bob")
            let eve = try await app.v1.person("eve")
            let chat = try await app.v1.openChat(ann, with: bob)
            let file = try await app.v1.upload(SampleFiles.png, type: "image/png", by: ann)
            let message = try await app.v1.send("secret", in: chat.id, by: ann, attachments: [file.id])
            let eveChat = try await app.v1.openChat(eve, with: ann)

            // MUT + validate: each operation on each id.
            let c = chat.id, m = message.id
            try expectProblem(try await app.v1.get(app.v1.path(M.chat, c), token: eve.token), .notFound, .chatNotFound)
            try expectProblem(try await app.v1.get(app.v1.path(M.messages, c), token: eve.token), .notFound, .chatNotFound)
            try expectProblem(try await app.v1.get(app.v1.path(M.chatAttachments, c), token: eve.token), .notFound, .chatNotFound)
            try expectProblem(try await app.v1.post(app.v1.path(M.send, c), SendMessage(text: "x", clientMessageId: "e"), token: eve.token), .notFound, .chatNotFound)
            try expectProblem(try await app.v1.post(app.v1.path(M.markRead, c), ReadMark(upTo: m), token: eve.token), .notFound, .chatNotFound)
            try expectProblem(try await app.v1.patch(app.v1.path(M.updateChat, c), json: #"{"mutedUntil":null}"#, token: eve.token), .notFound, .chatNotFound)
            try expectProblem(try await app.v1.delete(app.v1.path(M.deleteChat, c), token: eve.token), .notFound, .chatNotFound)
            try expectProblem(try await app.v1.patch(app.v1.path(M.edit, m), EditMessage(text: "x"), token: eve.token), .notFound, .messageNotFound)
            try expectProblem(try await app.v1.delete(app.v1.path(M.deleteMessage, m) + "?for=me", token: eve.token), .notFound, .messageNotFound)
            try expectProblem(try await app.v1.delete(app.v1.path(M.deleteMessage, m) + "?for=everyone", token: eve.token), .notFound, .messageNotFound)
            try expectProblem(try await app.v1.post(app.v1.path(M.forward, m), ForwardRequest(chatIds: [eveChat.id]), token: eve.token), .notFound, .messageNotFound)
            try expectProblem(try await app.v1.get(app.v1.path(M.download, file.id), token: eve.token), .notFound, .attachmentNotFound)
            // Ann cannot forward into a chat that is not hers, nor reply with a message from another chat.
            try expectProblem(try await app.v1.post(app.v1.path(M.forward, m), ForwardRequest(chatIds: [UUID()]), token: ann.token), .notFound, .chatNotFound)
            let elsewhere = try await app.v1.send("other chat", in: eveChat.id, by: eve)
            let crossReply = try await app.v1.post(app.v1.path(M.send, c), SendMessage(text: "re", replyTo: elsewhere.id, clientMessageId: "r"), token: ann.token)
            #expect(try expectProblem(crossReply, .notFound, .messageNotFound).field == "replyTo")
            // Nor mark read with another chat's message.
            try expectProblem(try await app.v1.post(app.v1.path(M.markRead, c), ReadMark(upTo: elsewhere.id), token: ann.token), .notFound, .messageNotFound)
            // Ann's unsent upload is hers alone; Bob sees it once it is on a message to him.
            let unsent = try await app.v1.upload(SampleFiles.pdf, type: "application/pdf", by: ann)
            try expectProblem(try await app.v1.get(app.v1.path(M.download, unsent.id), token: bob.token), .notFound, .attachmentNotFound)
            #expect(try await app.v1.get(app.v1.path(M.download, file.id), token: bob.token).status == .ok)
        }
    }

    @Test("history pages both ways without gaps or duplicates while messages keep arriving", .tags(.engine), arguments: TestEngine.all)
    func history_pagesWithoutGaps(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.person("ann")
            let bob = try await app.v1.person("bob")
            let chat = try await app.v1.openChat(ann, with: bob)
            var sent: [UUID] = []
            for index in 0..<12 { sent.append(try await app.v1.send("m\(index)", in: chat.id, by: index % 2 == 0 ? ann : bob).id) }

            // MUT: backwards in pages of 5, a new message arriving after each page.
            var backwards: [UUID] = []
            var page = try await app.v1.history(chat.id, for: ann, query: "?limit=5")
            #expect(!page.hasMoreAfter)
            var arrived: [UUID] = []
            while true {
                backwards = page.items.map(\.id) + backwards
                arrived.append(try await app.v1.send("late", in: chat.id, by: bob).id)
                guard page.hasMoreBefore, let first = page.items.first else { break }
                page = try await app.v1.history(chat.id, for: ann, query: "?limit=5&before=\(first.id)")
                #expect(page.hasMoreAfter)
            }
            // Then forwards from the newest message seen, in pages of 2.
            var forwards: [UUID] = []
            var anchor = try #require(backwards.last)
            while true {
                let next = try await app.v1.history(chat.id, for: ann, query: "?limit=2&after=\(anchor)")
                forwards += next.items.map(\.id)
                #expect(next.hasMoreBefore)
                guard next.hasMoreAfter, let last = next.items.last else { break }
                anchor = last.id
            }

            // validate
            #expect(backwards == sent, "every message once, in order")
            #expect(forwards == arrived, "everything that arrived meanwhile, once, in order")
            let between = try await app.v1.history(chat.id, for: ann, query: "?after=\(sent[2])&before=\(sent[6])")
            #expect(between.items.map(\.id) == Array(sent[3...5]) && between.hasMoreBefore && between.hasMoreAfter)
            try expectProblem(try await app.v1.get(app.v1.path(M.messages, chat.id) + "?before=nope", token: ann.token), .badRequest, .invalidParameter)
            try expectProblem(try await app.v1.get(app.v1.path(M.messages, chat.id) + "?limit=0", token: ann.token), .badRequest, .invalidParameter)
        }
    }

    @Test("edit: the author, within the window, not after deletion; both sides see the new text", .tags(.engine), arguments: TestEngine.all)
    func edit_rules(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.messenger.editWindow = 600 }) { app in
            // setup
            let ann = try await app.v1.person("ann")
            let bob = try await app.v1.person("bob")
            let chat = try await app.v1.openChat(ann, with: bob)
            let message = try await app.v1.send("helo", in: chat.id, by: ann)

            // MUT
            app.clock.advance(by: 60)
            let edited = try await app.v1.patch(app.v1.path(M.edit, message.id), EditMessage(text: "hello"), token: ann.token)

            // validate
            #expect(edited.status == .ok)
            let after = try edited.decoded(as: Message.self)
            #expect(after.text == "hello" && after.editedAt == app.clock.now && after.id == message.id)
            #expect(try await app.v1.history(chat.id, for: bob).items.map(\.text) == ["hello"])
            try expectProblem(try await app.v1.patch(app.v1.path(M.edit, message.id), EditMessage(text: "mine"), token: bob.token), .forbidden, .notMessageAuthor)
            app.clock.advance(by: app.configuration.messenger.editWindow)
            try expectProblem(try await app.v1.patch(app.v1.path(M.edit, message.id), EditMessage(text: "late"), token: ann.token), .conflict, .editWindowClosed)
            let fresh = try await app.v1.send("oops", in: chat.id, by: ann)
            #expect(try await app.v1.delete(app.v1.path(M.deleteMessage, fresh.id) + "?for=everyone", token: ann.token).status == .noContent)
            try expectProblem(try await app.v1.patch(app.v1.path(M.edit, fresh.id), EditMessage(text: "x"), token: ann.token), .conflict, .messageDeleted)
        }
    }

    @Test("delete for me hides it from me only; for everyone leaves a tombstone both see; only the author deletes for everyone", .tags(.engine), arguments: TestEngine.all)
    func delete_forMeAndEveryone(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.person("ann")
            let bob = try await app.v1.person("bob")
            let chat = try await app.v1.openChat(ann, with: bob)
            let file = try await app.v1.upload(SampleFiles.png, type: "image/png", by: ann)
            let first = try await app.v1.send("first", in: chat.id, by: ann)
            let second = try await app.v1.send("second", in: chat.id, by: ann, attachments: [file.id])

            // MUT
            let forMe = try await app.v1.delete(app.v1.path(M.deleteMessage, first.id) + "?for=me", token: bob.token)
            let notMine = try await app.v1.delete(app.v1.path(M.deleteMessage, second.id) + "?for=everyone", token: bob.token)
            let forAll = try await app.v1.delete(app.v1.path(M.deleteMessage, second.id) + "?for=everyone", token: ann.token)
            let again = try await app.v1.delete(app.v1.path(M.deleteMessage, second.id) + "?for=everyone", token: ann.token)

            // validate
            #expect(forMe.status == .noContent && forAll.status == .noContent && again.status == .noContent)
            try expectProblem(notMine, .forbidden, .notMessageAuthor)
            let bobSees = try await app.v1.history(chat.id, for: bob).items
            let annSees = try await app.v1.history(chat.id, for: ann).items
            #expect(bobSees.map(\.id) == [second.id], "Bob deleted the first for himself")
            #expect(annSees.map(\.id) == [first.id, second.id], "Ann keeps it")
            for tombstone in [bobSees[0], annSees[1]] {
                #expect(tombstone.deleted && tombstone.text.isEmpty && tombstone.attachments.isEmpty)
            }
            try expectProblem(try await app.v1.get(app.v1.path(M.download, file.id), token: bob.token), .notFound, .attachmentNotFound)
            try expectProblem(try await app.v1.delete(app.v1.path(M.deleteMessage, first.id) + "?for=me", token: bob.token), .notFound, .messageNotFound)
            try expectProblem(try await app.v1.delete(app.v1.path(M.deleteMessage, first.id) + "?for=all", token: ann.token), .badRequest, .invalidParameter)
            try expectProblem(try await app.v1.delete(app.v1.path(M.deleteMessage, first.id), token: ann.token), .badRequest, .invalidParameter)
        }
    }

    @Test("a reply quotes author and text; deleting the original leaves a stub; replying to a deleted message still sends", .tags(.engine), arguments: TestEngine.all)
    func reply_toDeleted(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.person("ann")
            let bob = try await app.v1.person("bob")
            let chat = try await app.v1.openChat(ann, with: bob)
            let long = String(repeating: "я", count: 250)
            let original = try await app.v1.send(long, in: chat.id, by: ann)

            // MUT
            let reply = try await app.v1.send("re", in: chat.id, by: bob, replyTo: original.id)
            #expect(try await app.v1.delete(app.v1.path(M.deleteMessage, original.id) + "?for=everyone", token: ann.token).status == .noContent)
            let late = try await app.v1.send("re2", in: chat.id, by: bob, replyTo: original.id)

            // validate
            #expect(reply.replyTo == ReplyPreview(messageId: original.id, authorId: ann.id, excerpt: String(repeating: "я", count: 200), deleted: false))
            let stub = ReplyPreview(messageId: original.id, authorId: ann.id, excerpt: nil, deleted: true)
            #expect(late.replyTo == stub)
            let history = try await app.v1.history(chat.id, for: bob).items
            #expect(history.map(\.replyTo) == [nil, stub, stub], "the earlier reply's excerpt is gone with the original")
        }
    }

    @Test("forward into several chats: copies keep the first author and time, carry the attachments; a retry makes no more; a chat not mine refuses all", .tags(.engine), arguments: TestEngine.all)
    func forward_intoSeveralChats(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.person("ann")
            let bob = try await app.v1.person("bob")
            let cat = try await app.v1.person("cat")
            let dan = try await app.v1.person("dan")
            let withBob = try await app.v1.openChat(ann, with: bob)
            let withCat = try await app.v1.openChat(ann, with: cat)
            let withDan = try await app.v1.openChat(ann, with: dan)
            let file = try await app.v1.upload(SampleFiles.pdf, type: "application/pdf", name: "plan.pdf", by: bob)
            let original = try await app.v1.send("news", in: withBob.id, by: bob, attachments: [file.id])

            // MUT
            app.clock.advance(by: 30)
            let request = ForwardRequest(chatIds: [withCat.id, withDan.id], clientMessageId: "fw-1")
            let response = try await app.v1.post(app.v1.path(M.forward, original.id), request, token: ann.token)
            let retried = try await app.v1.post(app.v1.path(M.forward, original.id), request, token: ann.token)

            // validate
            #expect(response.status == .created, "\(response.text)")
            let copies = try response.decoded(as: ForwardResult.self).messages
            #expect(try retried.decoded(as: ForwardResult.self).messages.map(\.id) == copies.map(\.id))
            #expect(copies.map(\.chatId) == [withCat.id, withDan.id])
            for copy in copies {
                #expect(copy.authorId == ann.id && copy.text == "news")
                #expect(copy.forwardedFrom == ForwardOrigin(authorId: bob.id, sentAt: original.createdAt))
                #expect(copy.attachments.map(\.id) == [file.id])
            }
            #expect(try await app.v1.get(app.v1.path(M.download, file.id), token: cat.token).status == .ok, "Cat sees the forwarded file")
            // A forward of the forward still names Bob.
            let withBobAgain = try await app.v1.post(app.v1.path(M.forward, copies[0].id), ForwardRequest(chatIds: [withBob.id]), token: cat.token)
            try expectProblem(withBobAgain, .notFound, .chatNotFound)
            let catToAnn = try await app.v1.openChat(cat, with: ann)
            let second = try await app.v1.post(app.v1.path(M.forward, copies[0].id), ForwardRequest(chatIds: [catToAnn.id]), token: cat.token)
            #expect(try second.decoded(as: ForwardResult.self).messages.first?.forwardedFrom?.authorId == bob.id)
            try expectProblem(try await app.v1.post(app.v1.path(M.forward, original.id), ForwardRequest(chatIds: []), token: ann.token), .badRequest, .invalidParameter)
            let tooMany = ForwardRequest(chatIds: (0...app.configuration.messenger.forwardMaxChats).map { _ in UUID() })
            try expectProblem(try await app.v1.post(app.v1.path(M.forward, original.id), tooMany, token: ann.token), .badRequest, .invalidParameter)
            // One chat that is not mine refuses the whole forward, naming `chatIds`: no copy goes to the others.
            let before = try await app.v1.history(withCat.id, for: cat).items.count
            let notMine = try await app.v1.openChat(bob, with: dan)
            let mixed = try await app.v1.post(app.v1.path(M.forward, original.id), ForwardRequest(chatIds: [withCat.id, notMine.id]), token: ann.token)
            #expect(try expectProblem(mixed, .notFound, .chatNotFound).field == "chatIds")
            #expect(try await app.v1.history(withCat.id, for: cat).items.count == before, "the refused forward left no copy in the chat that was mine")
        }
    }

    @Test("chat list: newest activity first, last message, unread flag; reading is monotonic and clears it", .tags(.engine), arguments: TestEngine.all)
    func chatList_unreadAndRead(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let me = try await app.v1.person("myself")
            let ann = try await app.v1.person("ann", first: "Ann", last: "Zed")
            let bob = try await app.v1.person("bob", first: "Bob", last: "Young")
            let withAnn = try await app.v1.openChat(ann, with: me)
            let withBob = try await app.v1.openChat(bob, with: me)
            let a1 = try await app.v1.send("a1", in: withAnn.id, by: ann)
            let b1 = try await app.v1.send("b1", in: withBob.id, by: bob)
            let a2 = try await app.v1.send("a2", in: withAnn.id, by: ann)

            // MUT
            let list = try await app.v1.chats(of: me)

            // validate
            #expect(list.items.map(\.id) == [withAnn.id, withBob.id])
            #expect(list.items[0].lastMessage?.id == a2.id && list.items[0].unreadCount == 2 && list.items[0].unread)
            #expect(list.items[1].lastMessage?.id == b1.id && list.items[1].unreadCount == 1)
            #expect(try await app.v1.chats(of: me, query: "?q=you").items.map(\.id) == [withBob.id], "search by the other's name")
            let paged = try await app.v1.chats(of: me, query: "?limit=1")
            let rest = try await app.v1.chats(of: me, query: "?limit=1&cursor=\(try #require(paged.nextCursor))")
            #expect(paged.items.map(\.id) + rest.items.map(\.id) == [withAnn.id, withBob.id] && rest.nextCursor == nil)

            let read = try await app.v1.post(app.v1.path(M.markRead, withAnn.id), ReadMark(upTo: a2.id), token: me.token)
            #expect(try read.decoded(as: ReadState.self) == ReadState(chatId: withAnn.id, accountId: me.id, lastReadMessageId: a2.id, unreadCount: 0))
            let back = try await app.v1.post(app.v1.path(M.markRead, withAnn.id), ReadMark(upTo: a1.id), token: me.token)
            #expect(try back.decoded(as: ReadState.self).lastReadMessageId == a2.id, "never moves back")
            let annChat = try await app.v1.get(app.v1.path(M.chat, withAnn.id), token: ann.token).decoded(as: Chat.self)
            #expect(annChat.otherLastReadMessageId == a2.id && annChat.unreadCount == 0, "Ann sees it read; her own messages are never unread to her")
            let muted = try await app.v1.patch(app.v1.path(M.updateChat, withBob.id), json: #"{"mutedUntil":"2030-01-01T00:00:00Z"}"#, token: me.token)
            #expect(try muted.decoded(as: Chat.self).mutedUntil == WireDates.parseFlexible("2030-01-01T00:00:00Z"))
        }
    }

    @Test("delete a chat for me: it leaves my list and my history; a new message brings it back with only what is new; the other keeps all", .tags(.engine), arguments: TestEngine.all)
    func deleteChat_forMe(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.person("ann")
            let bob = try await app.v1.person("bob")
            let chat = try await app.v1.openChat(ann, with: bob)
            try await app.v1.send("old 1", in: chat.id, by: ann)
            try await app.v1.send("old 2", in: chat.id, by: bob)

            // MUT
            #expect(try await app.v1.delete(app.v1.path(M.deleteChat, chat.id), token: bob.token).status == .noContent)

            // validate
            #expect(try await app.v1.chats(of: bob).items.isEmpty)
            #expect(try await app.v1.history(chat.id, for: bob).items.isEmpty)
            #expect(try await app.v1.history(chat.id, for: ann).items.count == 2)
            try await app.v1.send("new", in: chat.id, by: ann)
            let back = try await app.v1.chats(of: bob).items
            #expect(back.map(\.id) == [chat.id] && back[0].unreadCount == 1 && back[0].lastMessage?.text == "new")
            #expect(try await app.v1.history(chat.id, for: bob).items.map(\.text) == ["new"])
            #expect(try await app.v1.history(chat.id, for: ann).items.map(\.text) == ["old 1", "old 2", "new"])
        }
    }

    @Test("a chat shows in the other's list only once it has a message", .tags(.engine), arguments: TestEngine.all)
    func emptyChat_isOnlyTheOpeners(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            let ann = try await app.v1.person("ann")
            let bob = try await app.v1.person("bob")
            let chat = try await app.v1.openChat(ann, with: bob)
            #expect(try await app.v1.chats(of: ann).items.map(\.id) == [chat.id])
            #expect(try await app.v1.chats(of: bob).items.isEmpty)
            try await app.v1.send("hi", in: chat.id, by: ann)
            #expect(try await app.v1.chats(of: bob).items.map(\.id) == [chat.id])
        }
    }

    @Test("messages per minute are limited with Retry-After; a retry of a sent message is not counted", .tags(.engine), arguments: TestEngine.all)
    func send_isRateLimited(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.messenger.messagesPerMinute = 2 }) { app in
            let ann = try await app.v1.person("ann")
            let bob = try await app.v1.person("bob")
            let chat = try await app.v1.openChat(ann, with: bob)
            try await app.v1.send("1", in: chat.id, by: ann, clientID: "one")
            try await app.v1.send("2", in: chat.id, by: ann, clientID: "two")
            try await app.v1.send("1", in: chat.id, by: ann, clientID: "one")
            let third = try await app.v1.post(app.v1.path(M.send, chat.id), SendMessage(text: "3", clientMessageId: "three"), token: ann.token)
            try expectProblem(third, .tooManyRequests, .rateLimited)
            #expect(third.headers[.retryAfter] != nil)
        }
    }

    @Test("an edit reaches the other member as a send does: refused once they take messages from friends only and unfriended me; budgeted per minute and per day", .tags(.engine), arguments: TestEngine.all)
    func edit_refusedWhereASendWouldBe_andBudgeted(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.messenger.editsPerMinute = 3; $0.messenger.editsPerDay = 5 }) { app in
            // setup: E and F are friends and chat; F takes messages from friends only, then unfriends E
            let e = try await app.v1.person("eve"), f = try await app.v1.person("fay")
            try await app.v1.befriend(e, f)
            let chat = try await app.v1.openChat(e, with: f)
            let old = try await app.v1.send("hello", in: chat.id, by: e)
            let mine = try await app.v1.send("mine", in: chat.id, by: f)

            // MUT: three edits pass, the fourth is over the budget
            var statuses: [Int] = []
            for n in 0..<4 {
                statuses.append(try await app.v1.patch(app.v1.path(M.edit, mine.id), EditMessage(text: "mine \(n)"), token: f.token).status.code)
            }
            // a minute later two more pass and the day's budget (5) is spent
            app.clock.advance(by: 61)
            for n in 4..<7 {
                statuses.append(try await app.v1.patch(app.v1.path(M.edit, mine.id), EditMessage(text: "mine \(n)"), token: f.token).status.code)
            }
            _ = try await app.v1.patch(M.updatePrivacy.path, json: #"{"whoCanMessageMe":"friends"}"#, token: f.token)
            #expect(try await app.v1.delete(app.v1.path(M.removeFriend, e.id, name: "personId"), token: f.token).status == .noContent)
            let edit = try await app.v1.patch(app.v1.path(M.edit, old.id), EditMessage(text: "click http://evil.example/"), token: e.token)

            // validate
            #expect(statuses == [200, 200, 200, 429, 200, 200, 429], "\(statuses)")
            try expectProblem(edit, .forbidden, .messagingNotAllowed)
            let seen = try await app.v1.history(chat.id, for: f).items.first { $0.id == old.id }
            #expect(seen?.text == "hello" && seen?.editedAt == nil, "F never sees the edit")
        }
    }
}
