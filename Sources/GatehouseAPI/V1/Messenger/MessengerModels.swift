import Foundation

// The bodies of `/v1`'s messenger: people, friends, chats, messages, attachments, privacy and
// the realtime events (docs/messenger.md).

/// How I stand with a person.
public enum PersonRelation: String, Codable, Sendable, CaseIterable {
    /// Nothing between us.
    case none
    /// We are friends.
    case friend
    /// They asked to be my friend; I have not answered.
    case incoming
    /// I asked to be their friend; they have not answered.
    case outgoing
}

/// A person: an account with a tag, as another account sees it.
public struct Person: Codable, Sendable, Equatable {
    /// Its id.
    public var id: UUID
    /// The first name.
    public var firstName: String?
    /// The last name.
    public var lastName: String?
    /// The person's tag (their `@handle`).
    public var tag: String
    /// Absolute URL of the avatar image, if any.
    public var avatarUrl: String?
    /// What the person is to me: a friend, a request either way, or nobody.
    public var relation: PersonRelation
    /// The pending friend request between us (`incoming` or `outgoing`), to accept, decline or cancel.
    public var requestId: UUID?
    /// Our direct chat, once one exists.
    public var chatId: UUID?
    /// `true` for an account that was deleted: its name and tag are gone (`tag` is empty), and an
    /// app shows it as "Deleted account". Absent otherwise.
    public var deleted: Bool?
    /// Makes one of its members, each as its property describes.
    public init(id: UUID, firstName: String?, lastName: String?, tag: String, avatarUrl: String?, relation: PersonRelation, requestId: UUID?,
                chatId: UUID?, deleted: Bool? = nil) {
        self.id = id
        self.firstName = firstName
        self.lastName = lastName
        self.tag = tag
        self.avatarUrl = avatarUrl
        self.relation = relation
        self.requestId = requestId
        self.chatId = chatId
        self.deleted = deleted
    }
}

/// One page of people; `nextCursor` fetches the next (absent on the last page).
public struct PeoplePage: Codable, Sendable, Equatable {
    /// This page's items, in the list's order.
    public var items: [Person]
    /// Fetches the next page (`?cursor=`); absent on the last.
    public var nextCursor: String?
    /// Makes one of its members, each as its property describes.
    public init(items: [Person], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }
}

/// `GET /v1/friends`: the friends screen's three sections.
public struct FriendsOverview: Codable, Sendable, Equatable {
    /// By name or tag (`?sort=`).
    public var friends: [Person]
    /// Requests to me, newest first.
    public var incoming: [Person]
    /// My requests, newest first.
    public var outgoing: [Person]
    /// Makes one of its members, each as its property describes.
    public init(friends: [Person], incoming: [Person], outgoing: [Person]) {
        self.friends = friends
        self.incoming = incoming
        self.outgoing = outgoing
    }
}

/// `POST /v1/friends/requests` and `POST /v1/chats`: whom.
public struct PersonReference: Codable, Sendable, Equatable {
    /// The person's account id.
    public var personId: UUID
    /// Makes one of its members, each as its property describes.
    public init(personId: UUID) { self.personId = personId }
}

/// Who may start a chat with me or write to me.
public enum MessagingAudience: String, Codable, Sendable, CaseIterable {
    /// Who may write to me first: anyone, or my friends only.
    case everyone, friends
}

/// `GET/PATCH /v1/me/privacy`.
public struct PrivacySettings: Codable, Sendable, Equatable {
    /// Who may write to me first.
    public var whoCanMessageMe: MessagingAudience
    /// Makes one of its members, each as its property describes.
    public init(whoCanMessageMe: MessagingAudience) { self.whoCanMessageMe = whoCanMessageMe }
}

/// `PATCH /v1/me/privacy`: what to change (absent members stay).
public struct PrivacyUpdate: Codable, Sendable, Equatable {
    /// Who may write to me first.
    public var whoCanMessageMe: MessagingAudience?
    /// Makes one of its members, each as its property describes.
    public init(whoCanMessageMe: MessagingAudience? = nil) { self.whoCanMessageMe = whoCanMessageMe }
}

/// An uploaded file or image.
public struct Attachment: Codable, Sendable, Equatable {
    /// An image (shown inline) or any other file.
    public enum Kind: String, Codable, Sendable, CaseIterable {
        /// An image (PNG, JPEG, GIF, WebP, known by its bytes), shown inline.
        case image
        /// Any other file.
        case file
    }
    /// Its id.
    public var id: UUID
    /// `image` when the bytes are a JPEG, PNG, GIF or WebP image (by their magic bytes), else `file`.
    public var kind: Kind
    /// Its media type.
    public var contentType: String
    /// The file's name, as uploaded.
    public var fileName: String
    /// Bytes.
    public var size: Int
    /// Absolute URL of the bytes (`GET /v1/attachments/{id}`, bearer token).
    public var url: String
    /// Makes one of its members, each as its property describes.
    public init(id: UUID, kind: Kind, contentType: String, fileName: String, size: Int, url: String) {
        self.id = id
        self.kind = kind
        self.contentType = contentType
        self.fileName = fileName
        self.size = size
        self.url = url
    }
}

