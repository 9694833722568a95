import Foundation
import GatehouseAPI

/// The messenger as one signed-in device sees it: the cached lists and messages of a
/// ``MessengerStore``, kept in step with the server by the realtime socket, and the outbox that
/// sends what was written without a network once it is back, each change exactly once (a send
/// carries its `clientMessageId`).
///
/// Every screen reads from here and acts through here, so they all agree, online or not: lists
/// show what is cached while ``connectivity`` is `.offline`; sends, edits and deletions are kept
/// as pending and go out in order when the socket reconnects; one the server refuses is marked
/// failed, to retry or discard. Main-actor bound like the view models on top of it.
@MainActor
public final class MessengerRepository {
    /// Whether the server is reachable, as the socket knows it.
    public enum Connectivity: Equatable, Sendable {
        /// The socket is being opened (at launch, or after a drop).
        case connecting
        /// The socket is up: changes go out at once.
        case online
        /// No network or no server: the lists show what is saved, changes wait in the outbox.
        case offline
    }

    /// What changed, for observers to redraw only that.
    public enum Change: Hashable, Sendable {
        /// The own account.
        case account
        /// The friends lists.
        case friends
        /// The chat list.
        case chats
        /// Who may message me.
        case privacy
        /// ``MessengerRepository/connectivity``.
        case connectivity
        /// The messages of one chat.
        case messages(UUID)
        /// The session ended (logged out here or elsewhere): the store is wiped, back to login.
        case sessionEnded
    }

    /// Tuning, with safe defaults.
    public struct Configuration: Sendable {
        /// Messages fetched per page of history.
        public var pageSize = 50
        /// How many chats the list loads (pages of 100 until there are no more or this many).
        public var maxChats = 500
        /// How the socket connects (tests put a switch in front of it).
        public var webSocketTransport: any WebSocketTransport = WebSocketTransports.default
        /// Delays between reconnections.
        public var backoff = RealtimeClient.Backoff()
        /// The defaults: pages of 50 messages, up to 500 chats, the platform's WebSocket transport, the default backoff.
        public init() {}
    }

    /// The accounts client whose session this repository uses.
    public let accounts: AccountsClient
    /// The messenger client on the same core.
    public let messenger: MessengerClient
    /// This account's copy on the device.
    public let store: MessengerStore
    /// The tuning it was made with.
    public let configuration: Configuration
    private let stores: MessengerStores
    private let now: @Sendable () -> Date

    /// The own account.
    public private(set) var account: Account
    /// Whether the realtime socket is up: screens show an offline notice from it.
    public private(set) var connectivity: Connectivity = .connecting
    /// Friends and requests (cached when offline).
    public private(set) var friends: FriendsOverview
    /// Chats, newest activity first (cached when offline).
    public private(set) var chats: [Chat]
    /// Who may message me.
    public private(set) var privacy: PrivacySettings?
    /// How far the files of a pending message have gone up (0–1, by bytes), while they upload.
    public private(set) var uploads: [UUID: Double] = [:]
    private var uploading: Set<UUID> = []
    /// Chats whose history goes further back than what is loaded.
    private var olderAvailable: [UUID: Bool] = [:]
    private var realtime: RealtimeClient?
    private var realtimeTask: Task<Void, Never>?
    private var flushing = false
    private var flushAgain = false
    private var observers: [UUID: @MainActor (Set<Change>) -> Void] = [:]
    private var ended = false
    private var ending: Task<Void, Never>?

    /// Opens the account's store and starts from what it holds; call ``start()`` to go online.
    public init(accounts: AccountsClient, account: Account, stores: MessengerStores, configuration: Configuration = Configuration(),
                now: @escaping @Sendable () -> Date = { Date() }) throws {
        let store = try stores.open(account: account.id)
        try store.setAccount(account)
        self.accounts = accounts
        self.messenger = MessengerClient(core: accounts.core)
        self.store = store
        self.stores = stores
        self.configuration = configuration
        self.now = now
        self.account = account
        self.friends = store.friends ?? FriendsOverview(friends: [], incoming: [], outgoing: [])
        self.chats = store.chats()
        self.privacy = store.privacy
    }

    /// Starts from the device's copy without a network (a launch that could not reach the
    /// server): the screens say offline until the socket connects.
    public func startOffline() {
        setConnectivity(.offline)
    }

    // MARK: Observation

