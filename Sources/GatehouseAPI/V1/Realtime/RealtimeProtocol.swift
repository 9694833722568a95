import Foundation

extension V1 {
    /// `GET /v1/realtime`: one WebSocket per device carrying my events in order (docs/messenger.md).
    ///
    /// Authenticate with `Authorization: Bearer …` on the upgrade, or, for clients that cannot set
    /// headers, with a first text frame `{"type":"auth","token":"…"}`. `?since=SEQ` replays what
    /// came after `SEQ`. The server then sends `{"type":"ready","seq":N}` (N: my newest event),
    /// the missed events, and every new event as it happens, each as one text frame.
    public enum Realtime {
        /// The realtime WebSocket's path.
        public static let path = "/v1/realtime"

        /// Close codes beyond RFC 6455's.
        public enum CloseCode {
            /// No valid token (in the header, or in the first frame within the auth timeout).
            public static let unauthorized: UInt16 = 4001
            /// The session was ended (logout, revoked, password changed) or expired.
            public static let sessionEnded: UInt16 = 4002
        }
    }
}

/// What a realtime event says happened.
public enum RealtimeEventKind: String, Codable, Sendable, CaseIterable {
    /// A message was sent (`payload`: the message).
    case messageCreated = "message.created"
    /// A message was edited (`payload`: the message).
    case messageUpdated = "message.updated"
    /// An edit a later `message.updated` of the same message supersedes: its place in the sequence
    /// is kept (numbers stay gap-free) and its content dropped (``SupersededEdit``). Nothing to do.
    case messageSuperseded = "message.superseded"
    /// A message was deleted (`payload`: the deletion).
    case messageDeleted = "message.deleted"
    /// A chat was read (`payload`: the read state).
    case chatRead = "chat.read"
    /// A chat was deleted (`payload`: the chat).
    case chatDeleted = "chat.deleted"
    /// A friend request came (`payload`: the person).
    case friendRequested = "friend.requested"
    /// A friend request was accepted (`payload`: the person).
    case friendAccepted = "friend.accepted"
    /// A friendship or request ended (`payload`: the removal).
    case friendRemoved = "friend.removed"
    /// A person's profile changed (`payload`: the person).
    case profileUpdated = "profile.updated"
    /// Money moved into or out of my wallet (``TransferResult``: the transfer and my balance after it).
    case walletTransfer = "wallet.transfer"
    /// A money request from me or to me was made (``MoneyRequest``).
    case walletRequestCreated = "wallet.request.created"
    /// A money request changed state: paid, declined, cancelled, expired, repaid (``MoneyRequest``).
    case walletRequestUpdated = "wallet.request.updated"
}

/// `message.deleted`: a message gone for everyone (a tombstone now) or only for me.
public struct MessageDeletion: Codable, Sendable, Equatable {
    /// For me only, or for everyone in the chat.
    public enum Scope: String, Codable, Sendable, CaseIterable {
        /// Gone from my copy of the chat only.
        case me
        /// Gone for everyone in the chat.
        case everyone
    }
    /// The chat.
    public var chatId: UUID
    /// The message.
    public var messageId: UUID
    /// For whom it is deleted.
    public var scope: Scope
    /// Makes one of its members, each as its property describes.
    public init(chatId: UUID, messageId: UUID, scope: Scope) {
        self.chatId = chatId
        self.messageId = messageId
        self.scope = scope
    }
}

/// `chat.deleted`: the chat left my list (deleted on another of my devices).
public struct ChatDeletion: Codable, Sendable, Equatable {
    /// The chat.
    public var chatId: UUID
    /// Makes one of its members, each as its property describes.
    public init(chatId: UUID) { self.chatId = chatId }
}

/// `message.superseded`: an edit of `messageId` that a later `message.updated` replaces.
public struct SupersededEdit: Codable, Sendable, Equatable {
    /// The chat.
    public var chatId: UUID
    /// The message.
    public var messageId: UUID
    /// Makes one of its members, each as its property describes.
    public init(chatId: UUID, messageId: UUID) {
        self.chatId = chatId
        self.messageId = messageId
    }
}

/// `friend.removed`: a friendship or a request between us is gone.
public struct FriendRemoval: Codable, Sendable, Equatable {
    /// Unfriended, a request declined, or a request cancelled.
    public enum Reason: String, Codable, Sendable, CaseIterable {
        /// One of the two unfriended the other.
        case removed
        /// The person asked declined the request.
        case declined
        /// The person who asked took the request back.
        case cancelled
    }
    /// The person.
    public var personId: UUID
    /// Why, in the words of whoever did it (kept in the audit trail).
    public var reason: Reason
    /// Makes one of its members, each as its property describes.
    public init(personId: UUID, reason: Reason) {
        self.personId = personId
        self.reason = reason
    }
}

