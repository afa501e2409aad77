/// Gets a new credential when the server rejects the current one with `401 Unauthorized`.
///
/// Give one to ``API/defaultMiddlewares(refresher:)``. It is called at most once at a time per service,
/// however many calls see 401 together, and within the deadline of the call that started it.
public protocol CredentialRefresher: Sendable {
    /// Gets a new credential for `service`, writes it where the ``AuthenticationStorage`` reads it
    /// (invalidating any cache, such as `KeyringAuthenticationStorage.invalidate(service:)`), and
    /// returns the new whole `Authorization` value.
    func refreshCredential(for service: String) async throws -> String
}
