import Benchmark
import Resourceful

/// What the rate budget and the circuit breaker cost a call, paired with the same chain without
/// them: unconfigured (the budget step keeps only pauses, the breaker is left out) and configured
/// with a budget that never makes a call wait and a breaker that never opens. Over
/// ``CannedTransport``, so that nothing but the chain is measured, and over the network. A fourth
/// chain puts two steps that only pass the call on where the limit steps stand: what any two steps
/// cost, the floor under what the limit steps can cost; two more configure the budget alone and the
/// breaker alone.
func registerUpstreamLimitBenchmarks(_ fixtures: Fixtures) {
    register(fixtures.cannedDependencies, "limits")
    // The same over the network (nginx under `make bench`): what the steps add to a whole call.
    var live = fixtures.cannedDependencies
    live.transport = fixtures.transport
    register(live, "limits network")
}

/// The three chains made of `dependencies`, paired at C=1 and C=32 under `name`.
private func register(_ dependencies: APIDependencies, _ name: String) {
    let isLimitStep: (any APIMiddleware) -> Bool = { $0 is RateLimitMiddleware || $0 is CircuitBreakerMiddleware }
    let without = API(dependencies: dependencies, middlewares: API.defaultMiddlewares.filter { !isLimitStep($0) })
    var passing: [any APIMiddleware] = []
    for step in API.defaultMiddlewares {
        if step is RateLimitMiddleware { passing += [PassOn(), PassOn()] } else if !isLimitStep(step) { passing.append(step) }
    }
    let emptyPair = API(dependencies: dependencies, middlewares: passing)
    let unconfigured = API(dependencies: dependencies)
    var configuredDependencies = dependencies
    configuredDependencies.apiConfig.limits.rate = RateBudget(requestsPerSecond: 1_000_000, burst: 1_000_000)
    configuredDependencies.apiConfig.limits.breaker = CircuitBreakerPolicy(minimumCalls: 1_000_000)
    let configured = API(dependencies: configuredDependencies)
    var budgetDependencies = dependencies
    budgetDependencies.apiConfig.limits.rate = configuredDependencies.apiConfig.limits.rate
    let budgetOnly = API(dependencies: budgetDependencies)
    var breakerDependencies = dependencies
    breakerDependencies.apiConfig.limits.breaker = configuredDependencies.apiConfig.limits.breaker
    let breakerOnly = API(dependencies: breakerDependencies)
    let apis = [without, unconfigured, configured, emptyPair, budgetOnly, breakerOnly]
    let names = [
        "api.call without the limit steps", "api.call limit steps unconfigured", "api.call budget and breaker configured",
        "api.call two steps passing the call on", "api.call budget configured", "api.call breaker configured",
    ]
    Paired(names: names) { variant in
        blackHole(try await apis[variant].call(ShowUser()))
    }.register("\(name) C=1 paired", repeats: 100, maxDuration: .seconds(4))
    Paired(names: names) { variant in
        let api = apis[variant]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<32 { group.addTask { blackHole(try await api.call(ShowUser())) } }
            try await group.waitForAll()
        }
    }.register("\(name) C=32 paired", repeats: 10, maxDuration: .seconds(4))
}

/// A step that passes every call on as it is.
private struct PassOn: APIMiddleware {
    func intercept(
        _ request: TransportRequest, context: CallContext,
        next: (TransportRequest, CallContext) async throws -> TransportResponse
    ) async throws -> TransportResponse {
        try await next(request, context)
    }
}
