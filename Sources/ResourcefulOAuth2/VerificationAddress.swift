public import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The check of an address an authorization server asks a person to open: a device login's
/// `verification_uri` and `verification_uri_complete` (RFC 8628 §3.2), a browser login's
/// authorization address.
///
/// A hostile server must not get a misleading address, free text or a terminal escape onto the
/// screen, so an address is taken only in this form:
/// - `https`, or `http` to a loopback IP address (`127.0.0.0/8`, `[::1]`);
/// - no user information (`https://bank.example@evil.example/` reads as the bank) and no fragment;
/// - a host of letters, digits and hyphens in dot-separated labels (an internationalized name
///   in its ASCII form, `xn--…`, shown as such), or an IP address literal; no `%` in the host;
/// - at most ``maximumCharacters`` characters of visible ASCII that a URL may hold;
/// - no percent-escape that decodes to a control, format, invisible or separator character
///   other than a plain space (`%1B[2K`, `%E2%80%AE`, `%E3%85%A4`, `%E2%80%A8` are refused).
///
/// An address that is not in this form is a ``OAuth2Error/Kind/invalidResponse`` error naming the
/// field; the error never holds the address.
public enum VerificationAddress {
    /// The longest address shown.
    public static let maximumCharacters = 2048

    /// `text` as an address a person may be asked to open.
    ///
    /// - Parameters:
    ///   - text: The address as the server sent it.
    ///   - field: What the address is, for the error (`verification_uri`, `the authorization address`).
    /// - Returns: The address, unchanged.
    /// - Throws: ``OAuth2Error`` of kind ``OAuth2Error/Kind/invalidResponse`` saying which rule
    ///   the address breaks.
    public static func check(_ text: String, field: String) throws(OAuth2Error) -> URL {
        if let problem = problem(text) {
            throw OAuth2Error(.invalidResponse, "the \(field) \(problem), so it is not shown")
        }
        guard let url = URL(string: text) else {
            throw OAuth2Error(.invalidResponse, "the \(field) is not a URL, so it is not shown")
        }
        return url
    }

    /// `url` as an address a person may be asked to open, checked as its text is.
    ///
    /// - Throws: ``OAuth2Error`` of kind ``OAuth2Error/Kind/invalidResponse``.
    @discardableResult
    public static func check(_ url: URL, field: String) throws(OAuth2Error) -> URL {
        try check(url.absoluteString, field: field)
    }

    /// Whether `first` and `second` have the same origin: scheme, host and port (the scheme's
    /// default port when none is written).
    static func sameOrigin(_ first: URL, _ second: URL) -> Bool {
        guard let one = origin(first), let other = origin(second) else { return false }
        return one == other
    }

