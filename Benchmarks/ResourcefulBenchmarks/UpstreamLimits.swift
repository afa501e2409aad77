import Benchmark
import Resourceful

/// What the rate budget and the circuit breaker cost a call, over ``CannedTransport`` so that
/// nothing but the chain is measured, paired with the same chain without them: unconfigured (the
/// budget step keeps only pauses, the breaker is left out) and configured with a budget that
/// never makes a call wait and a breaker that never opens.
func registerUpstreamLimitBenchmarks(_ fixtures: Fixtures) {
    let without = API(
        dependencies: fixtures.cannedDependencies,
        middlewares: API.defaultMiddlewares.filter { !($0 is RateLimitMiddleware) && !($0 is CircuitBreakerMiddleware) }
    )
    let unconfigured = API(dependencies: fixtures.cannedDependencies)
    var dependencies = fixtures.cannedDependencies
    dependencies.apiConfig.limits.rate = RateBudget(requestsPerSecond: 1_000_000, burst: 1_000_000)
    dependencies.apiConfig.limits.breaker = CircuitBreakerPolicy(minimumCalls: 1_000_000)
    let configured = API(dependencies: dependencies)
    let apis = [without, unconfigured, configured]
    let names = ["api.call without the limit steps", "api.call limit steps unconfigured", "api.call budget and breaker configured"]
    Paired(names: names) { variant in
        blackHole(try await apis[variant].call(ShowUser()))
    }.register("limits C=1 paired", repeats: 100, maxDuration: .seconds(4))
    Paired(names: names) { variant in
        let api = apis[variant]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<32 { group.addTask { blackHole(try await api.call(ShowUser())) } }
            try await group.waitForAll()
        }
    }.register("limits C=32 paired", repeats: 10, maxDuration: .seconds(4))
}
