import Foundation

/// Reads the RFC 3339 timestamps APIs send (`2024-05-01T12:00:00Z`, `…12:00:00.250+02:00`)
/// straight from a string's bytes, giving the very `Date` that `Date.ISO8601FormatStyle()` (the
/// `.iso8601` strategy of `JSONDecoder`) gives for them.
///
/// Only one strict shape is read here:
/// `YYYY-MM-DDThh:mm:ss[.f{1,9}](Z|z|±hh:mm)`, with every field in range (a real day of the month,
/// no leap second), a year from 1583 on (Foundation's calendar is Julian before October 1582),
/// and an offset of at most 18 hours. Anything else (other shapes, and the values Foundation
/// accepts by rolling them over, such as February 30) returns `nil`, and the caller asks
/// Foundation; so both decoders accept and refuse the same strings.
enum RFC3339Date {
    /// Days from 1970-01-01 to 2001-01-01, Foundation's reference date.
    private static let referenceDay = 11_323

    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        let count = bytes.count
        guard count >= 20, let base = bytes.baseAddress else { return nil }

        @inline(__always) func digit(_ offset: Int) -> Int? {
            let value = Int(base[offset]) &- 48
            return value >= 0 && value <= 9 ? value : nil
        }
        @inline(__always) func twoDigits(_ offset: Int) -> Int? {
            guard let tens = digit(offset), let ones = digit(offset + 1) else { return nil }
            return tens * 10 + ones
        }
        @inline(__always) func byte(_ offset: Int, is character: Unicode.Scalar) -> Bool {
            base[offset] == UInt8(ascii: character)
        }

        guard let century = twoDigits(0), let yearOfCentury = twoDigits(2), byte(4, is: "-"),
              let month = twoDigits(5), byte(7, is: "-"), let day = twoDigits(8), byte(10, is: "T"),
              let hour = twoDigits(11), byte(13, is: ":"), let minute = twoDigits(14), byte(16, is: ":"),
              let second = twoDigits(17)
        else { return nil }
        let year = century * 100 + yearOfCentury
        guard year >= 1583, month >= 1, month <= 12, day >= 1, day <= daysIn(month, of: year),
              hour <= 23, minute <= 59, second <= 59
        else { return nil }

        var position = 19
        var nanoseconds = 0
        if byte(position, is: ".") {
            position += 1
            let first = position
            while position < count, let value = digit(position) {
                guard position - first < 9 else { return nil }
                nanoseconds = nanoseconds * 10 + value
                position += 1
            }
            guard position > first else { return nil }
            for _ in (position - first)..<9 { nanoseconds *= 10 }
        }

        guard position < count else { return nil }
        var offset = 0
        switch base[position] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            position += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard position + 6 == count, let offsetHours = twoDigits(position + 1), byte(position + 3, is: ":"),
                  let offsetMinutes = twoDigits(position + 4), offsetMinutes <= 59, offsetHours * 60 + offsetMinutes <= 18 * 60
            else { return nil }
            offset = (offsetHours * 3600 + offsetMinutes * 60) * (byte(position, is: "+") ? 1 : -1)
            position += 6
        default:
            return nil
        }
        guard position == count else { return nil }

        // The same steps, in the same order, as Foundation's Gregorian calendar, so that the
        // rounding of the fraction is the same: whole days, then the time of day with its
        // fraction, then the offset.
        let days = Double(daysSinceEpoch(year: year, month: month, day: day) - referenceDay) * 86_400
        let timeOfDay = Double(hour * 3600 + minute * 60 + second) + Double(nanoseconds) / 1_000_000_000
        return Date(timeIntervalSinceReferenceDate: days + timeOfDay - Double(offset))
    }

    private static func daysIn(_ month: Int, of year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 in the proleptic Gregorian calendar (years from 1 on).
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let shifted = month <= 2 ? year - 1 : year
        let era = shifted / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
