import Foundation
@testable import Resourceful
import Testing

/// Closed, open, half-open and back: a breaker opens at its failure ratio over its minimum calls,
/// refuses while open, lets exactly its probes through after the interval, and closes or opens
/// again by what they answer.
@Suite struct InMemoryCircuitBreakerStateTests {
    static let policy = CircuitBreakerPolicy(failureRatio: 0.5, minimumCalls: 4, window: .seconds(60), openInterval: .milliseconds(200), probes: 2)

    /// Lets a call through and records `outcome`, returning the transition.
    static func call(_ state: InMemoryCircuitBreakerState, _ outcome: CircuitBreakerOutcome, policy: CircuitBreakerPolicy = policy) async
        -> (CircuitBreakerPermit, CircuitBreakerTransition?)
    {
        let permit = await state.permit("u", policy: policy)
        return (permit, await state.record(outcome, of: permit, for: "u", policy: policy))
    }

    /// Waits until the breaker lets a probe through, at most `bound`.
    static func untilProbing(_ state: InMemoryCircuitBreakerState, within bound: Duration) async throws -> CircuitBreakerPermit {
        let deadline = ContinuousClock.now + bound
        while ContinuousClock.now < deadline {
            let permit = await state.permit("u", policy: policy)
            if permit == .probe { return permit }
            try await Task.sleep(for: .milliseconds(10))
        }
        return await state.permit("u", policy: policy)
    }

