import Foundation
import GatehouseAPI
import GatehouseServer
import GatehouseTestSupport
import HTTPTypes
import Testing

/// Who may reach whom (docs/messenger.md, "Privacy"): friends-only privacy and blocks stop
/// messages, edits, friend requests and the wallet's requests and transfers alike.
@Suite("Messenger: blocks and privacy across the apps")
struct BlocksAndPrivacyTests {
    typealias M = V1.Messenger
    typealias W = V1.Wallet

    @Test("a friends-only person gets no money request and no transfer from a stranger, batched or alone; a friend's go through", .tags(.engine), arguments: TestEngine.all, [64, 1])
    func wallet_respectsFriendsOnly(engine: TestEngine, transfersPerCommit: Int) async throws {
        try await withApp(engine, configure: { $0.wallet.transfersPerCommit = transfersPerCommit }) { app in
            // setup: F takes messages from friends only; S is a stranger, E a friend
            let f = try await app.v1.walletHolder("fay", phone: "+79160000011")
            let s = try await app.v1.walletHolder("sam", phone: "+79160000012")
            let e = try await app.v1.walletHolder("eve", phone: "+79160000013")
            try await app.credit("+79160000012", 10_00)
            try await app.credit("+79160000013", 10_00)
            try await app.v1.befriend(f, e)
            _ = try await app.v1.patch(M.updatePrivacy.path, json: #"{"whoCanMessageMe":"friends"}"#, token: f.token)

            // MUT
            let invoice = try await app.v1.post(W.createRequest.path, NewMoneyRequest(from: PartyReference(tag: f.tag), amount: 1, kind: .invoice,
                                                                                      comment: "click http://evil.example/"),
                                                token: s.token, headers: app.v1.idempotencyHeaders(UUID().uuidString))
            let withComment = try await app.v1.pay(1, to: PartyReference(tag: f.tag), by: s, comment: "click http://evil.example/")
            let plain = try await app.v1.pay(1, to: PartyReference(tag: f.tag), by: s)
            let friendly = try await app.v1.pay(1_00, to: PartyReference(tag: f.tag), by: e, comment: "lunch")

            // validate
            for refused in [invoice, withComment, plain] { try expectProblem(refused, .forbidden, .messagingNotAllowed) }
            #expect(friendly.status == .created, "\(friendly.text)")
            let (fay, sam) = (try await app.v1.balance(of: f), try await app.v1.balance(of: s))
            #expect(fay == 1_00 && sam == 10_00)
            #expect(try await app.v1.chats(of: f).items.map(\.person.id) == [e.id], "nothing of the stranger's in her chat list")
        }
    }

    @Test("a blocked person's messages, edits, friend requests, money requests and transfers are refused as friends-only privacy refuses them; unblocking lets them through", .tags(.engine), arguments: TestEngine.all)
    func block_stopsEverything(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.messenger.blocksPerAccount = 1 }) { app in
            // setup: B blocks M after they chatted (and may block one person at a time)
            let b = try await app.v1.walletHolder("bea", phone: "+79160000021")
            let m = try await app.v1.walletHolder("max", phone: "+79160000022")
            try await app.credit("+79160000022", 10_00)
            let chat = try await app.v1.openChat(m, with: b)
            let old = try await app.v1.send("hi", in: chat.id, by: m)
            let path = V1.filling(M.block.path, ["personId": m.id.uuidString.lowercased()])

            // MUT
            let blocked = try await app.v1.put(path, body: [], contentType: nil, token: b.token)
            let again = try await app.v1.put(path, body: [], contentType: nil, token: b.token)
            let list = try await app.v1.get(M.blocked.path, token: b.token).decoded(as: PeoplePage.self)
            let send = try await app.v1.post(app.v1.path(M.send, chat.id), SendMessage(text: "still here", clientMessageId: "x1"), token: m.token)
            let edit = try await app.v1.patch(app.v1.path(M.edit, old.id), EditMessage(text: "hi!"), token: m.token)
            let friend = try await app.v1.post(M.requestFriend.path, PersonReference(personId: b.id), token: m.token)
            let money = try await app.v1.pay(1, to: PartyReference(tag: b.tag), by: m)
            let invoice = try await app.v1.post(W.createRequest.path, NewMoneyRequest(from: PartyReference(tag: b.tag), amount: 1, kind: .invoice),
                                                token: m.token, headers: app.v1.idempotencyHeaders(UUID().uuidString))
            let unblocked = try await app.v1.delete(path, token: b.token)
            let after = try await app.v1.post(app.v1.path(M.send, chat.id), SendMessage(text: "back", clientMessageId: "x2"), token: m.token)
            let unknown = try await app.v1.put(V1.filling(M.block.path, ["personId": UUID().uuidString.lowercased()]), body: [], contentType: nil, token: b.token)
            let other = try await app.v1.person("oli")
            _ = try await app.v1.put(path, body: [], contentType: nil, token: b.token)
            let second = try await app.v1.put(V1.filling(M.block.path, ["personId": other.id.uuidString.lowercased()]), body: [], contentType: nil, token: b.token)

            // validate
            #expect(blocked.status == .noContent && again.status == .noContent)
            #expect(list.items.map(\.id) == [m.id])
            for refused in [send, edit, friend, money, invoice] { try expectProblem(refused, .forbidden, .messagingNotAllowed) }
            #expect(unblocked.status == .noContent && after.status == .created, "\(after.text)")
            try expectProblem(unknown, .notFound, .personNotFound)
            try expectProblem(second, .conflict, .tooManyBlocks)
            #expect(try await app.v1.get(M.blocked.path, token: b.token).decoded(as: PeoplePage.self).items.map(\.id) == [m.id])
        }
    }
}
