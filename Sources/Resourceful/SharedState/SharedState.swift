/// The state the limit steps keep, in one value: an ``API``'s own in memory by default, or a
/// store every instance of a fleet shares (such as `ResourcefulPostgres`'s `PostgresSharedState`).
///
/// ```swift
/// let api = API(dependencies: dependencies, middlewares: API.defaultMiddlewares(sharedState: shared.state))
/// ```
///
/// Made from the configuration (`sharedState.kind`, ``SharedStateFactory``), it is in
/// ``APIDependencies/sharedState``: an ``API`` made from those dependencies keeps its limits
/// there, an OAuth 2 storage made with them shares its tokens there, and ``API/shutdown()`` ends
/// the store's connections.
public struct SharedState: Sendable {
    /// Rate budgets and pauses, for ``RateLimitMiddleware``.
    public var rateLimits: any RateLimitState
    /// Circuit breakers, for ``CircuitBreakerMiddleware``.
    public var circuitBreakers: any CircuitBreakerState
    /// Access tokens the fleet shares (`client_credentials`), for a storage that gets them, such
    /// as `OAuth2AuthenticationStorage`; `nil` when each instance asks for its own.
    public var tokens: (any SharedTokenCache)?
    /// An HTTP cache the fleet shares, for ``HTTPCacheMiddleware``, with the key it files a
    /// credential's answers under (the same in every instance); `nil` when none is kept.
    public var httpCache: (storage: any HTTPCacheStorage, digestKey: HTTPCacheDigestKey)?
    /// Refresh tokens the fleet shares, for an OAuth 2 storage whose `refreshTokenStorage` is
    /// `sharedState`; `nil` when none are kept.
    public var refreshTokens: (any RotatingSecretStorage)?
    private let ending: Ending
    private let onDrain: (@Sendable () async -> Void)?

    /// The deadline of the call a state's method works for, while ``RateLimitMiddleware`` or
    /// ``CircuitBreakerMiddleware`` asks a state that is not in memory; `nil` otherwise.
    ///
    /// A state kept in a remote store stops waiting for it then (and serves from memory), so
    /// that no call is held past its deadline by its state, not even by what is written after
    /// its answer came.
    @TaskLocal public static var callDeadline: ContinuousClock.Instant?

    /// State kept in `rateLimits` and `circuitBreakers`; each in memory unless given.
    ///
    /// - Parameters:
    ///   - tokens: Access tokens the fleet shares; none unless given.
    ///   - httpCache: An HTTP cache the fleet shares, and its digest key; none unless given.
    ///   - refreshTokens: Refresh tokens the fleet shares; none unless given.
    ///   - onShutdown: What ends the store's connections, run by the first ``shutdown()`` of
    ///     this value or any copy (and so by ``API/shutdown()`` of an API made with these);
    ///     nothing unless given.
    ///   - onDrain: What waits for the store's writes still in flight (a rotated refresh token's,
    ///     and renewals whose answer may bring one), run by ``drain()``: ``API/shutdown()`` runs
    ///     it before it shuts its transport down, so that those renewals are answered; nothing
    ///     unless given.
    public init(
        rateLimits: any RateLimitState = InMemoryRateLimitState(),
        circuitBreakers: any CircuitBreakerState = InMemoryCircuitBreakerState(),
        tokens: (any SharedTokenCache)? = nil,
        httpCache: (storage: any HTTPCacheStorage, digestKey: HTTPCacheDigestKey)? = nil,
        refreshTokens: (any RotatingSecretStorage)? = nil,
        onShutdown: (@Sendable () async -> Void)? = nil,
        onDrain: (@Sendable () async -> Void)? = nil
    ) {
        self.onDrain = onDrain
        self.refreshTokens = refreshTokens
        self.rateLimits = rateLimits
        self.circuitBreakers = circuitBreakers
        self.tokens = tokens
        self.httpCache = httpCache
        ending = Ending(onShutdown)
    }

    /// Ends the store's connections (what `onShutdown` does), once for this value and all its
    /// copies; the calls after the first wait for it to be done. Calls that use the state after
    /// it keep their state in memory.
    public func shutdown() async {
        await ending.run()
    }

    /// Waits for the store's writes still in flight (what `onDrain` does), the first step of
    /// ending the state: reads and writes go on, but a store may take no new claim on a refresh
    /// token from then on (ResourcefulPostgres's does not), so that nothing is spent that the
    /// shutdown would cut.
    public func drain() async {
        await onDrain?()
    }

    /// `onShutdown`, run once however many copies ask.
    private final class Ending: Sendable {
        private let task: Locked<Task<Void, Never>?> = Locked(nil)
        private let onShutdown: (@Sendable () async -> Void)?

        init(_ onShutdown: (@Sendable () async -> Void)?) {
            self.onShutdown = onShutdown
        }

        func run() async {
            guard let onShutdown else { return }
            let running = task.withLock { task in
                if let task { return task }
                let started = Task { await onShutdown() }
                task = started
                return started
            }
            await running.value
        }
    }
}

/// A container of dependencies that holds a ``SharedState``, as ``APIDependencies`` does: an
/// ``API`` made from it keeps its limits there (``API/init(dependencies:middlewares:)``).
public protocol HasSharedState {
    /// The state a fleet shares; `nil` for each API's own, in memory.
    var sharedState: SharedState? { get }
}

extension API {
    /// ``defaultMiddlewares`` with the rate limit and circuit breaker steps keeping their state in
    /// `sharedState`: a fleet's instances given one shared state keep one budget and one breaker
    /// per upstream between them.
    public static func defaultMiddlewares(sharedState: SharedState) -> [any APIMiddleware] {
        defaultMiddlewares.map { step in
            switch step {
            case let limit as RateLimitMiddleware: RateLimitMiddleware(state: sharedState.rateLimits, budget: limit.budget)
            case is CircuitBreakerMiddleware: CircuitBreakerMiddleware(state: sharedState.circuitBreakers)
            default: step
            }
        }
    }
}
