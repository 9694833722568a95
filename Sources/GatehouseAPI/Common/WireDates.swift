import Foundation

/// Date formats fixed by the specs. One place, so server and SDK cannot disagree.
public enum WireDates {
    /// `dd.MM.yyyy HH:mm:ss`, the phone-accounts spec's birthday format (`22.01.2015 15:23:56`).
    public static func phoneSpecString(from date: Date) -> String {
        let c = utcCalendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(format: "%02d.%02d.%04d %02d:%02d:%02d", c.day ?? 0, c.month ?? 0, c.year ?? 0, c.hour ?? 0, c.minute ?? 0, c.second ?? 0)
    }

    /// ISO 8601 in UTC with whole seconds (`2015-07-15T11:14:30Z`).
    /// Every date in every JSON answer goes through here, so it is arithmetic on the seconds (days
    /// to a civil date as in Howard Hinnant's `civil_from_days`), not a calendar and a format
    /// string: the same text, a tenth of the time.
    public static func iso8601String(from date: Date) -> String {
        let seconds = Int64((date.timeIntervalSince1970).rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let time = seconds - days * 86_400
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        guard (0...9_999).contains(year) else {
            let c = utcCalendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
            return String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0, c.second ?? 0)
        }
        // Twenty bytes written in place: one allocation, where a digit array per field made seven.
        return String(unsafeUninitializedCapacity: 20) { bytes in
            func put(_ value: Int64, _ width: Int, at start: Int) {
                var rest = value < 0 ? 0 : value
                for i in stride(from: start + width - 1, through: start, by: -1) {
                    bytes[i] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
            }
            put(year, 4, at: 0); bytes[4] = UInt8(ascii: "-"); put(month, 2, at: 5); bytes[7] = UInt8(ascii: "-"); put(day, 2, at: 8)
            bytes[10] = UInt8(ascii: "T"); put(time / 3_600, 2, at: 11); bytes[13] = UInt8(ascii: ":"); put(time / 60 % 60, 2, at: 14)
            bytes[16] = UInt8(ascii: ":"); put(time % 60, 2, at: 17); bytes[19] = UInt8(ascii: "Z")
            return 20
        }
    }

    /// Parses the date formats the phone-accounts spec and its clients send:
    /// `22.01.2015 15:23:56`, `22.01.2015`, `2014-05-17T12:03:42`, `2014-05-17`,
    /// and ISO 8601 with a zone (`2014-05-17T12:03:42Z`, `…+03:00`, fractional seconds).
    /// Dates without a zone are taken as UTC. Returns nil for anything else, including
    /// impossible dates such as 31.02.
    public static func parseFlexible(_ raw: String) -> Date? {
        let text = raw.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty, text.count <= 40 else { return nil }
        let scalars = Array(text.unicodeScalars)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= scalars.count else { return nil }
            var value = 0
            for i in range {
                guard let d = scalars[i].properties.numericType, d == .decimal, scalars[i].isASCII,
                      let v = Int(String(scalars[i])) else { return nil }
                value = value * 10 + v
            }
            return value
        }
        func char(_ i: Int) -> Character? { i < scalars.count ? Character(scalars[i]) : nil }

        var year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0
        var offsetSeconds = 0
        var index: Int
        if char(2) == ".", char(5) == "." {
            guard let d = number(0..<2), let m = number(3..<5), let y = number(6..<10) else { return nil }
            (day, month, year) = (d, m, y)
            index = 10
            if index < scalars.count {
                guard char(index) == " " || char(index) == "T" else { return nil }
                index += 1
            }
        } else if char(4) == "-", char(7) == "-" {
            guard let y = number(0..<4), let m = number(5..<7), let d = number(8..<10) else { return nil }
            (day, month, year) = (d, m, y)
            index = 10
            if index < scalars.count {
                guard char(index) == "T" || char(index) == " " else { return nil }
                index += 1
            }
        } else {
            return nil
        }
        if index < scalars.count {
            guard let h = number(index..<index + 2), char(index + 2) == ":", let mi = number(index + 3..<index + 5) else { return nil }
            hour = h; minute = mi; index += 5
            if char(index) == ":" {
                guard let s = number(index + 1..<index + 3) else { return nil }
                second = s; index += 3
            }
            if char(index) == "." || char(index) == "," {
                index += 1
                let start = index
                while index < scalars.count, scalars[index].properties.numericType == .decimal { index += 1 }
                guard index > start else { return nil }
            }
            if index < scalars.count {
                if char(index) == "Z" || char(index) == "z" {
                    index += 1
                } else if char(index) == "+" || char(index) == "-" {
                    let sign = char(index) == "-" ? -1 : 1
                    guard let oh = number(index + 1..<index + 3) else { return nil }
                    var next = index + 3
                    if char(next) == ":" { next += 1 }
                    guard let om = number(next..<next + 2) else { return nil }
                    offsetSeconds = sign * (oh * 3600 + om * 60)
                    index = next + 2
                } else {
                    return nil
                }
            }
            guard index == scalars.count else { return nil }
        }
        guard (1...9999).contains(year), (1...12).contains(month), (1...31).contains(day),
              (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second) else { return nil }
        var components = DateComponents()
        components.year = year; components.month = month; components.day = day
        components.hour = hour; components.minute = minute; components.second = second
        guard let date = utcCalendar.date(from: components) else { return nil }
        // Reject dates the calendar silently rolled over (31.02 → 03.03).
        let check = utcCalendar.dateComponents([.year, .month, .day], from: date)
        guard check.year == year, check.month == month, check.day == day else { return nil }
        return date.addingTimeInterval(TimeInterval(-offsetSeconds))
    }

    /// `yyyy-MM-dd` (UTC), `/v1`'s calendar dates (a birthday is a day, not an instant).
    public static func calendarDateString(from date: Date) -> String {
        let c = utcCalendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0)
    }

    /// Parses exactly `yyyy-MM-dd` (a real day) as midnight UTC; nil for anything else.
    public static func parseCalendarDate(_ raw: String) -> Date? {
        guard raw.utf8.count == 10, raw.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              Array(raw)[4] == "-", Array(raw)[7] == "-" else { return nil }
        return parseFlexible(raw)
    }

    static let utcCalendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()
}
