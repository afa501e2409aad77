/// The rate budgets and pauses of this process's upstreams, in memory, on the monotonic clock.
///
/// Each upstream holds its theoretical arrival time (GCRA), the end of its pause and the budget
/// it said it takes; an upstream with none of them holds nothing, so that calls without a budget
/// cost one lookup. Entries idle for ``idleLifetime`` are dropped once more than
/// ``maximumEntries`` are held, so that many upstreams do not grow memory without bound.
public final class InMemoryRateLimitState: RateLimitState {
    /// How many upstreams are held before idle ones are dropped.
    package let maximumEntries: Int
    /// How long an upstream with nothing pending is kept.
    package let idleLifetime: Duration

    private struct Entry: Sendable {
        /// When the next request may go at the steady rate, before the burst's tolerance.
        var arrival: ContinuousClock.Instant?
        /// Until when nothing may go.
        var pausedUntil: ContinuousClock.Instant?
        /// What the upstream said it takes, and until when that holds.
        var learned: RateBudget?
        var learnedUntil: ContinuousClock.Instant?
        /// When this entry was last used.
        var touched: ContinuousClock.Instant

        /// Whether nothing is pending at `now`: dropping the entry would change nothing but
        /// the learned budget.
        func isIdle(at now: ContinuousClock.Instant, for lifetime: Duration) -> Bool {
            (arrival ?? now) <= now && (pausedUntil ?? now) <= now && (learnedUntil ?? now) <= now && now - touched >= lifetime
        }
    }

    private let entries = Locked<[String: Entry]>([:])

    /// A state holding at most about `maximumEntries` upstreams idle for `idleLifetime`.
    public init(maximumEntries: Int = 10_000, idleLifetime: Duration = .seconds(600)) {
        self.maximumEntries = Swift.max(maximumEntries, 1)
        self.idleLifetime = idleLifetime
    }

    /// How many upstreams are held.
    package var count: Int { entries.withLock { $0.count } }

    /// Whether no upstream is held: nothing configured or heard yet makes any call wait.
    package var isEmpty: Bool { entries.withLock { $0.isEmpty } }

    public func reserve(_ upstream: String, budget: RateBudget?, maxWait: Duration) async -> RateLimitReservation {
        let now = ContinuousClock.now
        return reserveNow(upstream, budget: budget, maxWait: maxWait, now: now)
    }

    /// ``reserve(_:budget:maxWait:)`` without a suspension point, for a place by `deadline`: what
    /// the rate-limit step calls when its state is this one. The upstream's entry is looked up
    /// once, the clock read once.
    package func reserveNow(_ upstream: String, budget: RateBudget?, before deadline: ContinuousClock.Instant) -> RateLimitReservation {
        let now = ContinuousClock.now
        return reserveNow(upstream, budget: budget, maxWait: deadline - now, now: now)
    }

    private func reserveNow(_ upstream: String, budget: RateBudget?, maxWait: Duration, now: ContinuousClock.Instant) -> RateLimitReservation {
        entries.withLock { table in
            let index = table.index(forKey: upstream)
            // Nothing known and nothing configured: nothing to hold.
            guard budget != nil || index != nil else { return .granted(wait: .zero) }
            var entry = index.map { table.values[$0] } ?? Entry(touched: now)
            entry.touched = now
            let earliest = Swift.max(entry.pausedUntil ?? now, now)
            if let until = entry.learnedUntil, until <= now {
                entry.learned = nil
                entry.learnedUntil = nil
            }
            let wait: Duration
            if let governing = Self.tighter(budget, entry.learned) {
                let interval = governing.interval
                let arrival = Swift.max(entry.arrival ?? earliest, earliest)
                let tolerance = interval * (governing.burst - 1)
                wait = Swift.max(arrival - tolerance, earliest) - now
                if wait > maxWait { return .refused(wait: wait) }
                entry.arrival = arrival + interval
            } else {
                wait = earliest - now
                if wait > maxWait { return .refused(wait: wait) }
            }
            if let index {
                table.values[index] = entry
            } else {
                store(entry, as: upstream, in: &table, now: now)
            }
            return .granted(wait: Swift.max(wait, .zero))
        }
    }

    public func release(_ upstream: String, budget: RateBudget?) async {
        let now = ContinuousClock.now
        entries.withLock { table in
            guard var entry = table[upstream], let arrival = entry.arrival,
                let governing = Self.tighter(budget, entry.learned)
            else { return }
            entry.arrival = Swift.max(arrival - governing.interval, now)
            table[upstream] = entry
        }
    }

    @discardableResult
    public func pause(_ upstream: String, for duration: Duration) async -> Bool {
        let now = ContinuousClock.now
        let until = now + Swift.max(duration, .zero)
        return entries.withLock { table in
            var entry = table[upstream] ?? Entry(touched: now)
            if let current = entry.pausedUntil, current >= until { return false }
            entry.pausedUntil = until
            entry.touched = now
            store(entry, as: upstream, in: &table, now: now)
            return true
        }
    }

    public func learn(_ upstream: String, budget: RateBudget, for lifetime: Duration) async {
        let now = ContinuousClock.now
        entries.withLock { table in
            var entry = table[upstream] ?? Entry(touched: now)
            if entry.learned != budget, let arrival = entry.arrival {
                entry.arrival = Swift.min(arrival, now)
            }
            entry.learned = budget
            entry.learnedUntil = now + Swift.max(lifetime, .zero)
            entry.touched = now
            store(entry, as: upstream, in: &table, now: now)
        }
    }

    /// The tighter of two budgets, either of which may be unknown.
    /// How much of `upstream`'s pause is left.
    public func remainingPause(of upstream: String) async -> Duration {
        let now = ContinuousClock.now
        return entries.withLock { table in
            guard let until = table[upstream]?.pausedUntil, until > now else { return .zero }
            return until - now
        }
    }

    /// The budget that passes neither `a` nor `b` (a configured one and one the upstream said).
    static func tighter(_ a: RateBudget?, _ b: RateBudget?) -> RateBudget? {
        guard let a else { return b }
        guard let b else { return a }
        // Each field at its tighter value: neither budget is passed, whichever of the two a
        // steady rate or a burst would pass first.
        return RateBudget(requestsPerSecond: Swift.min(a.requestsPerSecond, b.requestsPerSecond), burst: Swift.min(a.burst, b.burst))
    }

    /// Stores `entry`, first dropping the idle entries when a new upstream would pass the bound.
    private func store(_ entry: Entry, as upstream: String, in table: inout [String: Entry], now: ContinuousClock.Instant) {
        if table[upstream] == nil, table.count >= maximumEntries {
            table = table.filter { !$0.value.isIdle(at: now, for: idleLifetime) }
            // Still full of busy upstreams: the longest untouched goes, so that the bound holds.
            if table.count >= maximumEntries, let oldest = table.min(by: { $0.value.touched < $1.value.touched })?.key {
                table[oldest] = nil
            }
        }
        table[upstream] = entry
    }
}