    @Test func itOpensAtTheRatioOnlyOnceTheMinimumCallsEnded() async throws {
        let state = InMemoryCircuitBreakerState()
        // Three failures of three: under the minimum.
        for _ in 0..<3 { #expect(await Self.call(state, .failure) == (.closed, nil)) }
        // The fourth: 4 of 4 failed.
        #expect(await Self.call(state, .failure).1 == .opened(failures: 4, calls: 4))
        guard case .refused(let retryAfter, 4, 4) = await state.permit("u", policy: Self.policy) else {
            Issue.record("an open breaker let a call through")
            return
        }
        #expect(retryAfter.map { $0 > .zero && $0 <= .milliseconds(200) } == true)
    }

    @Test func successesKeepItClosed() async throws {
        let state = InMemoryCircuitBreakerState()
        for _ in 0..<10 {
            _ = await Self.call(state, .success)
            _ = await Self.call(state, .failure)
            _ = await Self.call(state, .success)
        }
        // One in three failed: under a ratio of one half.
        #expect(await state.permit("u", policy: Self.policy) == .closed)
    }

    @Test func exactlyItsProbesGoAndAllMustSucceed() async throws {
        let state = InMemoryCircuitBreakerState()
        for _ in 0..<4 { _ = await Self.call(state, .failure) }
        let first = try await Self.untilProbing(state, within: .seconds(10))
        #expect(first == .probe)
        #expect(await state.permit("u", policy: Self.policy) == .probe)
        // Both probes are out: the next is refused without a time.
        #expect(await state.permit("u", policy: Self.policy) == .refused(retryAfter: nil, failures: 0, calls: 0))
        #expect(await state.record(.success, of: .probe, for: "u", policy: Self.policy) == nil)
        #expect(await state.record(.success, of: .probe, for: "u", policy: Self.policy) == .closed)
        #expect(await state.permit("u", policy: Self.policy) == .closed)
    }

    @Test func aFailedProbeOpensItAgainAndAnAbandonedOneGivesItsPlaceBack() async throws {
        let state = InMemoryCircuitBreakerState()
        for _ in 0..<4 { _ = await Self.call(state, .failure) }
        #expect(try await Self.untilProbing(state, within: .seconds(10)) == .probe)
        #expect(await state.record(.abandoned, of: .probe, for: "u", policy: Self.policy) == nil)
        // Its place is free again: two probes may go.
        #expect(await state.permit("u", policy: Self.policy) == .probe)
        #expect(await state.permit("u", policy: Self.policy) == .probe)
        #expect(await state.record(.failure, of: .probe, for: "u", policy: Self.policy) == .opened(failures: 1, calls: 1))
        guard case .refused(.some, _, _) = await state.permit("u", policy: Self.policy) else {
            Issue.record("a failed probe did not open the breaker")
            return
        }
        // The other probe's late success changes nothing.
        #expect(await state.record(.success, of: .probe, for: "u", policy: Self.policy) == nil)
    }

    @Test func aCountWindowCountsTheLastCallsWhateverTheirAge() async throws {
        let policy = CircuitBreakerPolicy(failureRatio: 0.5, minimumCalls: 4, window: .nanoseconds(1), openInterval: .seconds(60), windowCalls: 4)
        let state = InMemoryCircuitBreakerState()
        // Eight successes, then one failure and two more: the window holds the last four calls
        // (a time window of a nanosecond would have forgotten them all).
        for _ in 0..<8 { #expect(await Self.call(state, .success, policy: policy).1 == nil) }
        #expect(await Self.call(state, .failure, policy: policy).1 == nil)
        #expect(await Self.call(state, .success, policy: policy).1 == nil)
        // Two failures of the last four: the ratio is met.
        #expect(await Self.call(state, .failure, policy: policy).1 == .opened(failures: 2, calls: 4))
    }

    @Test func theOldestCallLeavesACountWindow() async throws {
        let policy = CircuitBreakerPolicy(failureRatio: 0.75, minimumCalls: 4, openInterval: .seconds(60), windowCalls: 4)
        let state = InMemoryCircuitBreakerState()
        // F F S F: three of four.
        _ = await Self.call(state, .failure, policy: policy)
        _ = await Self.call(state, .failure, policy: policy)
        #expect(await Self.call(state, .success, policy: policy).1 == nil)
        #expect(await Self.call(state, .failure, policy: policy).1 == .opened(failures: 3, calls: 4))
        // A new breaker: F S S F S F — the window slides past the first failure before the last one.
        let other = InMemoryCircuitBreakerState()
        for outcome in [CircuitBreakerOutcome.failure, .success, .success, .failure, .success] {
            #expect(await Self.call(other, outcome, policy: policy).1 == nil)
        }
        #expect(await Self.call(other, .failure, policy: policy).1 == nil)
    }

    @Test func slowCallsOpenItAtTheirOwnRatio() async throws {
        let policy = CircuitBreakerPolicy(
            failureRatio: 0.5, minimumCalls: 4, openInterval: .seconds(60), slowCallDuration: .seconds(1), slowCallRatio: 0.75)
        let state = InMemoryCircuitBreakerState()
        _ = await Self.call(state, .slow, policy: policy)
        _ = await Self.call(state, .success, policy: policy)
        _ = await Self.call(state, .slow, policy: policy)
        #expect(await Self.call(state, .slow, policy: policy).1 == .opened(failures: 3, calls: 4))
        // Without a slow-call duration, slow answers are successes.
        let unset = CircuitBreakerPolicy(failureRatio: 0.5, minimumCalls: 4, openInterval: .seconds(60), slowCallRatio: 0.25)
        let other = InMemoryCircuitBreakerState()
        for _ in 0..<8 { #expect(await Self.call(other, .slow, policy: unset).1 == nil) }
        // A slow probe is a successful one.
        let probed = InMemoryCircuitBreakerState()
        for _ in 0..<4 { _ = await Self.call(probed, .failure) }
        let permit = try await Self.untilProbing(probed, within: .seconds(10))
        #expect(await probed.record(.slow, of: permit, for: "u", policy: Self.policy) == nil)
    }

    @Test func aCountWindowIsBounded() {
        #expect(CircuitBreakerPolicy(windowCalls: 1_000_000).windowCalls == CircuitBreakerPolicy.maximumWindowCalls)
        #expect(CircuitBreakerPolicy(windowCalls: -3).windowCalls == 1)
    }

    @Test func outcomesOlderThanTheWindowDoNotCount() async throws {
        let state = InMemoryCircuitBreakerState()
        let policy = CircuitBreakerPolicy(failureRatio: 0.5, minimumCalls: 4, window: .milliseconds(100), openInterval: .seconds(10))
        for _ in 0..<3 { _ = await Self.call(state, .failure, policy: policy) }
        // Counted before this instant: out of the window one window after it.
        try await ContinuousClock().sleep(until: .now + policy.window)
        // The three have left the window: one failure of one does not make the minimum.
        #expect(await Self.call(state, .failure, policy: policy).1 == nil)
    }

    @Test func manyUpstreamsStayBounded() async {
        let state = InMemoryCircuitBreakerState(maximumEntries: 50, idleLifetime: .zero)
        for index in 0..<500 {
            let permit = await state.permit("u\(index)", policy: Self.policy)
            await state.record(.success, of: permit, for: "u\(index)", policy: Self.policy)
        }
        #expect(state.count <= 50)
    }
}
