/// Percent-encoding of URL components (RFC 3986), done on UTF-8 bytes.
enum PercentEncoding {
    /// A set of ASCII bytes left as they are.
    struct Allowed: Sendable {
        private let bits: (UInt64, UInt64)

        init(_ characters: String) {
            var low: UInt64 = 0
            var high: UInt64 = 0
            for byte in characters.utf8 {
                if byte < 64 { low |= 1 << UInt64(byte) } else if byte < 128 { high |= 1 << UInt64(byte - 64) }
            }
            bits = (low, high)
        }

        func contains(_ byte: UInt8) -> Bool {
            if byte < 64 { return bits.0 & (1 << UInt64(byte)) != 0 }
            if byte < 128 { return bits.1 & (1 << UInt64(byte - 64)) != 0 }
            return false
        }

        private static let alphanumerics = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

        /// RFC 3986 unreserved characters: `A-Z a-z 0-9 - . _ ~`.
        static let unreserved = Allowed(alphanumerics + "-._~")
        /// What a path may hold besides segments' own encoding: unreserved, sub-delims, `:`, `@`, `/`.
        static let pathAllowed = Allowed(alphanumerics + "-._~!$&'()*+,;=:@/")
    }

    private static let hex: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// Encodes every byte of `text`'s UTF-8 form that is not in `allowed`.
    static func encode(_ text: String, allowing allowed: Allowed) -> String {
        let utf8 = text.utf8
        if utf8.allSatisfy({ allowed.contains($0) }) { return text }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count * 3)
        for byte in utf8 {
            if allowed.contains(byte) {
                bytes.append(byte)
            } else {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `text` with each `%XX` replaced by its byte (and each `+` by a space when `plusAsSpace`,
    /// as in form data); a `%` not followed by two hex digits stays as it is, and bytes that are
    /// not UTF-8 become U+FFFD.
    static func decode(_ text: String, plusAsSpace: Bool = false) -> String {
        let utf8 = Array(text.utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = 0
        while index < utf8.count {
            if utf8[index] == UInt8(ascii: "%"), index + 2 < utf8.count, let high = hexValue(utf8[index + 1]), let low = hexValue(utf8[index + 2]) {
                bytes.append(high << 4 | low)
                index += 3
            } else {
                bytes.append(plusAsSpace && utf8[index] == UInt8(ascii: "+") ? UInt8(ascii: " ") : utf8[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