/// The message a reply quotes, as it was when quoted.
public struct ReplyPreview: Codable, Sendable, Equatable {
    /// The message replied to.
    public var messageId: UUID
    /// Its author.
    public var authorId: UUID
    /// The first 200 characters of the quoted text; absent once the original is deleted for everyone.
    public var excerpt: String?
    /// The original was deleted for everyone (the reply shows a stub).
    public var deleted: Bool
    /// Makes one of its members, each as its property describes.
    public init(messageId: UUID, authorId: UUID, excerpt: String?, deleted: Bool) {
        self.messageId = messageId
        self.authorId = authorId
        self.excerpt = excerpt
        self.deleted = deleted
    }
}

/// Where a forwarded message came from.
public struct ForwardOrigin: Codable, Sendable, Equatable {
    /// Who wrote the original.
    public var authorId: UUID
    /// When the original was sent.
    public var sentAt: Date
    /// Makes one of its members, each as its property describes.
    public init(authorId: UUID, sentAt: Date) {
        self.authorId = authorId
        self.sentAt = sentAt
    }
}

/// One message. A message deleted for everyone stays in the history as a tombstone: `deleted`
/// true, no text, no attachments.
public struct Message: Codable, Sendable, Equatable {
    /// Time-ordered (UUIDv7): sorting by id is sorting by sending order.
    public var id: UUID
    /// The chat it is in.
    public var chatId: UUID
    /// Who wrote it.
    public var authorId: UUID
    /// NFC, line breaks as `\n`; empty on a tombstone.
    public var text: String
    /// When it was made.
    public var createdAt: Date
    /// When it was last edited; nil when never.
    public var editedAt: Date?
    /// Deleted for everyone: a tombstone without text or attachments.
    public var deleted: Bool
    /// The message it replies to, as it was.
    public var replyTo: ReplyPreview?
    /// Where it was forwarded from.
    public var forwardedFrom: ForwardOrigin?
    /// Its attachments.
    public var attachments: [Attachment]
    /// The sender's own id for the message (only in answers and events to the author).
    public var clientMessageId: String?
    /// A wallet message: the payment or request it records (its text is the comment).
    public var payment: PaymentNote?
    /// Makes one of its members, each as its property describes.
    public init(id: UUID, chatId: UUID, authorId: UUID, text: String, createdAt: Date, editedAt: Date?, deleted: Bool,
                replyTo: ReplyPreview?, forwardedFrom: ForwardOrigin?, attachments: [Attachment], clientMessageId: String?, payment: PaymentNote? = nil) {
        self.id = id
        self.chatId = chatId
        self.authorId = authorId
        self.text = text
        self.createdAt = createdAt
        self.editedAt = editedAt
        self.deleted = deleted
        self.replyTo = replyTo
        self.forwardedFrom = forwardedFrom
        self.attachments = attachments
        self.clientMessageId = clientMessageId
        self.payment = payment
    }
}

/// A page of a chat's history, oldest first.
public struct MessagePage: Codable, Sendable, Equatable {
    /// Oldest first.
    public var items: [Message]
    /// Older messages exist (fetch with `before` = the first item's id).
    public var hasMoreBefore: Bool
    /// Newer messages exist (fetch with `after` = the last item's id).
    public var hasMoreAfter: Bool
    /// Makes one of its members, each as its property describes.
    public init(items: [Message], hasMoreBefore: Bool, hasMoreAfter: Bool) {
        self.items = items
        self.hasMoreBefore = hasMoreBefore
        self.hasMoreAfter = hasMoreAfter
    }
}

/// `POST /v1/chats/{id}/messages`.
public struct SendMessage: Codable, Sendable, Equatable {
    /// At most `GATEHOUSE_MESSENGER_MAX_TEXT_LENGTH` (4,096) characters; no control characters but line breaks. May be
    /// empty with attachments.
    public var text: String
    /// A message of this chat to quote.
    public var replyTo: UUID?
    /// My uploads, at most `GATEHOUSE_MESSENGER_ATTACHMENTS_PER_MESSAGE` (10).
    public var attachmentIds: [UUID]?
    /// The client's id for this message (1–64 characters): a retry with the same id answers the
    /// message already sent instead of sending another.
    public var clientMessageId: String
    /// Makes one of its members, each as its property describes.
    public init(text: String, replyTo: UUID? = nil, attachmentIds: [UUID]? = nil, clientMessageId: String) {
        self.text = text
        self.replyTo = replyTo
        self.attachmentIds = attachmentIds
        self.clientMessageId = clientMessageId
    }
}

/// `PATCH /v1/messages/{id}`.
public struct EditMessage: Codable, Sendable, Equatable {
    /// The new text.
    public var text: String
    /// Makes one of its members, each as its property describes.
    public init(text: String) { self.text = text }
}

