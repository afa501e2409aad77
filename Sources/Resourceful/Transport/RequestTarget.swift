/// Where a request goes, as structure: the origin, the base path, the path under it and the
/// query items, each kept percent-encoded as it is sent.
///
/// The ``API`` builds it from the configured base URL and the request; redaction, pagination,
/// redirects, the HTTP cache and cURL exports read its parts, and the URL string is made once, by
/// the transport, from ``url``.
///
/// ```swift
/// let target = RequestTarget(parsing: "https://api.example.com/v1/users?page=2")
/// target.origin          // "https://api.example.com"
/// target.path            // "v1/users"
/// target.query.first?.value  // "2"
/// ```
public struct RequestTarget: Sendable, Hashable {
    /// `scheme://authority` as written, such as `https://api.example.com:8443`; empty for a
    /// target parsed from a string without one.
    public var origin: String
    /// The path of the configured base URL, such as `/v1`, without a trailing `/`; empty when the
    /// base URL has none, or the target lies outside it.
    public var basePath: String
    /// The path under ``basePath``, percent-encoded, without a leading `/`: `users/42`.
    public var path: String
    /// The query items in order, percent-encoded as sent; empty for no query.
    public var query: [QueryItem]

    /// Creates a target from its parts, each percent-encoded already.
    public init(origin: String, basePath: String = "", path: String, query: [QueryItem] = []) {
        self.origin = origin
        self.basePath = basePath
        self.path = path
        self.query = query
    }

    /// The target of the absolute URL `url`; its path counts from `base`'s ``basePath`` when
    /// both share the same origin string and the path lies under that base path. A fragment is
    /// dropped, since it is never sent.
    public init(parsing url: String, base: RequestTarget? = nil) {
        var rest = Substring(url)
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        var query: [QueryItem] = []
        if let mark = rest.firstIndex(of: "?") {
            query = QueryItem.parse(rest[rest.index(after: mark)...])
            rest = rest[..<mark]
        }
        var origin = Substring("")
        if let colon = rest.firstIndex(of: ":"), rest[colon...].hasPrefix("://"),
            !rest[..<colon].contains(where: { $0 == "/" })
        {
            let authorityStart = rest.index(colon, offsetBy: 3)
            let authorityEnd = rest[authorityStart...].firstIndex(of: "/") ?? rest.endIndex
            origin = rest[..<authorityEnd]
            rest = rest[authorityEnd...]
        }
        var basePath = ""
        if let base, base.origin == origin, !base.basePath.isEmpty, rest.hasPrefix(base.basePath),
            rest.dropFirst(base.basePath.count).first.map({ $0 == "/" }) ?? true
        {
            basePath = base.basePath
            rest = rest.dropFirst(basePath.count)
        }
        self.init(origin: String(origin), basePath: basePath, path: String(rest.drop(while: { $0 == "/" })), query: query)
    }

    /// The query string, without `?`; empty when there is none.
    public var encodedQuery: String {
        QueryItem.encoded(query)
    }

    /// The absolute URL: ``origin``, ``basePath``, `/`, ``path`` and the query.
    public var url: String {
        var result = origin
        result.reserveCapacity(origin.utf8.count + basePath.utf8.count + path.utf8.count + 1 + query.count * 16)
        result += basePath
        result += "/"
        result += path
        if !query.isEmpty {
            result += "?"
            result += encodedQuery
        }
        return result
    }
}

extension RequestTarget {
    /// One `name=value` item of a query, kept percent-encoded as it is sent, so that a URL read
    /// from a server (a redirect, a pagination link, a signed URL) goes out again byte for byte.
    public struct QueryItem: Sendable, Hashable {
        /// The name as sent.
        public var encodedName: String
        /// The value as sent; `nil` for an item without `=`.
        public var encodedValue: String?

        /// An item from percent-encoded parts, kept as they are.
        public init(encodedName: String, encodedValue: String?) {
            self.encodedName = encodedName
            self.encodedValue = encodedValue
        }

        /// An item from plain text, encoding everything but RFC 3986 unreserved characters.
        public init(name: String, value: String?) {
            encodedName = PercentEncoding.encode(name, allowing: .unreserved)
            encodedValue = value.map { PercentEncoding.encode($0, allowing: .unreserved) }
        }

        /// The name, decoded (`+` read as a space, as form parsers do).
        public var name: String { Self.decode(encodedName) }
        /// The value, decoded; `nil` for an item without `=`.
        public var value: String? { encodedValue.map(Self.decode) }

        func write(to result: inout String) {
            result += encodedName
            if let encodedValue {
                result += "="
                result += encodedValue
            }
        }

        /// `items` as a query string (or form body), joined by `&`.
        static func encoded(_ items: [QueryItem]) -> String {
            var result = ""
            for item in items {
                if !result.isEmpty { result += "&" }
                item.write(to: &result)
            }
            return result
        }

        /// The items of a query string, empty pairs left out.
        static func parse(_ query: Substring) -> [QueryItem] {
            query.split(separator: "&").map { pair in
                guard let equals = pair.firstIndex(of: "=") else { return QueryItem(encodedName: String(pair), encodedValue: nil) }
                return QueryItem(encodedName: String(pair[..<equals]), encodedValue: String(pair[pair.index(after: equals)...]))
            }
        }

        private static func decode(_ text: String) -> String {
            guard text.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) else { return text }
            return PercentEncoding.decode(text, plusAsSpace: true)
        }
    }
}
