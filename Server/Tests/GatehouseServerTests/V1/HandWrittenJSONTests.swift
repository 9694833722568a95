import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehouseMessenger
import GatehouseSurfaces
import GatehouseWallet
import HTTPTypes
import Hummingbird
import NIOCore
import Testing

/// What the server writes by hand for its hot paths must be what the general machinery would
/// have: the same JSON bytes as `V1.encoder`, the same token out of an `Authorization` header.
@Suite("Hand-written JSON and headers")
struct HandWrittenJSONTests {
    /// Every character class the escaper treats apart, and some it must leave alone.
    static let alphabet: [String] = (0..<0x20).map { String(UnicodeScalar(UInt8($0))) }
        + ["\"", "\\", "/", "\u{7F}", "a", "Z", " ", "é", "€", "😀", "\u{2028}", "\u{FEFF}", "ё", "0"]

    static func text(_ random: inout SystemRandomNumberGenerator) -> String {
        String((0..<Int.random(in: 0...12, using: &random)).map { _ in Character(alphabet.randomElement(using: &random)!) })
    }

    static func optional(_ random: inout SystemRandomNumberGenerator) -> String? {
        Bool.random(using: &random) ? nil : text(&random)
    }

    @Test("an account written by hand is byte for byte what V1.encoder writes, for 2,000 random accounts")
    func account_handWritten_matchesEncoder() async throws {
        var random = SystemRandomNumberGenerator()
        for index in 0..<2_000 {
            // Seconds of a debug build's processor time: the thread is given up now and then, or two such tests hold
            // both of a two-core machine's threads and starve the tests whose peers must answer in time.
            if index % 20 == 0 { await Task.yield() }
            let account = Account(
                id: UUID(), email: Self.optional(&random), emailConfirmed: .random(using: &random), pendingEmail: Self.optional(&random),
                phone: Self.optional(&random), phoneVerified: .random(using: &random), tag: Self.optional(&random),
                firstName: Self.optional(&random), lastName: Self.optional(&random), middleName: Self.optional(&random),
                birthday: Self.optional(&random), locale: Self.optional(&random), avatarUrl: Self.optional(&random),
                createdAt: Date(timeIntervalSince1970: .random(in: 0...4_000_000_000, using: &random)),
                updatedAt: Date(timeIntervalSince1970: .random(in: 0...4_000_000_000, using: &random))
            )
            let expected = try V1.encoder.encode(account)
            let written = Data(buffer: account.jsonBuffer)
            #expect(written == expected, "\(String(decoding: written, as: UTF8.self)) ≠ \(String(decoding: expected, as: UTF8.self))")
            // And it reads back as the same account.
            #expect(try V1.decoder.decode(Account.self, from: written).id == account.id)
        }
    }

    @Test("GET /api/users/user's answer written by hand is byte for byte what V1.encoder writes, nulls and partner zones included")
    func phoneUser_handWritten_matchesEncoder() async throws {
        var random = SystemRandomNumberGenerator()
        for index in 0..<2_000 {
            if index % 20 == 0 { await Task.yield() }  // as above
            let parts = index % 4 == 0
                ? [PhonePartnerZone(domainId: Self.text(&random), name: Self.text(&random), forfeit: .random(in: -10...10, using: &random),
                                    isBanned: .random(using: &random), discount: .random(in: 0...100, using: &random))]
                : []
            let user = PhoneUser(
                id: UUID(), login: Self.text(&random), name: Self.text(&random), firstName: Self.optional(&random), lastName: Self.optional(&random),
                surName: Self.optional(&random), phone: Self.optional(&random), email: Self.optional(&random), birthday: Self.optional(&random),
                room: Self.optional(&random), base: Self.optional(&random), isConfirmed: .random(using: &random), fcm: Self.optional(&random), parts: parts)
            let expected = try V1.encoder.encode(user)
            let written = Data(buffer: user.jsonBuffer)
            #expect(written == expected, "\(String(decoding: written, as: UTF8.self)) ≠ \(String(decoding: expected, as: UTF8.self))")
            #expect(try V1.decoder.decode(PhoneUser.self, from: written) == user)
        }
    }

