
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Credentials from environment variables, named after the service: the usual way secrets reach
/// a server in a container.
///
/// For the service `example-api` and the default prefix, the storage reads
///
/// - `RESOURCEFUL_AUTH_EXAMPLE_API_AUTHORIZATION`: the whole `Authorization` value, such as
///   `Basic dXNlcjpwYXNz`; or else
/// - `RESOURCEFUL_AUTH_EXAMPLE_API_TOKEN`: a bare token, sent as `<scheme> <token>`
///   (`Bearer …` by default).
///
/// The service name is upper-cased, and every character other than `A`–`Z` and `0`–`9` becomes
/// `_` (``variableName(prefix:service:suffix:)``). Trailing newlines are trimmed. When neither
/// variable is set there is no credential (`nil`); a variable that is set but empty, or whose value
/// holds a line break inside, is an ``AuthenticationStorageError`` naming the variable.
///
/// ```swift
/// deps.authenticationStorage = EnvironmentAuthenticationStorage()
/// ```
package final class EnvironmentAuthenticationStorage: AuthenticationStorage {
    /// `RESOURCEFUL_AUTH`, the configuration's default.
    package static let defaultPrefix = APIConfig.AuthenticationSettings().environmentPrefix

    /// What the variables' names start with.
    package let prefix: String
    /// The scheme put before a bare token.
    package let scheme: String
    let lookup: @Sendable (String) -> String?
    /// Each service's two variable names, worked out once.
    private let names = Locked<[String: (whole: String, bare: String)]>([:])

    /// Reads the process's environment at each call, so a value set while the program runs is
    /// seen; or `environment`, when given, instead.
    package convenience init(prefix: String = defaultPrefix, scheme: String = "Bearer", environment: [String: String]? = nil) {
        if let environment {
            self.init(prefix: prefix, scheme: scheme) { environment[$0] }
        } else {
            self.init(prefix: prefix, scheme: scheme) { name in getenv(name).map { String(cString: $0) } }
        }
    }

    /// Reads variables through `lookup`, such as a test's dictionary.
    package init(prefix: String = defaultPrefix, scheme: String = "Bearer", lookup: @escaping @Sendable (String) -> String?) {
        self.prefix = prefix
        self.scheme = scheme
        self.lookup = lookup
    }

    private func variables(for service: String) -> (whole: String, bare: String) {
        if let known = names.withLock({ $0[service] }) { return known }
        let made = (
            whole: Self.variableName(prefix: prefix, service: service, suffix: "AUTHORIZATION"),
            bare: Self.variableName(prefix: prefix, service: service, suffix: "TOKEN")
        )
        names.withLock { $0[service] = made }
        return made
    }

    /// The variable for `service` with `suffix`: `<PREFIX>_<SERVICE>_<SUFFIX>`, the service
    /// upper-cased with every character other than `A`–`Z` and `0`–`9` made `_`.
    package static func variableName(prefix: String, service: String, suffix: String) -> String {
        let name = String(String.UnicodeScalarView(service.uppercased().unicodeScalars.map { scalar in
            ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) ? scalar : "_"
        }))
        return "\(prefix)_\(name)_\(suffix)"
    }

    /// The `_AUTHORIZATION` variable's value, or `<scheme> ` and the `_TOKEN` variable's value, or
    /// `nil` when neither is set.
    package func authenticationHeader(for service: String) async throws -> String? {
        let (whole, bare) = variables(for: service)
        if let value = lookup(whole) {
            return try Self.checked(value, variable: whole)
        }
        if let value = lookup(bare) {
            return "\(scheme) \(try Self.checked(value, variable: bare))"
        }
        return nil
    }

    private static func checked(_ value: String, variable: String) throws(AuthenticationStorageError) -> String {
        let source = "environment variable \(variable)"
        let value = value.trimmingLineEnds
        guard !value.isEmpty else { throw AuthenticationStorageError(kind: .empty, source: source, detail: "is set but empty") }
        guard HeaderValidation.isValidValue(value) else {
            throw AuthenticationStorageError(kind: .invalidValue, source: source, detail: "holds a line break or NUL")
        }
        return value
    }
}
