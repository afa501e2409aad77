/// Where the rate budgets and pauses of upstreams are kept: the only state ``RateLimitMiddleware``
/// has. ``InMemoryRateLimitState`` keeps them in this process; a store shared by every instance
/// of an app (a database) keeps one set for a fleet, without any change to the middleware.
///
/// An upstream is named by a key the middleware makes from the configured service and the
/// origin it calls (`"<service> <scheme>://<host>:<port>"`). Every time is kept by
/// the state on its own clock (monotonic in one process), so that changes of the wall clock
/// never stall a budget.
public protocol RateLimitState: Sendable {
    /// Takes the next place of `upstream`, under `budget` (and any budget learned for it) and
    /// after any pause: how long the caller waits before it sends. When that wait would be
    /// longer than `maxWait`, nothing is taken and ``RateLimitReservation/refused(wait:)`` says
    /// how long it would have been.
    func reserve(_ upstream: String, budget: RateBudget?, maxWait: Duration) async -> RateLimitReservation
    /// As ``reserve(_:budget:maxWait:)``, for a caller that keeps no pause or learned budget
    /// longer than `maxPause` (``APIConfig/UpstreamLimits/maxPause``): a state shared with other
    /// writers (configured otherwise) holds this caller at most that, and keeps the longer one
    /// for the others. The default ignores `maxPause` (a state in this process holds only what
    /// its own callers capped).
    func reserve(_ upstream: String, budget: RateBudget?, maxWait: Duration, maxPause: Duration) async -> RateLimitReservation
    /// Gives back a place taken and not used (the caller was cancelled while it waited), so that
    /// the ones after it need not wait for it.
    func release(_ upstream: String, budget: RateBudget?) async
    /// As ``release(_:budget:)``, for a place taken with
    /// ``reserve(_:budget:maxWait:maxPause:)`` and the same `maxPause`. The default ignores it.
    func release(_ upstream: String, budget: RateBudget?, maxPause: Duration) async
    /// Lets no request go to `upstream` for `duration` from now (a `429` or `503` with
    /// `Retry-After`, or a limit the upstream says is spent). A shorter pause than one already
    /// set changes nothing. Returns whether the pause is new or longer than the one set.
    @discardableResult
    func pause(_ upstream: String, for duration: Duration) async -> Bool
    /// Keeps `budget` as what `upstream` says it takes (its `RateLimit-Policy`) for `lifetime`
    /// from now: later reservations follow it where it is tighter than the configured one, until
    /// the upstream says it again or it expires. A budget other than the one kept starts afresh
    /// from now, so that places reserved under the old one do not hold the new one back.
    func learn(_ upstream: String, budget: RateBudget, for lifetime: Duration) async
    /// How much of a pause of `upstream` is left (zero for none): a call that waited for its place
    /// asks before it sends, so that a pause begun meanwhile holds it too.
    func remainingPause(of upstream: String) async -> Duration
    /// As ``remainingPause(of:)``, for a caller that keeps no pause longer than `maxPause`: a
    /// state shared with writers configured otherwise answers how much is left of the pause this
    /// caller keeps (at most `maxPause` from when a pause was last asked for). The default
    /// answers ``remainingPause(of:)``.
    func remainingPause(of upstream: String, maxPause: Duration) async -> Duration
}

extension RateLimitState {
    /// The reservation of ``reserve(_:budget:maxWait:)``: `maxPause` is not needed by a state
    /// whose only writers cap what they write.
    public func reserve(_ upstream: String, budget: RateBudget?, maxWait: Duration, maxPause: Duration) async -> RateLimitReservation {
        await reserve(upstream, budget: budget, maxWait: maxWait)
    }

    /// The release of ``release(_:budget:)``: `maxPause` is not needed by a state whose only
    /// writers cap what they write.
    public func release(_ upstream: String, budget: RateBudget?, maxPause: Duration) async {
        await release(upstream, budget: budget)
    }

    /// No pause is known: a state that does not keep pauses apart from its places answers zero.
    public func remainingPause(of upstream: String) async -> Duration { .zero }

    /// What ``remainingPause(of:)`` answers: `maxPause` is not needed by a state whose only
    /// writers cap what they write.
    public func remainingPause(of upstream: String, maxPause: Duration) async -> Duration {
        await remainingPause(of: upstream)
    }
}

/// What ``RateLimitState/reserve(_:budget:maxWait:)`` answers.
public enum RateLimitReservation: Sendable, Equatable {
    /// A place is taken: send after `wait` (zero to send at once).
    case granted(wait: Duration)
    /// No place within the longest wait allowed: the caller would have waited `wait`.
    case refused(wait: Duration)
    /// The state could not be used, and is set to fail calls rather than answer from this
    /// process alone (a fleet's budget an upstream enforces across instances): the call fails
    /// with ``APIError/Kind/sharedStateUnavailable``. `reason` says what failed, never a value.
    case unavailable(reason: String)
}
