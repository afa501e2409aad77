import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Which proxy, if any, a request goes through: `http.proxy`, or the environment's variables,
/// read the way curl reads them.
///
/// - `https` targets: `https_proxy`, else `HTTPS_PROXY`.
/// - `http` targets: `http_proxy` only. `HTTP_PROXY` is never read: a CGI program finds a
///   request's `Proxy` header field in that variable ("httpoxy"), so it cannot be trusted.
/// - `no_proxy`, else `NO_PROXY`: the targets that go direct.
///
/// A lower-case variable that is set wins over its upper-case form even when empty; an empty
/// value means no proxy (or no exceptions).
///
/// `NO_PROXY` is a comma-separated list; spaces and tabs around an entry are ignored, case does
/// not matter, and an entry that is none of these forms is ignored:
/// - `*`: nothing is proxied;
/// - a host name, which matches itself and every name under it on a label boundary
///   (`example.com` matches `api.example.com`, not `notexample.com`); a leading `.` or `*.` and a
///   trailing `.` are ignored, as is a trailing `.` of the target's host;
/// - an IPv4 or IPv6 address, or a CIDR block (`10.0.0.0/8`, `fd00::/8`), an IPv6 one with or
///   without brackets (`[::1]`, `[fd00::]/8`); it matches only targets written as addresses;
/// - any of the above but `*` and a block with `:port` after it (`example.com:8443`,
///   `[::1]:18443`, `10.0.0.1:8080`): that port only.
///
/// A loopback target never goes through a proxy, whatever the variables or `http.proxy` say
/// (curl's rule): `localhost`, `127.0.0.0/8` (in any form the resolver takes, such as `127.1`),
/// `::1` (with a zone too, `[::1%25lo]`) and `::ffff:127.0.0.0/104`. Plain `http` is allowed to
/// such a target only because its traffic stays on the machine; a proxy would carry it,
/// credentials included, elsewhere. Names under `localhost` and `localhost.` are not such targets:
/// the system's resolver may ask DNS for them, unlike curl, which answers them itself.
struct ProxyRoute: Sendable, Equatable {
    /// The proxy for `https` targets and for `http` ones.
    let https: URL?
    let http: URL?
    /// The targets that go direct (`NO_PROXY`).
    let exceptions: [Exception]
    /// Whether loopback targets go direct (always, but in tests of the proxy itself, whose
    /// servers are all on this machine).
    var loopbackGoesDirect = true

    /// One `NO_PROXY` entry.
    enum Exception: Sendable, Equatable {
        /// `*`: nothing is proxied.
        case everything
        /// A host name without leading or trailing dots: itself and every name under it,
        /// optionally on one port only.
        case domain(String, port: Int?)
        /// An address or a CIDR block (`10.0.0.0/8`, `::1`), optionally on one port only.
        case network([UInt8], prefix: Int, port: Int?)
    }

    /// The variables read for `https` targets, `http` ones and exceptions, first found first.
    static let httpsVariables = ["https_proxy", "HTTPS_PROXY"]
    static let httpVariables = ["http_proxy"]
    static let noProxyVariables = ["no_proxy", "NO_PROXY"]

    /// The route `setting` describes; `environment` holds the variables.
    init(_ setting: APIConfig.ProxySetting, environment: [String: String]) {
        let exceptions = Self.exceptions(Self.variable(Self.noProxyVariables, in: environment) ?? "")
        switch setting {
        case .none:
            self.init(https: nil, http: nil, exceptions: [])
        case .url(let url):
            self.init(https: url, http: url, exceptions: exceptions)
        case .environment:
            self.init(
                https: Self.variable(Self.httpsVariables, in: environment).flatMap(Self.proxyURL),
                http: Self.variable(Self.httpVariables, in: environment).flatMap(Self.proxyURL),
                exceptions: exceptions
            )
        }
    }

    init(https: URL?, http: URL?, exceptions: [Exception]) {
        self.https = https
        self.http = http
        self.exceptions = exceptions
    }

    /// The proxy for `url`, or `nil` to go direct: always for a loopback target.
    func proxy(for url: URL) -> URL? {
        let scheme = url.scheme?.lowercased()
        guard let proxy = scheme == "https" ? https : scheme == "http" ? http : nil, let target = Target(url),
            !(loopbackGoesDirect && target.isLoopback)
        else {
            return nil
        }
        return exceptions.contains { $0.matches(target) } ? nil : proxy
    }

    /// The first of `names` that is set, trimmed; `nil` when it is empty or none is set.
    private static func variable(_ names: [String], in environment: [String: String]) -> String? {
        guard let value = names.lazy.compactMap({ environment[$0] }).first else { return nil }
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }

    /// A proxy variable's URL; `host:port` alone means `http://host:port`.
    private static func proxyURL(_ text: String) -> URL? {
        URL(string: text.contains("://") ? text : "http://" + text)
    }

    /// The entries of a `NO_PROXY` list, those of no known form left out.
    static func exceptions(_ list: String) -> [Exception] {
        list.split(separator: ",").compactMap { exception(String($0)) }
    }