/// One event of my sequence: `seq` is gap-free and increasing per account, so a client that
/// saw `seq` N and then N+2 knows it missed one (and reconnects with `?since=N`).
public struct RealtimeEvent: Sendable, Equatable {
    /// What an event carries, by its kind.
    public enum Payload: Sendable, Equatable {
        /// A message, sent or edited.
        case message(Message)
        /// A deleted message.
        case deletion(MessageDeletion)
        /// A chat read up to a message.
        case read(ReadState)
        /// A deleted chat.
        case chatDeletion(ChatDeletion)
        /// A person (a request, an accepted friend, a changed profile).
        case person(Person)
        /// A friendship or request that ended.
        case friendRemoval(FriendRemoval)
        /// A transfer, sent or received.
        case transfer(TransferResult)
        /// A money request, asked or answered.
        case moneyRequest(MoneyRequest)
        /// An edit that a newer one replaced.
        case superseded(SupersededEdit)
    }

    /// The event's number in my stream (strictly increasing: resume after the last one seen).
    public var seq: Int64
    /// What happened.
    public var kind: RealtimeEventKind
    /// What it carries.
    public var payload: Payload
    /// Makes one of its members, each as its property describes.
    public init(seq: Int64, kind: RealtimeEventKind, payload: Payload) {
        self.seq = seq
        self.kind = kind
        self.payload = payload
    }
}

/// One frame of the realtime socket, either way.
public enum RealtimeFrame: Sendable, Equatable {
    /// Client → server: the token, for clients that cannot set the header.
    case auth(token: String)
    /// Server → client: authenticated; `seq` is my newest event now.
    case ready(seq: Int64)
    /// Server → client: one event.
    case event(RealtimeEvent)
    /// Server → client: events after `since` are no longer kept: reload, then continue from `seq`.
    case resync(seq: Int64)
    /// Server → client: a frame it could not take.
    case error(code: String, message: String)
}

extension RealtimeFrame: Codable {
    private enum Keys: String, CodingKey { case type, seq, data, token, code, message }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        let type = try c.decode(String.self, forKey: .type)
        switch type {
        case "auth": self = .auth(token: try c.decode(String.self, forKey: .token))
        case "ready": self = .ready(seq: try c.decode(Int64.self, forKey: .seq))
        case "resync": self = .resync(seq: try c.decode(Int64.self, forKey: .seq))
        case "error": self = .error(code: try c.decode(String.self, forKey: .code), message: try c.decode(String.self, forKey: .message))
        default:
            guard let kind = RealtimeEventKind(rawValue: type) else {
                throw DecodingError.dataCorruptedError(forKey: .type, in: c, debugDescription: "unknown frame type \(type)")
            }
            let seq = try c.decode(Int64.self, forKey: .seq)
            let payload: RealtimeEvent.Payload
            switch kind {
            case .messageCreated, .messageUpdated: payload = .message(try c.decode(Message.self, forKey: .data))
            case .messageDeleted: payload = .deletion(try c.decode(MessageDeletion.self, forKey: .data))
            case .chatRead: payload = .read(try c.decode(ReadState.self, forKey: .data))
            case .chatDeleted: payload = .chatDeletion(try c.decode(ChatDeletion.self, forKey: .data))
            case .friendRequested, .friendAccepted, .profileUpdated: payload = .person(try c.decode(Person.self, forKey: .data))
            case .friendRemoved: payload = .friendRemoval(try c.decode(FriendRemoval.self, forKey: .data))
            case .walletTransfer: payload = .transfer(try c.decode(TransferResult.self, forKey: .data))
            case .walletRequestCreated, .walletRequestUpdated: payload = .moneyRequest(try c.decode(MoneyRequest.self, forKey: .data))
            case .messageSuperseded: payload = .superseded(try c.decode(SupersededEdit.self, forKey: .data))
            }
            self = .event(RealtimeEvent(seq: seq, kind: kind, payload: payload))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        switch self {
        case .auth(let token):
            try c.encode("auth", forKey: .type)
            try c.encode(token, forKey: .token)
        case .ready(let seq):
            try c.encode("ready", forKey: .type)
            try c.encode(seq, forKey: .seq)
        case .resync(let seq):
            try c.encode("resync", forKey: .type)
            try c.encode(seq, forKey: .seq)
        case .error(let code, let message):
            try c.encode("error", forKey: .type)
            try c.encode(code, forKey: .code)
            try c.encode(message, forKey: .message)
        case .event(let event):
            try c.encode(event.kind.rawValue, forKey: .type)
            try c.encode(event.seq, forKey: .seq)
            switch event.payload {
            case .message(let value): try c.encode(value, forKey: .data)
            case .deletion(let value): try c.encode(value, forKey: .data)
            case .read(let value): try c.encode(value, forKey: .data)
            case .chatDeletion(let value): try c.encode(value, forKey: .data)
            case .person(let value): try c.encode(value, forKey: .data)
            case .friendRemoval(let value): try c.encode(value, forKey: .data)
            case .transfer(let value): try c.encode(value, forKey: .data)
            case .moneyRequest(let value): try c.encode(value, forKey: .data)
            case .superseded(let value): try c.encode(value, forKey: .data)
            }
        }
    }
}