    /// Calls `handler` after every change with what changed, until the token goes.
    public func observe(_ handler: @escaping @MainActor (Set<Change>) -> Void) -> ObservationToken {
        let id = UUID()
        observers[id] = handler
        return ObservationToken { [weak self] in
            // Gone at once when released on the main thread (an observer is never called after).
            if Thread.isMainThread {
                MainActor.assumeIsolated { _ = self?.observers.removeValue(forKey: id) }
            } else {
                Task { @MainActor in _ = self?.observers.removeValue(forKey: id) }
            }
        }
    }

    private func notify(_ changes: Set<Change>) {
        guard !changes.isEmpty else { return }
        for observer in Array(observers.values) { observer(changes) }
    }

    // MARK: Online and offline

    /// Connects the socket and keeps the cache in step; safe to call again.
    public func start() {
        guard realtimeTask == nil, !ended else { return }
        let realtime = RealtimeClient(core: accounts.core, transport: configuration.webSocketTransport, since: store.lastSeq,
                                      backoff: configuration.backoff)
        self.realtime = realtime
        realtimeTask = Task { [weak self] in
            for await update in realtime.updates() {
                guard let self else { return }
                await self.handle(update)
            }
        }
    }

    /// Closes the socket (the app goes to the background, or the user logs out).
    public func stop() async {
        let task = realtimeTask
        realtimeTask = nil
        await realtime?.stop()
        realtime = nil
        task?.cancel()
    }

    private func handle(_ update: RealtimeUpdate) async {
        switch update {
        case .connected(let seq):
            if store.lastSeq == nil { try? store.setLastSeq(seq) }
            setConnectivity(.online)
            await flushOutbox()
            await refresh()
        case .resync(let seq):
            // Too much was missed for events to tell: read everything again.
            for chat in chats { try? store.saveNewestPage(MessagePage(items: [], hasMoreBefore: false, hasMoreAfter: false), of: chat.id) }
            try? store.setLastSeq(seq)
            await refresh()
            notify(Set(chats.map { .messages($0.id) }))
        case .event(let event):
            apply(event)
            try? store.setLastSeq(event.seq)
        case .disconnected:
            setConnectivity(.offline)
        case .sessionEnded:
            await end()
        }
    }

    private func setConnectivity(_ value: Connectivity) {
        guard connectivity != value else { return }
        connectivity = value
        notify([.connectivity])
    }

    /// Reads the account, friends, chats and privacy again (pull to refresh; after reconnecting).
    public func refresh() async {
        // Asked at once, applied in order.
        let messenger = messenger
        let account = Task { try await messenger.core.call(V1.Accounts.me) }
        let friends = Task { try await messenger.friends() }
        let privacy = Task { try await messenger.privacy() }
        await run { [self] in
            let value = try await account.value
            self.account = value
            try store.setAccount(value)
            notify([.account])
        }
        await run { [self] in
            let value = try await friends.value
            if value != self.friends {
                self.friends = value
                try store.setFriends(value)
                notify([.friends])
            }
        }
        await run { [self] in
            let value = try await privacy.value
            self.privacy = value
            try store.setPrivacy(value)
            notify([.privacy])
        }
        await refreshChats()
    }

    /// Reads the chat list again.
    public func refreshChats() async {
        await run { [self] in
            var all: [Chat] = []
            var cursor: String?
            repeat {
                let page = try await messenger.chats(cursor: cursor, limit: min(100, configuration.maxChats))
                all += page.items
                cursor = page.nextCursor
            } while cursor != nil && all.count < configuration.maxChats
            if all != chats {
                chats = all
                try store.replaceChats(all)
                notify([.chats])
            }
        }
    }

    /// Runs a server call for the cache; a network failure only marks the device offline.
    private func run(_ body: () async throws -> Void) async {
        do {
            try await body()
        } catch GatehouseClientError.transport {
            setConnectivity(.offline)
        } catch GatehouseClientError.sessionExpired {
            await end()
        } catch {}
    }

