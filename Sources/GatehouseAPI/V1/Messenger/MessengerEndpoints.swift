import Foundation

extension V1 {
    /// The messenger (the messenger spec): people, friends, chats, messages, attachments, privacy.
    /// Its events come over ``Realtime``.
    public enum Messenger {
        /// People by first name, last name or tag (`?q=`, prefix, any case and accents; `?cursor=`).
        public static let people = Endpoint<SearchQuery, PeoplePage>(.get, "/v1/people")
            .operation("searchPeople", "Find people", tags: "People")
            .errors([400: [.invalidParameter], 409: [.tagRequired]])
            .shared(.unauthorized, .unexpectedProblem)
        /// One person.
        public static let person = Endpoint<NoContent, Person>(.get, "/v1/people/{id}")
            .operation("getPerson", "A person", tags: "People")
            .errors([404: [.personNotFound], 409: [.tagRequired]])
            .shared(.unauthorized, .unexpectedProblem)
            .uuid(notFound: .personNotFound)
        /// My friends and the requests to and from me (`?sort=name|tag`, `?q=`).
        public static let friends = Endpoint<FriendsQuery, FriendsOverview>(.get, "/v1/friends")
            .operation("listFriends", "My friends and requests", tags: "Friends")
            .errors([400: [.invalidParameter], 409: [.tagRequired]])
            .shared(.unauthorized, .unexpectedProblem)
        /// Asks a person to be my friend (or accepts, when they asked me first); answers the person.
        public static let requestFriend = Endpoint<PersonReference, Person>(.post, "/v1/friends/requests")
            .operation("requestFriend", "Ask to be friends", tags: "Friends")
            .errors([400: [.notYourself], 404: [.personNotFound], 409: [.tagRequired]])
            .shared(.tooManyRequests, .unauthorized, .unexpectedProblem)
        /// Accepts a request to me; answers the new friend.
        public static let acceptRequest = Endpoint<NoContent, Person>(.post, "/v1/friends/requests/{id}/accept")
            .operation("acceptFriendRequest", "Accept a request to me", tags: "Friends")
            .errors([404: [.requestNotFound], 409: [.tagRequired]])
            .shared(.unauthorized, .unexpectedProblem)
            .uuid(notFound: .requestNotFound)
        /// Declines a request to me.
        public static let declineRequest = Endpoint<NoContent, NoContent>(.post, "/v1/friends/requests/{id}/decline", success: 204)
            .operation("declineFriendRequest", "Decline a request to me", tags: "Friends")
            .errors([404: [.requestNotFound], 409: [.tagRequired]])
            .shared(.unauthorized, .unexpectedProblem)
            .uuid(notFound: .requestNotFound)
        /// Cancels my request.
        public static let cancelRequest = Endpoint<NoContent, NoContent>(.delete, "/v1/friends/requests/{id}", success: 204)
            .operation("cancelFriendRequest", "Cancel my request", tags: "Friends")
            .errors([404: [.requestNotFound], 409: [.tagRequired]])
            .shared(.unauthorized, .unexpectedProblem)
            .uuid(notFound: .requestNotFound)
        /// Ends a friendship.
        public static let removeFriend = Endpoint<NoContent, NoContent>(.delete, "/v1/friends/{personId}", success: 204)
            .operation("removeFriend", "End a friendship", tags: "Friends")
            .errors([404: [.personNotFound, .notFriends], 409: [.tagRequired]])
            .shared(.unauthorized, .unexpectedProblem)
            .uuid("personId", notFound: .personNotFound)
        /// My chats, newest activity first (`?q=` by the other's name or tag, `?cursor=`).
        public static let chats = Endpoint<SearchQuery, ChatPage>(.get, "/v1/chats")
            .operation("listChats", "My chats", tags: "Chats")
            .errors([400: [.invalidParameter], 409: [.tagRequired]])
            .shared(.unauthorized, .unexpectedProblem)
        /// Opens my direct chat with a person, making it the first time.
        public static let openChat = Endpoint<PersonReference, Chat>(.post, "/v1/chats")
            .operation("openChat", "Open my chat with a person", tags: "Chats")
            .errors([400: [.notYourself], 403: [.messagingNotAllowed], 404: [.personNotFound], 409: [.tagRequired]])
            .shared(.unauthorized, .unexpectedProblem)
        /// One chat.
        public static let chat = Endpoint<NoContent, Chat>(.get, "/v1/chats/{id}")
            .operation("getChat", "One chat", tags: "Chats")
            .errors([404: [.chatNotFound], 409: [.tagRequired]])
            .shared(.unauthorized, .unexpectedProblem)
            .uuid(notFound: .chatNotFound)
        /// Mutes or unmutes a chat.
        public static let updateChat = Endpoint<ChatUpdate, Chat>(.patch, "/v1/chats/{id}")
            .operation("updateChat", "Mute or unmute a chat", tags: "Chats")
            .errors([404: [.chatNotFound], 409: [.tagRequired]])
            .shared(.unauthorized, .unexpectedProblem)
            .uuid(notFound: .chatNotFound)
        /// Deletes a chat for me: it leaves my list and its history up to now is cleared for me.
        public static let deleteChat = Endpoint<NoContent, NoContent>(.delete, "/v1/chats/{id}", success: 204)
            .operation("deleteChat", "Delete a chat for me", tags: "Chats")
            .errors([404: [.chatNotFound], 409: [.tagRequired]])
            .shared(.unauthorized, .unexpectedProblem)
            .uuid(notFound: .chatNotFound)
        /// Marks every message up to one as read (never moves back).
        public static let markRead = Endpoint<ReadMark, ReadState>(.post, "/v1/chats/{id}/read")
            .operation("markChatRead", "Mark messages read", tags: "Chats")
            .errors([404: [.chatNotFound, .messageNotFound], 409: [.tagRequired]])
            .shared(.unauthorized, .unexpectedProblem)
            .uuid(notFound: .chatNotFound)
        /// A chat's attachments, newest first (`?cursor=`).
        public static let chatAttachments = Endpoint<PageQuery, ChatAttachmentPage>(.get, "/v1/chats/{id}/attachments")
            .operation("listChatAttachments", "A chat's attachments", tags: "Attachments")
            .errors([400: [.invalidParameter], 404: [.chatNotFound], 409: [.tagRequired]])
            .shared(.unauthorized, .unexpectedProblem)
            .uuid(notFound: .chatNotFound)
        /// A chat's history (`?before=`, `?after=` message ids, `?limit=`), oldest first.
        public static let messages = Endpoint<HistoryQuery, MessagePage>(.get, "/v1/chats/{id}/messages")
            .operation("listMessages", "A chat's history", tags: "Messages")
            .errors([400: [.invalidParameter], 404: [.chatNotFound], 409: [.tagRequired]])
            .shared(.unauthorized, .unexpectedProblem)
            .uuid(notFound: .chatNotFound)
        /// Sends a message (idempotent by `clientMessageId`).
        public static let send = Endpoint<SendMessage, Message>(.post, "/v1/chats/{id}/messages", success: 201)
            .operation("sendMessage", "Send a message", tags: "Messages")
            .errors([400: [.emptyMessage, .fieldTooLong, .invalidText, .tooManyAttachments, .invalidParameter, .missingParameter], 403: [.messagingNotAllowed], 404: [.chatNotFound, .messageNotFound, .attachmentNotFound], 409: [.clientMessageIdReused, .tagRequired]])
            .shared(.tooManyRequests, .unauthorized, .unexpectedProblem)
            .uuid(notFound: .chatNotFound)
        /// Edits my message (within the edit window).
        public static let edit = Endpoint<EditMessage, Message>(.patch, "/v1/messages/{id}")
            .operation("editMessage", "Edit my message", tags: "Messages")
            .errors([400: [.emptyMessage, .fieldTooLong, .invalidText], 403: [.notMessageAuthor], 404: [.messageNotFound], 409: [.editWindowClosed, .messageDeleted]])
            .shared(.unauthorized, .unexpectedProblem)
            .uuid(notFound: .messageNotFound)
        /// Deletes a message for me (`?for=me`, anyone) or for everyone (`?for=everyone`, its author).
        public static let deleteMessage = Endpoint<DeletionQuery, NoContent>(.delete, "/v1/messages/{id}", success: 204)
            .operation("deleteMessage", "Delete a message", tags: "Messages")
            .errors([400: [.invalidParameter], 403: [.notMessageAuthor], 404: [.messageNotFound], 409: [.tagRequired]])
            .shared(.unauthorized, .unexpectedProblem)
            .uuid(notFound: .messageNotFound)
        /// Forwards a message into chats of mine.
        public static let forward = Endpoint<ForwardRequest, ForwardResult>(.post, "/v1/messages/{id}/forward", success: 201)
            .operation("forwardMessage", "Forward a message", tags: "Messages")
            .errors([400: [.invalidParameter], 403: [.messagingNotAllowed], 404: [.messageNotFound, .chatNotFound], 409: [.messageDeleted, .tagRequired]])
            .shared(.tooManyRequests, .unauthorized, .unexpectedProblem)
            .uuid(notFound: .messageNotFound)
        /// Uploads an attachment: a raw body (`Content-Type`, `?name=`) or `multipart/form-data` (part `file`).
        public static let upload = Endpoint<RawBody, Attachment>(.post, "/v1/attachments", success: 201, query: [QueryParameter("name", .text)])
            .operation("uploadAttachment", "Upload an attachment", tags: "Attachments")
            .errors([400: [.invalidImage, .invalidParameter, .malformedBody], 409: [.tagRequired]])
            .shared(.payloadTooLarge, .tooManyRequests, .unauthorized, .unexpectedProblem)
        /// An attachment's bytes (`ETag`, `Range`).
        public static let download = Endpoint<NoContent, RawBody>(.get, "/v1/attachments/{id}")
            .operation("downloadAttachment", "An attachment's bytes", tags: "Attachments")
            .errors([404: [.attachmentNotFound], 416: [.rangeNotSatisfiable], 409: [.tagRequired]])
            .shared(.unauthorized, .unexpectedProblem)
            .uuid(notFound: .attachmentNotFound)
        /// My privacy settings.
        public static let privacy = Endpoint<NoContent, PrivacySettings>(.get, "/v1/me/privacy")
            .operation("getPrivacy", "My privacy settings", tags: "People")
            .shared(.unauthorized, .unexpectedProblem)
        /// Changes my privacy settings.
        public static let updatePrivacy = Endpoint<PrivacyUpdate, PrivacySettings>(.patch, "/v1/me/privacy")
            .operation("updatePrivacy", "Change my privacy settings", tags: "People")
            .errors([400: [.malformedBody]])
            .shared(.unauthorized, .unexpectedProblem)
        /// The people I blocked: nothing of theirs reaches me (messages, edits, friend and money
        /// requests, transfers), and they are told only what friends-only privacy tells.
        public static let blocked = Endpoint<NoContent, PeoplePage>(.get, "/v1/me/blocked")
            .operation("listBlocked", "The people I blocked", tags: "People")
            .errors([409: [.tagRequired]])
            .shared(.unauthorized, .unexpectedProblem)
        /// Blocks a person (blocking twice is once).
        public static let block = Endpoint<NoContent, NoContent>(.put, "/v1/me/blocked/{personId}", success: 204)
            .operation("blockPerson", "Block a person", tags: "People")
            .errors([404: [.personNotFound], 409: [.tagRequired, .tooManyBlocks]])
            .shared(.unauthorized, .unexpectedProblem)
            .uuid("personId", notFound: .personNotFound)
        /// Unblocks a person (one not blocked is fine).
        public static let unblock = Endpoint<NoContent, NoContent>(.delete, "/v1/me/blocked/{personId}", success: 204)
            .operation("unblockPerson", "Unblock a person", tags: "People")
            .errors([404: [.personNotFound], 409: [.tagRequired]])
            .shared(.unauthorized, .unexpectedProblem)
            .uuid("personId", notFound: .personNotFound)

