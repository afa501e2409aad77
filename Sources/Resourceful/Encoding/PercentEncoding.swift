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
}
