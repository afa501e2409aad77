/// A storage that answers without blocking a thread, and bounds any wait of its own by the
/// call's deadline (``lookupDeadline``) and by task cancellation.
///
/// The ``API`` asks such a storage directly; any other storage is run in a task of its own and
/// raced against the deadline, so that one that ignores cancellation cannot hold a call past it.
/// Conform when your storage keeps that promise, as the keyring's does:
///
/// ```swift
/// struct VaultStorage: DeadlineHonouringStorage {
///     func authenticationHeader(for service: String) async throws -> String? {
///         let limit = lookupDeadline ?? .now + .seconds(5)
///         return try await vault.read(service, until: limit)   // throws at `limit` or on cancellation
///     }
/// }
/// ```
public protocol DeadlineHonouringStorage: AuthenticationStorage {}

extension DeadlineHonouringStorage {
    /// The deadline of the call whose credential is being looked up; `nil` outside a call's
    /// lookup. A wait past it is wasted: the call has failed with ``APIError/Kind/timeout``.
    public var lookupDeadline: ContinuousClock.Instant? { CredentialLookup.deadline }
}

extension InMemoryAuthenticationStorage: DeadlineHonouringStorage {}
extension EnvironmentAuthenticationStorage: DeadlineHonouringStorage {}
extension FileAuthenticationStorage: DeadlineHonouringStorage {}
extension ChainedAuthenticationStorage: DeadlineHonouringStorage {}
