import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The environment variables the live transport reads (OpenSSL's and the proxy variables), and the
/// process environment as the library reads it: one snapshot that the configuration's checks and
/// the transport both see, so that a variable a parent process left twice cannot pass a check
/// with one value and reach the transport with the other.
package enum TransportEnvironment {
    /// The variables the live transport reads.
    package static let names = [
        "SSL_CERT_FILE", "SSL_CERT_DIR", "https_proxy", "HTTPS_PROXY", "http_proxy", "no_proxy", "NO_PROXY",
    ]

    /// The transport's variables from the process environment, each read with `getenv`: the value
    /// the C library (and OpenSSL) reads, the first, where a name appears twice. Foundation's
    /// `ProcessInfo.environment` copies the whole environment under a lock that process launches
    /// hold too.
    package static func current() -> [String: String] {
        var variables: [String: String] = [:]
        for name in names {
            if let value = getenv(name) { variables[name] = String(cString: value) }
        }
        return variables
    }

    /// The process environment with the transport's variables as ``current()`` reads them:
    /// `ProcessInfo.environment` keeps the last of a name that appears twice, `getenv` the first.
    package static func process() -> [String: String] {
        var variables = ProcessInfo.processInfo.environment
        for name in names { variables[name] = nil }
        return variables.merging(current()) { $1 }
    }

    /// The transport's variables of `variables`.
    package static func restricted(_ variables: [String: String]) -> [String: String] {
        variables.filter { names.contains($0.key) }
    }
}