    /// The scheme, lowercased host (without brackets) and effective port of `url`.
    static func origin(_ url: URL) -> (scheme: String, host: String, port: Int)? {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false), let scheme = components.scheme?.lowercased(),
            var host = components.percentEncodedHost?.lowercased(), !host.isEmpty
        else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let port = components.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
        return (scheme, host, port)
    }

    /// What is wrong with `text` as an address to show, in a few words of ours; `nil` when nothing.
    static func problem(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        guard (1...maximumCharacters).contains(bytes.count) else { return "is empty or longer than \(maximumCharacters) characters" }
        guard bytes.allSatisfy(isURLByte) else { return "holds characters other than the visible ASCII a URL may hold" }
        let lowered = text.lowercased()
        let scheme: String
        if lowered.hasPrefix("https://") {
            scheme = "https"
        } else if lowered.hasPrefix("http://") {
            scheme = "http"
        } else {
            return "is not an https URL"
        }
        let rest = bytes.dropFirst(scheme.utf8.count + 3)
        let authorityEnd = rest.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? rest.endIndex
        let authority = String(decoding: rest[rest.startIndex..<authorityEnd], as: UTF8.self)
        let tail = String(decoding: rest[authorityEnd...], as: UTF8.self)
        guard !authority.contains("@") else { return "holds user information" }
        guard !tail.contains("#") else { return "holds a fragment" }
        guard let host = host(of: authority) else {
            return "has a host that is neither letters, digits and hyphens (xn-- for other scripts) nor an IP address"
        }
        if scheme == "http", !OAuth2Endpoints.isLoopback(host) {
            return "is plain http to a host other than a loopback IP address"
        }
        // Foundation must read the same host: no parser differs on what is shown. (It shows an
        // `xn--` label decoded, so such a host is compared as written only.)
        guard let url = URL(string: text), let parsed = origin(url), parsed.scheme == scheme,
            parsed.host == host || host.split(separator: ".").contains(where: { $0.hasPrefix("xn--") })
        else {
            return "is not a URL whose host can be read with certainty"
        }
        guard let decoded = tail.removingPercentEncoding else { return "holds a percent-escape that is not UTF-8" }
        if decoded.unicodeScalars.contains(where: isHidden) {
            return "holds a percent-escape that decodes to a control, invisible or separator character"
        }
        return nil
    }

    /// RFC 3986's characters: unreserved, reserved and `%`.
    private static func isURLByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "-._~:/?#[]@!$&'()*+,;=%".utf8.contains(byte)
        }
    }

    /// The host of an authority (`host`, `host:port`, `[v6]:port`), lowercased brackets removed,
    /// when it is LDH labels or an IP literal and the port is a port; otherwise `nil`.
    private static func host(of authority: String) -> String? {
        var host = Substring(authority)
        var port: Substring?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let after = host[host.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                port = after.dropFirst()
            }
            host = host[host.index(after: host.startIndex)..<close]
            guard isIPv6(String(host)) else { return nil }
        } else {
            if let colon = host.firstIndex(of: ":") {
                port = host[host.index(after: colon)...]
                host = host[..<colon]
            }
            guard isDomainOrIPv4(host) else { return nil }
        }
        if let port {
            guard (1...5).contains(port.utf8.count), port.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let number = Int(port), number <= 65535 else {
                return nil
            }
        }
        return host.lowercased()
    }

    /// An IPv6 address as `inet_pton` reads it: hexadecimal digits, `:` and `.`, no zone (`%`).
    private static func isIPv6(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") || ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66) })
        else { return false }
        var address = in6_addr()
        return inet_pton(AF_INET6, text, &address) == 1
    }

    /// Letters, digits and hyphens in labels of 1 to 63 characters that neither start nor end
    /// with a hyphen, at most 253 in all; a name whose last label is all digits is read by
    /// browsers as an IPv4 address, so it must be one in dotted decimal (no leading zeros).
    private static func isDomainOrIPv4(_ host: Substring) -> Bool {
        guard (1...253).contains(host.utf8.count) else { return false }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        for label in labels {
            let bytes = Array(label.utf8)
            guard (1...63).contains(bytes.count), bytes.first != UInt8(ascii: "-"), bytes.last != UInt8(ascii: "-") else { return false }
            for byte in bytes {
                let isLetterOrDigit = (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A)
                guard isLetterOrDigit || byte == UInt8(ascii: "-") else { return false }
            }
        }
        guard let last = labels.last, last.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return true }
        guard labels.count == 4 else { return false }
        return labels.allSatisfy { part in
            part.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } && (part == "0" || !part.hasPrefix("0")) && (Int(part).map { $0 <= 255 } ?? false)
        }
    }

    /// Characters that, decoded, hide or change what is shown around them: controls (C0, DEL,
    /// C1), format characters (bidirectional overrides, zero-width ones), line and paragraph
    /// separators, spaces other than U+0020, private-use, unassigned and default-ignorable code
    /// points, and blank letters that render as nothing (Hangul fillers, the blank Braille pattern).
    static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        let properties = scalar.properties
        switch properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .unassigned, .surrogate:
            return true
        case .spaceSeparator:
            return scalar != " "
        default:
            break
        }
        if properties.isDefaultIgnorableCodePoint { return true }
        return [0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800, 0x180E, 0xFFFC].contains(scalar.value)
    }
}
