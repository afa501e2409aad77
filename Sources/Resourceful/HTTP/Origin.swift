import Foundation

/// The origin of a URL (RFC 6454): its scheme and host, lower-cased, and its port, the scheme's
/// default when none is written.
///
/// Two URLs share an origin only when all three are equal character for character: a credential
/// given for one origin goes to no other. Every same-origin decision (redirects, `Link`
/// pagination, cache invalidation) compares these values; ``description`` is only for messages.
struct Origin: Hashable, Sendable, CustomStringConvertible {
    /// The scheme, lower-cased.
    let scheme: String
    /// The host, percent-decoded and lower-cased; an IPv6 address without its brackets.
    let host: String
    /// The port written in the URL, else `443` for `https` and `80` for `http`; `nil` for another
    /// scheme without a port.
    let port: Int?

    /// The origin of `url`; `nil` when it has no scheme or no host, which shares no origin.
    init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), !scheme.isEmpty, let host = url.host?.lowercased(), !host.isEmpty else {
            return nil
        }
        self.scheme = scheme
        self.host = host
        port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : nil)
    }

    /// Whether `url` and `other` both have an origin, and the same one.
    static func same(_ url: URL, _ other: URL) -> Bool {
        guard let origin = Origin(url) else { return false }
        return origin == Origin(other)
    }

    /// `scheme://host:port`, keeping only the characters a scheme or host name may hold, so it can
    /// be written in an error or a log line.
    var description: String {
        let host = host.filter { $0.isASCII && ($0.isLetter || $0.isNumber || "-.:[]_".contains($0)) }
        return "\(Self.safeScheme(scheme))://\(String(host.prefix(255)))\(port.map { ":\($0)" } ?? "")"
    }

    /// `scheme` without characters a scheme may not hold, at most 32 of them.
    static func safeScheme(_ scheme: String) -> String {
        String(scheme.filter { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }.prefix(32))
    }
}

extension RequestTarget {
    /// Whether this target and `other` share an origin: the same origin string, or two that read
    /// as one origin (``Origin``). Targets without an origin share one only with each other.
    package func sameOrigin(as other: RequestTarget) -> Bool {
        // A base path that does not start with `/` would run on into the URL's authority.
        guard basePath.isEmpty || basePath.hasPrefix("/") else { return false }
        if origin == other.origin { return true }
        guard let mine = URL(string: origin), let theirs = URL(string: other.origin) else { return false }
        return Origin.same(mine, theirs)
    }
}

extension APIConfig {
    /// Whether `other` calls the same origin as this configuration: else it is another server,
    /// which inherits no credential.
    package func callsSameOrigin(as other: APIConfig) -> Bool {
        Origin.same(baseURL, other.baseURL)
    }
}
