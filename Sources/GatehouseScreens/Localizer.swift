import Foundation
import GatehouseKit

/// Every user-facing string of the screens, in English and Russian, read from the package's
/// resources (`Resources/Strings/en.json`, `ru.json`).
public struct Localizer: Sendable {
    /// The language in use: `en` or `ru`.
    public let language: String
    private let table: [String: String]
    private let fallback: [String: String]

    /// The language the device prefers, when it is one we have; English otherwise.
    public static var device: Localizer {
        let preferred = Locale.preferredLanguages.first?.lowercased() ?? "en"
        return Localizer(language: preferred.hasPrefix("ru") ? "ru" : "en")
    }

    /// A localizer for `language` (`en` or `ru`; anything else falls back to English).
    public init(language: String) {
        let code = language.lowercased().hasPrefix("ru") ? "ru" : "en"
        self.language = code
        self.fallback = Self.load("en")
        self.table = code == "en" ? fallback : Self.load(code)
    }

    /// The text for `key`, with `{0}`, `{1}` replaced by `arguments`.
    public func callAsFunction(_ key: String, _ arguments: String...) -> String {
        var text = table[key] ?? fallback[key] ?? key
        for (index, argument) in arguments.enumerated() {
            text = text.replacingOccurrences(of: "{\(index)}", with: argument)
        }
        return text
    }

    /// Every key of a language's table (for completeness checks).
    public static func keys(_ language: String) -> Set<String> { Set(load(language).keys) }

    private static func load(_ language: String) -> [String: String] {
        guard let url = Bundle.module.url(forResource: language, withExtension: "json", subdirectory: "Strings")
                ?? Bundle.module.url(forResource: language, withExtension: "json"),
              let data = try? Data(contentsOf: url),
              let table = try? JSONDecoder().decode([String: String].self, from: data)
        else { return [:] }
        return table
    }
}

extension Localizer {
    /// The text to show for a failed call: the server's own message where it sent one; nothing
    /// for a call the app cancelled. Every environment's `message(for:)`.
    func message(for error: any Error) -> String? {
        switch error {
        case is CancellationError: nil
        case GatehouseClientError.transport: self("error.network")
        case GatehouseClientError.sessionExpired, GatehouseClientError.notLoggedIn: self("error.sessionExpired")
        case GatehouseClientError.server: self("error.server")
        case let error as GatehouseClientError: error.message
        default: self("error.network")
        }
    }
}
