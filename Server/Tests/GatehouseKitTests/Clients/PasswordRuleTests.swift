import GatehouseAPI
import GatehouseScreens
import Testing

/// The one password rule the server refuses with and the forms explain.
@Suite("Password rule, shared by server and SDK")
struct PasswordRuleTests {
    @Test("each part of the rule, in order; control characters are refused before anything else")
    func problems() {
        let rule = PasswordRule()
        #expect(rule.problem(with: "secret-91!") == nil)
        #expect(rule.problem(with: "s1!") == .tooShort(minimum: 6))
        #expect(rule.problem(with: "Aa1!" + String(repeating: "x", count: 69)) == .tooLong(maximum: 72))
        #expect(rule.problem(with: "secret!!") == .needsDigit)
        #expect(rule.problem(with: "secret11") == .needsSpecialCharacter)
        for control in ["secret-91!\u{0}", "secret-91!\u{0}more", "sec\tret1!", "secret-91!\u{7F}", "secret1\u{1}"] {
            #expect(rule.problem(with: control) == .controlCharacter, "\(control.debugDescription)")
        }
    }

    @Test("the forms explain every problem, in both languages")
    func formsExplainEveryProblem() {
        let cases = ["s1!", "Aa1!" + String(repeating: "x", count: 69), "secret!!", "secret11", "secret-91!\u{0}x"]
        let keys = cases.compactMap { InputRules.passwordProblem($0) }
        #expect(keys == ["field.passwordShort", "field.passwordLong", "field.passwordDigit", "field.passwordSpecial", "field.passwordControl"])
        for language in ["en", "ru"] {
            #expect(Set(keys).isSubset(of: Localizer.keys(language)), "\(language)")
        }
    }
}
