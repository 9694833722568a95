import Foundation

/// The Sign To Login profile's fields (the spec's "Профайл") and what each may hold: one rule for
/// the server (`/register/`, the profile page and `/v1/me/signature-profile`) and the SDK's form,
/// which refuses a character a field does not take as it is typed (the spec: "only allowed
/// characters") and flags a value that is not yet whole.
public enum SignatureProfileRules {
    /// The fields, by the spec's parameter names.
    public enum Field: String, CaseIterable, Sendable {
        /// The person's name as they sign.
        case userName = "user_name"
        /// The phone number.
        case phoneNumber = "phone_number"
        /// The company's name.
        case companyName = "company_name"
        /// The position in the company.
        case position
        /// `DD.MM.YYYY`.
        case birthday
        /// `male` or `female`.
        case sex
    }

    /// The longest value of a field, in characters.
    public static func maxLength(_ field: Field) -> Int {
        switch field {
        case .userName: 100
        case .phoneNumber: 20
        case .companyName, .position: 200
        case .birthday: 10
        case .sex: 6
        }
    }

    /// Whether a field takes a character at all: names are letters, marks, spaces and `.'-`;
    /// a phone digits, `+`, spaces, `-` and brackets; company and position any printable text
    /// but `<>` (shown on pages) and controls; a birthday digits and dots; sex lower-case letters.
    public static func allows(_ character: Character, in field: Field) -> Bool {
        switch field {
        case .userName:
            return character.isLetter || character == " " || ".'-’".contains(character)
                || character.unicodeScalars.allSatisfy { $0.properties.generalCategory == .nonspacingMark || $0.properties.isAlphabetic }
        case .phoneNumber:
            return (character.isASCII && character.isNumber) || "+ -()".contains(character)
        case .companyName, .position:
            return !"<>".contains(character) && !character.unicodeScalars.contains { $0.properties.generalCategory == .control || $0.properties.generalCategory == .format }
        case .birthday:
            return (character.isASCII && character.isNumber) || character == "."
        case .sex:
            return character.isASCII && character.isLowercase
        }
    }

    /// The text with every character the field does not take left out, and cut to its length.
    public static func filtered(_ text: String, for field: Field) -> String {
        String(text.filter { allows($0, in: field) }.prefix(maxLength(field)))
    }

    /// Whether a whole value is one the field takes (trimmed; an empty one is for the caller to judge).
    public static func isValid(_ raw: String, for field: Field) -> Bool {
        let text = raw.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty, text.count <= maxLength(field), text.allSatisfy({ allows($0, in: field) }) else { return false }
        switch field {
        case .userName:
            return text.first?.isLetter == true
        case .phoneNumber:
            let digits = text.filter { $0.isASCII && $0.isNumber }.count
            return (7...15).contains(digits) && !text.dropFirst().contains("+")
        case .companyName, .position:
            return true
        case .birthday:
            return birthday(text) != nil
        case .sex:
            return text == "male" || text == "female"
        }
    }

    /// A `DD.MM.YYYY` birthday as a real date between 1900 and today.
    public static func birthday(_ text: String, now: Date = Date()) -> DateComponents? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 2, parts[1].count == 2, parts[2].count == 4,
              let day = Int(parts[0]), let month = Int(parts[1]), let year = Int(parts[2]), year >= 1900 else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let components = DateComponents(year: year, month: month, day: day)
        guard let date = calendar.date(from: components), calendar.component(.day, from: date) == day,
              calendar.component(.month, from: date) == month, date <= now else { return nil }
        return components
    }
}
