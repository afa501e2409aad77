import PostgresNIO
public import Resourceful

/// Rate budgets and pauses shared by every instance of a fleet, in PostgreSQL: a budget of 100
/// requests a second is 100 for the whole fleet, and a `429` with `Retry-After` that one instance
/// sees pauses them all.
///
/// Each place in a budget is one statement (`resourceful.reserve`: GCRA, one arrival time per
/// upstream, the database server's clock, so that the instances' clocks do not matter): one round
/// trip per call to an upstream with a budget or a pause known, before the call waits its turn.
/// A call whose deadline comes before the store's answer is refused: it cannot be known to have a
/// place before its deadline. While the store is unavailable (see ``PostgresSharedState``), the
/// instance keeps its own budgets in memory, as ``InMemoryRateLimitState`` does, and returns to
/// the shared ones once it answers; or, with ``WhenUnavailable/fail``, calls with a configured
/// budget fail with ``APIError/Kind/sharedStateUnavailable`` meanwhile, without being sent, for
/// an upstream that enforces its budget across the fleet's instances (what is learned from
/// answers, and pauses, each instance keeps for itself meanwhile, as it hears them too).
///
/// Get one from ``PostgresSharedState/rateLimits``.
public final class PostgresRateLimitState: RateLimitState {
    /// What a call does while the store cannot be used
    /// (``PostgresSharedState/Options/budgetsWhenUnavailable``).
    public enum WhenUnavailable: Sendable {
        /// Keeps the budgets and pauses in this instance's memory: the fleet may send more than
        /// its budget until the store is back (each instance keeps the whole budget).
        case useMemory
        /// Fails a call with a configured budget, without sending it.
        case fail
    }

    private let store: PostgresStore
    private let whenUnavailable: WhenUnavailable
    /// What serves while the store is unavailable.
    private let fallback = InMemoryRateLimitState()

    /// A budget this instance wrote for an upstream, and until when it holds.
    private struct Written: Sendable, Equatable {
        var interval: Int64
        var burst: Int32
        var until: ContinuousClock.Instant
    }

    /// What this instance last wrote per upstream, so that an upstream that says its budget on
    /// every answer costs a write only when the budget changes or half its lifetime has passed.
    private let written = Locked([String: Written]())
    private static let maximumWritten = 10_000

    init(store: PostgresStore, whenUnavailable: WhenUnavailable) {
        self.store = store
        self.whenUnavailable = whenUnavailable
    }

    /// A place in `upstream`'s shared budget; from memory while the store is unavailable. A
    /// pause or learned budget in the row holds the call at most the default longest pause (5
    /// minutes).
    public func reserve(_ upstream: String, budget: RateBudget?, maxWait: Duration) async -> RateLimitReservation {
        await reserve(upstream, budget: budget, maxWait: maxWait, maxPause: APIConfig.UpstreamLimits().maxPause)
    }

