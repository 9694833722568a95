import GatehouseScreens
import Testing

/// The screens' two languages: the same keys, and no English left on a Russian screen.
@Suite("The screens' strings")
struct LocalizerTests {
    /// Russian texts that read as in English on purpose: names (the apps', the identity providers', an example address).
    static let namesAsWritten: Set<String> = ["Sign To Login", "OneOnOne", "name@example.com", "Apple", "Google"]

    @Test("both languages have the same keys; a Russian text the same as its English one is only a name")
    func noEnglishLeftInRussian() {
        #expect(Localizer.keys("en") == Localizer.keys("ru"), "\(Localizer.keys("en").symmetricDifference(Localizer.keys("ru")).sorted())")
        let en = Localizer(language: "en"), ru = Localizer(language: "ru")
        let untranslated = Localizer.keys("ru").filter { key in
            let text = ru(key)
            return text == en(key) && text.contains(where: \.isLetter) && !Self.namesAsWritten.contains(text)
        }
        #expect(untranslated.isEmpty, "\(untranslated.sorted().map { "\($0): \(ru($0))" })")
        // The two that were (a demo run with --language ru showed them).
        #expect(ru("wslogin.submit") == "Войти" && ru("stl.profile.email") == "Электронная почта")
    }
}
