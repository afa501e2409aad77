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

    /// Notes the call deadline the steps after the limit steps see.
    struct After: APIMiddleware {
        let seen: Locked<[ContinuousClock.Instant?]>
        func intercept(
            _ request: TransportRequest, context: CallContext, next: (TransportRequest, CallContext) async throws -> TransportResponse
        ) async throws -> TransportResponse {
            seen.withLock { $0.append(SharedState.callDeadline) }
            return try await next(request, context)
        }
    }

    @Test func theStepsAfterTheLimitStepsSeeNoDeadline() async throws {
        try await Harness.run(configure: { $0.retry.maxAttempts = 1; $0.limits.breaker = CircuitBreakerPolicy() }) { harness in
            harness.server.stub(.get, "/v1/me", .json(raw: "{}"))
            let noting = Noting()
            let seen = Locked<[ContinuousClock.Instant?]>([])
            let steps = API.defaultMiddlewares(sharedState: SharedState(rateLimits: noting, circuitBreakers: noting)) + [After(seen: seen)]
            _ = try await API(dependencies: harness.dependencies, middlewares: steps).call(AdHocRequest<Empty, Empty>(.show, "me"))
            // The state saw it; the refresh, logging and a user's own steps after do not.
            #expect(noting.seen.withLock { $0["permit"] ?? nil } != nil)
            #expect(seen.withLock { $0 }.count == 1)
            #expect(seen.withLock { $0 }.allSatisfy { $0 == nil })
        }
    }
}

/// An ``API`` whose dependencies hold a shared state keeps its limits there, whatever list of
/// steps it is given, and ends the state once.
@Suite struct DependenciesSharedStateTests {
    @Test func aListOfYourOwnKeepsTheLimitsInTheDependenciesState() async throws {
        try await Harness.run(configure: { $0.retry.maxAttempts = 1; $0.limits.breaker = CircuitBreakerPolicy() }) { harness in
            harness.server.stub(.get, "/v1/me", .json(raw: "{}"))
            let noting = SharedStateCallDeadlineTests.Noting()
            var dependencies = harness.dependencies
            dependencies.sharedState = SharedState(rateLimits: noting, circuitBreakers: noting)
            let api = API(dependencies: dependencies, middlewares: API.defaultMiddlewares + [LoggingMiddleware()])
            _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "me"))
            #expect(noting.seen.withLock { Set($0.keys) } == ["reserve", "permit", "record"])
            // A step given a state of its own keeps it.
            let own = InMemoryRateLimitState()
            let kept = API(dependencies: dependencies, middlewares: [RateLimitMiddleware(state: own, budget: RateBudget(requestsPerSecond: 1, burst: 1))])
            noting.seen.withLock { $0 = [:] }
            _ = try await kept.call(AdHocRequest<Empty, Empty>(.show, "me"))
            #expect(noting.seen.withLock { $0.isEmpty })
            #expect(!own.isEmpty)
        }
    }

    @Test func theSharedStateIsEndedOnceForEveryAPIMadeWithIt() async throws {
        let ended = Locked(0)
        let started = Locked(0)
        let state = SharedState(onShutdown: {
            started.withLock { $0 += 1 }
            try? await Task.sleep(for: .milliseconds(50))
            ended.withLock { $0 += 1 }
        })
        let dependencies = APIDependencies(
            apiConfig: APIConfig(baseURL: URL(string: "http://127.0.0.1:9/")!, service: "s"), transport: StubTransport { _ in TransportResponse(status: .ok) },
            sharedState: state)
        let first = API(dependencies: dependencies)
        let second = API(dependencies: dependencies)
        // At once: the second waits for the first's end rather than returning before it.
        async let a: Void = first.shutdown()
        async let b: Void = second.with(logger: first.logger).shutdown()
        _ = try await (a, b)
        #expect(ended.withLock { $0 } == 1)
        #expect(started.withLock { $0 } == 1)
        await state.shutdown()
        #expect(started.withLock { $0 } == 1)
    }
}
