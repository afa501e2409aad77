/// UTF-8 checked byte by byte where a block has non-ASCII bytes (Unicode 15, table 3-7: no
/// overlong forms, no surrogates, nothing above U+10FFFF), the rules `String(validating:)` applies.
enum UTF8Validation {
    /// Checks the characters that start in `from..<to`, reading on past `to` to finish the last
    /// one (but never at or past `count`): where checking may resume, or nil at the first
    /// invalid sequence.
    static func validate(_ base: UnsafePointer<UInt8>, from: Int, to: Int, count: Int) -> Int? {
        var position = from
        while position < to {
            // In bounds: position < to <= count.
            let lead = base[position]
            if lead < 0x80 {
                position += 1
                continue
            }
            let length: Int
            var low: UInt8 = 0x80
            var high: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; low = 0xA0
            case 0xED: length = 3; high = 0x9F
            case 0xE1...0xEF: length = 3
            case 0xF0: length = 4; low = 0x90
            case 0xF4: length = 4; high = 0x8F
            case 0xF1...0xF3: length = 4
            default: return nil
            }
            guard count - position >= length else { return nil }
            // In bounds: position + length <= count, checked above.
            let second = base[position + 1]
            guard second >= low && second <= high else { return nil }
            for step in 2..<length where base[position + step] & 0xC0 != 0x80 { return nil }
            position += length
        }
        return position
    }
}