/// `POST /v1/messages/{id}/forward`.
public struct ForwardRequest: Codable, Sendable, Equatable {
    /// Chats of mine, 1 to `GATEHOUSE_MESSENGER_FORWARD_MAX_CHATS` (20), distinct.
    public var chatIds: [UUID]
    /// Makes a retried forward answer the copies already made (one per chat) instead of new ones.
    public var clientMessageId: String?
    /// Makes one of its members, each as its property describes.
    public init(chatIds: [UUID], clientMessageId: String? = nil) {
        self.chatIds = chatIds
        self.clientMessageId = clientMessageId
    }
}

/// The copies a forward made, one per chat, in the order asked.
public struct ForwardResult: Codable, Sendable, Equatable {
    /// One copy per chat, in the order asked.
    public var messages: [Message]
    /// Makes one of its members, each as its property describes.
    public init(messages: [Message]) { self.messages = messages }
}

/// A chat in my list.
public struct Chat: Codable, Sendable, Equatable {
    /// Its id.
    public var id: UUID
    /// The other member.
    public var person: Person
    /// The newest message I can see, if any.
    public var lastMessage: Message?
    /// Messages from the other member after my last read one.
    public var unreadCount: Int
    /// `unreadCount > 0`: the list's flag.
    public var unread: Bool
    /// The newest message I have read.
    public var lastReadMessageId: UUID?
    /// The newest of my messages the other member has read (read receipts).
    public var otherLastReadMessageId: UUID?
    /// Until when the chat's notifications are off; nil when on.
    public var mutedUntil: Date?
    /// Makes one of its members, each as its property describes.
    public init(id: UUID, person: Person, lastMessage: Message?, unreadCount: Int, lastReadMessageId: UUID?,
                otherLastReadMessageId: UUID?, mutedUntil: Date?) {
        self.id = id
        self.person = person
        self.lastMessage = lastMessage
        self.unreadCount = unreadCount
        self.unread = unreadCount > 0
        self.lastReadMessageId = lastReadMessageId
        self.otherLastReadMessageId = otherLastReadMessageId
        self.mutedUntil = mutedUntil
    }
}

/// One page of chats, newest activity first.
public struct ChatPage: Codable, Sendable, Equatable {
    /// Newest activity first.
    public var items: [Chat]
    /// The cursor of the next page; nil on the last one.
    public var nextCursor: String?
    /// Makes one of its members, each as its property describes.
    public init(items: [Chat], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }
}

/// `PATCH /v1/chats/{id}`: mute until a time, or unmute with `null`.
public struct ChatUpdate: Codable, Sendable, Equatable {
    /// Mute until then; `null` unmutes.
    public var mutedUntil: Date?
    /// Makes one of its members, each as its property describes.
    public init(mutedUntil: Date?) { self.mutedUntil = mutedUntil }
}

/// `POST /v1/chats/{id}/read`: every message up to this one is read.
public struct ReadMark: Codable, Sendable, Equatable {
    /// A message of this chat: it and everything before it are read.
    public var upTo: UUID
    /// Makes one of its members, each as its property describes.
    public init(upTo: UUID) { self.upTo = upTo }
}

/// A member's read position in a chat (the answer to a read mark, and the `chat.read` event).
public struct ReadState: Codable, Sendable, Equatable {
    /// The chat.
    public var chatId: UUID
    /// Whose position this is.
    public var accountId: UUID
    /// The newest message read.
    public var lastReadMessageId: UUID?
    /// My unread count after the mark (in the event: for the reader, 0 for the other side's copy).
    public var unreadCount: Int
    /// Makes one of its members, each as its property describes.
    public init(chatId: UUID, accountId: UUID, lastReadMessageId: UUID?, unreadCount: Int) {
        self.chatId = chatId
        self.accountId = accountId
        self.lastReadMessageId = lastReadMessageId
        self.unreadCount = unreadCount
    }
}

/// An attachment as the chat's profile lists it, with the message that carries it.
public struct ChatAttachment: Codable, Sendable, Equatable {
    /// The attachment.
    public var attachment: Attachment
    /// The message that carries it.
    public var messageId: UUID
    /// Who sent it.
    public var authorId: UUID
    /// When it was sent.
    public var sentAt: Date
    /// Makes one of its members, each as its property describes.
    public init(attachment: Attachment, messageId: UUID, authorId: UUID, sentAt: Date) {
        self.attachment = attachment
        self.messageId = messageId
        self.authorId = authorId
        self.sentAt = sentAt
    }
}

/// One page of a chat's attachments, newest first.
public struct ChatAttachmentPage: Codable, Sendable, Equatable {
    /// Newest first.
    public var items: [ChatAttachment]
    /// The cursor of the next page; nil on the last one.
    public var nextCursor: String?
    /// Makes one of its members, each as its property describes.
    public init(items: [ChatAttachment], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }
}
