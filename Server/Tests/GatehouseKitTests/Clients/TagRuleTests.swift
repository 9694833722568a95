import GatehouseAPI
import Testing

/// The tag rule the server refuses with and the forms explain: read byte by byte, it must say what
/// the rule says of characters.
@Suite("Tag rule, shared by server and SDK")
struct TagRuleTests {
    /// The rule as it is written, character by character: the reference.
    static func reference(_ tag: String) -> TagRule.Problem? {
        if tag.count < TagRule.minLength { return .tooShort(minimum: TagRule.minLength) }
        if tag.count > TagRule.maxLength { return .tooLong(maximum: TagRule.maxLength) }
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789_.")
        if !tag.allSatisfy({ allowed.contains($0) }) { return .invalidCharacters }
        if !tag.contains(where: { $0.isLetter }) { return .needsLetter }
        return nil
    }

    @Test("each part of the rule, in order, for chosen tags and 20,000 random ones: what the rule written by characters says")
    func problems() {
        #expect(TagRule.problem(with: "ann.b_1") == nil)
        #expect(TagRule.problem(with: "ab") == .tooShort(minimum: 3))
        #expect(TagRule.problem(with: String(repeating: "a", count: 33)) == .tooLong(maximum: 32))
        #expect(TagRule.problem(with: "123_.") == .needsLetter)
        #expect(TagRule.problem(with: "ann!") == .invalidCharacters)
        #expect(TagRule.problem(with: "ann\u{301}") == .invalidCharacters)  // a combining accent: one character "ń"
        #expect(TagRule.problem(with: "Ann") == .invalidCharacters)  // not canonical
        #expect(TagRule.normalize("  @Ann.B_1 ") == "ann.b_1")
        let alphabet: [String] = ["a", "z", "q", "0", "9", "_", ".", "A", "Z", "@", " ", "-", "é", "ё", "😀", "\u{301}", "\u{0}", "ß", "ﬁ", "١"]
        var random = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let tag = (0..<Int.random(in: 0...36, using: &random)).map { _ in alphabet.randomElement(using: &random)! }.joined()
            #expect(TagRule.problem(with: tag) == Self.reference(tag), "\(tag.unicodeScalars.map { String($0.value, radix: 16) })")
        }
    }
}
