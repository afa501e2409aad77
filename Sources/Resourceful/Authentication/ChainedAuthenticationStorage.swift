package import Logging
import Synchronization

/// Asks several storages in turn and returns the first header found: files mounted by the
/// orchestrator, then the environment, say.
///
/// A storage that has no credential (`nil`) passes the question on. A storage that fails passes
/// it on only when its link is optional: the failure is then logged once, at `warning`, through the
/// logger given, and again only after that storage has answered in between. Within a call, an
/// optional link followed by another waits at most half the time left, so that one that does not
/// answer (a hung mount, a frozen daemon) leaves the next the other half. A failure of a link
/// that is not optional fails the call. With no header anywhere, the answer is `nil`.
///
/// ```swift
/// deps.authenticationStorage = ChainedAuthenticationStorage([
///     .init("file", FileAuthenticationStorage(directory: "/run/secrets"), isOptional: true),
///     .init("environment", EnvironmentAuthenticationStorage()),
/// ], logger: deps.logger)
/// ```
package final class ChainedAuthenticationStorage: AuthenticationStorage {
    /// One storage of the chain.
    package struct Link: Sendable {
        /// A name for log lines, such as `file`.
        package var name: String
        /// The storage asked.
        package var storage: any AuthenticationStorage
        /// Whether a failure of this storage passes the question on instead of failing the call.
        package var isOptional: Bool

        /// Creates a link.
        package init(_ name: String, _ storage: any AuthenticationStorage, isOptional: Bool = false) {
            self.name = name
            self.storage = storage
            self.isOptional = isOptional
        }
    }

    /// The storages, in the order they are asked.
    package let links: [Link]
    private let logger: Logger
    /// The links and services whose latest failure has been logged.
    private let logged = Locked<Set<String>>([])
    /// Whether `logged` may hold anything: a call that finds it false touches no lock.
    private let anyLogged = Atomic<Bool>(false)

    /// Creates a chain of `links`, asked in order, logging through `logger`.
    package init(_ links: [Link], logger: Logger) {
        self.links = links
        self.logger = logger
    }

    /// The first header any storage has for `service`, or `nil`.
    ///
    /// - Throws: The error of the first failing storage that is not optional.
    package func authenticationHeader(for service: String) async throws -> String? {
        try await credential(for: service)?.header
    }

    /// The first credential any storage has for `service`, with its expiry when that storage
    /// knows it, or `nil`.
    ///
    /// - Throws: The error of the first failing storage that is not optional.
    package func credential(for service: String) async throws -> Credential? {
        for (index, link) in links.enumerated() {
            do {
                let credential: Credential?
                if let deadline = CredentialLookup.deadline {
                    // An optional link with another after it gets half the time left: one that
                    // does not answer (a hung mount) leaves the rest to the next.
                    let bound = link.isOptional && index < links.count - 1 ? ContinuousClock.now + (deadline - .now) / 2 : deadline
                    credential = try await CredentialLookup.credential(from: link.storage, service: service, deadline: bound)
                } else {
                    credential = try await link.storage.credential(for: service)
                }
                if anyLogged.load(ordering: .relaxed) {
                    _ = logged.withLock { $0.remove("\(index)/\(service)") }
                }
                if let credential { return credential }
            } catch {
                // The call's deadline or cancellation ends the whole lookup, optional link or not;
                // an optional link's own time running out passes the question on.
                guard link.isOptional, !Self.endsTheCall(error, deadline: CredentialLookup.deadline) else { throw error }
                anyLogged.store(true, ordering: .relaxed)
                if logged.withLock({ $0.insert("\(index)/\(service)").inserted }) {
                    logger.warning(
                        "Credential storage failed; asking the next one",
                        metadata: [
                            "resourceful.storage": .string(link.name),
                            "resourceful.service": .string(service),
                            "resourceful.error": .string(secretFreeText(of: error)),
                        ]
                    )
                }
            }
        }
        return nil
    }

    /// Whether `error` ends the lookup: a cancellation, or a time-out once the call's `deadline`
    /// has come (or when there is none).
    private static func endsTheCall(_ error: any Error, deadline: ContinuousClock.Instant?) -> Bool {
        if error is CancellationError || Task.isCancelled { return true }
        guard let error = error as? APIError else { return false }
        if error.kind == .cancelled { return true }
        return error.kind == .timeout && deadline.map { ContinuousClock.now >= $0 } ?? true
    }
}