    /// A place in `upstream`'s shared budget; from memory while the store is unavailable. A
    /// pause in the row (written by an instance configured otherwise) holds this call at most
    /// `maxPause` after a pause was last asked for, as this instance would have written it, and a
    /// learned budget spaces its calls at most `maxPause` apart; the row keeps them for the
    /// others, cut only past a day (which no instance writes), so that they end. Until the row's
    /// pause ends, such calls are spaced by the budget among themselves, never booked behind it.
    public func reserve(_ upstream: String, budget: RateBudget?, maxWait: Duration, maxPause: Duration) async -> RateLimitReservation {
        let started = ContinuousClock.now
        let interval = budget.map { Self.microseconds($0.interval) }
        let burst = budget.map { Int32($0.burst) }
        let limit = Self.microseconds(maxWait)
        let longest = Self.microseconds(maxPause)
        // A call that fails without the store tries it itself, within its wait: one answering
        // again (or marked unavailable by another kind's statement) serves it at once.
        let strict = whenUnavailable == .fail && budget != nil
        // A statement sent runs to its answer in a task of its own (one not sent by the store's
        // time never is: a connection is waited for as long as the call waits): a store that
        // hangs answers late, and a place it grants then to a call that went on without it
        // (refused, failed, or served from memory) is given back, by whichever side learns of it
        // second.
        let place = Locked(LatePlace.awaited)
        let logger = store.logger
        let answer = await store.answer("reserve", deadline: started + maxWait, evenWhenUnavailable: strict) { client -> (Bool, Int64)? in
            try await client.withConnection { connection in
                try await Task {
                    let rows = try await connection.query(
                        "SELECT granted, wait_us FROM resourceful.reserve(\(upstream), \(interval), \(burst), \(limit), \(longest))",
                        logger: logger)
                    var found: (Bool, Int64)?
                    for try await row in rows.decode((Bool, Int64).self) {
                        found = row
                        break
                    }
                    if let (granted, _) = found, granted, place.withLock({ $0.taken() }) {
                        _ = try? await connection.query(Self.releasing(upstream, interval, burst, longest), logger: logger)
                    }
                    return found
                }.value
            }
        }
        if case .answered = answer {} else if place.withLock({ $0.abandoned() }) {
            // Granted by the store as this call stopped waiting: given back there, without
            // holding the call.
            giveBack(upstream, interval: interval, burst: burst, longest: longest)
        }
        let granted: Bool
        let wait: Int64
        switch answer {
        case .answered(.some(let row)): (granted, wait) = row
        case .answered(.none), .unavailable:
            // Only a configured budget is failed for: what is learned from answers, and pauses,
            // each instance hears for itself too.
            guard !strict else { return .unavailable(reason: "the fleet's shared state did not answer") }
            return await fallback.reserve(upstream, budget: budget, maxWait: maxWait)
        // The call's deadline came before the fleet's answer: it cannot be known to have a place
        // before it, so it has none (the fleet's budget is never overrun by calls near their end).
        case .cutShort:
            guard !strict || store.isAvailable else { return .unavailable(reason: "the fleet's shared state did not answer") }
            return .refused(wait: Swift.max(maxWait, .zero))
        }
        let waited = ContinuousClock.now - started
        let left = Duration.microseconds(Swift.max(wait, 0))
        guard granted else { return .refused(wait: left + waited) }
        // The answer took time to come back: a place that now lies past the deadline is given back.
        guard left + waited <= maxWait else {
            giveBack(upstream, interval: interval, burst: burst, longest: longest)
            return .refused(wait: left + waited)
        }
        return .granted(wait: left)
    }

    /// Gives back a place a call did not use, taken by a caller that keeps pauses of at most
    /// the default longest pause (5 minutes).
    public func release(_ upstream: String, budget: RateBudget?) async {
        await release(upstream, budget: budget, maxPause: APIConfig.UpstreamLimits().maxPause)
    }

    /// Gives back a place a call did not use, taken with
    /// ``reserve(_:budget:maxWait:maxPause:)`` and the same `maxPause`.
    public func release(_ upstream: String, budget: RateBudget?, maxPause: Duration) async {
        let done = await releaseShared(upstream, budget: budget, maxPause: maxPause)
        // A place taken from memory while the store was unavailable goes back there.
        if !done, !store.isAvailable { await fallback.release(upstream, budget: budget) }
    }

    /// Gives back a place the store granted to a call that will not use it, in the background
    /// (the call is not held past its deadline for it), whatever the store's health says: the
    /// store answered the reservation.
    private func giveBack(_ upstream: String, interval: Int64?, burst: Int32?, longest: Int64) {
        let client = store.client
        let time = store.statementTimeout
        Task {
            _ = try? await Deadline.run(until: .now + time) {
                try await client.query(Self.releasing(upstream, interval, burst, longest))
            }
        }
    }

    /// Gives back a place in the store's budget; whether the store did.
    private func releaseShared(_ upstream: String, budget: RateBudget?, maxPause: Duration) async -> Bool {
        let interval = budget.map { Self.microseconds($0.interval) }
        let burst = budget.map { Int32($0.burst) }
        let longest = Self.microseconds(maxPause)
        let store = self.store
        // A place is given back by a call that was cancelled: the statement is not (it would be
        // cut short, and the place kept), and it has a statement's time whatever the call's
        // deadline.
        return await Task {
            await store.run("release", deadline: .now + store.statementTimeout) { client in
                try await client.query(Self.releasing(upstream, interval, burst, longest))
                return true
            }
        }.value != nil
    }

    /// Pauses `upstream` for the whole fleet, unless a longer pause is already kept (at most a
    /// day). Either way the pause counts as asked for now: an instance keeping shorter pauses
    /// than the row's keeps its own from now.
    @discardableResult
    public func pause(_ upstream: String, for duration: Duration) async -> Bool {
        let length = Self.microseconds(Swift.max(duration, .zero))
        let changed = await store.run("pause") { client -> Bool in
            let rows = try await client.query("SELECT resourceful.pause(\(upstream), \(length))")
            for try await changed in rows.decode(Bool.self) { return changed }
            return false
        }
        guard let changed else { return await fallback.pause(upstream, for: duration) }
        return changed
    }

