import Foundation

extension V1 {
    /// The messenger (the messenger spec): people, friends, chats, messages, attachments, privacy.
    /// Its events come over ``Realtime``.
    public enum Messenger {
        /// People by first name, last name or tag (`?q=`, prefix, any case and accents; `?cursor=`).
        public static let people = Endpoint<SearchQuery, PeoplePage>(.get, "/v1/people")
        /// One person.
        public static let person = Endpoint<NoContent, Person>(.get, "/v1/people/{id}")
        /// My friends and the requests to and from me (`?sort=name|tag`, `?q=`).
        public static let friends = Endpoint<FriendsQuery, FriendsOverview>(.get, "/v1/friends")
        /// Asks a person to be my friend (or accepts, when they asked me first); answers the person.
        public static let requestFriend = Endpoint<PersonReference, Person>(.post, "/v1/friends/requests")
        /// Accepts a request to me; answers the new friend.
        public static let acceptRequest = Endpoint<NoContent, Person>(.post, "/v1/friends/requests/{id}/accept")
        /// Declines a request to me.
        public static let declineRequest = Endpoint<NoContent, NoContent>(.post, "/v1/friends/requests/{id}/decline", success: 204)
        /// Cancels my request.
        public static let cancelRequest = Endpoint<NoContent, NoContent>(.delete, "/v1/friends/requests/{id}", success: 204)
        /// Ends a friendship.
        public static let removeFriend = Endpoint<NoContent, NoContent>(.delete, "/v1/friends/{personId}", success: 204)
        /// My chats, newest activity first (`?q=` by the other's name or tag, `?cursor=`).
        public static let chats = Endpoint<SearchQuery, ChatPage>(.get, "/v1/chats")
        /// Opens my direct chat with a person, making it the first time.
        public static let openChat = Endpoint<PersonReference, Chat>(.post, "/v1/chats")
        /// One chat.
        public static let chat = Endpoint<NoContent, Chat>(.get, "/v1/chats/{id}")
        /// Mutes or unmutes a chat.
        public static let updateChat = Endpoint<ChatUpdate, Chat>(.patch, "/v1/chats/{id}")
        /// Deletes a chat for me: it leaves my list and its history up to now is cleared for me.
        public static let deleteChat = Endpoint<NoContent, NoContent>(.delete, "/v1/chats/{id}", success: 204)
        /// Marks every message up to one as read (never moves back).
        public static let markRead = Endpoint<ReadMark, ReadState>(.post, "/v1/chats/{id}/read")
        /// A chat's attachments, newest first (`?cursor=`).
        public static let chatAttachments = Endpoint<PageQuery, ChatAttachmentPage>(.get, "/v1/chats/{id}/attachments")
        /// A chat's history (`?before=`, `?after=` message ids, `?limit=`), oldest first.
        public static let messages = Endpoint<HistoryQuery, MessagePage>(.get, "/v1/chats/{id}/messages")
        /// Sends a message (idempotent by `clientMessageId`).
        public static let send = Endpoint<SendMessage, Message>(.post, "/v1/chats/{id}/messages", success: 201)
        /// Edits my message (within the edit window).
        public static let edit = Endpoint<EditMessage, Message>(.patch, "/v1/messages/{id}")
        /// Deletes a message for me (`?for=me`, anyone) or for everyone (`?for=everyone`, its author).
        public static let deleteMessage = Endpoint<DeletionQuery, NoContent>(.delete, "/v1/messages/{id}", success: 204)
        /// Forwards a message into chats of mine.
        public static let forward = Endpoint<ForwardRequest, ForwardResult>(.post, "/v1/messages/{id}/forward", success: 201)
        /// Uploads an attachment: a raw body (`Content-Type`, `?name=`) or `multipart/form-data` (part `file`).
        public static let upload = Endpoint<RawBody, Attachment>(.post, "/v1/attachments", success: 201, query: [QueryParameter("name", .text)])
        /// An attachment's bytes (`ETag`, `Range`).
        public static let download = Endpoint<NoContent, RawBody>(.get, "/v1/attachments/{id}")
        /// My privacy settings.
        public static let privacy = Endpoint<NoContent, PrivacySettings>(.get, "/v1/me/privacy")
        /// Changes my privacy settings.
        public static let updatePrivacy = Endpoint<PrivacyUpdate, PrivacySettings>(.patch, "/v1/me/privacy")
        /// The people I blocked: nothing of theirs reaches me (messages, edits, friend and money
        /// requests, transfers), and they are told only what friends-only privacy tells.
        public static let blocked = Endpoint<NoContent, PeoplePage>(.get, "/v1/me/blocked")
        /// Blocks a person (blocking twice is once).
        public static let block = Endpoint<NoContent, NoContent>(.put, "/v1/me/blocked/{personId}", success: 204)
        /// Unblocks a person (one not blocked is fine).
        public static let unblock = Endpoint<NoContent, NoContent>(.delete, "/v1/me/blocked/{personId}", success: 204)

        /// Every operation above (the tests check it against the router and the OpenAPI document).
        public static let all: [any EndpointDeclaration] = [
            people, person, friends, requestFriend, acceptRequest, declineRequest, cancelRequest, removeFriend,
            chats, openChat, chat, updateChat, deleteChat, markRead, chatAttachments, messages, send, edit,
            deleteMessage, forward, upload, download, privacy, updatePrivacy, blocked, block, unblock,
        ]
    }
}

/// The order of my friends (`GET /v1/friends?sort=`).
public enum FriendsSort: String, Codable, Sendable, CaseIterable { case name, tag }

/// `GET /v1/friends`: the order, and a search.
public struct FriendsQuery: EndpointQuery, Equatable {
    public var sort: FriendsSort?
    public var q: String?
    public init(sort: FriendsSort? = nil, q: String? = nil) {
        self.sort = sort
        self.q = q
    }
    public static let parameters: [QueryParameter] = [.choice("sort", FriendsSort.self), QueryParameter("q", .text)]
    public init(from query: QueryValues) throws { self.init(sort: try query.choice("sort", as: FriendsSort.self), q: query.text("q")) }
    public var values: [String: String] {
        var values: [String: String] = [:]
        values.put("sort", sort)
        values.put("q", q)
        return values
    }
}

/// `GET /v1/chats/{id}/messages`: the newest `limit`, or those before or after a message.
public struct HistoryQuery: EndpointQuery, Equatable {
    public var before: UUID?
    public var after: UUID?
    public var limit: Int?
    public init(before: UUID? = nil, after: UUID? = nil, limit: Int? = nil) {
        self.before = before
        self.after = after
        self.limit = limit
    }
    public static let parameters: [QueryParameter] = [QueryParameter("before", .uuid), QueryParameter("after", .uuid), .limit]
    public init(from query: QueryValues) throws {
        self.init(before: try query.uuid("before"), after: try query.uuid("after"), limit: try query.limit())
    }
    public var values: [String: String] {
        var values: [String: String] = [:]
        values.put("before", before)
        values.put("after", after)
        values.put("limit", limit)
        return values
    }
}

/// `DELETE /v1/messages/{id}`: for me, or for everyone.
public struct DeletionQuery: EndpointQuery, Equatable {
    public var scope: MessageDeletion.Scope
    public init(scope: MessageDeletion.Scope) { self.scope = scope }
    public static let parameters: [QueryParameter] = [.choice("for", MessageDeletion.Scope.self, required: true)]
    public init(from query: QueryValues) throws { self.init(scope: try query.required("for", as: MessageDeletion.Scope.self)) }
    public var values: [String: String] { ["for": scope.rawValue] }
}
