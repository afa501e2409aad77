/// An `application/x-www-form-urlencoded` body (RFC 6749 Appendix B): every byte other than
/// `A`–`Z`, `a`–`z`, `0`–`9`, `-`, `.`, `_` and `~` percent-encoded.
enum FormBody {
    static func encode(_ fields: [(String, String)]) -> String {
        fields.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
    }

    static func escape(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                result.unicodeScalars.append("%")
                result.unicodeScalars.append(Unicode.Scalar(hex[Int(byte >> 4)]))
                result.unicodeScalars.append(Unicode.Scalar(hex[Int(byte & 0x0F)]))
            }
        }
        return result
    }
}

/// Byte classes of the OAuth 2 grammar (RFC 6749 Appendix A).
enum OAuth2Grammar {
    /// `NQCHAR` without space: `%x21 / %x23-5B / %x5D-7E`, what scope tokens and error codes hold.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        if byte == 0x21 { return true }
        if byte >= 0x23 && byte <= 0x5B { return true }
        return byte >= 0x5D && byte <= 0x7E
    }

    /// A visible ASCII character, `%x21-7E`.
    static func isVisible(_ byte: UInt8) -> Bool {
        byte >= 0x21 && byte <= 0x7E
    }

    /// A printable ASCII character, space included, `%x20-7E`.
    static func isPrintable(_ byte: UInt8) -> Bool {
        byte >= 0x20 && byte <= 0x7E
    }

    /// Whether every byte of `text` is of the class `test`, and there is at least one.
    static func all(_ text: String, _ test: (UInt8) -> Bool) -> Bool {
        guard !text.isEmpty else { return false }
        for byte in text.utf8 where !test(byte) { return false }
        return true
    }

    /// `text` with every character that is not printable ASCII left out.
    static func printable(_ text: Substring) -> String {
        var result = ""
        for scalar in text.unicodeScalars where scalar.value >= 0x20 && scalar.value < 0x7F {
            result.unicodeScalars.append(scalar)
        }
        return result
    }
}
