import Foundation
import GatehouseAPI
import GatehouseKit
import GatehouseTestSupport
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `MessengerClient` against a live server: every call of the messenger through the SDK, and its
/// errors as typed values.
@Suite("GatehouseKit: the messenger client")
struct MessengerClientTests {
    /// A signed-up person: an accounts client and a messenger client on one core.
    struct Someone {
        let accounts: AccountsClient
        let messenger: MessengerClient
        let id: UUID
    }

    func person(_ server: LiveServer, _ tag: String, first: String) async throws -> Someone {
        let user = try await server.messengerUser(tag, firstName: first)
        return Someone(accounts: user.accounts, messenger: user.messenger, id: user.id)
    }

    @Test("find a person, become friends, open the chat, write, read, edit, reply, forward, delete; upload and download")
    func wholeConversation() async throws {
        try await withLiveServer { server in
            // setup
            let ann = try await person(server, "ann.s", first: "Ann")
            let bob = try await person(server, "bob.s", first: "Bob")
            let cat = try await person(server, "cat.s", first: "Cat")

            // MUT + validate: people and friends
            let found = try await ann.messenger.searchPeople("bo")
            #expect(found.items.map(\.id) == [bob.id])
            let asked = try await ann.messenger.requestFriend(bob.id)
            #expect(asked.relation == .outgoing)
            let incoming = try await bob.messenger.friends().incoming
            #expect(incoming.map(\.id) == [ann.id])
            try await bob.messenger.acceptRequest(try #require(incoming.first?.requestId))
            #expect(try await ann.messenger.friends(sortedBy: .tag).friends.map(\.id) == [bob.id])

            // chats and messages
            let chat = try await ann.messenger.openChat(with: bob.id)
            let hello = try await ann.messenger.send("Hello, Bob & co = 100%?", in: chat.id, clientMessageId: "c-1")
            let again = try await ann.messenger.send("Hello, Bob & co = 100%?", in: chat.id, clientMessageId: "c-1")
            #expect(again.id == hello.id, "a retry with the same client id is the same message")
            let bobsChats = try await bob.messenger.chats()
            #expect(bobsChats.items.first?.id == chat.id && bobsChats.items.first?.unreadCount == 1)
            let read = try await bob.messenger.markRead(chat.id, upTo: hello.id)
            #expect(read.unreadCount == 0)
            let reply = try await bob.messenger.send("Hi!", in: chat.id, replyTo: hello.id)
            #expect(reply.replyTo?.messageId == hello.id)
            let edited = try await ann.messenger.edit(hello.id, text: "Hello again")
            #expect(edited.text == "Hello again" && edited.editedAt != nil)
            let page = try await bob.messenger.messages(in: chat.id, limit: 1)
            #expect(page.items.map(\.id) == [reply.id] && page.hasMoreBefore)
            let older = try await bob.messenger.messages(in: chat.id, before: reply.id)
            #expect(older.items.map(\.text) == ["Hello again"])

            // attachments
            let bytes = Data("a small file".utf8)
            let file = try await ann.messenger.upload(bytes, contentType: "text/plain", fileName: "note & list.txt")
            #expect(file.kind == .file && file.fileName == "note & list.txt")
            let withFile = try await ann.messenger.send("", in: chat.id, attachments: [file.id])
            let downloaded = try await bob.messenger.download(file.id)
            #expect(downloaded.data == bytes && downloaded.contentType == "text/plain")
            #expect(try await bob.messenger.attachments(of: chat.id).items.map(\.messageId) == [withFile.id])

            // forward, delete
            let toCat = try await ann.messenger.openChat(with: cat.id)
            let copies = try await ann.messenger.forward(reply.id, to: [toCat.id])
            #expect(copies.first?.forwardedFrom?.authorId == bob.id)
            try await ann.messenger.delete(hello.id, for: .everyone)
            #expect(try await bob.messenger.messages(in: chat.id).items.first?.deleted == true)
            try await bob.messenger.deleteChat(chat.id)
            #expect(try await bob.messenger.chats().items.isEmpty)
            _ = try await bob.messenger.mute(chat.id, until: Date(timeIntervalSince1970: 2_000_000_000))
            try await bob.messenger.removeFriend(ann.id)
            #expect(try await ann.messenger.friends().friends.isEmpty)
        }
    }

    @Test("an upload reports its progress as the body goes out, up to the whole file")
    func uploadProgress() async throws {
        try await withLiveServer { server in
            // setup
            let ann = try await person(server, "ann.up", first: "Ann")
            let bytes = Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 * 7) })
            let reports = Reports()

            // MUT
            let file = try await ann.messenger.upload(bytes, contentType: "application/octet-stream", fileName: "big.bin") { sent, total in
                reports.add(sent, total)
            }

            // validate
            let seen = reports.all
            #expect(file.size == bytes.count)
            #expect(seen.count > 1, "a 3 MB body goes out in several parts: \(seen.count) reports")
            #expect(seen.last.map { $0.sent == Int64(bytes.count) && $0.total == Int64(bytes.count) } == true)
            #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.sent <= $1.sent })
        }
    }

    /// Progress reports, from whichever thread the transport calls on.
    final class Reports: @unchecked Sendable {
        private let lock = NSLock()
        private var values: [(sent: Int64, total: Int64)] = []
        func add(_ sent: Int64, _ total: Int64) { lock.withLock { values.append((sent, total)) } }
        var all: [(sent: Int64, total: Int64)] { lock.withLock { values } }
    }

    @Test("errors come back typed: another's chat is chat_not_found, a friends-only person is messaging_not_allowed")
    func errorsAreTyped() async throws {
        try await withLiveServer { server in
            // setup
            let ann = try await person(server, "ann.e", first: "Ann")
            let bob = try await person(server, "bob.e", first: "Bob")
            let eve = try await person(server, "eve.e", first: "Eve")
            let chat = try await ann.messenger.openChat(with: bob.id)

            // MUT
            let outsider = await clientError { try await eve.messenger.send("x", in: chat.id) }
            _ = try await bob.messenger.setPrivacy(whoCanMessageMe: .friends)
            let shy = await clientError { try await eve.messenger.openChat(with: bob.id) }
            let unknown = await clientError { try await ann.messenger.person(UUID()) }

            // validate
            #expect(outsider?.code == .chatNotFound)
            #expect(shy?.code == .messagingNotAllowed)
            #expect(unknown?.code == .personNotFound)
            #expect(try await bob.messenger.privacy().whoCanMessageMe == .friends)
        }
    }
}
