import Foundation
import GatehouseAPI
import GatehouseKit
import Testing

/// The device's copy of the messenger on its own: what it keeps of a chat, how a fresh page
/// from the server merges with it, and that it survives a relaunch and goes at logout.
@Suite("GatehouseKit: the offline store")
struct MessengerStoreTests {
    let chat = UUID()
    let author = UUID()
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    func message(_ index: Int) -> Message {
        Message(id: UUID(), chatId: chat, authorId: author, text: "m\(index)", createdAt: start.addingTimeInterval(TimeInterval(index)),
                editedAt: nil, deleted: false, replyTo: nil, forwardedFrom: nil, attachments: [], clientMessageId: nil)
    }

    func texts(_ store: MessengerStore) -> [String] { store.messages(in: chat).map(\.message.text) }

    @Test("a chat keeps its newest messages only, oldest first")
    func trims() throws {
        let stores = MessengerStores(directory: FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString), messagesPerChat: 5)
        let store = try stores.open(account: UUID())
        try store.saveMessages((1...8).map(message))
        #expect(texts(store) == ["m4", "m5", "m6", "m7", "m8"])
    }

    @Test("a newest page that reaches the cache merges (dropping what the server no longer shows); one with a gap replaces it")
    func newestPage() throws {
        let stores = MessengerStores(directory: FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString))
        let store = try stores.open(account: UUID())
        let all = (1...20).map(message)
        try store.saveMessages(Array(all[0..<10]))

        // Contiguous: m8…m12 overlaps the cache at m8; m9 was deleted for me elsewhere.
        try store.saveNewestPage(MessagePage(items: [all[7], all[9], all[10], all[11]], hasMoreBefore: true, hasMoreAfter: false), of: chat)
        #expect(texts(store) == ["m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m10", "m11", "m12"])

        // A gap: m18…m20 does not reach m12; what is kept is the page alone.
        try store.saveNewestPage(MessagePage(items: Array(all[17...]), hasMoreBefore: true, hasMoreAfter: false), of: chat)
        #expect(texts(store) == ["m18", "m19", "m20"])

        // Everything there is (no more before): exactly the page.
        try store.saveNewestPage(MessagePage(items: [all[19]], hasMoreBefore: false, hasMoreAfter: false), of: chat)
        #expect(texts(store) == ["m20"])
    }

    @Test("the store survives a relaunch, is found for an offline launch, and is wiped at logout")
    func lifecycle() throws {
        let stores = MessengerStores(directory: FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString))
        let account = UUID()
        let store = try stores.open(account: account)
        try store.saveMessages([message(1)])
        try store.setLastSeq(42)
        try store.setPreference("friends.sort", "tag")

        let reopened = try #require(stores.openLast())
        #expect(texts(reopened) == ["m1"])
        #expect(reopened.lastSeq == 42 && reopened.preference("friends.sort") == "tag")

        stores.wipe(account: account)
        #expect(stores.openLast() == nil)
        #expect(!FileManager.default.fileExists(atPath: store.url.path))
    }
}
