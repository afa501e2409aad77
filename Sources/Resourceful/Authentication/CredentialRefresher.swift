/// Gets a new credential when the server rejects the current one with `401 Unauthorized`.
///
/// Give one to ``API/defaultMiddlewares(refresher:)``. It is called at most once at a time per
/// service and refused credential, however many calls see 401 together, and within the deadline of
/// the call that started it: past that deadline it is cancelled and its result, should it still
/// come, is dropped. A refresher that throws is not asked again for the same credential for a few
/// seconds. A call is only sent again with a credential refreshed from the one it sent, so one
/// refresh step can serve APIs whose storages hold different users' credentials.
public protocol CredentialRefresher: Sendable {
    /// Gets a new credential for `service`, writes it where the ``AuthenticationStorage`` reads it
    /// (invalidating any cache, such as `KeyringAuthenticationStorage.invalidate(service:)`), and
    /// returns the new whole `Authorization` value.
    func refreshCredential(for service: String) async throws -> String
}