    /// Keeps the budget `upstream` said it takes, for the whole fleet, for `lifetime`: written
    /// when it differs from what this instance last wrote, or half of that one's lifetime has
    /// passed (an upstream that says its budget on every answer costs no round trip per call).
    public func learn(_ upstream: String, budget: RateBudget, for lifetime: Duration) async {
        let interval = Self.microseconds(budget.interval)
        let burst = Int32(budget.burst)
        let length = Self.microseconds(Swift.max(lifetime, .zero))
        let now = ContinuousClock.now
        let known = written.withLock { $0[upstream] }
        if let known, known.interval == interval, known.burst == burst, known.until - now >= Swift.max(lifetime, .zero) / 2, store.isAvailable {
            return
        }
        let done = await store.run("learn") { client in
            // A budget that changed starts from now: places taken under the old one do not hold
            // calls under the new one.
            try await client.query(
                """
                INSERT INTO resourceful.rate_limits AS t (upstream, learned_interval_us, learned_burst, learned_until_us, touched_us)
                    VALUES (\(upstream), \(interval), \(burst), resourceful.now_us() + \(length), resourceful.now_us())
                ON CONFLICT (upstream) DO UPDATE SET
                    arrival_us = CASE WHEN t.learned_interval_us IS DISTINCT FROM excluded.learned_interval_us
                        OR t.learned_burst IS DISTINCT FROM excluded.learned_burst
                        THEN least(t.arrival_us, excluded.touched_us) ELSE t.arrival_us END,
                    learned_interval_us = excluded.learned_interval_us, learned_burst = excluded.learned_burst,
                    learned_until_us = excluded.learned_until_us, touched_us = excluded.touched_us
                """)
            return true
        }
        guard done != nil else {
            written.withLock { $0[upstream] = nil }
            return await fallback.learn(upstream, budget: budget, for: lifetime)
        }
        written.withLock { written in
            if written.count >= Self.maximumWritten { written.removeAll() }
            written[upstream] = Written(interval: interval, burst: burst, until: now + Swift.max(lifetime, .zero))
        }
    }

    /// How much of the fleet's pause of `upstream` is left, for a caller that keeps pauses of at
    /// most the default longest pause (5 minutes).
    public func remainingPause(of upstream: String) async -> Duration {
        await remainingPause(of: upstream, maxPause: APIConfig.UpstreamLimits().maxPause)
    }

    /// How much is left of the fleet's pause of `upstream` as a caller that keeps pauses of at
    /// most `maxPause` keeps it: until the row's pause ends, or `maxPause` after a pause was
    /// last asked for, whichever comes first.
    public func remainingPause(of upstream: String, maxPause: Duration) async -> Duration {
        let longest = Self.microseconds(maxPause)
        let left = await store.run("pause left") { client -> Int64 in
            let rows = try await client.query(
                """
                SELECT (least(greatest(least(coalesce(paused_until_us, 0)::numeric,
                    least(coalesce(paused_since_us, now.us), now.us)::numeric + \(longest)) - now.us, 0), 86400000000))::bigint
                FROM resourceful.rate_limits, (SELECT resourceful.now_us() AS us) now WHERE upstream = \(upstream)
                """)
            for try await left in rows.decode(Int64?.self) { return left ?? 0 }
            return 0
        }
        guard let left else { return await fallback.remainingPause(of: upstream) }
        return .microseconds(left)
    }

    /// The statement that gives back a place in `upstream`'s budget.
    private static func releasing(_ upstream: String, _ interval: Int64?, _ burst: Int32?, _ longest: Int64) -> PostgresQuery {
        "SELECT resourceful.release(\(upstream), \(interval), \(burst), \(longest))"
    }

    /// A reservation's place, as its statement and its caller learn of it.
    private enum LatePlace {
        /// Neither has ended.
        case awaited
        /// The statement was granted a place before the caller stopped waiting.
        case granted
        /// The caller stopped waiting first.
        case abandoned

        /// The statement was granted a place: whether it must give it back (the caller is gone).
        mutating func taken() -> Bool {
            if self == .abandoned { return true }
            self = .granted
            return false
        }

        /// The caller stopped waiting: whether it must give back a place granted meanwhile.
        mutating func abandoned() -> Bool {
            defer { self = .abandoned }
            return self == .granted
        }
    }

    /// `duration` in whole microseconds, rounded up, within what a `bigint` holds with room to add.
    static func microseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        guard seconds < Int64.max / 4_000_000 else { return Int64.max / 4 }
        guard seconds > -(Int64.max / 4_000_000) else { return -(Int64.max / 4) }
        let fraction = attoseconds / 1_000_000_000_000
        let rest = attoseconds % 1_000_000_000_000 > 0 ? 1 : 0
        return seconds * 1_000_000 + fraction + Int64(rest)
    }
}
