import Foundation

/// The languages Gatehouse speaks. Texts not translated fall back to English.
package enum AppLanguage: String, Sendable, CaseIterable {
    case en, ru

    /// Picks the best supported language from an `Accept-Language` header
    /// (`ru-RU,ru;q=0.9,en;q=0.8`), honouring q-values; `fallback` when nothing matches.
    package static func negotiate(_ header: String?, fallback: AppLanguage) -> AppLanguage {
        guard let header, !header.isEmpty else { return fallback }
        var best: (AppLanguage, Double)?
        for part in header.split(separator: ",").prefix(20) {
            let pieces = part.split(separator: ";")
            guard let tag = pieces.first?.trimmingCharacters(in: .whitespaces).lowercased() else { continue }
            var quality = 1.0
            for parameter in pieces.dropFirst() {
                let kv = parameter.trimmingCharacters(in: .whitespaces)
                if kv.hasPrefix("q="), let q = Double(kv.dropFirst(2)) { quality = q }
            }
            let primary = tag.split(separator: "-").first.map(String.init) ?? tag
            guard let language = AppLanguage(rawValue: primary), quality > 0 else { continue }
            if best == nil || quality > best!.1 { best = (language, quality) }
        }
        return best?.0 ?? fallback
    }

    /// From a stored locale identifier such as `ru_RU` or `en`.
    package init?(localeIdentifier: String?) {
        guard let id = localeIdentifier?.lowercased(), let first = id.split(whereSeparator: { $0 == "_" || $0 == "-" }).first else { return nil }
        self.init(rawValue: String(first))
    }
}

/// A message key and its arguments, rendered late in the language of whoever reads it.
package struct LocalizedText: Sendable, Equatable {
    package var key: String
    package var args: [String]
    package init(_ key: String, _ args: [String] = []) {
        self.key = key
        self.args = args
    }

    package func render(_ language: AppLanguage) -> String {
        let template = Strings.table[key]?[language] ?? Strings.table[key]?[.en] ?? key
        var result = template
        for (index, arg) in args.enumerated() {
            result = result.replacingOccurrences(of: "{\(index)}", with: arg)
        }
        return result
    }
}
