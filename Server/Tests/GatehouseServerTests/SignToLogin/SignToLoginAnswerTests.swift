import Foundation
import GatehouseAPI
import GatehouseFoundation
import Testing

/// The typed answers of Sign To Login on the wire: the spec's member order (`res` first), every
/// history member written (`null` when empty), and a code a client does not know still read.
@Suite("Sign To Login answers")
struct SignToLoginAnswerTests {
    @Test("an answer writes its members in the spec's order, res first, and leaves out the absent ones")
    func answer_keepsTheSpecsOrder() throws {
        // setup
        let answer = SignToLoginAnswer(res: .ok, similarity: 0.74, signatureid: "d31ec73af19a4b68", sessionid: "s/1")
        // MUT
        let text = try OrderedJSONEncoder.encode(answer)
        // validate
        #expect(text == #"{"res":"0","similarity":0.74,"signatureid":"d31ec73af19a4b68","sessionid":"s/1"}"#)
        #expect(try OrderedJSONEncoder.encode(SignToLoginAnswer.refused(.keyRefusedOrDocumentChanged, "Application with key 'x' is not registered or disabled"))
                == #"{"res":"1","error":"Application with key 'x' is not registered or disabled"}"#)
    }

    @Test("a history entry writes all twelve members, null when empty, and reads back the same")
    func historyEntry_writesEveryMember() throws {
        // setup
        let entry = SignToLoginHistoryEntry(name: nil, similarity: 0.5, warning: true, time: "27.11.2026 10:00:00", clientTime: nil, location: nil,
                                            country: "RU", city: nil, address: nil, photo: nil, signatureID: "ab", documentHash: "h")
        let answer = SignToLoginAnswer(res: .ok, history: [entry])
        // MUT
        let text = try OrderedJSONEncoder.encode(answer)
        // validate
        #expect(text == #"{"res":"0","history":[{"name":null,"similarity":0.5,"warning":true,"time":"27.11.2026 10:00:00","client_time":null,"location":null,"country":"RU","city":null,"address":null,"photo":null,"signatureid":"ab","document_hash":"h"}]}"#)
        #expect(try JSONDecoder().decode(SignToLoginAnswer.self, from: Data(text.utf8)) == answer)
    }

    @Test("a res code the client does not know is read as itself, not refused")
    func unknownRes_isRead() throws {
        let answer = try JSONDecoder().decode(SignToLoginAnswer.self, from: Data(#"{"res":"99","error":"newer"}"#.utf8))
        #expect(answer.res == SignToLoginAPI.Res(rawValue: "99") && !SignToLoginAPI.Res.known.contains(answer.res))
        #expect(answer.error == "newer")
    }

    @Test("text is escaped as JSON needs and no more: quotes, backslashes, control characters; slashes and Unicode as they are")
    func strings_areEscapedMinimally() throws {
        #expect(try OrderedJSONEncoder.encode(["a\"b\\c/d\né\u{01}"]) == #"["a\"b\\c/d\né\u0001"]"#, "JSONString's escaping")
        #expect(throws: EncodingError.self) { try OrderedJSONEncoder.encode([Double.nan]) }
    }
}
