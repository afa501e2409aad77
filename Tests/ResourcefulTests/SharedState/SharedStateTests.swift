import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
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

/// A state kept elsewhere sees the deadline of the call it works for, in every method the limit
/// steps call, so that it stops waiting for its store then.
@Suite struct SharedStateCallDeadlineTests {
    /// Budgets and breakers in memory, noting the call deadline each method saw.
    final class Noting: RateLimitState, CircuitBreakerState {
        let seen = Locked<[String: ContinuousClock.Instant?]>([:])
        let budgets = InMemoryRateLimitState()
        let breakers = InMemoryCircuitBreakerState()

        func note(_ method: String) { seen.withLock { $0[method] = SharedState.callDeadline } }

        func reserve(_ upstream: String, budget: RateBudget?, maxWait: Duration) async -> RateLimitReservation {
            note("reserve")
            return await budgets.reserve(upstream, budget: budget, maxWait: maxWait)
        }
        func release(_ upstream: String, budget: RateBudget?) async { await budgets.release(upstream, budget: budget) }
        func pause(_ upstream: String, for duration: Duration) async -> Bool {
            note("pause")
            return await budgets.pause(upstream, for: duration)
        }
        func learn(_ upstream: String, budget: RateBudget, for lifetime: Duration) async {
            note("learn")
            await budgets.learn(upstream, budget: budget, for: lifetime)
        }
        func permit(_ upstream: String, policy: CircuitBreakerPolicy) async -> CircuitBreakerPermit {
            note("permit")
            return await breakers.permit(upstream, policy: policy)
        }
        func record(
            _ outcome: CircuitBreakerOutcome, of permit: CircuitBreakerPermit, for upstream: String, policy: CircuitBreakerPolicy
        ) async -> CircuitBreakerTransition? {
            note("record")
            return await breakers.record(outcome, of: permit, for: upstream, policy: policy)
        }
    }

    @Test func everyMethodTheLimitStepsCallSeesTheCallsDeadline() async throws {
        try await Harness.run(configure: {
            $0.retry.maxAttempts = 1
            $0.timeout = .seconds(40)
            $0.limits.breaker = CircuitBreakerPolicy()
            $0.limits.rate = RateBudget(requestsPerSecond: 100, burst: 10)
        }) { harness in
            harness.server.stub(
                .get, "/v1/me",
                MockResponse(
                    status: .tooManyRequests,
                    headerFields: [.retryAfter: "1", HTTPField.Name("RateLimit-Policy")!: #""default";q=100;w=60"#, .contentType: "application/json"],
                    body: Data("{}".utf8)))
            let noting = Noting()
            let api = API(
                dependencies: harness.dependencies,
                middlewares: API.defaultMiddlewares(sharedState: SharedState(rateLimits: noting, circuitBreakers: noting)))
            let start = ContinuousClock.now
            _ = try? await api.call(AdHocRequest<Empty, Empty>(.show, "me"))
            let end = ContinuousClock.now
            let seen = noting.seen.withLock { $0 }
            #expect(Set(seen.keys) == ["reserve", "pause", "learn", "permit", "record"])
            for (method, deadline) in seen {
                // The call's own deadline: its start and its 40 s.
                let deadline = try #require(deadline ?? nil, "\(method) saw no deadline")
                #expect(deadline >= start + .seconds(40) && deadline <= end + .seconds(40), "\(method)")
            }
            // A state in memory has nothing to wait for, and is told nothing.
            #expect(SharedState.callDeadline == nil)
        }
    }
}
