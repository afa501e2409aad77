import Resourceful
import Testing

/// `API.defaultMiddlewares(sharedState:)`: the limit steps keep their state where they are told.
struct SharedStateTests {
    @Test func theLimitStepsKeepTheirStateInTheSharedOne() throws {
        let budgets = InMemoryRateLimitState()
        let breakers = InMemoryCircuitBreakerState()
        let steps = API.defaultMiddlewares(sharedState: SharedState(rateLimits: budgets, circuitBreakers: breakers))
        let limit = try #require(steps.compactMap { $0 as? RateLimitMiddleware }.first)
        let breaker = try #require(steps.compactMap { $0 as? CircuitBreakerMiddleware }.first)
        #expect(limit.state as? InMemoryRateLimitState === budgets)
        #expect(breaker.state as? InMemoryCircuitBreakerState === breakers)
        // The rest of the chain is the default one, in its order.
        #expect(steps.map { "\(type(of: $0))" } == API.defaultMiddlewares.map { "\(type(of: $0))" })
    }
}
