import Foundation
@testable import ResourcefulJSON
import ResourcefulTesting
import Testing

/// The decoder reads RFC 3339 timestamps itself under the `.iso8601` strategy: every string must
/// come out as the very `Date` (bit for bit) or the same error as with `JSONDecoder`.
@Suite struct RFC3339DateTests {
    static let compare = DecoderComparison(dates: .iso8601)

    /// What each decoder makes of one JSON string: the date's bits, or the kind of error.
    static func outcomes(_ text: String) -> (foundation: DecodeOutcome<UInt64>, fast: DecodeOutcome<UInt64>) {
        let json = Data("[\"\(text)\"]".utf8)
        return (
            DecoderComparison.outcome { try compare.foundation.decode([Date].self, from: json)[0].timeIntervalSinceReferenceDate.bitPattern },
            DecoderComparison.outcome { try compare.fast.decode([Date].self, from: json)[0].timeIntervalSinceReferenceDate.bitPattern }
        )
    }

    @Test(arguments: [
        "2024-05-01T12:00:00Z", "2024-05-01T12:00:00z", "2024-05-01T12:00:00.1Z", "2024-05-01T12:00:00.123Z",
        "2024-05-01T12:00:00.123456Z", "2024-05-01T12:00:00.123456789Z", "2024-05-01T12:00:00.999999999-00:00",
        "2024-05-01T14:00:00.250+02:00", "2024-05-01T03:30:00-08:30", "2024-05-01T12:00:00+18:00", "2024-05-01T12:00:00-18:00",
        "2024-02-29T23:59:59Z", "2000-02-29T00:00:00Z", "2001-01-01T00:00:00Z", "2000-12-31T23:59:59.9Z",
        "1970-01-01T00:00:00Z", "1969-12-31T23:59:59.9Z", "1583-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z",
    ])
    func commonShapesAreReadDirectlyAsFoundationReadsThem(text: String) throws {
        var bytes = text
        let direct = try #require(bytes.withUTF8 { RFC3339Date.parse($0) }, "not read directly: \(text)")
        let foundation = try Date.ISO8601FormatStyle().parse(text)
        #expect(direct.timeIntervalSinceReferenceDate.bitPattern == foundation.timeIntervalSinceReferenceDate.bitPattern, "\(text)")
        let (reference, fast) = Self.outcomes(text)
        #expect(reference == .value(foundation.timeIntervalSinceReferenceDate.bitPattern) && fast == reference, "\(text)")
    }

    /// Shapes outside the strict one, and values Foundation rolls over or refuses: the decoder
    /// hands them to Foundation and gives its answer, whatever that is.
    @Test(arguments: [
        "2023-02-29T12:00:00Z", "2024-02-30T12:00:00Z", "2024-04-31T00:00:00Z", "2024-05-01T24:00:00Z",
        "2024-05-01T23:59:60Z", "2024-05-01T12:60:00Z", "2024-13-01T12:00:00Z", "2024-00-10T12:00:00Z",
        "2024-05-00T12:00:00Z", "2024-05-01T12:00:00+0200", "2024-05-01T12:00:00+02", "2024-05-01T12:00:00+18:01",
        "2024-05-01T12:00:00+25:00", "2024-05-01T12:00:00+02:60", "2024-05-01T12:00:00.1234567891Z",
        "2024-05-01T12:00:00.Z", "2024-05-01T12:00:00,5Z", "2024-05-01T12:00:00", "2024-05-01t12:00:00Z",
        "2024-05-01 12:00:00Z", "2024-05-01T12:00Z", "20240501T120000Z", "2024-5-1T12:00:00Z", "1582-10-04T00:00:00Z",
        "0001-01-01T00:00:00Z", "12024-05-01T12:00:00Z", "2024-05-01T12:00:00ZX", "2024-05-01T12:00:00GMT",
        " 2024-05-01T12:00:00Z", "2024-05-01T12:00:00Z ", "", "yesterday", "2024-05-01T12:00:00\\u005A",
    ])
    func otherStringsGetFoundationsAnswer(text: String) {
        var bytes = text
        let direct = bytes.withUTF8 { RFC3339Date.parse($0) }
        let (reference, fast) = Self.outcomes(text)
        #expect(DecoderComparison.agree(reference, fast), "\(text): JSONDecoder gave \(reference), FastJSONDecoder gave \(fast)")
        if let direct {
            // Read directly only where Foundation agrees to the bit.
            #expect(reference == .value(direct.timeIntervalSinceReferenceDate.bitPattern), "\(text)")
        }
    }

    @Test func nonStringsAndNullFailAsInFoundation() {
        for json in ["[12]", "[null]", "[true]", "[{}]", "[[\"2024-05-01T12:00:00Z\"]]"] {
            Self.compare.expectAgreement([Date].self, json)
            Self.compare.expectAgreement([Date?].self, json)
        }
    }

    /// Random timestamps, most of them near the strict shape and some fields out of range, each
    /// compared bit for bit. Seeded, so a failure can be replayed.
    @Test(arguments: [31, 32, 33, 34])
    func randomTimestampsAgreeBitForBit(seed: UInt64) async {
        var random = SeededRandomNumberGenerator(seed: seed)
        var direct = 0
        let rounds = 2_500 * FastJSONDecoderFuzzTests.scale
        for round in 0..<rounds {
            if round % 100 == 0 { await Task.yield() }
            let text = Self.randomTimestamp(&random)
            var bytes = text
            if bytes.withUTF8({ RFC3339Date.parse($0) }) != nil { direct += 1 }
            let (reference, fast) = Self.outcomes(text)
            #expect(DecoderComparison.agree(reference, fast), "\(text): JSONDecoder gave \(reference), FastJSONDecoder gave \(fast)")
        }
        // The generator mostly makes valid timestamps: most must take the direct path.
        #expect(direct > rounds / 3, "only \(direct) of \(rounds) read directly")
    }

    static func randomTimestamp(_ random: inout SeededRandomNumberGenerator) -> String {
        func pick(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }
        func padded(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        // Mostly in range; now and then a field one past its end (month 13, day 32, hour 24…).
        let outOfRange = pick(0...9) == 0
        let year = pick(0...19) == 0 ? pick(1...1600) : pick(1900...2100)
        let month = outOfRange ? pick(0...13) : pick(1...12)
        let day = outOfRange ? pick(0...32) : pick(1...(month == 2 ? 29 : 31))
        let hour = outOfRange ? pick(0...24) : pick(0...23)
        let minute = outOfRange ? pick(0...60) : pick(0...59)
        let second = outOfRange ? pick(0...60) : pick(0...59)
        var text = "\(padded(year, 4))-\(padded(month, 2))-\(padded(day, 2))T\(padded(hour, 2)):\(padded(minute, 2)):\(padded(second, 2))"
        let fractionDigits = pick(0...12)
        if fractionDigits > 0 && fractionDigits <= 10 {
            text += "." + (0..<fractionDigits).map { _ in String(pick(0...9)) }.joined()
        }
        switch pick(0...5) {
        case 0: text += "Z"
        case 1: text += "z"
        case 2, 3: text += (pick(0...1) == 0 ? "+" : "-") + padded(pick(0...19), 2) + ":" + padded(pick(0...59), 2)
        case 4: text += "+" + padded(pick(0...14), 2) + padded(pick(0...59), 2)
        default: break
        }
        return text
    }
}
