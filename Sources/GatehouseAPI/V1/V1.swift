import Foundation

/// The JSON API `/v1`: its wire conventions, shared by the server, the SDK and the tests. Its
/// operations are declared by concept beside their types: ``V1/Accounts`` (sign-up, recovery,
/// profile), ``V1/Sessions`` (login and sessions); later apps add theirs the same way.
public enum V1 {
    /// `path` with its `{name}` placeholders filled in (values percent-escaped).
    public static func filling(_ path: String, _ values: [String: String]) -> String {
        var result = path
        for (name, value) in values {
            let escaped = value.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? value
            result = result.replacingOccurrences(of: "{\(name)}", with: escaped)
        }
        return result
    }

    /// Media type of an error answer (RFC 9457).
    public static let problemContentType = "application/problem+json"

    /// One shared encoder and decoder of the conventions below (both are safe to share across tasks).
    public static let encoder = makeEncoder()
    /// The JSON decoder of `/v1` (dates as ISO 8601, with or without fractions).
    public static let decoder = makeDecoder()

    /// The encoder the server writes with and the SDK reads with: ISO 8601 instants in UTC
    /// with whole seconds, keys sorted (stable bytes).
    public static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(WireDates.iso8601String(from: date))
        }
        return encoder
    }

    /// The matching decoder: reads ISO 8601 instants (with or without fractional seconds).
    public static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard text.contains("T"), let date = WireDates.parseFlexible(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an ISO 8601 instant: \(text)")
            }
            return date
        }
        return decoder
    }
}
