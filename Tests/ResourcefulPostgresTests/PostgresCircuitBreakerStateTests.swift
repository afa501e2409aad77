import Foundation
import ProcessTestSupport
import Resourceful
import ResourcefulPostgres
import Testing

/// A breaker one instance opens holds every instance's calls, and the fleet sends the policy's
/// probes, not each instance its own.
@Suite(.postgres)
struct PostgresCircuitBreakerStateTests {
    static let policy = CircuitBreakerPolicy(failureRatio: 0.5, minimumCalls: 4, window: .seconds(30), openInterval: .seconds(3), probes: 2)

    @Test("One instance's opening refuses every instance; the fleet sends exactly the policy's probes, which close it")
    func anOpeningHoldsTheFleetAndItsProbesCloseIt() async throws {
        let upstream = "breaker \(UUID())"
        let policy = Self.policy
        try await withInstances(2) { instances in
            let a = instances[0].circuitBreakers
            let b = instances[1].circuitBreakers
            var transitions: [CircuitBreakerTransition?] = []
            for _ in 0..<4 {
                let permit = await a.permit(upstream, policy: policy)
                #expect(permit == .closed)
                transitions.append(await a.record(.failure, of: permit, for: upstream, policy: policy))
            }
            let opened = ContinuousClock.now
            #expect(transitions.last == .opened(failures: 4, calls: 4))
            guard case .refused(let retryAfter, let failures, let calls) = await b.permit(upstream, policy: policy) else {
                Issue.record("another instance's call went through an open breaker")
                return
            }
            #expect(retryAfter.map { $0 > .zero && $0 <= policy.openInterval } == true)
            #expect(failures == 4 && calls == 4)
            // The open interval is the feature's own time: wait until it is over.
            try await Task.sleep(until: opened + policy.openInterval + .milliseconds(50))
            let permits = [
                await a.permit(upstream, policy: policy), await b.permit(upstream, policy: policy), await a.permit(upstream, policy: policy),
                await b.permit(upstream, policy: policy),
            ]
            #expect(permits.filter { $0 == .probe }.count == 2)
            #expect(permits[0] == .probe && permits[1] == .probe)
            #expect(await a.record(.success, of: .probe, for: upstream, policy: policy) == nil)
            #expect(await b.record(.success, of: .probe, for: upstream, policy: policy) == .closed)
            #expect(await a.permit(upstream, policy: policy) == .closed)
            #expect(await b.permit(upstream, policy: policy) == .closed)
        }
        #expect(try await rows("SELECT count(*)::text FROM resourceful.breakers WHERE upstream = '\(upstream)'") == ["0"])
    }

    @Test("An opening a row holds for a century is cut to a day in the row; another instance's longer opening is kept")
    func anOpeningPastADayIsCutAndALongerPolicyKept() async throws {
        let century = "century \(UUID())"
        let minute = "minute \(UUID())"
        let policy = CircuitBreakerPolicy(failureRatio: 0.5, minimumCalls: 2, window: .seconds(30), openInterval: .milliseconds(200), probes: 1)
        try await withInstances(1) { instances in
            let breakers = instances[0].circuitBreakers
            _ = try await rows(
                """
                INSERT INTO resourceful.breakers (upstream, open_until_us, failures, calls, touched_us)
                VALUES ('\(century)', resourceful.now_us() + 3153600000000000, 9, 9, resourceful.now_us()),
                    ('\(minute)', resourceful.now_us() + 60000000, 9, 9, resourceful.now_us()) RETURNING upstream
                """)
            // Longer than this instance's own interval: it asks the store for a probe at once,
            // and is refused both times.
            for upstream in [century, minute] {
                guard case .refused = await breakers.permit(upstream, policy: policy) else {
                    Issue.record("a call went through an open breaker")
                    return
                }
            }
            let left = try await rows(
                """
                SELECT ((open_until_us - resourceful.now_us()) <= 86400000000)::text || ' ' || ((open_until_us - resourceful.now_us()) > 50000000)::text
                FROM resourceful.breakers WHERE upstream IN ('\(century)', '\(minute)') ORDER BY upstream
                """)
            // The century ends within a day; the minute another instance opened is still there.
            #expect(left == ["true true", "true true"])
        }
    }

    @Test("A probe slot an instance never gives back (it was killed) is taken back after the lease")
    func aLostProbeSlotIsTakenBackAfterTheLease() async throws {
        let upstream = "lease \(UUID())"
        let policy = CircuitBreakerPolicy(failureRatio: 0.5, minimumCalls: 2, window: .seconds(30), openInterval: .seconds(1), probes: 1)
        var settings = PostgresSharedState.Options.patient
        settings.probeLease = .seconds(3)
        let options = settings
        try await withInstances(2, options: options) { instances in
            let a = instances[0].circuitBreakers
            let b = instances[1].circuitBreakers
            for _ in 0..<2 { _ = await a.record(.failure, of: await a.permit(upstream, policy: policy), for: upstream, policy: policy) }
            let opened = ContinuousClock.now
            try await Task.sleep(until: opened + policy.openInterval + .milliseconds(50))
            #expect(await a.permit(upstream, policy: policy) == .probe)
            let claimed = ContinuousClock.now
            // Instance a says nothing more, as a killed one would.
            guard case .refused = await b.permit(upstream, policy: policy) else {
                Issue.record("a second probe went while the first was out")
                return
            }
            try await Task.sleep(until: claimed + options.probeLease + .milliseconds(100))
            #expect(await b.permit(upstream, policy: policy) == .probe)
            #expect(await b.record(.failure, of: .probe, for: upstream, policy: policy) == .opened(failures: 1, calls: 1))
            guard case .refused = await a.permit(upstream, policy: policy) else {
                Issue.record("a failed probe did not open the breaker again for the fleet")
                return
            }
        }
    }

    @Test("Successes never open the fleet's breaker, nor leave a row")
    func successesDoNotOpen() async throws {
        let upstream = "closed \(UUID())"
        let policy = Self.policy
        try await withInstances(1) { instances in
            let a = instances[0].circuitBreakers
            for _ in 0..<10 { #expect(await a.record(.success, of: await a.permit(upstream, policy: policy), for: upstream, policy: policy) == nil) }
            #expect(await a.permit(upstream, policy: policy) == .closed)
        }
        #expect(try await rows("SELECT count(*)::text FROM resourceful.breakers WHERE upstream = '\(upstream)'") == ["0"])
    }
}
