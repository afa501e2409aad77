import CoreMetrics

/// The metrics of the upstream-limit steps, recorded through the step's factory or else the
/// bootstrapped `MetricsSystem`, labelled by service; nothing is made when nothing is bootstrapped.
///
/// - `resourceful.ratelimit.wait` (timer): how long a call waited for its place in a budget.
/// - `resourceful.ratelimit.refused` (counter): calls that failed with ``APIError/Kind/rateLimited``.
/// - `resourceful.ratelimit.unavailable` (counter): calls that failed with
///   ``APIError/Kind/sharedStateUnavailable`` (a budget's state set to fail when it cannot be used).
/// - `resourceful.ratelimit.pauses` (counter): pauses an upstream asked for that were new or longer.
/// - `resourceful.breaker.transitions` (counter, `state`: `open` or `closed`): changes of a breaker.
/// - `resourceful.breaker.refused` (counter): calls that failed with ``APIError/Kind/circuitOpen``.
enum LimitMetrics {
    /// `given`, else the bootstrapped factory, or `nil` when nothing is bootstrapped.
    private static func factory(_ given: (any MetricsFactory)?) -> (any MetricsFactory)? {
        let factory = given ?? MetricsSystem.factory
        return factory is NOOPMetricsHandler ? nil : factory
    }

    static func waited(_ wait: Duration, service: String, factory given: (any MetricsFactory)?) {
        guard let factory = factory(given) else { return }
        Timer(label: "resourceful.ratelimit.wait", dimensions: [("service", service)], factory: factory).recordNanoseconds(wait.nanoseconds)
    }

    static func count(_ label: String, service: String, extra: [(String, String)] = [], factory given: (any MetricsFactory)?) {
        guard let factory = factory(given) else { return }
        Counter(label: label, dimensions: [("service", service)] + extra, factory: factory).increment()
    }
}
