extension APIConfig {
    /// How much an upstream is sent (`limits.*` keys): the rate budget of ``RateLimitMiddleware``
    /// and the longest pause an upstream may ask for.
    public struct UpstreamLimits: Sendable, Equatable {
        /// The budget every call to this configuration's upstream keeps to
        /// (`limits.rate.requestsPerSecond` and `limits.rate.burst`); `nil`, the default, for
        /// none but what the upstream says it takes.
        public var rate: RateBudget?
        /// The longest pause an upstream's `Retry-After` or spent limit may impose on all calls to
        /// it (`limits.maxPause`, 5 minutes by default): a longer one is cut to this, and logged.
        public var maxPause: Duration
        /// When the upstream's circuit breaker opens and closes (`limits.breaker.*`); `nil`, the
        /// default, for no breaker.
        public var breaker: CircuitBreakerPolicy?

        /// Creates limits.
        public init(rate: RateBudget? = nil, maxPause: Duration = .seconds(300), breaker: CircuitBreakerPolicy? = nil) {
            self.rate = rate
            self.maxPause = maxPause
            self.breaker = breaker
        }
    }
}

extension APIConfig.UpstreamLimits {
    /// The settings under `keys` (`limits`): `rate.requestsPerSecond`, `rate.burst` (1 unless
    /// set), `maxPause` and the `breaker` keys, checked.
    ///
    /// - Throws: ``APIError/Kind/invalidConfiguration`` naming the key at fault.
    public init(keys: ConfigurationKeys) throws(APIError) {
        self.init()
        let rate = keys.scoped(to: "rate")
        let burst = try rate.int("burst", in: 1...RateBudget.maximumBurst, unit: "requests")
        if let perSecond = try rate.number("requestsPerSecond", in: 0.000_01...RateBudget.maximumRate, unit: "requests per second") {
            self.rate = RateBudget(requestsPerSecond: perSecond, burst: burst ?? 1)
        } else if burst != nil {
            throw rate.invalid("requestsPerSecond", expected: "the steady rate the burst is above, in requests per second")
        }
        maxPause = try keys.seconds("maxPause", allowZero: true) ?? maxPause
        breaker = try CircuitBreakerPolicy(keys: keys.scoped(to: "breaker"))
    }
}
