
/// Credentials held in memory: for tests, tools, and apps that get their token at start-up.
///
/// ```swift
/// deps.authenticationStorage = InMemoryAuthenticationStorage(["example-api": "Bearer t0k3n"])
/// ```
public final class InMemoryAuthenticationStorage: AuthenticationStorage {
    private let headers: Locked<[String: String]>

    /// Creates a storage holding `headers`, keyed by service.
    public init(_ headers: [String: String] = [:]) {
        self.headers = Locked(headers)
    }

    /// The header stored for `service`.
    public func authenticationHeader(for service: String) async throws -> String? {
        headers.withLock { $0[service] }
    }

    /// Stores `header` for `service`, or removes it when `header` is `nil`.
    public func setAuthenticationHeader(_ header: String?, for service: String) {
        headers.withLock { $0[service] = header }
    }
}
