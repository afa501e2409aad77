/// The state the limit steps keep, in one value: an ``API``'s own in memory by default, or a
/// store every instance of a fleet shares (such as `ResourcefulPostgres`'s `PostgresSharedState`).
///
/// ```swift
/// let api = API(dependencies: dependencies, middlewares: API.defaultMiddlewares(sharedState: shared.state))
/// ```
public struct SharedState: Sendable {
    /// Rate budgets and pauses, for ``RateLimitMiddleware``.
    public var rateLimits: any RateLimitState
    /// Circuit breakers, for ``CircuitBreakerMiddleware``.
    public var circuitBreakers: any CircuitBreakerState

    /// The deadline of the call a state's method works for, while ``RateLimitMiddleware`` or
    /// ``CircuitBreakerMiddleware`` asks a state that is not in memory; `nil` otherwise.
    ///
    /// A state kept in a remote store stops waiting for it then (and serves from memory), so
    /// that no call is held past its deadline by its state, not even by what is written after
    /// its answer came.
    @TaskLocal public static var callDeadline: ContinuousClock.Instant?

    /// State kept in `rateLimits` and `circuitBreakers`; each in memory unless given.
    public init(
        rateLimits: any RateLimitState = InMemoryRateLimitState(),
        circuitBreakers: any CircuitBreakerState = InMemoryCircuitBreakerState()
    ) {
        self.rateLimits = rateLimits
        self.circuitBreakers = circuitBreakers
    }
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
