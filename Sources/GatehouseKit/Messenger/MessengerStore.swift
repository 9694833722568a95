import Foundation
import GatehouseAPI
import GRDB

/// A message as the device shows it: the server's message, or a local one still on its way, and
/// whether a change to it waits in the outbox or was refused.
public struct LocalMessage: Equatable, Sendable, Identifiable {
    /// A change made on the device that the server has not confirmed yet.
    public enum Change: String, Codable, Equatable, Sendable {
        /// A new message.
        case send
        /// A new text for a message.
        case edit
        /// A deletion.
        case delete
    }

    /// Where the message stands.
    public enum Delivery: Equatable, Sendable {
        /// The server has it as shown.
        case sent
        /// A change waits to be sent (no network, or in flight).
        case pending(Change)
        /// The server refused the change; retry or discard it.
        case failed(Change, reason: String)
    }

    /// The message (for a local send: a local id, the author me, the time it was written).
    public var message: Message
    /// Where it stands with the server.
    public var delivery: Delivery

    /// The message's id (a local one until the server has it).
    public var id: UUID { message.id }

    /// A message and where it stands.
    public init(message: Message, delivery: Delivery = .sent) {
        self.message = message
        self.delivery = delivery
    }
}

/// One change waiting to reach the server, in the order they were made.
struct OutboxEntry: Equatable, Sendable {
    enum Operation: Codable, Equatable, Sendable {
        case send(chatId: UUID, text: String, replyTo: UUID?, clientMessageId: String)
        case edit(text: String, original: String)
        case delete(scope: MessageDeletion.Scope)

        var change: LocalMessage.Change {
            switch self {
            case .send: .send
            case .edit: .edit
            case .delete: .delete
            }
        }
    }

    var seq: Int64
    /// The message it changes (for a send, the local message's id).
    var messageId: UUID
    var chatId: UUID
    var operation: Operation
    /// Why the server refused it; nil while it waits.
    var failure: String?
}

/// A file to send with a message, kept on the device until the server has it.
public struct OutboxFile: Equatable, Sendable {
    /// The file's id on the device (the pending message shows it as its attachment's id).
    public var id: UUID
    /// The name shown and sent with it.
    public var fileName: String
    /// Its type, as the picker told it (`image/jpeg`, `application/pdf`, …).
    public var contentType: String
    /// The bytes.
    public var data: Data
    /// The attachment the server made of it, once uploaded (a retry does not upload it again).
    public var uploadedId: UUID?

    /// A file to send: its bytes, name and type.
    public init(id: UUID = UUID(), fileName: String, contentType: String, data: Data, uploadedId: UUID? = nil) {
        self.id = id
        self.fileName = fileName
        self.contentType = contentType
        self.data = data
        self.uploadedId = uploadedId
    }
}

/// The device's copy of one account's messenger (SQLite through GRDB): the people and friends
/// lists, the chat list, the newest messages of each chat, the own profile, the last realtime
/// `seq`, and the outbox of changes made without a network. One file per account; it survives a
/// relaunch and ``MessengerStores/wipe(account:)`` deletes it at logout.
public final class MessengerStore: Sendable {
    /// The file.
    public let url: URL
    /// How many of a chat's newest messages are kept (pending ones are always kept).
    public let messagesPerChat: Int
    private let queue: DatabaseQueue
    private let encoder = V1.encoder
    private let decoder = V1.decoder

