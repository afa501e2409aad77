import PostgresNIO
public import Resourceful

/// Circuit breakers shared by every instance of a fleet, in PostgreSQL: when one instance's
/// breaker opens, every instance stops calling that upstream until the open interval ends, and
/// then the whole fleet sends only the policy's number of probes.
///
/// Counting stays local: each instance counts its own calls and failures over the policy's window
/// (as ``InMemoryCircuitBreakerState`` does) and, when its count opens the breaker, keeps the
/// opening in the store, where the others see it. An instance reads an upstream's shared state at
/// most once per ``PostgresSharedState/Options/breakerRefresh`` (0.25 s unless set): a closed
/// breaker costs no round trip on most calls, and an opening reaches every instance within that
/// time. Probe slots are taken in the store (`resourceful.breaker_probe`); a slot an instance
/// held when it was killed is taken back after ``PostgresSharedState/Options/probeLease``. While
/// the store is unavailable the instance's own breaker decides alone.
///
/// Get one from ``PostgresSharedState/circuitBreakers``.
public final class PostgresCircuitBreakerState: CircuitBreakerState {
    private let store: PostgresStore
    private let refresh: Duration
    private let probeLease: Duration
    /// The instance's own counts, and its breakers while the store is unavailable.
    private let local = InMemoryCircuitBreakerState()

    /// What the store said of an upstream, and when it was read.
    private struct View: Sendable {
        var read: ContinuousClock.Instant
        var openUntil: ContinuousClock.Instant?
        var failures = 0
        var calls = 0
        /// The store was asked for a probe since this read, for an opening longer than the
        /// asking instance's, and refused it.
        var askedStore = false
    }

    private struct Kept: Sendable {
        var views: [String: View] = [:]
        /// Probe slots this instance holds in the store, by upstream.
        var probes: [String: Int] = [:]
    }

    private let kept = Locked(Kept())
    private static let maximumViews = 10_000

    init(store: PostgresStore, refresh: Duration, probeLease: Duration) {
        self.store = store
        self.refresh = refresh
        self.probeLease = probeLease
    }

    /// Whether a call to `upstream` may go: refused while the fleet's breaker is open, a probe
    /// when its interval is over and a slot is free, else the instance's own breaker decides.
    public func permit(_ upstream: String, policy: CircuitBreakerPolicy) async -> CircuitBreakerPermit {
        guard let view = await view(of: upstream) else { return await local.permit(upstream, policy: policy) }
        guard let openUntil = view.openUntil else { return await local.permit(upstream, policy: policy) }
        // An opening longer than this instance's policy (another's, or a row past any) is left
        // to the store, asked once per read of the row rather than per call: it decides, and
        // cuts a row past a day. A shorter one holds until it ends.
        let longer = openUntil > view.read + policy.openInterval
        let now = ContinuousClock.now
        if longer ? view.askedStore : now < openUntil {
            return .refused(retryAfter: Swift.max(openUntil - now, .zero), failures: view.failures, calls: view.calls)
        }
        let probes = Int32(clamping: policy.probes)
        let lease = PostgresRateLimitState.microseconds(probeLease)
        let claimed = await store.run("probe") { client -> Bool in
            let rows = try await client.query("SELECT resourceful.breaker_probe(\(upstream), \(probes), \(lease))")
            for try await taken in rows.decode(Bool.self) { return taken }
            return false
        }
        guard let claimed else { return await local.permit(upstream, policy: policy) }
        kept.withLock { kept in
            if !claimed, longer {
                kept.views[upstream]?.askedStore = true
            } else {
                kept.views[upstream] = nil
            }
            if claimed { kept.probes[upstream, default: 0] += 1 }
        }
        if !claimed, longer { return .refused(retryAfter: Swift.max(openUntil - now, .zero), failures: view.failures, calls: view.calls) }
        return claimed ? .probe : .refused(retryAfter: nil, failures: 0, calls: 0)
    }

