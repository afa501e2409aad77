/// The circuit breakers of this process's upstreams, in memory, on the monotonic clock.
///
/// Each upstream's outcomes are counted in ten buckets spanning the policy's window, so that a
/// breaker holds the same few numbers however many calls it sees; a count-based window
/// (``CircuitBreakerPolicy/windowCalls``) holds one byte per call of it. Closed breakers idle for
/// ``idleLifetime`` are dropped once more than ``maximumEntries`` are held.
public final class InMemoryCircuitBreakerState: CircuitBreakerState {
    /// How many upstreams are held.
    package let maximumEntries: Int
    /// How long a closed breaker without calls is kept.
    package let idleLifetime: Duration

    private static let bucketCount = 10

    private struct Bucket: Sendable {
        var start: ContinuousClock.Instant
        var calls = 0
        var failures = 0
        var slow = 0
    }

    /// The outcomes counted: calls, failures and slow calls.
    private struct Counts: Sendable {
        var calls = 0
        var failures = 0
        var slow = 0
    }

    /// The last calls' outcomes, oldest overwritten first: a failure is 1, a slow call 2.
    private struct Ring: Sendable {
        var outcomes: [UInt8] = []
        var next = 0
        var totals = Counts()

        mutating func add(_ outcome: UInt8, size: Int) {
            if outcomes.count < size {
                outcomes.append(outcome)
            } else {
                let dropped = outcomes[next]
                totals.calls -= 1
                totals.failures -= Int(dropped & 1)
                totals.slow -= Int(dropped >> 1 & 1)
                outcomes[next] = outcome
                next = (next + 1) % size
            }
            totals.calls += 1
            totals.failures += Int(outcome & 1)
            totals.slow += Int(outcome >> 1 & 1)
        }
    }

    private enum Phase: Sendable {
        case closed
        case open(until: ContinuousClock.Instant, failures: Int, calls: Int)
        case halfOpen(out: Int, succeeded: Int)
    }

    private struct Entry: Sendable {
        var phase = Phase.closed
        var buckets: [Bucket] = []
        var ring = Ring()
        var touched: ContinuousClock.Instant

        /// The outcomes counted in the policy's window at `now`.
        func counts(at now: ContinuousClock.Instant, policy: CircuitBreakerPolicy) -> Counts {
            if policy.windowCalls != nil { return ring.totals }
            return buckets.reduce(into: Counts()) { total, bucket in
                guard now - bucket.start < policy.window else { return }
                total.calls += bucket.calls
                total.failures += bucket.failures
                total.slow += bucket.slow
            }
        }

        /// Counts one outcome at `now`.
        mutating func count(failed: Bool, slow: Bool, at now: ContinuousClock.Instant, policy: CircuitBreakerPolicy) {
            if let size = policy.windowCalls {
                ring.add((failed ? 1 : 0) | (slow ? 2 : 0), size: size)
                return
            }
            let window = policy.window
            // Oldest first: most calls find the oldest bucket still in the window, and drop none.
            if let oldest = buckets.first, now - oldest.start >= window { buckets.removeAll { now - $0.start >= window } }
            if let last = buckets.indices.last, now - buckets[last].start < window / InMemoryCircuitBreakerState.bucketCount {
                buckets[last].calls += 1
                buckets[last].failures += failed ? 1 : 0
                buckets[last].slow += slow ? 1 : 0
            } else {
                buckets.append(Bucket(start: now, calls: 1, failures: failed ? 1 : 0, slow: slow ? 1 : 0))
            }
        }

        /// Counts the outcome of a call let through while closed, and opens when the policy says
        /// so. A call that ends after the breaker opened counts no more.
        mutating func recordClosed(
            _ outcome: CircuitBreakerOutcome, at now: ContinuousClock.Instant, policy: CircuitBreakerPolicy
        ) -> CircuitBreakerTransition? {
            guard case .closed = phase else { return nil }
            touched = now
            count(failed: outcome == .failure, slow: outcome == .slow, at: now, policy: policy)
            let counts = counts(at: now, policy: policy)
            guard policy.opens(calls: counts.calls, failures: counts.failures, slow: counts.slow) else { return nil }
            // Named by what opened it: the failures, else the slow calls.
            let failed = policy.opens(calls: counts.calls, failures: counts.failures, slow: 0) ? counts.failures : counts.slow
            phase = .open(until: now + policy.openInterval, failures: failed, calls: counts.calls)
            clearCounts()
            return .opened(failures: failed, calls: counts.calls)
        }