    /// Calls the server for an action the user took: a network failure marks the device
    /// offline and is rethrown for the screen to say so.
    private func online<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as GatehouseClientError {
            if case .transport = error { setConnectivity(.offline) }
            if case .sessionExpired = error { await end() }
            throw error
        }
    }

    // MARK: Realtime events

    private func apply(_ event: RealtimeEvent) {
        switch event.payload {
        case .message(let message):
            if event.kind == .messageUpdated {
                guard store.messages(in: message.chatId).contains(where: { $0.id == message.id }) || isLast(message) else { return }
            }
            try? store.saveMessages([message])
            notify([.messages(message.chatId)])
            if let index = chats.firstIndex(where: { $0.id == message.chatId }) {
                var chat = chats[index]
                if event.kind == .messageCreated {
                    chat.lastMessage = message
                    if message.authorId != account.id { chat.unreadCount += 1; chat.unread = true }
                    chats.remove(at: index)
                    chats.insert(chat, at: 0)
                    try? store.saveChat(chat, toTop: true)
                } else if chat.lastMessage?.id == message.id {
                    chat.lastMessage = message
                    chats[index] = chat
                    try? store.saveChat(chat, toTop: false)
                }
                notify([.chats])
            } else {
                Task { await refreshChats() }
            }
        case .deletion(let deletion):
            if deletion.scope == .me {
                try? store.removeMessage(deletion.messageId)
            } else if var message = store.messages(in: deletion.chatId).first(where: { $0.id == deletion.messageId })?.message {
                message.deleted = true
                message.text = ""
                message.attachments = []
                try? store.saveMessages([message])
            }
            notify([.messages(deletion.chatId)])
            if chats.contains(where: { $0.id == deletion.chatId && $0.lastMessage?.id == deletion.messageId }) {
                Task { await reloadChat(deletion.chatId) }
            }
        case .read(let read):
            guard let index = chats.firstIndex(where: { $0.id == read.chatId }) else { return }
            if read.accountId == account.id {
                chats[index].unreadCount = read.unreadCount
                chats[index].unread = read.unreadCount > 0
                chats[index].lastReadMessageId = read.lastReadMessageId
            } else {
                chats[index].otherLastReadMessageId = read.lastReadMessageId
            }
            try? store.saveChat(chats[index], toTop: false)
            notify([.chats, .messages(read.chatId)])
        case .chatDeletion(let deletion):
            chats.removeAll { $0.id == deletion.chatId }
            try? store.removeChat(deletion.chatId)
            notify([.chats, .messages(deletion.chatId)])
        case .person(let person):
            if person.id == account.id {
                Task { await refresh() }
                return
            }
            for index in chats.indices where chats[index].person.id == person.id {
                chats[index].person = person
                try? store.saveChat(chats[index], toTop: false)
            }
            notify([.chats])
            Task { await refreshFriends() }
        case .friendRemoval:
            Task { await refreshFriends() }
        case .transfer, .moneyRequest:
            // The wallet's own events; the chat message that shows each arrives as `message.created`.
            break
        case .superseded:
            // An edit a later `message.updated` of the same message replaces: that one carries the text.
            break
        }
    }

    private func isLast(_ message: Message) -> Bool {
        chats.contains { $0.lastMessage?.id == message.id }
    }

    private func reloadChat(_ id: UUID) async {
        await run { [self] in
            let chat = try await messenger.chat(id)
            guard let index = chats.firstIndex(where: { $0.id == id }) else { return }
            chats[index] = chat
            try store.saveChat(chat, toTop: false)
            notify([.chats])
        }
    }

    /// Reads friends and requests again.
    public func refreshFriends() async {
        await run { [self] in
            let value = try await messenger.friends()
            guard value != friends else { return }
            friends = value
            try store.setFriends(value)
            notify([.friends])
        }
    }

    // MARK: People and friends (need the network)

    /// People by name or tag (needs the network).
    public func searchPeople(_ query: String, cursor: String? = nil) async throws -> PeoplePage {
        try await online { try await messenger.searchPeople(query, cursor: cursor) }
    }

    /// One person, read from the server (needs the network).
    public func person(_ id: UUID) async throws -> Person {
        try await online { try await messenger.person(id) }
    }

    /// The person as last seen in a cached list, for showing their profile offline.
    public func cachedPerson(_ id: UUID) -> Person? {
        (friends.friends + friends.incoming + friends.outgoing + chats.map(\.person)).first { $0.id == id }
    }

    /// Adds, accepts, declines, cancels or removes; the person as they now stand to me.
    public func requestFriend(_ person: Person) async throws -> Person {
        let updated = try await online { try await messenger.requestFriend(person.id) }
        await refreshFriends()
        return updated
    }

    /// Accepts the person's friend request; the friend.
    public func acceptRequest(from person: Person) async throws -> Person {
        guard let request = person.requestId else { return try await requestFriend(person) }
        let updated = try await online { try await messenger.acceptRequest(request) }
        await refreshFriends()
        return updated
    }

    /// Declines the person's friend request.
    public func declineRequest(from person: Person) async throws {
        guard let request = person.requestId else { return }
        try await online { try await messenger.declineRequest(request) }
        await refreshFriends()
    }

    /// Takes back my friend request to the person.
    public func cancelRequest(to person: Person) async throws {
        guard let request = person.requestId else { return }
        try await online { try await messenger.cancelRequest(request) }
        await refreshFriends()
    }

    /// Removes a friend.
    public func removeFriend(_ person: Person) async throws {
        try await online { try await messenger.removeFriend(person.id) }
        await refreshFriends()
    }

    /// Whether I blocked the person.
    public func isBlocked(_ person: UUID) async throws -> Bool {
        try await online { try await messenger.blockedPeople() }.items.contains { $0.id == person }
    }

    /// Blocks a person: nothing of theirs reaches me (messages, edits, friend and money requests, transfers).
    public func block(_ person: Person) async throws {
        try await online { try await messenger.block(person.id) }
    }

    /// Unblocks a person.
    public func unblock(_ person: Person) async throws {
        try await online { try await messenger.unblock(person.id) }
    }

    /// Sets who may message me (needs the network).
    public func setPrivacy(_ audience: MessagingAudience) async throws {
        let value = try await online { try await messenger.setPrivacy(whoCanMessageMe: audience) }
        privacy = value
        try? store.setPrivacy(value)
        notify([.privacy])
    }

    /// The account after a change made through ``accounts`` (profile, avatar, email).
    public func accountChanged(_ value: Account) {
        account = value
        try? store.setAccount(value)
        notify([.account])
    }

    // MARK: Chats

    /// My chat with a person: the cached one offline, opened (or made) on the server otherwise.
    public func openChat(with person: UUID) async throws -> Chat {
        if connectivity != .online, let cached = chats.first(where: { $0.person.id == person }) { return cached }
        let chat = try await online { try await messenger.openChat(with: person) }
        if !chats.contains(where: { $0.id == chat.id }) {
            chats.insert(chat, at: 0)
            try? store.saveChat(chat, toTop: true)
            notify([.chats])
        }
        return chat
    }

    /// A chat of the cached list, if it is there.
    public func chat(_ id: UUID) -> Chat? { chats.first { $0.id == id } }

    /// Deletes the chat for me.
    public func deleteChat(_ id: UUID) async throws {
        try await online { try await messenger.deleteChat(id) }
        chats.removeAll { $0.id == id }
        try? store.removeChat(id)
        notify([.chats, .messages(id)])
    }

    /// The chat's attachments, newest first (its profile).
    public func attachments(of chat: UUID, cursor: String? = nil) async throws -> ChatAttachmentPage {
        try await online { try await messenger.attachments(of: chat, cursor: cursor) }
    }

    /// Marks the chat read up to its newest message from the other person (when online; the
    /// list's flag goes at once).
    public func markRead(_ chatId: UUID) async {
        guard let index = chats.firstIndex(where: { $0.id == chatId }) else { return }
        let newest = store.messages(in: chatId).last { $0.message.authorId != account.id && $0.delivery == .sent }
        guard let newest, chats[index].unread || chats[index].lastReadMessageId != newest.id else { return }
        chats[index].unreadCount = 0
        chats[index].unread = false
        chats[index].lastReadMessageId = newest.id
        try? store.saveChat(chats[index], toTop: false)
        notify([.chats])
        guard connectivity == .online else { return }
        await run { [self] in _ = try await messenger.markRead(chatId, upTo: newest.id) }
    }

    // MARK: Messages

    /// The chat's messages on the device, oldest first, local ones with their delivery.
    public func messages(in chat: UUID) -> [LocalMessage] { store.messages(in: chat) }

    /// Whether older messages than those on the device can be loaded.
    public func hasOlderMessages(in chat: UUID) -> Bool { olderAvailable[chat] ?? true }

    /// Reads the newest page of the chat (when the chat opens).
    public func loadNewest(in chat: UUID) async {
        await run { [self] in
            let page = try await messenger.messages(in: chat, limit: configuration.pageSize)
            try store.saveNewestPage(page, of: chat)
            olderAvailable[chat] = page.hasMoreBefore
            notify([.messages(chat)])
        }
    }

    /// Reads the page before the oldest message on the device (scrolling back).
    public func loadOlder(in chat: UUID) async throws {
        guard let oldest = store.messages(in: chat).first(where: { $0.delivery != .pending(.send) }) else {
            await loadNewest(in: chat)
            return
        }
        let page = try await online { try await messenger.messages(in: chat, before: oldest.id, limit: configuration.pageSize) }
        try? store.saveOlderPage(page)
        olderAvailable[chat] = page.hasMoreBefore
        notify([.messages(chat)])
    }

    /// Writes a message: shown at once as pending, sent now when online, later otherwise. Its
    /// files (picked by the app: the bytes, a name, a type) wait on the device with it, go up
    /// before it (``uploads`` tells how far), and are not uploaded twice across retries.
    @discardableResult
    public func send(_ text: String, in chat: UUID, replyTo: Message? = nil, files: [OutboxFile] = []) throws -> LocalMessage {
        let reply = replyTo.map { ReplyPreview(messageId: $0.id, authorId: $0.authorId, excerpt: String($0.text.prefix(100)), deleted: $0.deleted) }
        let local = try store.queueSend(text, in: chat, replyTo: reply, files: files, author: account.id, at: now())
        notify([.messages(chat)])
        kickOutbox()
        return local
    }

    /// Changes my message's text (queued like a send).
    public func edit(_ message: Message, text: String) throws {
        try store.queueEdit(message, text: text, at: now())
        notify([.messages(message.chatId)])
        kickOutbox()
    }

    /// Deletes a message for me, or (mine) for everyone (queued like a send).
    public func delete(_ message: Message, for scope: MessageDeletion.Scope) throws {
        try store.queueDelete(message, scope: scope)
        notify([.messages(message.chatId)])
        kickOutbox()
    }

    /// Forwards a message to chats (needs the network).
    public func forward(_ message: Message, to chatIds: [UUID]) async throws {
        let sent = try await online { try await messenger.forward(message.id, to: chatIds) }
        try? store.saveMessages(sent)
        notify(Set(chatIds.map { .messages($0) }))
        await refreshChats()
    }

    /// Sends a failed change again.
    public func retry(_ message: LocalMessage) {
        try? store.retry(message: message.id)
        notify([.messages(message.message.chatId)])
        kickOutbox()
    }

    /// Gives a failed change up.
    public func discard(_ message: LocalMessage) {
        try? store.discard(message: message.id)
        notify([.messages(message.message.chatId)])
    }

    private func kickOutbox() {
        guard connectivity == .online else { return }
        Task { await flushOutbox() }
    }

    /// Sends the queued changes in order. A network failure stops the run (the next connection
    /// starts another); a refusal marks that change failed and goes on with the next.
    func flushOutbox() async {
        if flushing { flushAgain = true; return }
        flushing = true
        defer { flushing = false }
        repeat {
            flushAgain = false
            for entry in store.pendingEntries() {
                do {
                    let result: Message?
                    switch entry.operation {
                    case let .send(chat, text, replyTo, clientId):
                        let attachments = try await upload(store.files(of: entry.messageId), of: entry.messageId, in: chat)
                        do {
                            result = try await messenger.send(text, in: chat, replyTo: replyTo, attachments: attachments, clientMessageId: clientId)
                        } catch GatehouseClientError.rejected(let code, _) where code == .attachmentNotFound {
                            // Uploaded long ago and collected by the server before the message went: up again, once.
                            for file in store.files(of: entry.messageId) { try store.setUploaded(file.id, as: nil) }
                            let again = try await upload(store.files(of: entry.messageId), of: entry.messageId, in: chat)
                            result = try await messenger.send(text, in: chat, replyTo: replyTo, attachments: again, clientMessageId: clientId)
                        }
                    case .edit(let text, _):
                        result = try await messenger.edit(entry.messageId, text: text)
                    case .delete(let scope):
                        do {
                            try await messenger.delete(entry.messageId, for: scope)
                        } catch GatehouseClientError.rejected(let code, _) where code == .messageNotFound {
                            // Already gone: the deletion is done.
                        }
                        result = nil
                    }
                    try store.complete(entry, with: result)
                    if let result, case .send = entry.operation { bumpChat(with: result) }
                } catch let error as GatehouseClientError {
                    switch error {
                    case .transport:
                        // The next connection sends the rest.
                        setConnectivity(.offline)
                        notify([.messages(entry.chatId)])
                        return
                    case .server, .rateLimited:
                        // The server is there but cannot take it now: again after a pause.
                        let wait: Int = if case .rateLimited(_, _, let retryAfter) = error { retryAfter ?? 5 } else { 5 }
                        scheduleFlush(after: .seconds(max(1, wait)))
                        notify([.messages(entry.chatId)])
                        return
                    case .sessionExpired, .notLoggedIn:
                        await end()
                        return
                    case .rejected:
                        try? store.fail(entry, reason: error.message)
                    }
                } catch is CancellationError {
                    return
                } catch {
                    try? store.fail(entry, reason: String(describing: error))
                }
                notify([.messages(entry.chatId)])
            }
        } while flushAgain
    }

    /// Uploads what of a message's files the server does not have yet; their attachments' ids in order.
    private func upload(_ files: [OutboxFile], of message: UUID, in chat: UUID) async throws -> [UUID] {
        guard !files.isEmpty else { return [] }
        let total = max(1, files.reduce(0) { $0 + Int64($1.data.count) })
        var done = files.filter { $0.uploadedId != nil }.reduce(Int64(0)) { $0 + Int64($1.data.count) }
        uploading.insert(message)
        defer {
            uploading.remove(message)
            uploads[message] = nil
            notify([.messages(chat)])
        }
        var ids: [UUID] = []
        for file in files {
            if let uploaded = file.uploadedId { ids.append(uploaded); continue }
            let before = done
            let attachment = try await messenger.upload(file.data, contentType: file.contentType, fileName: file.fileName) { [weak self] sent, _ in
                let fraction = Double(before + sent) / Double(total)
                Task { @MainActor [weak self] in self?.reportUpload(message, in: chat, fraction) }
            }
            try store.setUploaded(file.id, as: attachment.id)
            done += Int64(file.data.count)
            reportUpload(message, in: chat, Double(done) / Double(total))
            ids.append(attachment.id)
        }
        return ids
    }

    /// A step of an upload: told to the screens at most once per 5% (a progress bar, not a flood).
    private func reportUpload(_ message: UUID, in chat: UUID, _ fraction: Double) {
        // A step heard after the upload ended (its task ran late) is stale.
        guard uploading.contains(message) else { return }
        let previous = uploads[message] ?? -1
        guard fraction >= 1 || fraction - previous >= 0.05 || previous < 0 else { return }
        uploads[message] = min(fraction, 1)
        notify([.messages(chat)])
    }

    /// An attachment's bytes and type (to open it).
    public func download(_ attachment: UUID) async throws -> RawBody {
        try await online { try await messenger.download(attachment) }
    }

    private var retryTask: Task<Void, Never>?

    private func scheduleFlush(after delay: Duration) {
        retryTask?.cancel()
        retryTask = Task { [weak self] in
            try? await Task.sleep(for: delay)
            guard !Task.isCancelled, let self, self.connectivity == .online else { return }
            await self.flushOutbox()
        }
    }

    private func bumpChat(with message: Message) {
        guard let index = chats.firstIndex(where: { $0.id == message.chatId }) else { return }
        var chat = chats[index]
        guard chat.lastMessage.map({ $0.createdAt <= message.createdAt }) ?? true else { return }
        chat.lastMessage = message
        chats.remove(at: index)
        chats.insert(chat, at: 0)
        try? store.saveChat(chat, toTop: true)
        notify([.chats])
    }

    // MARK: The end

    /// Logs out: ends the session on the server (best effort without a network), closes the
    /// socket and wipes this account's store from the device.
    public func logout() async {
        try? await accounts.logout()
        await end()
    }

    /// Ends the session once, however many callers ask (the socket hears the server end it while `logout` is still
    /// waiting for its answer); each returns only when it has ended, so a screen redrawn after `logout` returns is
    /// already the login.
    private func end() async {
        if ending == nil {
            ended = true
            ending = Task { [self] in
                retryTask?.cancel()
                await stop()
                try? accounts.core.sessionStore.clear()
                stores.wipe(account: account.id)
                notify([.sessionEnded])
            }
        }
        await ending?.value
    }
}
