import Foundation

/// Reads `Retry-After` (RFC 9110 §10.2.3): delay-seconds or an HTTP-date.
enum RetryAfter {
    static func delay(_ value: String?, now: Date = Date()) -> Duration? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Int64(value) {
            return seconds >= 0 ? .seconds(seconds) : nil
        }
        if value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            // More seconds than 64 bits hold: longer than any deadline.
            return .seconds(Int64.max)
        }
        guard let date = HTTPDate.parse(value) else { return nil }
        let interval = date.timeIntervalSince(now)
        return .milliseconds(Int64(max(0, interval) * 1000))
    }
}
