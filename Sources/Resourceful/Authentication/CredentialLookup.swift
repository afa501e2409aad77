/// Asks a storage for a call's credential within the call's deadline.
///
/// The storages of this package answer from memory, or without blocking, or bound their own waits
/// by ``deadline`` and by cancellation (``DeadlineHonouringStorage``): they are asked directly. Any
/// other storage is raced against the deadline, so that one that hangs fails the call with
/// ``APIError/Kind/timeout`` at its deadline instead of holding it for ever.
package enum CredentialLookup {
    /// The deadline of the call whose credential is being looked up, for storages that wait.
    @TaskLocal package static var deadline: ContinuousClock.Instant?

    /// `storage`'s credential for `service`, with its expiry when it knows it, by `deadline`.
    package static func credential(
        from storage: any AuthenticationStorage,
        service: String,
        deadline: ContinuousClock.Instant,
        honoursDeadline: Bool? = nil
    ) async throws -> Credential? {
        if honoursDeadline ?? (storage is any DeadlineHonouringStorage) {
            return try await $deadline.withValue(deadline) {
                try await storage.credential(for: service)
            }
        }
        return try await Deadline.run(until: deadline) {
            try await storage.credential(for: service)
        }
    }
}

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
