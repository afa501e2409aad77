import Foundation

/// Matches JSON keys to coding keys under `convertFromSnakeCase`, with the rules of Foundation's
/// `JSONDecoder`: leading and trailing underscores kept, the words between them joined with the
/// first lowercased and the others capitalized (`user_id` → `userId`), a key without inner
/// underscore left as it is.
enum SnakeCaseKeys {
    /// Foundation's conversion of `key`.
    static func camelCased(_ key: String) -> String {
        guard let first = key.firstIndex(where: { $0 != "_" }) else { return key }
        var last = key.index(before: key.endIndex)
        while last > first && key[last] == "_" { key.formIndex(before: &last) }
        let words = key[first...last].split(separator: "_")
        guard words.count > 1 else { return key }
        let joined = ([words[0].lowercased()] + words[1...].map { $0.capitalized }).joined()
        return String(key[..<first]) + joined + String(key[key.index(after: last)...])
    }

    /// Whether `raw` converts to `target`, without building a string, when `raw` holds only
    /// lowercase ASCII letters, digits and underscores; nil for any other key.
    static func matches(_ raw: UnsafeBufferPointer<UInt8>, _ target: UnsafeBufferPointer<UInt8>) -> Bool? {
        let count = raw.count
        var low = 0
        while low < count && raw[low] == UInt8(ascii: "_") { low += 1 }
        guard low < count else { return equal(raw, target) }
        var high = count - 1
        while high > low && raw[high] == UInt8(ascii: "_") { high -= 1 }
        var hasInnerUnderscore = false
        for byte in raw[low...high] {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): break
            case UInt8(ascii: "_"): hasInnerUnderscore = true
            default: return nil
            }
        }
        guard hasInnerUnderscore else { return equal(raw, target) }

        var out = 0
        func emit(_ byte: UInt8) -> Bool {
            guard out < target.count, target[out] == byte else { return false }
            out += 1
            return true
        }
        for _ in 0..<low where !emit(UInt8(ascii: "_")) { return false }
        var isFirstWord = true
        var position = low
        while position <= high {
            guard raw[position] != UInt8(ascii: "_") else {
                position += 1
                continue
            }
            // One word: `capitalized` upper-cases a letter at the start or after a digit.
            var previousIsLetter = false
            while position <= high, raw[position] != UInt8(ascii: "_") {
                let byte = raw[position]
                let isLetter = byte >= UInt8(ascii: "a")
                let converted = !isFirstWord && isLetter && !previousIsLetter ? byte - 32 : byte
                guard emit(converted) else { return false }
                previousIsLetter = isLetter
                position += 1
            }
            isFirstWord = false
        }
        for _ in (high + 1)..<count where !emit(UInt8(ascii: "_")) { return false }
        return out == target.count
    }

    private static func equal(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Bool {
        lhs.count == rhs.count && (lhs.count == 0 || memcmp(lhs.baseAddress!, rhs.baseAddress!, lhs.count) == 0)
    }
}
