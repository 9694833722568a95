import Foundation
import GatehouseAPI
import GatehouseKit

/// A person as every list draws them (friends, requests, search results, the chat picker): the
/// same cell everywhere.
public struct PersonRow: Equatable, Sendable, Identifiable {
    /// Its id.
    public var id: UUID
    /// "First Last", or the tag when the person has no name; "Deleted account" for one deleted.
    public var name: String
    /// "@tag" (empty for a deleted account).
    public var tag: String
    /// The avatar to load; nil draws ``initials``.
    public var avatarURL: URL?
    /// One or two letters for a missing avatar.
    public var initials: String

    init(_ person: Person, _ l: Localizer) {
        id = person.id
        name = Self.name(of: person, l)
        tag = person.deleted == true ? "" : "@" + person.tag
        avatarURL = person.avatarUrl.flatMap(URL.init(string:))
        initials = Self.initials(of: person)
    }

    static func name(of person: Person, _ l: Localizer) -> String {
        // An erased account keeps its messages in my chats, with no name or tag left to show.
        if person.deleted == true { return l("messenger.person.deleted") }
        let name = [person.firstName, person.lastName].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " ")
        return name.isEmpty ? "@" + person.tag : name
    }

    static func initials(of person: Person) -> String {
        let letters = [person.firstName, person.lastName].compactMap { $0?.first }.map(String.init).joined()
        return (letters.isEmpty ? String(person.tag.prefix(1)) : letters).uppercased()
    }
}

/// The messenger's rule for searching a list on the device: the query's words each start the
/// first name, last name or tag, in any case and with any accents (the server's rule for its
/// own searches).
enum LocalSearch {
    static func fold(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
    }

    static func matches(_ person: Person, _ query: String) -> Bool {
        let words = fold(query).split(whereSeparator: \.isWhitespace).map { $0.hasPrefix("@") ? String($0.dropFirst()) : String($0) }
        guard !words.isEmpty else { return true }
        let fields = [person.firstName, person.lastName, person.tag].compactMap { $0 }.map(fold)
        return words.allSatisfy { word in fields.contains { $0.hasPrefix(word) } }
    }
}

/// Times and days as the chat and the chat list show them, in the environment's time zone.
struct MessengerClock {
    let environment: MessengerEnvironment

    private var calendar: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = environment.timeZone
        return calendar
    }

    private func formatter(_ template: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: environment.localizer.language == "ru" ? "ru_RU" : "en_US")
        formatter.timeZone = environment.timeZone
        formatter.dateFormat = template
        return formatter
    }

    /// "14:05".
    func time(_ date: Date) -> String { formatter("HH:mm").string(from: date) }

    /// The chat list's stamp: the time today, "Yesterday", the day this year, the date before.
    func stamp(_ date: Date) -> String {
        let now = environment.now()
        if calendar.isDate(date, inSameDayAs: now) { return time(date) }
        if let yesterday = calendar.date(byAdding: .day, value: -1, to: now), calendar.isDate(date, inSameDayAs: yesterday) {
            return environment.localizer("messenger.day.yesterday")
        }
        return calendar.isDate(date, equalTo: now, toGranularity: .year) ? formatter("d MMM").string(from: date) : formatter("dd.MM.yyyy").string(from: date)
    }

    /// A day separator: "Today", "Yesterday", "5 March", "5 March 2025".
    func day(_ date: Date) -> String {
        let now = environment.now()
        let l = environment.localizer
        if calendar.isDate(date, inSameDayAs: now) { return l("messenger.day.today") }
        if let yesterday = calendar.date(byAdding: .day, value: -1, to: now), calendar.isDate(date, inSameDayAs: yesterday) {
            return l("messenger.day.yesterday")
        }
        return calendar.isDate(date, equalTo: now, toGranularity: .year) ? formatter("d MMMM").string(from: date) : formatter("d MMMM yyyy").string(from: date)
    }

    func sameDay(_ a: Date, _ b: Date) -> Bool { calendar.isDate(a, inSameDayAs: b) }
}

/// What every messenger screen shows about the connection: nothing when online, otherwise a
/// line saying the lists are the saved ones.
func connectivityNotice(_ connectivity: MessengerRepository.Connectivity, _ l: Localizer) -> String? {
    switch connectivity {
    case .online: nil
    case .connecting: l("messenger.connecting")
    case .offline: l("messenger.offline")
    }
}

/// A destructive action's "Are you sure?" (an alert on iOS).
public struct Confirmation: Equatable, Sendable {
    /// The question.
    public var title: String
    /// What it explains under the question, if anything.
    public var message: String?
    /// The destructive button's label.
    public var confirmTitle: String
    /// The "cancel" button's title.
    public var cancelTitle: String
}
