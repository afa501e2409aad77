/// How many requests an upstream takes: a steady rate and a burst above it, in the form of the
/// generic cell rate algorithm (GCRA) — one "theoretical arrival time" per upstream, no refill job.
///
/// `RateBudget(requestsPerSecond: 100, burst: 10)` lets 10 requests go at once, then one every
/// 10 ms. A budget comes from the configuration (`limits.rate.requestsPerSecond`,
/// `limits.rate.burst`) or is learned from the upstream's own `RateLimit-Policy` field; where
/// both are known, the tighter governs.
public struct RateBudget: Sendable, Hashable, CustomStringConvertible {
    /// The steady rate, in requests per second: more than 0, at most a million (a higher one is
    /// held there, as a burst above a million is).
    public let requestsPerSecond: Double
    /// How many requests may go at once after a quiet time: at least 1.
    public let burst: Int

    /// The highest rate a budget holds (a million requests per second); a higher one is clamped.
    package static let maximumRate = 1_000_000.0
    /// The largest burst a budget holds; a larger one is clamped.
    package static let maximumBurst = 1_000_000

    /// A budget of `requestsPerSecond` with `burst`, clamped to what a budget holds; `nil` for a
    /// rate that is not a positive finite number.
    public init?(requestsPerSecond: Double, burst: Int = 1) {
        guard requestsPerSecond.isFinite, requestsPerSecond > 0 else { return nil }
        // Below one request a day is no rate an upstream means: held there.
        self.requestsPerSecond = Swift.min(Swift.max(requestsPerSecond, 1.0 / 86_400), Self.maximumRate)
        self.burst = Swift.min(Swift.max(burst, 1), Self.maximumBurst)
    }

    /// The time between two requests at the steady rate.
    package var interval: Duration {
        .nanoseconds(Int64((1e9 / requestsPerSecond).rounded(.up)))
    }

    /// Whether this budget lets fewer requests through than `other`: a lower steady rate, or the
    /// same rate with a smaller burst.
    package func isTighter(than other: RateBudget) -> Bool {
        requestsPerSecond < other.requestsPerSecond || (requestsPerSecond == other.requestsPerSecond && burst < other.burst)
    }

    /// `100/s, burst 10`.
    public var description: String {
        let rate = requestsPerSecond.rounded() == requestsPerSecond ? String(Int(requestsPerSecond)) : String(requestsPerSecond)
        return "\(rate)/s, burst \(burst)"
    }
}
