/// Asks a storage for a call's credential within the call's deadline.
///
/// The storages of this package answer from memory, or without blocking, or bound their own waits
/// by ``deadline`` and by cancellation (``DeadlineHonouringStorage``): they are asked directly. Any
/// other storage is raced against the deadline, so that one that hangs fails the call with
/// ``APIError/Kind/timeout`` at its deadline instead of holding it for ever.
package enum CredentialLookup {
    /// The deadline of the call whose credential is being looked up, for storages that wait.
    @TaskLocal package static var deadline: ContinuousClock.Instant?

    /// `storage`'s header for `service`, by `deadline`. `honoursDeadline` is whether `storage`
    /// is a ``DeadlineHonouringStorage``, when the caller already knows.
    package static func header(
        from storage: any AuthenticationStorage,
        service: String,
        deadline: ContinuousClock.Instant,
        honoursDeadline: Bool? = nil
    ) async throws -> String? {
        if honoursDeadline ?? (storage is any DeadlineHonouringStorage) {
            return try await $deadline.withValue(deadline) {
                try await storage.authenticationHeader(for: service)
            }
        }
        return try await Deadline.run(until: deadline) {
            try await storage.authenticationHeader(for: service)
        }
    }
}

/// A storage that answers without blocking a thread, and bounds any wait of its own by
/// ``CredentialLookup/deadline`` and by task cancellation.
package protocol DeadlineHonouringStorage: AuthenticationStorage {}

extension InMemoryAuthenticationStorage: DeadlineHonouringStorage {}
extension EnvironmentAuthenticationStorage: DeadlineHonouringStorage {}
extension FileAuthenticationStorage: DeadlineHonouringStorage {}
extension ChainedAuthenticationStorage: DeadlineHonouringStorage {}
