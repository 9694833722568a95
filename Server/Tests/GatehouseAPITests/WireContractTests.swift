import Foundation
import GatehouseAPI
import Testing

@Suite("Wire contract")
struct WireContractTests {
    @Test("the spec's birthday format round-trips")
    func phoneSpecDate() throws {
        let date = try #require(WireDates.parseFlexible("22.01.2015 15:23:56"))
        #expect(WireDates.phoneSpecString(from: date) == "22.01.2015 15:23:56")
        #expect(WireDates.iso8601String(from: date) == "2015-01-22T15:23:56Z")
    }

    @Test("ISO 8601 text by arithmetic agrees with the calendar, before and after 1970, leap days included")
    func iso8601MatchesTheCalendar() {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var generator = SystemRandomNumberGenerator()
        let fixed: [TimeInterval] = [0, -0.5, -1, 59.999, 951_782_400, 951_868_799.75, 4_107_542_399, -2_208_988_800, 253_402_300_799]
        let random = (0..<2_000).map { _ in TimeInterval(Int64.random(in: -2_208_988_800...4_102_444_800, using: &generator)) + Double.random(in: 0..<1, using: &generator) }
        for seconds in fixed + random {
            let date = Date(timeIntervalSince1970: seconds)
            let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
            let expected = String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", c.year!, c.month!, c.day!, c.hour!, c.minute!, c.second!)
            #expect(WireDates.iso8601String(from: date) == expected, "\(seconds)")
        }
    }

    @Test("accepted date forms", arguments: [
        ("2014-05-17T12:03:42", "2014-05-17T12:03:42Z"), ("2014-05-17T12:03:42Z", "2014-05-17T12:03:42Z"),
        ("2014-05-17T12:03:42.123Z", "2014-05-17T12:03:42Z"), ("2014-05-17T15:03:42+03:00", "2014-05-17T12:03:42Z"),
        ("2014-05-17", "2014-05-17T00:00:00Z"), ("17.05.2014", "2014-05-17T00:00:00Z"), ("17.05.2014 12:03", "2014-05-17T12:03:00Z"),
    ])
    func accepted(text: String, iso: String) throws {
        let date = try #require(WireDates.parseFlexible(text))
        #expect(WireDates.iso8601String(from: date) == iso)
    }

    @Test("refused date forms", arguments: ["", "yesterday", "31.02.2015", "2015-13-01", "2015-01-01T25:00:00", "22.01.2015 15:23:56 junk", "1.1.2015"])
    func refused(text: String) {
        #expect(WireDates.parseFlexible(text) == nil)
    }

    @Test("PhoneUser encodes every key of the spec, nulls included")
    func phoneUserKeys() throws {
        let user = PhoneUser(id: UUID(), login: "l", name: "l", firstName: nil, lastName: nil, surName: nil, phone: nil, email: nil,
                             birthday: nil, room: nil, base: nil, isConfirmed: false, fcm: nil, parts: [])
        let object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(user)) as? [String: Any])
        #expect(Set(object.keys) == ["id", "login", "name", "firstName", "lastName", "surName", "phone", "email", "birthday", "room", "base", "isConfirmed", "fcm", "parts"])
    }

    @Test("unknown error codes still decode")
    func errorCodes() throws {
        let code = try JSONDecoder().decode(GatehouseErrorCode.self, from: Data(#""something_new""#.utf8))
        #expect(code.rawValue == "something_new")
        #expect(GatehouseErrorCode.invalidCode == "invalid_code")
    }
}