        /// Forgets every outcome counted.
        mutating func clearCounts() {
            buckets = []
            ring = Ring()
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

    /// Forgets `upstream`'s counts and phase: its breaker is closed with an empty window, as a
    /// state shared by a fleet leaves it once the opening is kept there.
    package func forget(_ upstream: String) {
        entries.withLock { $0[upstream] = nil }
    }

    public func permit(_ upstream: String, policy: CircuitBreakerPolicy) async -> CircuitBreakerPermit {
        permitNow(upstream, policy: policy)
    }

    /// ``permit(_:policy:)`` without a suspension point: what the breaker step calls when its
    /// state is this one. The upstream's entry is looked up once and changed where it is stored.
    package func permitNow(_ upstream: String, policy: CircuitBreakerPolicy) -> CircuitBreakerPermit {
        let now = ContinuousClock.now
        return entries.withLock { table in
            guard let index = table.index(forKey: upstream) else { return .closed }
            table.values[index].touched = now
            switch table.values[index].phase {
            case .closed:
                return .closed
            case .open(let until, let failures, let calls):
                guard now >= until else { return .refused(retryAfter: until - now, failures: failures, calls: calls) }
                table.values[index].phase = .halfOpen(out: 1, succeeded: 0)
                return .probe
            case .halfOpen(let out, let succeeded):
                guard out + succeeded < policy.probes else { return .refused(retryAfter: nil, failures: 0, calls: 0) }
                table.values[index].phase = .halfOpen(out: out + 1, succeeded: succeeded)
                return .probe
            }
        }
    }

    @discardableResult
    public func record(
        _ outcome: CircuitBreakerOutcome, of permit: CircuitBreakerPermit, for upstream: String, policy: CircuitBreakerPolicy
    ) async -> CircuitBreakerTransition? {
        recordNow(outcome, of: permit, for: upstream, policy: policy)
    }

    /// ``record(_:of:for:policy:)`` without a suspension point: what the breaker step calls when
    /// its state is this one.
    @discardableResult
    package func recordNow(
        _ outcome: CircuitBreakerOutcome, of permit: CircuitBreakerPermit, for upstream: String, policy: CircuitBreakerPolicy
    ) -> CircuitBreakerTransition? {
        let now = ContinuousClock.now
        return entries.withLock { table in
            switch permit {
            case .refused:
                return nil
            case .closed:
                guard outcome != .abandoned else { return nil }
                if let index = table.index(forKey: upstream) {
                    // Counted where it is stored: the entry's window is not copied for each call.
                    return table.values[index].recordClosed(outcome, at: now, policy: policy)
                }
                store(Entry(touched: now), as: upstream, in: &table, now: now)
                return table[upstream, default: Entry(touched: now)].recordClosed(outcome, at: now, policy: policy)
            case .probe:
                guard var entry = table[upstream], case .halfOpen(let out, let succeeded) = entry.phase else { return nil }
                entry.touched = now
                defer { table[upstream] = entry }
                switch outcome {
                case .abandoned:
                    entry.phase = .halfOpen(out: Swift.max(out - 1, 0), succeeded: succeeded)
                    return nil
                case .failure:
                    entry.phase = .open(until: now + policy.openInterval, failures: 1, calls: 1)
                    return .opened(failures: 1, calls: 1)
                case .success, .slow:
                    guard succeeded + 1 >= policy.probes else {
                        entry.phase = .halfOpen(out: Swift.max(out - 1, 0), succeeded: succeeded + 1)
                        return nil
                    }
                    entry.phase = .closed
                    entry.clearCounts()
                    return .closed
                }
            }
        }
    }

    /// Stores `entry`, first dropping idle closed breakers when a new upstream would pass the bound.
    private func store(_ entry: Entry, as upstream: String, in table: inout [String: Entry], now: ContinuousClock.Instant) {
        if table[upstream] == nil, table.count >= maximumEntries {
            table = table.filter { _, entry in
                guard case .closed = entry.phase else { return true }
                return now - entry.touched < idleLifetime
            }
            if table.count >= maximumEntries, let oldest = table.min(by: { $0.value.touched < $1.value.touched })?.key {
                table[oldest] = nil
            }
        }
        table[upstream] = entry
    }
}
