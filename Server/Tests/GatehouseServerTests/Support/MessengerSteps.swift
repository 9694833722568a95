import Foundation
import GatehouseAPI
import GatehouseServer
import GatehouseSurfaces
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// A signed-up person: their token and id.
struct Someone: Sendable {
    var token: String
    var id: UUID
    var tag: String
}

/// Messenger scenario steps over the wire, each expecting its success status.
extension V1Client {
    typealias M = V1.Messenger

    /// Signs up a person with a tag (email `<tag>@example.com`).
    func person(_ tag: String, first: String? = nil, last: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Someone {
        let session = try await signedUp(email: "\(tag.lowercased())@example.com", tag: tag, firstName: first ?? tag.capitalized, lastName: last ?? "Smith",
                                         sourceLocation: sourceLocation)
        return Someone(token: session.token, id: session.account.id, tag: tag)
    }

    func path(_ endpoint: some EndpointDeclaration, _ id: UUID, name: String = "id") -> String {
        V1.filling(endpoint.path, [name: id.uuidString.lowercased()])
    }

    func befriend(_ a: Someone, _ b: Someone, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let asked = try await post(M.requestFriend.path, PersonReference(personId: b.id), token: a.token)
        #expect(asked.status == .ok, "request: \(asked.text)", sourceLocation: sourceLocation)
        let accepted = try await post(M.requestFriend.path, PersonReference(personId: a.id), token: b.token)
        #expect(accepted.status == .ok, "accept: \(accepted.text)", sourceLocation: sourceLocation)
        #expect(try accepted.decoded(as: Person.self).relation == .friend, sourceLocation: sourceLocation)
    }

    func openChat(_ a: Someone, with b: Someone, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Chat {
        let response = try await post(M.openChat.path, PersonReference(personId: b.id), token: a.token)
        #expect(response.status == .ok, "open chat: \(response.text)", sourceLocation: sourceLocation)
        return try response.decoded(as: Chat.self)
    }

    @discardableResult
    func send(_ text: String, in chat: UUID, by someone: Someone, clientID: String = UUID().uuidString, replyTo: UUID? = nil,
              attachments: [UUID]? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Message {
        let response = try await post(path(M.send, chat), SendMessage(text: text, replyTo: replyTo, attachmentIds: attachments, clientMessageId: clientID),
                                      token: someone.token)
        #expect(response.status == .created, "send: \(response.text)", sourceLocation: sourceLocation)
        return try response.decoded(as: Message.self)
    }

    func history(_ chat: UUID, for someone: Someone, query: String = "", sourceLocation: SourceLocation = #_sourceLocation) async throws -> MessagePage {
        let response = try await get(path(M.messages, chat) + query, token: someone.token)
        #expect(response.status == .ok, "history: \(response.text)", sourceLocation: sourceLocation)
        return try response.decoded(as: MessagePage.self)
    }

    func chats(of someone: Someone, query: String = "", sourceLocation: SourceLocation = #_sourceLocation) async throws -> ChatPage {
        let response = try await get(M.chats.path + query, token: someone.token)
        #expect(response.status == .ok, "chats: \(response.text)", sourceLocation: sourceLocation)
        return try response.decoded(as: ChatPage.self)
    }

    func friends(of someone: Someone, query: String = "", sourceLocation: SourceLocation = #_sourceLocation) async throws -> FriendsOverview {
        let response = try await get(M.friends.path + query, token: someone.token)
        #expect(response.status == .ok, "friends: \(response.text)", sourceLocation: sourceLocation)
        return try response.decoded(as: FriendsOverview.self)
    }

    func upload(_ bytes: [UInt8], type: String?, name: String? = nil, by someone: Someone, sourceLocation: SourceLocation = #_sourceLocation) async throws -> GatehouseAPI.Attachment {
        let query = name.map { "?name=" + ($0.addingPercentEncoding(withAllowedCharacters: MessengerController.attributeCharacters) ?? $0) } ?? ""
        let response = try await post(M.upload.path + query, body: ByteBuffer(bytes: bytes), contentType: type, token: someone.token)
        #expect(response.status == .created, "upload: \(response.text)", sourceLocation: sourceLocation)
        return try response.decoded(as: GatehouseAPI.Attachment.self)
    }
}

/// Bytes of real images and files, made here.
enum SampleFiles {
    /// A 1×1 PNG (the avatar tests' image).
    static let png = [UInt8](AvatarBlobTests.png)
    static let pdf: [UInt8] = Array("%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n".utf8)
    static func text(_ size: Int) -> [UInt8] { (0..<size).map { UInt8(97 + $0 % 26) } }
}
