/// Where the circuit breakers of upstreams are kept: the only state ``CircuitBreakerMiddleware``
/// has. ``InMemoryCircuitBreakerState`` keeps them in this process; a store shared by a fleet
/// keeps one breaker per upstream for all its instances, without any change to the middleware.
public protocol CircuitBreakerState: Sendable {
    /// Whether a call to `upstream` may go: always while its breaker is closed; as one of the
    /// policy's probes once it has been open for its interval; refused otherwise.
    func permit(_ upstream: String, policy: CircuitBreakerPolicy) async -> CircuitBreakerPermit
    /// Records how a call permitted by ``permit(_:policy:)`` ended, and returns the change of
    /// state it made, if any.
    @discardableResult
    func record(_ outcome: CircuitBreakerOutcome, of permit: CircuitBreakerPermit, for upstream: String, policy: CircuitBreakerPolicy) async
        -> CircuitBreakerTransition?
}

/// Whether a call may go (``CircuitBreakerState/permit(_:policy:)``).
public enum CircuitBreakerPermit: Sendable, Equatable {
    /// The breaker is closed: the call goes.
    case closed
    /// The breaker is half-open: the call goes as one of its probes.
    case probe
    /// The breaker is open, or its probes are all out: the call fails at once. `retryAfter` is
    /// when probes are let through, `nil` while probes are out.
    case refused(retryAfter: Duration?, failures: Int, calls: Int)
}

/// How a call ended, as a breaker counts it.
public enum CircuitBreakerOutcome: Sendable, Equatable {
    /// The upstream answered with a status that is not a failure.
    case success
    /// The upstream answered with a status that is not a failure, later than the policy's
    /// ``CircuitBreakerPolicy/slowCallDuration``: counted against ``CircuitBreakerPolicy/slowCallRatio``;
    /// a success for a probe.
    case slow
    /// A connection failure, a time-out, or a failure status.
    case failure
    /// The call ended without saying anything of the upstream (cancelled, refused before it was
    /// sent): a probe's place is given back.
    case abandoned
}

/// A change of a breaker's state, logged once.
public enum CircuitBreakerTransition: Sendable, Equatable {
    /// Too many calls failed (or were slow: `failures` then counts the slow ones), or a probe
    /// failed: calls fail at once for the open interval.
    case opened(failures: Int, calls: Int)
    /// Every probe succeeded.
    case closed
}
