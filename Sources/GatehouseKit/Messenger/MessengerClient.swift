import Foundation
import GatehouseAPI

/// The client of the messenger on `/v1` (`docs/messenger.md`): people, friends, chats, messages,
/// attachments and privacy, each call the ``Endpoint`` that `V1.Messenger` declares, sent through
/// a ``GatehouseClient`` core — share the core of the app's ``AccountsClient`` so both use one
/// session. Errors are ``GatehouseClientError`` values with the server's code
/// (`chat_not_found`, `messaging_not_allowed`, …).
public final class MessengerClient: Sendable {
    typealias M = V1.Messenger
    /// The core that sends the calls with the session (shared with the app's other clients).
    public let core: GatehouseClient

    /// A client of `/v1`'s messenger on `core` (share the app's `AccountsClient` core).
    public init(core: GatehouseClient) {
        self.core = core
    }

    // MARK: People and privacy

    /// People whose first name, last name or tag starts with `query` (any case, any accents).
    public func searchPeople(_ query: String? = nil, cursor: String? = nil, limit: Int? = nil) async throws -> PeoplePage {
        try await core.call(M.people, SearchQuery(q: query, cursor: cursor, limit: limit))
    }

    /// One person as I see them (404 `person_not_found` for someone who blocked me or does not exist).
    public func person(_ id: UUID) async throws -> Person {
        try await core.call(M.person, parameters: ["id": id.uuidString.lowercased()])
    }

    /// Who may message me.
    public func privacy() async throws -> PrivacySettings {
        try await core.call(M.privacy)
    }

    /// Sets who may message me: everyone, or friends only.
    public func setPrivacy(whoCanMessageMe: MessagingAudience) async throws -> PrivacySettings {
        try await core.call(M.updatePrivacy, PrivacyUpdate(whoCanMessageMe: whoCanMessageMe))
    }

    /// The people I blocked.
    public func blockedPeople() async throws -> PeoplePage {
        try await core.call(M.blocked)
    }

    /// Blocks a person: nothing of theirs reaches me (messages, edits, friend and money requests, transfers).
    public func block(_ person: UUID) async throws {
        let _: NoContent = try await core.call(M.block, parameters: ["personId": person.uuidString.lowercased()])
    }

    /// Unblocks a person.
    public func unblock(_ person: UUID) async throws {
        let _: NoContent = try await core.call(M.unblock, parameters: ["personId": person.uuidString.lowercased()])
    }

    // MARK: Friends

    /// How the friends list is sorted: by name or by tag.
    public typealias FriendsOrder = FriendsSort

    /// My friends (by name or tag) and the requests to and from me.
    public func friends(sortedBy order: FriendsOrder = .name, matching query: String? = nil) async throws -> FriendsOverview {
        try await core.call(M.friends, FriendsQuery(sort: order, q: query))
    }

    /// Asks to be friends (or accepts, when they asked first); the person as I now see them.
    @discardableResult
    public func requestFriend(_ person: UUID) async throws -> Person {
        try await core.call(M.requestFriend, PersonReference(personId: person))
    }

    /// Accepts a friend request to me; the new friend.
    @discardableResult
    public func acceptRequest(_ request: UUID) async throws -> Person {
        try await core.call(M.acceptRequest, parameters: ["id": request.uuidString.lowercased()])
    }

    /// Declines a friend request to me.
    public func declineRequest(_ request: UUID) async throws {
        let _: NoContent = try await core.call(M.declineRequest, parameters: ["id": request.uuidString.lowercased()])
    }

    /// Takes back my friend request.
    public func cancelRequest(_ request: UUID) async throws {
        let _: NoContent = try await core.call(M.cancelRequest, parameters: ["id": request.uuidString.lowercased()])
    }

    /// Removes a friend (both sides stop being friends).
    public func removeFriend(_ person: UUID) async throws {
        let _: NoContent = try await core.call(M.removeFriend, parameters: ["personId": person.uuidString.lowercased()])
    }

    // MARK: Chats

    /// My chats, newest activity first.
    public func chats(matching query: String? = nil, cursor: String? = nil, limit: Int? = nil) async throws -> ChatPage {
        try await core.call(M.chats, SearchQuery(q: query, cursor: cursor, limit: limit))
    }

