import Foundation
import HTTPTypes

/// The directives of `Cache-Control` fields (RFC 9111 §5.2), names lower-cased.
struct CacheControl {
    private var directives: [String: String?] = [:]

    init(_ fields: HTTPFields) {
        for value in fields[values: .cacheControl] {
            for part in Self.split(value) {
                let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard let name = pair.first?.lowercased(), !name.isEmpty else { continue }
                let argument = pair.count > 1 ? pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) : nil
                // The first of a repeated directive counts.
                if directives[name] == nil { directives[name] = .some(argument) }
            }
        }
    }

    func has(_ name: String) -> Bool { directives[name] != nil }

    /// A directive's number of seconds; `nil` when absent or not a number (which makes a
    /// `max-age` count as stale).
    func seconds(_ name: String) -> Int? {
        guard let argument = directives[name] else { return nil }
        guard let text = argument, !text.isEmpty, text.allSatisfy(\.isASCIIDigit) else { return 0 }
        // Past 2^31 seconds, as RFC 9111 §1.2.2 says.
        return Int(text).map { min($0, 2_147_483_648) } ?? 2_147_483_648
    }

    /// Comma-separated parts, commas inside quotes kept.
    private static func split(_ value: String) -> [String] {
        var parts: [String] = []
        var current = ""
        var quoted = false
        for character in value {
            if character == "\"" { quoted.toggle() }
            if character == ",", !quoted {
                parts.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        parts.append(current)
        return parts
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