    /// Opens (or creates) the store at `url`.
    public init(url: URL, messagesPerChat: Int = 200) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        self.url = url
        self.messagesPerChat = max(1, messagesPerChat)
        self.queue = try DatabaseQueue(path: url.path)
        try Self.migrator.migrate(queue)
    }

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE value (key TEXT PRIMARY KEY, json BLOB NOT NULL);
                CREATE TABLE chat (id TEXT PRIMARY KEY, position INTEGER NOT NULL, json BLOB NOT NULL);
                CREATE TABLE message (
                    id TEXT PRIMARY KEY, chat_id TEXT NOT NULL, created_at REAL NOT NULL,
                    client_message_id TEXT, json BLOB NOT NULL);
                CREATE INDEX message_by_chat ON message (chat_id, created_at);
                CREATE TABLE outbox (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT NOT NULL, chat_id TEXT NOT NULL,
                    operation BLOB NOT NULL, failure TEXT);
                """)
        }
        // The files of messages not sent yet (attachments picked offline wait here with their message).
        migrator.registerMigration("v2") { db in
            try db.execute(sql: """
                CREATE TABLE outbox_file (
                    id TEXT PRIMARY KEY, message_id TEXT NOT NULL, position INTEGER NOT NULL, file_name TEXT NOT NULL,
                    content_type TEXT NOT NULL, data BLOB NOT NULL, uploaded_id TEXT);
                CREATE INDEX outbox_file_by_message ON outbox_file (message_id, position);
                """)
        }
        return migrator
    }

    // MARK: Single values

    private func value<T: Decodable>(_ key: String, in db: Database) throws -> T? {
        guard let data = try Data.fetchOne(db, sql: "SELECT json FROM value WHERE key = ?", arguments: [key]) else { return nil }
        return try? decoder.decode(T.self, from: data)
    }

    private func setValue(_ value: some Encodable, _ key: String, in db: Database) throws {
        try db.execute(sql: "INSERT OR REPLACE INTO value (key, json) VALUES (?, ?)", arguments: [key, try encoder.encode(value)])
    }

    /// The own account as last seen.
    public var account: Account? { (try? queue.read { try value("account", in: $0) }) ?? nil }
    /// Keeps the own account.
    public func setAccount(_ account: Account) throws { try queue.write { try setValue(account, "account", in: $0) } }

    /// The friends, incoming and outgoing requests as last seen.
    public var friends: FriendsOverview? { (try? queue.read { try value("friends", in: $0) }) ?? nil }
    /// Keeps the friends lists.
    public func setFriends(_ friends: FriendsOverview) throws { try queue.write { try setValue(friends, "friends", in: $0) } }

    /// Who may message me, as last seen.
    public var privacy: PrivacySettings? { (try? queue.read { try value("privacy", in: $0) }) ?? nil }
    /// Keeps who may message me.
    public func setPrivacy(_ privacy: PrivacySettings) throws { try queue.write { try setValue(privacy, "privacy", in: $0) } }

    /// The last realtime event applied to this store (resume from it after a relaunch).
    public var lastSeq: Int64? { (try? queue.read { try value("lastSeq", in: $0) }) ?? nil }

    /// A preference of this account on this device (the friends list's order…).
    public func preference(_ key: String) -> String? { (try? queue.read { try value("pref." + key, in: $0) }) ?? nil }
    /// Keeps a small per-account preference (the friends list's order).
    public func setPreference(_ key: String, _ value: String) throws { try queue.write { try setValue(value, "pref." + key, in: $0) } }

    // MARK: Chats

    /// The chats in the list's order (newest activity first).
    public func chats() -> [Chat] {
        (try? queue.read { db in
            try Data.fetchAll(db, sql: "SELECT json FROM chat ORDER BY position").compactMap { try? decoder.decode(Chat.self, from: $0) }
        }) ?? []
    }

    /// Replaces the chat list with the server's, and forgets the messages of chats no longer in it.
    public func replaceChats(_ chats: [Chat]) throws {
        try queue.write { db in
            try db.execute(sql: "DELETE FROM chat")
            for (position, chat) in chats.enumerated() {
                try db.execute(sql: "INSERT INTO chat (id, position, json) VALUES (?, ?, ?)", arguments: [key(chat.id), position, try encoder.encode(chat)])
            }
            try db.execute(sql: """
                DELETE FROM message WHERE chat_id NOT IN (SELECT id FROM chat)
                AND id NOT IN (SELECT message_id FROM outbox)
                """)
        }
    }

    /// Puts a chat in the list: at the top when it has new activity, in its place otherwise.
    public func saveChat(_ chat: Chat, toTop: Bool) throws {
        try queue.write { db in
            let existing = try Int.fetchOne(db, sql: "SELECT position FROM chat WHERE id = ?", arguments: [key(chat.id)])
            let position: Int
            if toTop || existing == nil {
                position = (try Int.fetchOne(db, sql: "SELECT MIN(position) FROM chat") ?? 0) - 1
            } else {
                position = existing!
            }
            try db.execute(sql: "INSERT OR REPLACE INTO chat (id, position, json) VALUES (?, ?, ?)", arguments: [key(chat.id), position, try encoder.encode(chat)])
        }
    }

    /// Forgets a chat, its messages and its queued changes.
    public func removeChat(_ id: UUID) throws {
        try queue.write { db in
            for table in ["chat WHERE id", "message WHERE chat_id", "outbox WHERE chat_id"] {
                try db.execute(sql: "DELETE FROM \(table) = ?", arguments: [key(id)])
            }
        }
    }

    // MARK: Messages

    /// A chat's messages as the device shows them, oldest first, with their delivery.
    public func messages(in chat: UUID) -> [LocalMessage] {
        (try? queue.read { db in
            let outbox = try entries(in: db, where: "chat_id = ?", [key(chat)])
            let changes = Dictionary(outbox.map { ($0.messageId, $0) }, uniquingKeysWith: { _, last in last })
            return try Data.fetchAll(db, sql: "SELECT json FROM message WHERE chat_id = ? ORDER BY created_at, id", arguments: [key(chat)])
                .compactMap { try? decoder.decode(Message.self, from: $0) }
                .map { message in
                    guard let entry = changes[message.id] else { return LocalMessage(message: message) }
                    let change = entry.operation.change
                    return LocalMessage(message: message, delivery: entry.failure.map { .failed(change, reason: $0) } ?? .pending(change))
                }
        }) ?? []
    }

    /// Saves messages from the server (a page, an event, an answer), replacing a local send with
    /// the same `clientMessageId`, and keeps each touched chat to its newest ``messagesPerChat``.
    public func saveMessages(_ messages: [Message]) throws {
        guard !messages.isEmpty else { return }
        try queue.write { db in
            for message in messages { try save(message, in: db) }
            for chat in Set(messages.map(\.chatId)) { try trim(chat, in: db) }
        }
    }

    /// The newest page of a chat from the server: what the device had in the page's span but the
    /// page lacks was deleted for me; older cached messages stay only when the page reaches them
    /// (no gap between the page and what is kept).
    public func saveNewestPage(_ page: MessagePage, of chat: UUID) throws {
        try queue.write { db in
            let local = Set(try String.fetchAll(db, sql: "SELECT message_id FROM outbox WHERE chat_id = ?", arguments: [key(chat)]))
            if let oldest = page.items.first {
                // The page reaches the cache when its oldest message is there; it is the whole
                // history when nothing comes before it. Otherwise the cache before it has a gap.
                let reached = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM message WHERE id = ?)", arguments: [key(oldest.id)]) ?? false
                let from = page.hasMoreBefore && reached ? oldest.createdAt.timeIntervalSince1970 : -Double.infinity
                let stale = try String.fetchAll(db, sql: "SELECT id FROM message WHERE chat_id = ? AND created_at >= ?", arguments: [key(chat), from])
                let kept = Set(page.items.map { key($0.id) })
                for id in stale where !kept.contains(id) && !local.contains(id) {
                    try db.execute(sql: "DELETE FROM message WHERE id = ?", arguments: [id])
                }
            } else {
                try db.execute(sql: "DELETE FROM message WHERE chat_id = ? AND id NOT IN (SELECT message_id FROM outbox)", arguments: [key(chat)])
            }
            for message in page.items { try save(message, in: db) }
            try trim(chat, in: db)
        }
    }

    /// Older messages the user paged back to (kept until the chat is trimmed again).
    public func saveOlderPage(_ page: MessagePage) throws {
        try queue.write { db in for message in page.items { try save(message, in: db) } }
    }

    /// Forgets a message (deleted for me, or a discarded local send).
    public func removeMessage(_ id: UUID) throws {
        try queue.write { db in
            try db.execute(sql: "DELETE FROM message WHERE id = ?", arguments: [key(id)])
            try db.execute(sql: "DELETE FROM outbox WHERE message_id = ?", arguments: [key(id)])
        }
    }

    private func save(_ message: Message, in db: Database) throws {
        if let clientId = message.clientMessageId {
            // The server's copy of a local send takes its place (and its outbox entry is done).
            let local = try String.fetchAll(db, sql: "SELECT id FROM message WHERE client_message_id = ? AND id != ?",
                                            arguments: [clientId, key(message.id)])
            for id in local {
                try db.execute(sql: "DELETE FROM message WHERE id = ?", arguments: [id])
                try db.execute(sql: "DELETE FROM outbox WHERE message_id = ?", arguments: [id])
            }
        }
        // A change still queued for this message keeps showing over the server's older copy.
        var shown = message
        for entry in try entries(in: db, where: "message_id = ?", [key(message.id)]) {
            switch entry.operation {
            case .edit(let text, _): shown.text = text
            case .send, .delete: break
            }
        }
        try db.execute(sql: "INSERT OR REPLACE INTO message (id, chat_id, created_at, client_message_id, json) VALUES (?, ?, ?, ?, ?)",
                       arguments: [key(message.id), key(message.chatId), message.createdAt.timeIntervalSince1970, message.clientMessageId,
                                   try encoder.encode(shown)])
    }

    private func trim(_ chat: UUID, in db: Database) throws {
        try db.execute(sql: """
            DELETE FROM message WHERE chat_id = ? AND id NOT IN (SELECT message_id FROM outbox)
            AND id NOT IN (SELECT id FROM message WHERE chat_id = ? ORDER BY created_at DESC, id DESC LIMIT ?)
            """, arguments: [key(chat), key(chat), messagesPerChat])
    }

    // MARK: Outbox

    /// Queues a new message written on the device, shown at once as pending.
    @discardableResult
    func queueSend(_ text: String, in chat: UUID, replyTo: ReplyPreview?, files: [OutboxFile] = [], author: UUID, at date: Date) throws -> LocalMessage {
        let clientMessageId = UUID().uuidString.lowercased()
        // Until the server has them, the files show as attachments of the pending message (no URL yet).
        let shown = files.map { file in
            Attachment(id: file.id, kind: file.contentType.lowercased().hasPrefix("image/") ? .image : .file, contentType: file.contentType,
                       fileName: file.fileName, size: file.data.count, url: "")
        }
        let message = Message(id: UUID(), chatId: chat, authorId: author, text: text, createdAt: date, editedAt: nil, deleted: false,
                              replyTo: replyTo, forwardedFrom: nil, attachments: shown, clientMessageId: clientMessageId)
        try queue.write { db in
            try db.execute(sql: "INSERT INTO message (id, chat_id, created_at, client_message_id, json) VALUES (?, ?, ?, ?, ?)",
                           arguments: [key(message.id), key(chat), date.timeIntervalSince1970, clientMessageId, try encoder.encode(message)])
            for (position, file) in files.enumerated() {
                try db.execute(sql: """
                    INSERT INTO outbox_file (id, message_id, position, file_name, content_type, data, uploaded_id) VALUES (?, ?, ?, ?, ?, ?, NULL)
                    """, arguments: [key(file.id), key(message.id), position, file.fileName, file.contentType, file.data])
            }
            try insert(.send(chatId: chat, text: text, replyTo: replyTo?.messageId, clientMessageId: clientMessageId), for: message, in: db)
        }
        return LocalMessage(message: message, delivery: .pending(.send))
    }

    /// Queues a new text for a message: a local send is rewritten before it goes; a sent one gets
    /// an edit (one per message: a second edit replaces the first's text).
    func queueEdit(_ message: Message, text: String, at date: Date) throws {
        try queue.write { db in
            var edited = message
            edited.text = text
            let queued = try entries(in: db, where: "message_id = ?", [key(message.id)])
            if let send = queued.first(where: { $0.operation.change == .send }), case let .send(chat, _, replyTo, clientId) = send.operation {
                try update(send.seq, .send(chatId: chat, text: text, replyTo: replyTo, clientMessageId: clientId), in: db)
            } else if let edit = queued.first(where: { $0.operation.change == .edit }), case let .edit(_, original) = edit.operation {
                try update(edit.seq, .edit(text: text, original: original), in: db)
            } else {
                edited.editedAt = date
                try insert(.edit(text: text, original: message.text), for: message, in: db)
            }
            try db.execute(sql: "UPDATE message SET json = ? WHERE id = ?", arguments: [try encoder.encode(edited), key(message.id)])
        }
    }

    /// Queues a deletion: a local send is simply dropped; a sent message is deleted when online
    /// (for me, or for everyone), replacing an edit still queued for it.
    func queueDelete(_ message: Message, scope: MessageDeletion.Scope) throws {
        try queue.write { db in
            let queued = try entries(in: db, where: "message_id = ?", [key(message.id)])
            if queued.contains(where: { $0.operation.change == .send }) {
                try db.execute(sql: "DELETE FROM message WHERE id = ?", arguments: [key(message.id)])
                try db.execute(sql: "DELETE FROM outbox WHERE message_id = ?", arguments: [key(message.id)])
                return
            }
            var restored = message
            for entry in queued {
                if case .edit(_, let original) = entry.operation { restored.text = original }
            }
            try db.execute(sql: "DELETE FROM outbox WHERE message_id = ?", arguments: [key(message.id)])
            try db.execute(sql: "UPDATE message SET json = ? WHERE id = ?", arguments: [try encoder.encode(restored), key(message.id)])
            try insert(.delete(scope: scope), for: message, in: db)
        }
    }

    /// The changes that wait to be sent, in order (refused ones left out until retried).
    /// The files a queued message sends, in order.
    func files(of message: UUID) -> [OutboxFile] {
        (try? queue.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM outbox_file WHERE message_id = ? ORDER BY position", arguments: [key(message)]).map { row in
                OutboxFile(id: UUID(uuidString: row["id"]) ?? UUID(), fileName: row["file_name"], contentType: row["content_type"],
                           data: row["data"], uploadedId: (row["uploaded_id"] as String?).flatMap(UUID.init(uuidString:)))
            }
        }) ?? []
    }

    /// A file is on the server as `attachment` (nil: it must be uploaded again, the server forgot it).
    func setUploaded(_ file: UUID, as attachment: UUID?) throws {
        try queue.write { db in
            try db.execute(sql: "UPDATE outbox_file SET uploaded_id = ? WHERE id = ?", arguments: [attachment.map(key), key(file)])
        }
    }

    func pendingEntries() -> [OutboxEntry] {
        (try? queue.read { db in try entries(in: db, where: "failure IS NULL", []) }) ?? []
    }

    /// The change done: the server's message replaces the local copy (nil for a deletion).
    func complete(_ entry: OutboxEntry, with message: Message?) throws {
        try queue.write { db in
            // What is queued now: a send may have been rewritten while it was on its way.
            let current = try entries(in: db, where: "seq = ?", [entry.seq]).first
            try db.execute(sql: "DELETE FROM outbox WHERE seq = ?", arguments: [entry.seq])
            switch entry.operation {
            case .send:
                try db.execute(sql: "DELETE FROM message WHERE id = ?", arguments: [key(entry.messageId)])
                try db.execute(sql: "DELETE FROM outbox_file WHERE message_id = ?", arguments: [key(entry.messageId)])
            case .delete(.me):
                try db.execute(sql: "DELETE FROM message WHERE id = ?", arguments: [key(entry.messageId)])
            case .delete(.everyone):
                // What the server keeps for everyone: a tombstone.
                if let data = try Data.fetchOne(db, sql: "SELECT json FROM message WHERE id = ?", arguments: [key(entry.messageId)]),
                   var tombstone = try? decoder.decode(Message.self, from: data) {
                    tombstone.deleted = true
                    tombstone.text = ""
                    tombstone.attachments = []
                    tombstone.replyTo = nil
                    tombstone.forwardedFrom = nil
                    try db.execute(sql: "UPDATE message SET json = ? WHERE id = ?", arguments: [try encoder.encode(tombstone), key(entry.messageId)])
                }
            case .edit: break
            }
            if let message {
                if case .send(_, let text, _, _)? = current?.operation, text != message.text {
                    try insert(.edit(text: text, original: message.text), for: message, in: db)
                }
                try save(message, in: db)
                try trim(message.chatId, in: db)
            }
        }
    }

    /// The server refused the change: it stays, marked failed with the reason, until retried or discarded.
    func fail(_ entry: OutboxEntry, reason: String) throws {
        try queue.write { db in try db.execute(sql: "UPDATE outbox SET failure = ? WHERE seq = ?", arguments: [reason, entry.seq]) }
    }

    /// Puts a refused change back at the end of the queue.
    func retry(message id: UUID) throws {
        try queue.write { db in
            for entry in try entries(in: db, where: "message_id = ? AND failure IS NOT NULL", [key(id)]) {
                try db.execute(sql: "DELETE FROM outbox WHERE seq = ?", arguments: [entry.seq])
                try db.execute(sql: "INSERT INTO outbox (message_id, chat_id, operation) VALUES (?, ?, ?)",
                               arguments: [key(entry.messageId), key(entry.chatId), try encoder.encode(entry.operation)])
            }
        }
    }

    /// Gives a refused (or waiting) change up: a local send disappears, an edit's old text comes
    /// back, a deletion is undone.
    func discard(message id: UUID) throws {
        try queue.write { db in
            let queued = try entries(in: db, where: "message_id = ?", [key(id)])
            try db.execute(sql: "DELETE FROM outbox WHERE message_id = ?", arguments: [key(id)])
            for entry in queued {
                switch entry.operation {
                case .send:
                    try db.execute(sql: "DELETE FROM message WHERE id = ?", arguments: [key(id)])
                    try db.execute(sql: "DELETE FROM outbox_file WHERE message_id = ?", arguments: [key(id)])
                case .edit(_, let original):
                    if let data = try Data.fetchOne(db, sql: "SELECT json FROM message WHERE id = ?", arguments: [key(id)]),
                       var message = try? decoder.decode(Message.self, from: data) {
                        message.text = original
                        try db.execute(sql: "UPDATE message SET json = ? WHERE id = ?", arguments: [try encoder.encode(message), key(id)])
                    }
                case .delete: break
                }
            }
        }
    }

    /// Records that the events up to `seq` are applied (in the transaction of what they changed
    /// where there is one: call after saving).
    public func setLastSeq(_ seq: Int64) throws { try queue.write { try setValue(seq, "lastSeq", in: $0) } }

    private func insert(_ operation: OutboxEntry.Operation, for message: Message, in db: Database) throws {
        try db.execute(sql: "INSERT INTO outbox (message_id, chat_id, operation) VALUES (?, ?, ?)",
                       arguments: [key(message.id), key(message.chatId), try encoder.encode(operation)])
    }

    private func update(_ seq: Int64, _ operation: OutboxEntry.Operation, in db: Database) throws {
        try db.execute(sql: "UPDATE outbox SET operation = ?, failure = NULL WHERE seq = ?", arguments: [try encoder.encode(operation), seq])
    }

    private func entries(in db: Database, where condition: String, _ arguments: [any DatabaseValueConvertible]) throws -> [OutboxEntry] {
        try Row.fetchAll(db, sql: "SELECT seq, message_id, chat_id, operation, failure FROM outbox WHERE \(condition) ORDER BY seq",
                         arguments: StatementArguments(arguments)).compactMap { row in
            guard let messageId = UUID(uuidString: row["message_id"]), let chatId = UUID(uuidString: row["chat_id"]),
                  let operation = try? decoder.decode(OutboxEntry.Operation.self, from: row["operation"] as Data) else { return nil }
            return OutboxEntry(seq: row["seq"], messageId: messageId, chatId: chatId, operation: operation, failure: row["failure"])
        }
    }

    private func key(_ id: UUID) -> String { id.uuidString.lowercased() }
}

/// Where the accounts' stores live on this device: one file per account, and which account
/// was signed in last (so a launch without a network opens its store).
public struct MessengerStores: Sendable {
    /// The folder.
    public let directory: URL
    /// How many of a chat's newest messages each store keeps.
    public var messagesPerChat: Int

    /// The stores in `directory`, each keeping a chat's newest `messagesPerChat` messages.
    public init(directory: URL, messagesPerChat: Int = 200) {
        self.directory = directory
        self.messagesPerChat = messagesPerChat
    }

    /// `Application Support/<name>/messenger` (on Linux, `~/.local/share/<name>/messenger`).
    public static func standard(name: String) -> MessengerStores {
        let base = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent(".local/share")
        return MessengerStores(directory: base.appendingPathComponent(name).appendingPathComponent("messenger"))
    }

    private var lastAccountFile: URL { directory.appendingPathComponent("last-account") }

    private func file(_ account: UUID) -> URL { directory.appendingPathComponent(account.uuidString.lowercased() + ".sqlite") }

    /// Opens the account's store and remembers it as the last one signed in.
    public func open(account: UUID) throws -> MessengerStore {
        let store = try MessengerStore(url: file(account), messagesPerChat: messagesPerChat)
        try Data(account.uuidString.lowercased().utf8).write(to: lastAccountFile, options: .atomic)
        return store
    }

    /// The store of the account signed in last, when it has one (a launch without a network).
    public func openLast() -> MessengerStore? {
        guard let text = try? String(contentsOf: lastAccountFile, encoding: .utf8),
              let account = UUID(uuidString: text.trimmingCharacters(in: .whitespacesAndNewlines)),
              FileManager.default.fileExists(atPath: file(account).path) else { return nil }
        return try? MessengerStore(url: file(account), messagesPerChat: messagesPerChat)
    }

    /// Deletes the account's store (logout).
    public func wipe(account: UUID) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            try? FileManager.default.removeItem(at: URL(fileURLWithPath: file(account).path + suffix))
        }
        try? FileManager.default.removeItem(at: lastAccountFile)
    }
}