    /// Counts the call's outcome; an opening is kept for the fleet, a probe's outcome decides for
    /// the fleet.
    @discardableResult
    public func record(
        _ outcome: CircuitBreakerOutcome, of permit: CircuitBreakerPermit, for upstream: String, policy: CircuitBreakerPolicy
    ) async -> CircuitBreakerTransition? {
        if permit == .probe, takeProbe(of: upstream) {
            return await recordProbe(outcome, for: upstream, policy: policy)
        }
        let transition = await local.record(outcome, of: permit, for: upstream, policy: policy)
        guard permit == .closed, case .opened(let failures, let calls) = transition else { return transition }
        let open = PostgresRateLimitState.microseconds(policy.openInterval)
        let started = ContinuousClock.now
        let opened = await store.run("open") { client -> Bool in
            // A breaker the fleet already opened (or is probing) stays as it is.
            let rows = try await client.query(
                """
                INSERT INTO resourceful.breakers (upstream, open_until_us, failures, calls, touched_us)
                    VALUES (\(upstream), resourceful.now_us() + \(open), \(Int32(clamping: failures)), \(Int32(clamping: calls)), resourceful.now_us())
                ON CONFLICT (upstream) DO NOTHING
                RETURNING true
                """)
            for try await _ in rows { return true }
            return false
        }
        // The store unavailable: this instance's own breaker stays open and decides alone.
        guard let opened else { return transition }
        local.forget(upstream)
        kept.withLock { kept in
            kept.views[upstream] = opened ? View(read: started, openUntil: started + policy.openInterval, failures: failures, calls: calls) : nil
        }
        // Another instance opened it first: the change is its to report.
        return opened ? transition : nil
    }

    /// Whether this instance holds one of `upstream`'s probe slots in the store; takes it.
    private func takeProbe(of upstream: String) -> Bool {
        kept.withLock { kept in
            guard let held = kept.probes[upstream], held > 0 else { return false }
            kept.probes[upstream] = held > 1 ? held - 1 : nil
            return true
        }
    }

    private func recordProbe(_ outcome: CircuitBreakerOutcome, for upstream: String, policy: CircuitBreakerPolicy) async -> CircuitBreakerTransition? {
        let said: String
        switch outcome {
        case .success, .slow: said = "success"
        case .failure: said = "failure"
        case .abandoned: said = "abandoned"
        }
        let probes = Int32(clamping: policy.probes)
        let open = PostgresRateLimitState.microseconds(policy.openInterval)
        let answer = await store.run("probed") { client -> String? in
            let rows = try await client.query("SELECT resourceful.breaker_probed(\(upstream), \(said), \(probes), \(open))")
            for try await value in rows.decode(String?.self) { return value }
            return nil
        }
        kept.withLock { $0.views[upstream] = nil }
        switch answer {
        case .some("closed"): return .closed
        case .some("opened"): return .opened(failures: 1, calls: 1)
        default: return nil
        }
    }

    /// The store's state of `upstream`, read at most once per refresh interval; `nil` while the
    /// store is unavailable.
    private func view(of upstream: String) async -> View? {
        let now = ContinuousClock.now
        if let known = kept.withLock({ $0.views[upstream] }), now - known.read < refresh { return known }
        let read = await store.run("breaker") { client -> (Int64, Int32, Int32)? in
            // Held within a day either way, whatever the row says (no overflow, no opening for ever).
            let rows = try await client.query(
                """
                SELECT (least(greatest(open_until_us::numeric - resourceful.now_us(), -86400000000), 86400000000))::bigint, failures, calls
                FROM resourceful.breakers WHERE upstream = \(upstream)
                """)
            for try await row in rows.decode((Int64, Int32, Int32).self) { return row }
            return nil
        }
        guard let read else { return nil }
        // What is left is counted from the answer, not from the asking: a first statement (its
        // connection made, the schema checked) may take a while.
        let answered = ContinuousClock.now
        var view = View(read: answered)
        if let (left, failures, calls) = read {
            view.openUntil = answered + .microseconds(left)
            view.failures = Int(failures)
            view.calls = Int(calls)
        }
        kept.withLock { kept in
            if kept.views.count >= Self.maximumViews { kept.views.removeAll() }
            kept.views[upstream] = view
        }
        return view
    }
}