    /// One `NO_PROXY` entry, or `nil` for an empty one or one of no known form.
    static func exception(_ entry: String) -> Exception? {
        var text = entry.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        guard !text.isEmpty, !text.contains(where: \.isWhitespace) else { return nil }
        if text == "*" { return .everything }
        if text.hasPrefix("[") {
            // `[v6]`, `[v6]:port`, `[v6]/bits`, `[v6/bits]`.
            guard let close = text.firstIndex(of: "]") else { return nil }
            var address = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            var port: Int?
            if rest.hasPrefix(":") {
                guard let number = Self.port(rest.dropFirst()) else { return nil }
                port = number
            } else if rest.hasPrefix("/") {
                address += rest
            } else if !rest.isEmpty {
                return nil
            }
            return network(address, port: port)
        }
        if let network = network(text, port: nil) { return network }
        var port: Int?
        if let colon = text.firstIndex(of: ":"), colon == text.lastIndex(of: ":") {
            guard let number = Self.port(text[text.index(after: colon)...]) else { return nil }
            port = number
            text = String(text[..<colon])
            if let network = network(text, port: port) { return network }
        }
        while text.hasPrefix("*") || text.hasPrefix(".") { text.removeFirst() }
        if text.hasSuffix(".") { text.removeLast() }
        guard !text.isEmpty, !text.contains(where: { "*/:[]".contains($0) }) else { return nil }
        return .domain(text, port: port)
    }

    /// An address or `address/bits`, or `nil` when `text` is neither.
    private static func network(_ text: String, port: Int?) -> Exception? {
        guard let slash = text.firstIndex(of: "/") else {
            return address(text).map { .network($0, prefix: $0.count * 8, port: port) }
        }
        let bits = text[text.index(after: slash)...]
        guard !bits.isEmpty, bits.count <= 3, bits.allSatisfy(\.isASCIIDigit), let prefix = Int(bits),
            let address = address(String(text[..<slash])), prefix <= address.count * 8
        else { return nil }
        return .network(address, prefix: prefix, port: port)
    }

    /// A port number of at most five digits, up to 65535.
    private static func port(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 5, text.allSatisfy(\.isASCIIDigit), let port = Int(text), port <= 65535 else { return nil }
        return port
    }

    /// The bytes of an IPv4 or IPv6 address, or `nil` for anything else.
    static func address(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }

    /// A request's host, as `NO_PROXY` entries are matched against it.
    struct Target {
        /// The host name, lower-cased, without a trailing dot; `nil` for an address.
        let name: String?
        /// Whether the host name was written with a trailing dot (`localhost.`): a name the
        /// system's hosts file does not hold, which the resolver asks DNS for.
        let endsInDot: Bool
        /// The address's bytes; `nil` for a host name.
        let address: [UInt8]?
        let port: Int

        init?(_ url: URL) {
            guard var host = url.host?.lowercased(), !host.isEmpty else { return nil }
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            // A scoped IPv6 address (`[::1%25lo]`, RFC 6874) is its address on an interface:
            // the zone is left out, so that `::1%lo` is loopback and matches `NO_PROXY` as `::1`.
            if host.contains(":"), let percent = host.firstIndex(of: "%") { host = String(host[..<percent]) }
            let scheme = url.scheme?.lowercased()
            port = url.port ?? (scheme == "https" ? 443 : 80)
            address = ProxyRoute.address(host)
            endsInDot = address == nil && host.hasSuffix(".")
            if endsInDot { host.removeLast() }
            name = address == nil ? host : nil
        }

        /// Whether the target is this machine: `localhost` (the hosts file's, root's to write),
        /// an address in `127.0.0.0/8`, `::1`, or an IPv4-mapped `127.x.y.z`. A name the
        /// resolver reads as an IPv4 address (`127.1`, `0x7f000001`, `2130706433`) counts as that
        /// address. A name under `localhost` (`api.localhost`) or `localhost.` does not: the
        /// connection resolves it with the system's resolver, which may ask DNS, whose answer
        /// can be another machine.
        var isLoopback: Bool {
            if let address {
                switch address.count {
                case 4:
                    return address[0] == 127
                case 16:
                    if address[..<15].allSatisfy({ $0 == 0 }), address[15] == 1 { return true }
                    return address[..<10].allSatisfy { $0 == 0 } && address[10] == 0xFF && address[11] == 0xFF && address[12] == 127
                default:
                    return false
                }
            }
            guard let name else { return false }
            if name == "localhost" { return !endsInDot }
            // `inet_aton`'s forms, which `getaddrinfo` accepts for a host name.
            var v4 = in_addr()
            guard !endsInDot, name.utf8.allSatisfy({ $0 < 0x80 }), inet_aton(name, &v4) != 0 else { return false }
            return withUnsafeBytes(of: &v4) { $0[0] } == 127
        }
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

extension ProxyRoute.Exception {
    func matches(_ target: ProxyRoute.Target) -> Bool {
        switch self {
        case .everything:
            return true
        case .domain(let domain, let only):
            guard let host = target.name, only == nil || only == target.port else { return false }
            return host == domain || host.hasSuffix("." + domain)
        case .network(let network, let prefix, let only):
            guard let address = target.address, address.count == network.count, only == nil || only == target.port else { return false }
            var remaining = prefix
            for (left, right) in zip(address, network) where remaining > 0 {
                let bits = min(remaining, 8)
                let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
                if left & mask != right & mask { return false }
                remaining -= bits
            }
            return true
        }
    }
}
