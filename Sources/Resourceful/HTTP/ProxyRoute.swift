import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Which proxy, if any, a request goes through: `http.proxy`, or the usual environment variables
/// (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`, upper case before lower case).
struct ProxyRoute: Sendable, Equatable {
    /// The proxy for `https` targets and for `http` ones.
    let https: URL?
    let http: URL?
    /// The targets that go direct (`NO_PROXY`).
    let exceptions: [Exception]

    /// One `NO_PROXY` entry.
    enum Exception: Sendable, Equatable {
        /// `*`: nothing is proxied.
        case everything
        /// A host name: itself and every name under it (`example.com`, `.example.com`,
        /// `*.example.com`), optionally on one port only.
        case domain(String, port: Int?)
        /// An address or a CIDR block (`10.0.0.0/8`, `::1`).
        case network([UInt8], prefix: Int)
    }

    /// The route `setting` describes; `environment` holds the variables.
    init(_ setting: APIConfig.ProxySetting, environment: [String: String]) {
        switch setting {
        case .none:
            self.init(https: nil, http: nil, exceptions: [])
        case .url(let url):
            self.init(https: url, http: url, exceptions: Self.exceptions(Self.variable("NO_PROXY", in: environment) ?? ""))
        case .environment:
            self.init(
                https: Self.variable("HTTPS_PROXY", in: environment).flatMap(Self.proxyURL),
                http: Self.variable("HTTP_PROXY", in: environment).flatMap(Self.proxyURL),
                exceptions: Self.exceptions(Self.variable("NO_PROXY", in: environment) ?? "")
            )
        }
    }

    init(https: URL?, http: URL?, exceptions: [Exception]) {
        self.https = https
        self.http = http
        self.exceptions = exceptions
    }

    /// The proxy for `url`, or `nil` to go direct.
    func proxy(for url: URL) -> URL? {
        let scheme = url.scheme?.lowercased()
        guard let proxy = scheme == "https" ? https : scheme == "http" ? http : nil, let host = url.host?.lowercased() else {
            return nil
        }
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return exceptions.contains { $0.matches(host: host, port: port) } ? nil : proxy
    }

    /// A variable's value, upper case first, ignoring empty ones.
    private static func variable(_ name: String, in environment: [String: String]) -> String? {
        for key in [name, name.lowercased()] {
            if let value = environment[key]?.trimmingCharacters(in: .whitespaces), !value.isEmpty { return value }
        }
        return nil
    }

    /// A proxy variable's URL; `host:port` alone means `http://host:port`.
    private static func proxyURL(_ text: String) -> URL? {
        URL(string: text.contains("://") ? text : "http://" + text)
    }

    /// The entries of a `NO_PROXY` list.
    static func exceptions(_ list: String) -> [Exception] {
        list.split(separator: ",").compactMap { entry in
            var text = entry.trimmingCharacters(in: .whitespaces).lowercased()
            guard !text.isEmpty else { return nil }
            if text == "*" { return .everything }
            if let slash = text.firstIndex(of: "/") {
                guard let prefix = Int(text[text.index(after: slash)...]), let address = address(String(text[..<slash])),
                    (0...address.count * 8).contains(prefix)
                else { return nil }
                return .network(address, prefix: prefix)
            }
            if let address = address(text.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))) {
                return .network(address, prefix: address.count * 8)
            }
            var port: Int?
            if let colon = text.lastIndex(of: ":"), let number = Int(text[text.index(after: colon)...]) {
                port = number
                text = String(text[..<colon])
            }
            while text.hasPrefix("*") || text.hasPrefix(".") { text.removeFirst() }
            return text.isEmpty ? nil : .domain(text, port: port)
        }
    }

    /// The bytes of an IPv4 or IPv6 address, or `nil` for anything else.
    static func address(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }
}

extension ProxyRoute.Exception {
    func matches(host: String, port: Int) -> Bool {
        switch self {
        case .everything:
            return true
        case .domain(let domain, let only):
            if let only, only != port { return false }
            return host == domain || host.hasSuffix("." + domain)
        case .network(let network, let prefix):
            let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            guard let address = ProxyRoute.address(bare), address.count == network.count else { return false }
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

/// The variables the live transport reads from the process environment, each with `getenv`:
/// Foundation's `ProcessInfo.environment` copies the whole environment under a lock that process
/// launches hold too.
enum TransportEnvironment {
    static let names = [
        "SSL_CERT_FILE", "SSL_CERT_DIR", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy",
    ]

    static func current() -> [String: String] {
        var variables: [String: String] = [:]
        for name in names {
            if let value = getenv(name) { variables[name] = String(cString: value) }
        }
        return variables
    }
}