    @Test("a message written by hand is byte for byte what V1.encoder writes, with and without its optional parts, for 2,000 random messages")
    func message_handWritten_matchesEncoder() async throws {
        var random = SystemRandomNumberGenerator()
        // Whole seconds, the wire's precision, so that the message reads back equal.
        func date() -> Date { Date(timeIntervalSince1970: Double(Int.random(in: 0...4_000_000_000, using: &random))) }
        for index in 0..<2_000 {
            if index % 20 == 0 { await Task.yield() }  // as above
            let attachments = (0..<(index % 5 == 0 ? Int.random(in: 1...2, using: &random) : 0)).map { _ in
                Attachment(id: UUID(), kind: Bool.random(using: &random) ? .image : .file, contentType: Self.text(&random),
                           fileName: Self.text(&random), size: .random(in: 0...10_000_000, using: &random), url: Self.text(&random))
            }
            let message = Message(
                id: UUID(), chatId: UUID(), authorId: UUID(), text: Self.text(&random), createdAt: date(),
                editedAt: index % 3 == 0 ? date() : nil, deleted: .random(using: &random),
                replyTo: index % 4 == 0 ? ReplyPreview(messageId: UUID(), authorId: UUID(), excerpt: Self.optional(&random), deleted: .random(using: &random)) : nil,
                forwardedFrom: index % 6 == 0 ? ForwardOrigin(authorId: UUID(), sentAt: date()) : nil,
                attachments: attachments, clientMessageId: Self.optional(&random),
                payment: index % 7 == 0 ? PaymentNote(kind: .request, amount: .random(in: 1...1_000_000, using: &random), transferId: nil,
                                                      requestId: UUID(), requestKind: nil)
                    : index % 7 == 1 ? PaymentNote(kind: .transfer, amount: .random(in: 1...1_000_000, using: &random), transferId: UUID(),
                                                   requestId: nil, requestKind: .loan) : nil)
            let expected = try V1.encoder.encode(message)
            #expect(message.json == expected, "\(String(decoding: message.json, as: UTF8.self)) ≠ \(String(decoding: expected, as: UTF8.self))")
            #expect(try V1.decoder.decode(Message.self, from: message.json) == message)
        }
    }

    @Test("a transfer, a transfer's request and a payment's note written by hand are byte for byte what V1.encoder writes, for 2,000 random ones of each")
    func transfer_handWritten_matchesEncoder() async throws {
        var random = SystemRandomNumberGenerator()
        func date() -> Date { Date(timeIntervalSince1970: Double(Int.random(in: 0...4_000_000_000, using: &random))) }
        func party() -> WalletParty {
            WalletParty(id: UUID(), tag: Self.optional(&random), firstName: Self.optional(&random), lastName: Self.optional(&random),
                        avatarUrl: Self.optional(&random))
        }
        func same<T: JSONWritable & Decodable & Equatable>(_ value: T) throws {
            let expected = try V1.encoder.encode(value)
            let written = Data(buffer: value.jsonBuffer)
            #expect(written == expected, "\(String(decoding: written, as: UTF8.self)) ≠ \(String(decoding: expected, as: UTF8.self))")
            #expect(try V1.decoder.decode(T.self, from: written) == value)
        }
        for index in 0..<2_000 {
            if index % 20 == 0 { await Task.yield() }  // as above
            try same(Transfer(id: UUID(), kind: TransferKind.allCases.randomElement(using: &random)!, from: index % 3 == 0 ? nil : party(), to: party(),
                              amount: .random(in: Int64.min...Int64.max, using: &random), comment: Self.optional(&random),
                              requestId: index % 2 == 0 ? UUID() : nil, createdAt: date()))
            try same(NewTransfer(to: PartyReference(phone: Self.optional(&random), tag: Self.optional(&random), email: Self.optional(&random)),
                                 amount: .random(in: Int64.min...Int64.max, using: &random), comment: Self.optional(&random)))
            try same(PaymentNote(kind: PaymentNote.Kind.allCases.randomElement(using: &random)!, amount: .random(in: 1...1_000_000_000, using: &random),
                                 transferId: Bool.random(using: &random) ? UUID() : nil, requestId: Bool.random(using: &random) ? UUID() : nil,
                                 requestKind: index % 3 == 0 ? nil : MoneyRequestKind.allCases.randomElement(using: &random)))
        }
    }

    @Test("the bearer token: the scheme in any case, blanks around it dropped, anything else refused")
    func bearerToken_forms() {
        func token(_ header: String?) -> String? {
            var fields = HTTPFields()
            if let header { fields[.authorization] = header }
            let request = Request(head: HTTPRequest(method: .get, scheme: "http", authority: "x", path: "/v1/me", headerFields: fields),
                                  body: RequestBody(buffer: ByteBuffer()))
            return request.bearerToken
        }
        #expect(token("Bearer abc.DEF-123") == "abc.DEF-123")
        #expect(token("bearer abc") == "abc")
        #expect(token("BEARER abc") == "abc")
        #expect(token("Bearer   abc \t ") == "abc")
        #expect(token(" \tBearer abc") == "abc")
        #expect(token("Bearer a b") == "a b")
        #expect(token("Bearer é€") == "é€")
        #expect(token(nil) == nil)
        #expect(token("") == nil)
        #expect(token("Bearer") == nil)
        #expect(token("Bearer ") == nil)
        #expect(token("Bearer \t ") == nil)
        #expect(token("Bearer\tabc") == nil)
        #expect(token("Bearerabc") == nil)
        #expect(token("Basic YWJjOmRlZg==") == nil)
        #expect(token("Bearex abc") == nil)
        #expect(token("Bear") == nil)
    }
}
