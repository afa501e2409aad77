public import Resourceful

/// An ``AuthenticationStorage`` backed by the Linux keyring: the `Authorization` header is
/// `"<scheme> <secret>"`, the secret being what the ``Keyring`` holds for the service and
/// ``account``, without line breaks at its end (`echo "$TOKEN" | secret-tool store …` stores one).
///
/// A keyring lookup costs about as much as a whole loopback request, so headers are cached for
/// ``timeToLive`` (a missing credential too), and concurrent callers asking for the same service
/// share one lookup. Call ``invalidate(service:)`` after changing the keyring from this process
/// (a logout, a refreshed token). A caller waiting for a shared lookup stops waiting when its task
/// is cancelled or its call's deadline passes; the lookup itself ends within the keyring's own
/// time limit and its result is cached for the next caller.
///
/// ```swift
/// var deps = try await APIDependencies.live(environment: "development")
/// deps.authenticationStorage = KeyringAuthenticationStorage(account: "ada")
/// ```
public final class KeyringAuthenticationStorage: AuthenticationStorage, DeadlineHonouringStorage {
    private enum Entry: Sendable {
        case cached(String?, expires: ContinuousClock.Instant)
        case loading(Task<String?, any Error>, generation: UInt64)
    }

    private enum Lookup: Sendable {
        case hit(String?)
        case wait(Task<String?, any Error>, generation: UInt64)
    }

    private struct State: Sendable {
        var entries: [String: Entry] = [:]
        var generation: UInt64 = 0
    }

    /// The account the secret is stored under.
    let account: String
    /// The scheme put before the secret, such as `Bearer`.
    let scheme: String
    /// How long a looked-up header is reused.
    let timeToLive: Duration
    private let lookUpSecret: @Sendable (_ service: String) async throws -> String?
    private let state = Locked(State())

    /// Creates a storage reading `account`'s secrets from `keyring`.
    public convenience init(account: String, scheme: String = "Bearer", keyring: Keyring = Keyring(), timeToLive: Duration = .seconds(300)) {
        self.init(account: account, scheme: scheme, timeToLive: timeToLive) { service in
            try await keyring.lookup(service: service, account: account)
        }
    }

    /// Creates a storage whose secrets come from `lookUpSecret`: the caching and sharing of
    /// lookups, without a keyring.
    init(account: String, scheme: String, timeToLive: Duration, lookUpSecret: @escaping @Sendable (_ service: String) async throws -> String?) {
        self.account = account
        self.scheme = scheme
        self.timeToLive = timeToLive
        self.lookUpSecret = lookUpSecret
    }

    /// `"<scheme> <secret>"` for `service`, or `nil` when the keyring holds no secret for it.
    ///
    /// - Throws: ``KeyringError`` when the keyring cannot be read; a locked keyring is an error,
    ///   never "no credential".
    public func authenticationHeader(for service: String) async throws -> String? {
        let now = ContinuousClock.now
        let lookup: Lookup = state.withLock { state in
            switch state.entries[service] {
            case .cached(let header, let expires) where expires > now:
                return .hit(header)
            case .loading(let task, let generation):
                return .wait(task, generation: generation)
            default:
                let lookUpSecret = lookUpSecret
                let scheme = scheme
                let generation = state.generation
                let task = Task<String?, any Error> { [weak self] in
                    let result: Result<String?, any Error>
                    do {
                        result = .success(try await lookUpSecret(service).map { "\(scheme) \($0.trimmingLineEnds)" })
                    } catch {
                        result = .failure(error)
                    }
                    // The lookup records its own result, so that it holds even when every caller
                    // stopped waiting for it.
                    self?.finish(service: service, generation: generation, result: result)
                    return try result.get()
                }
                state.entries[service] = .loading(task, generation: generation)
                return .wait(task, generation: generation)
            }
        }
        switch lookup {
        case .hit(let header):
            return header
        case .wait(let task, _):
            return try await SharedTaskWait.value(of: task, deadline: lookupDeadline)
        }
    }

    /// Caches a finished lookup's header, or forgets a failed one, unless the entry was
    /// invalidated meanwhile.
    private func finish(service: String, generation: UInt64, result: Result<String?, any Error>) {
        state.withLock { state in
            guard state.generation == generation, case .loading = state.entries[service] else { return }
            switch result {
            case .success(let header): state.entries[service] = .cached(header, expires: ContinuousClock.now + timeToLive)
            case .failure: state.entries[service] = nil
            }
        }
    }

    /// Forgets the cached header of `service`, or of every service when `nil`; the next call
    /// looks it up again.
    public func invalidate(service: String? = nil) {
        state.withLock { state in
            state.generation &+= 1
            if let service {
                state.entries[service] = nil
            } else {
                state.entries.removeAll()
            }
        }
    }
}