    /// My chat with a person, made the first time ("Написать сообщение").
    public func openChat(with person: UUID) async throws -> Chat {
        try await core.call(M.openChat, PersonReference(personId: person))
    }

    /// One chat of mine.
    public func chat(_ id: UUID) async throws -> Chat {
        try await core.call(M.chat, parameters: ["id": id.uuidString.lowercased()])
    }

    /// Mutes a chat until a time, or unmutes it with nil.
    public func mute(_ chat: UUID, until: Date?) async throws -> Chat {
        try await core.call(M.updateChat, ChatUpdate(mutedUntil: until), parameters: ["id": chat.uuidString.lowercased()])
    }

    /// Deletes a chat for me.
    public func deleteChat(_ chat: UUID) async throws {
        let _: NoContent = try await core.call(M.deleteChat, parameters: ["id": chat.uuidString.lowercased()])
    }

    /// Marks every message up to `message` read.
    @discardableResult
    public func markRead(_ chat: UUID, upTo message: UUID) async throws -> ReadState {
        try await core.call(M.markRead, ReadMark(upTo: message), parameters: ["id": chat.uuidString.lowercased()])
    }

    /// The chat's attachments, newest first (the profile behind the chat's header).
    public func attachments(of chat: UUID, cursor: String? = nil, limit: Int? = nil) async throws -> ChatAttachmentPage {
        try await core.call(M.chatAttachments, PageQuery(cursor: cursor, limit: limit), parameters: ["id": chat.uuidString.lowercased()])
    }

    // MARK: Messages

    /// A page of history, oldest first: the newest `limit`, those before `before`, or after `after`.
    public func messages(in chat: UUID, before: UUID? = nil, after: UUID? = nil, limit: Int? = nil) async throws -> MessagePage {
        try await core.call(M.messages, HistoryQuery(before: before, after: after, limit: limit), parameters: ["id": chat.uuidString.lowercased()])
    }

    /// Sends a message. Keep `clientMessageId` to retry: the same id answers the message already sent.
    public func send(_ text: String, in chat: UUID, replyTo: UUID? = nil, attachments: [UUID] = [],
                     clientMessageId: String = UUID().uuidString) async throws -> Message {
        try await core.call(M.send, SendMessage(text: text, replyTo: replyTo, attachmentIds: attachments.isEmpty ? nil : attachments,
                                                clientMessageId: clientMessageId),
                            parameters: ["id": chat.uuidString.lowercased()])
    }

    /// Changes my message's text (within the server's edit window); the message as it now reads.
    public func edit(_ message: UUID, text: String) async throws -> Message {
        try await core.call(M.edit, EditMessage(text: text), parameters: ["id": message.uuidString.lowercased()])
    }

    /// Deletes a message for me, or (mine only) for everyone.
    public func delete(_ message: UUID, for scope: MessageDeletion.Scope) async throws {
        let _: NoContent = try await core.call(M.deleteMessage, DeletionQuery(scope: scope), parameters: ["id": message.uuidString.lowercased()])
    }

    /// Forwards a message into chats of mine; one copy per chat, in order.
    public func forward(_ message: UUID, to chats: [UUID], clientMessageId: String? = UUID().uuidString) async throws -> [Message] {
        try await core.call(M.forward, ForwardRequest(chatIds: chats, clientMessageId: clientMessageId),
                            parameters: ["id": message.uuidString.lowercased()]).messages
    }

    // MARK: Attachments

    /// Uploads a file or an image (known by its bytes on the server) to send with a message;
    /// `progress` hears the bytes sent and the total as they go (for a progress bar).
    public func upload(_ data: Data, contentType: String, fileName: String? = nil, progress: UploadProgress? = nil) async throws -> Attachment {
        try await core.call(M.upload, RawBody(data: data, contentType: contentType), query: queryString(["name": fileName]), progress: progress)
    }

    /// An attachment's bytes and type.
    public func download(_ attachment: UUID) async throws -> RawBody {
        try await core.call(M.download, parameters: ["id": attachment.uuidString.lowercased()])
    }

    // MARK: Plumbing

    /// A query string from the values present, escaped (`+`, `&`, `=` included).
}