        /// Every operation above (the tests check it against the router and the OpenAPI document).
        public static let all: [any EndpointDeclaration] = [
            people, person, friends, requestFriend, acceptRequest, declineRequest, cancelRequest, removeFriend,
            chats, openChat, chat, updateChat, deleteChat, markRead, chatAttachments, messages, send, edit,
            deleteMessage, forward, upload, download, privacy, updatePrivacy, blocked, block, unblock,
        ]
    }
}

/// The order of my friends (`GET /v1/friends?sort=`).
public enum FriendsSort: String, Codable, Sendable, CaseIterable {
    /// By name.
    case name
    /// By tag.
    case tag
}

/// `GET /v1/friends`: the order, and a search.
public struct FriendsQuery: EndpointQuery, Equatable {
    /// The order of the list.
    public var sort: FriendsSort?
    /// Only friends whose name or tag starts with this.
    public var q: String?
    /// Makes one of its members, each as its property describes.
    public init(sort: FriendsSort? = nil, q: String? = nil) {
        self.sort = sort
        self.q = q
    }
    /// Every parameter the operation reads, in the order the document lists them.
    public static let parameters: [QueryParameter] = [.choice("sort", FriendsSort.self), QueryParameter("q", .text)]
    /// Reads it from a request's query; a value against its parameter's rule throws ``QueryError``.
    public init(from query: QueryValues) throws { self.init(sort: try query.choice("sort", as: FriendsSort.self), q: query.text("q")) }
    /// The query's values to send, by name; absent parameters are left out.
    public var values: [String: String] {
        var values: [String: String] = [:]
        values.put("sort", sort)
        values.put("q", q)
        return values
    }
}

