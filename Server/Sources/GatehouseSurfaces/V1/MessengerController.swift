import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehouseMessenger
import GatehousePlatform
import Hummingbird
import NIOCore

/// `/v1` messenger (docs/messenger.md): people, friends, chats, messages, attachments and
/// privacy, each operation as `V1.Messenger` declares it.
package struct MessengerController: Sendable {
    package let people: PeopleService
    package let friends: FriendsService
    package let chats: ChatsService
    package let messages: MessagesService
    package let attachments: AttachmentService
    package let limits: GatehouseConfiguration.Limits
    package let messenger: GatehouseConfiguration.Messenger


    package func addRoutes(to v1: some RouterMethods<GatehouseRequestContext>) {
        typealias E = V1.Messenger
        v1.on(E.people, limits: limits, use: searchPeople)
        v1.on(E.person, limits: limits, use: person)
        v1.on(E.friends, limits: limits, use: friendsOverview)
        v1.on(E.requestFriend, limits: limits, use: requestFriend)
        v1.on(E.acceptRequest, limits: limits, use: acceptRequest)
        v1.on(E.declineRequest, limits: limits, use: declineRequest)
        v1.on(E.cancelRequest, limits: limits, use: cancelRequest)
        v1.on(E.removeFriend, limits: limits, use: removeFriend)
        v1.on(E.chats, limits: limits, use: listChats)
        v1.on(E.openChat, limits: limits, use: openChat)
        v1.on(E.chat, limits: limits, use: chat)
        v1.on(E.updateChat, limits: limits, use: updateChat)
        v1.on(E.deleteChat, limits: limits, use: deleteChat)
        v1.on(E.markRead, limits: limits, use: markRead)
        v1.on(E.chatAttachments, limits: limits, use: chatAttachments)
        v1.on(E.messages, limits: limits, use: history)
        v1.on(E.send, limits: limits, use: send)
        v1.on(E.edit, limits: limits, use: edit)
        v1.on(E.deleteMessage, limits: limits, use: deleteMessage)
        v1.on(E.forward, limits: limits, use: forward)
        v1.on(E.upload, raw: upload)
        v1.on(E.download, raw: download)
        v1.on(E.privacy, limits: limits, use: privacy)
        v1.on(E.updatePrivacy, limits: limits, use: updatePrivacy)
        v1.on(E.blocked, limits: limits, use: blocked)
        v1.on(E.block, limits: limits, use: block)
        v1.on(E.unblock, limits: limits, use: unblock)
    }

    // MARK: Reading requests

    /// The signed-in person (an account with a tag).
    private func person(_ context: GatehouseRequestContext) throws -> AccountSnapshot {
        let account = try context.requireSessionAccount()
        try people.requirePerson(account)
        return account
    }

    private func query(_ request: Request, _ name: String) -> String? {
        request.uri.queryParameters.get(name).flatMap { $0.isEmpty ? nil : $0 }
    }

    // MARK: People and friends

    @Sendable package func searchPeople(_ input: SearchQuery, _ request: Request, context: GatehouseRequestContext) async throws -> PeoplePage {
        let me = try person(context)
        return try await people.search(viewer: me.id, query: input.q, cursor: input.cursor, limit: input.limit)
    }

    @Sendable package func person(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> Person {
        let me = try person(context)
        return try await people.person(context.id(), viewer: me.id)
    }

    @Sendable package func friendsOverview(_ input: FriendsQuery, _ request: Request, context: GatehouseRequestContext) async throws -> FriendsOverview {
        let me = try person(context)
        return try await friends.overview(viewer: me.id, sort: input.sort ?? .name, query: input.q)
    }

    @Sendable package func requestFriend(_ input: PersonReference, _ request: Request, context: GatehouseRequestContext) async throws -> Person {
        try await friends.request(viewer: person(context).id, target: input.personId)
    }

    @Sendable package func acceptRequest(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> Person {
        try await friends.accept(viewer: person(context).id, request: context.id())
    }

    @Sendable package func declineRequest(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> NoContent {
        try await friends.decline(viewer: person(context).id, request: context.id())
        return NoContent()
    }

    @Sendable package func cancelRequest(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> NoContent {
        try await friends.cancel(viewer: person(context).id, request: context.id())
        return NoContent()
    }

    @Sendable package func removeFriend(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> NoContent {
        try await friends.remove(viewer: person(context).id, person: context.id("personId"))
        return NoContent()
    }

    // MARK: Chats

    @Sendable package func listChats(_ input: SearchQuery, _ request: Request, context: GatehouseRequestContext) async throws -> ChatPage {
        try await chats.list(viewer: person(context).id, query: input.q, cursor: input.cursor, limit: input.limit)
    }

    @Sendable package func openChat(_ input: PersonReference, _ request: Request, context: GatehouseRequestContext) async throws -> Chat {
        try await chats.open(viewer: person(context).id, person: input.personId)
    }

    @Sendable package func chat(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> Chat {
        try await chats.chat(context.id(), viewer: person(context).id)
    }

    @Sendable package func updateChat(_ input: ChatUpdate, _ request: Request, context: GatehouseRequestContext) async throws -> Chat {
        try await chats.update(viewer: person(context).id, chat: context.id(), mutedUntil: input.mutedUntil)
    }

    @Sendable package func deleteChat(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> NoContent {
        try await chats.delete(viewer: person(context).id, chat: context.id())
        return NoContent()
    }

    @Sendable package func markRead(_ input: ReadMark, _ request: Request, context: GatehouseRequestContext) async throws -> ReadState {
        try await chats.markRead(viewer: person(context).id, chat: context.id(), upTo: input.upTo)
    }

    @Sendable package func chatAttachments(_ input: PageQuery, _ request: Request, context: GatehouseRequestContext) async throws -> ChatAttachmentPage {
        try await chats.attachments(viewer: person(context).id, chat: context.id(),
                                    cursor: input.cursor, limit: input.limit)
    }

    // MARK: Messages

    @Sendable package func history(_ input: HistoryQuery, _ request: Request, context: GatehouseRequestContext) async throws -> MessagePage {
        try await messages.history(viewer: person(context).id, chat: context.id(),
                                   before: input.before, after: input.after, limit: input.limit)
    }

    @Sendable package func send(_ input: SendMessage, _ request: Request, context: GatehouseRequestContext) async throws -> Message {
        try await messages.send(viewer: person(context), chat: context.id(), input)
    }

    @Sendable package func edit(_ input: EditMessage, _ request: Request, context: GatehouseRequestContext) async throws -> Message {
        try await messages.edit(viewer: person(context).id, message: context.id(), text: input.text)
    }

    @Sendable package func deleteMessage(_ input: DeletionQuery, _ request: Request, context: GatehouseRequestContext) async throws -> NoContent {
        try await messages.delete(viewer: person(context).id, message: context.id(), scope: input.scope)
        return NoContent()
    }

    @Sendable package func forward(_ input: ForwardRequest, _ request: Request, context: GatehouseRequestContext) async throws -> ForwardResult {
        ForwardResult(messages: try await messages.forward(viewer: person(context), message: context.id(), input))
    }

    // MARK: Attachments

    /// A raw body (`Content-Type`, file name in `?name=`) or a `multipart/form-data` part `file`.
    @Sendable package func upload(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let me = try person(context)
        let maxBytes = messenger.attachmentMaxBytes
        let contentType = request.headers[.contentType]
        var bytes: Data
        var fileName = query(request, "name")
        var partType: String?
        if let contentType, contentType.lowercased().hasPrefix("multipart/form-data") {
            let boundary = MultipartFormData.boundary(in: contentType)
            let buffer = try await request.collectBody(upTo: maxBytes + 16_384)
            guard let part = try? MultipartFormData.parts(Array(buffer.readableBytesView), boundary: boundary).first(where: { $0.name == "file" }) else {
                throw GatehouseError.invalid(.malformedBody, "error.malformedJSON", "multipart/form-data with a part named file").on(field: "file")
            }
            bytes = Data(part.body)
            fileName = part.fileName ?? fileName
            partType = part.contentType
        } else {
            bytes = Data(try await request.collectBody(upTo: maxBytes).readableBytesView)
            partType = contentType
        }
        let attachment = try await attachments.upload(viewer: me, contentType: partType, fileName: fileName, bytes: bytes)
        return try JSONResponse.make(attachment, status: .init(code: V1.Messenger.upload.successStatus))
    }

    /// The bytes, to members only: `ETag` (the content hash), `If-None-Match`, one `Range`.
    @Sendable package func download(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let me = try context.requireSession()
        let found = try await attachments.download(viewer: me.accountID, attachment: context.id())
        let etag = "\"\(found.blob.hex)\""
        let disposition = found.attachment.kind == .image ? "inline" : "attachment"
        let asciiName = String(found.attachment.fileName.unicodeScalars.map { $0.isASCII && $0 != "\"" && $0 != "\\" ? Character($0) : "_" })
        let encodedName = found.attachment.fileName.addingPercentEncoding(withAllowedCharacters: Self.attributeCharacters) ?? asciiName
        var headers: HTTPFields = [
            .contentType: found.attachment.contentType,
            .eTag: etag,
            .cacheControl: "private, no-cache",
            .acceptRanges: "bytes",
            .init("X-Content-Type-Options")!: "nosniff",
            .contentDisposition: "\(disposition); filename=\"\(asciiName)\"; filename*=UTF-8''\(encodedName)",
            .contentSecurityPolicy: "default-src 'none'; sandbox; frame-ancestors 'none'",
        ]
        if let match = request.headers[.ifNoneMatch], match.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == etag || $0.trimmingCharacters(in: .whitespaces) == "*" }) {
            return Response(status: .notModified, headers: headers)
        }
        let total = found.size
        if let range = request.headers[.range], request.headers[.ifRange].map({ $0 == etag }) ?? true {
            guard let (start, end) = Self.byteRange(range, total: total) else {
                headers[.contentRange] = "bytes */\(total)"
                var response = ProblemDocuments.response(for: GatehouseError(.invalidInput, .rangeNotSatisfiable, LocalizedText("error.rangeNotSatisfiable")),
                                                          request: request, status: .rangeNotSatisfiable)
                response.headers[.contentRange] = "bytes */\(total)"
                return response
            }
            headers[.contentRange] = "bytes \(start)-\(end)/\(total)"
            return Response(status: .partialContent, headers: headers, body: Self.stream(found, start...end))
        }
        return Response(status: .ok, headers: headers, body: Self.stream(found, nil))
    }

    /// The bytes as the blob store hands them over, a chunk at a time, each written before the next is read.
    package static func stream(_ download: AttachmentService.Download, _ range: ClosedRange<Int>?) -> ResponseBody {
        ResponseBody(contentLength: range?.count ?? download.size) { writer in
            try await download.write(range) { try await writer.write($0) }
            try await writer.finish(nil)
        }
    }

    /// RFC 8187 `attr-char`: what a `filename*` value keeps unescaped.
    package static let attributeCharacters = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$&+-.^_`|~")

    /// One `bytes=` range (RFC 9110 14.1.2) within `total`; nil when unsatisfiable or unreadable.
    package static func byteRange(_ header: String, total: Int) -> (Int, Int)? {
        let value = header.trimmingCharacters(in: .whitespaces)
        guard value.lowercased().hasPrefix("bytes="), total > 0 else { return nil }
        let spec = value.dropFirst(6)
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return nil }
        let first = spec[..<dash].trimmingCharacters(in: .whitespaces)
        let last = spec[spec.index(after: dash)...].trimmingCharacters(in: .whitespaces)
        // Digits only (RFC 9110); a number too large for an Int is past any file, and a last
        // position or a suffix past the end is clamped to it, however many digits it has.
        func position(_ text: String) -> Int? {
            guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
            return Int(text) ?? Int.max
        }
        if first.isEmpty {
            guard let suffix = position(last), suffix > 0 else { return nil }
            return (max(0, total - suffix), total - 1)
        }
        guard let start = position(first), start < total else { return nil }
        if last.isEmpty { return (start, total - 1) }
        guard let end = position(last), end >= start else { return nil }
        return (start, min(end, total - 1))
    }

    // MARK: Privacy

    @Sendable package func privacy(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> PrivacySettings {
        try await people.privacy(of: context.requireSession().accountID)
    }

    @Sendable package func updatePrivacy(_ input: PrivacyUpdate, _ request: Request, context: GatehouseRequestContext) async throws -> PrivacySettings {
        try await people.updatePrivacy(of: context.requireSession().accountID, input)
    }

    @Sendable package func blocked(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> PeoplePage {
        try await people.blocked(viewer: person(context).id)
    }

    @Sendable package func block(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> NoContent {
        try await people.block(viewer: person(context).id, person: context.id("personId"))
        return NoContent()
    }

    @Sendable package func unblock(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> NoContent {
        try await people.unblock(viewer: person(context).id, person: context.id("personId"))
        return NoContent()
    }

    package init(people: PeopleService, friends: FriendsService, chats: ChatsService, messages: MessagesService, attachments: AttachmentService, limits: GatehouseConfiguration.Limits, messenger: GatehouseConfiguration.Messenger) {
        self.people = people
        self.friends = friends
        self.chats = chats
        self.messages = messages
        self.attachments = attachments
        self.limits = limits
        self.messenger = messenger
    }
}