/// `GET /v1/chats/{id}/messages`: the newest `limit`, or those before or after a message.
public struct HistoryQuery: EndpointQuery, Equatable {
    /// Messages before this one (older).
    public var before: UUID?
    /// Messages after this one (newer).
    public var after: UUID?
    /// How many items a page holds at most.
    public var limit: Int?
    /// Makes one of its members, each as its property describes.
    public init(before: UUID? = nil, after: UUID? = nil, limit: Int? = nil) {
        self.before = before
        self.after = after
        self.limit = limit
    }
    /// Every parameter the operation reads, in the order the document lists them.
    public static let parameters: [QueryParameter] = [QueryParameter("before", .uuid), QueryParameter("after", .uuid), .limit]
    /// Reads it from a request's query; a value against its parameter's rule throws ``QueryError``.
    public init(from query: QueryValues) throws {
        self.init(before: try query.uuid("before"), after: try query.uuid("after"), limit: try query.limit())
    }
    /// The query's values to send, by name; absent parameters are left out.
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
    /// For me only, or for everyone.
    public var scope: MessageDeletion.Scope
    /// Makes one of its members, each as its property describes.
    public init(scope: MessageDeletion.Scope) { self.scope = scope }
    /// Every parameter the operation reads, in the order the document lists them.
    public static let parameters: [QueryParameter] = [.choice("for", MessageDeletion.Scope.self, required: true)]
    /// Reads it from a request's query; a value against its parameter's rule throws ``QueryError``.
    public init(from query: QueryValues) throws { self.init(scope: try query.required("for", as: MessageDeletion.Scope.self)) }
    /// The query's values to send, by name; absent parameters are left out.
    public var values: [String: String] { ["for": scope.rawValue] }
}
