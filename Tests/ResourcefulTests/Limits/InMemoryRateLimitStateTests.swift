import Foundation
@testable import Resourceful
import Testing

/// The generic cell rate algorithm as this process keeps it: a burst, then one place per
/// interval; a place past the longest wait is not taken; a cancelled wait gives its place back;
/// pauses stop everything; the table stays bounded.
@Suite struct InMemoryRateLimitStateTests {
    /// The waits of `count` reservations taken at once.
    static func waits(_ state: InMemoryRateLimitState, _ count: Int, budget: RateBudget?, upstream: String = "u") async -> [Duration] {
        var waits: [Duration] = []
        for _ in 0..<count {
            guard case .granted(let wait) = await state.reserve(upstream, budget: budget, maxWait: .seconds(60)) else { return waits }
            waits.append(wait)
        }
        return waits
    }

    @Test func aBurstGoesAtOnceThenOnePerInterval() async throws {
        let state = InMemoryRateLimitState()
        let budget = try #require(RateBudget(requestsPerSecond: 10, burst: 3))
        let waits = await Self.waits(state, 6, budget: budget)
        #expect(waits[0..<3].allSatisfy { $0 == .zero })
        // The fourth at about one interval, then one more interval each (less the time the
        // reservations took, which is far below the slack).
        for (index, expected) in [(3, 100), (4, 200), (5, 300)] {
            #expect(waits[index] > .milliseconds(expected - 50) && waits[index] <= .milliseconds(expected), "\(index): \(waits[index])")
        }
    }

    @Test func aPlaceAfterTheLongestWaitIsRefusedAndNotTaken() async throws {
        let state = InMemoryRateLimitState()
        let budget = try #require(RateBudget(requestsPerSecond: 1, burst: 1))
        #expect(await state.reserve("u", budget: budget, maxWait: .zero) == .granted(wait: .zero))
        guard case .refused(let wait) = await state.reserve("u", budget: budget, maxWait: .milliseconds(100)) else {
            Issue.record("the second place came within 100 ms")
            return
        }
        #expect(wait > .milliseconds(500))
        // Nothing was taken: the next one still comes one interval after the first.
        guard case .granted(let next) = await state.reserve("u", budget: budget, maxWait: .seconds(5)) else { return }
        #expect(next <= .seconds(1) && next > .milliseconds(500))
    }

    @Test func aCancelledWaitGivesItsPlaceBack() async throws {
        let state = InMemoryRateLimitState()
        let budget = try #require(RateBudget(requestsPerSecond: 1, burst: 1))
        _ = await Self.waits(state, 2, budget: budget)
        await state.release("u", budget: budget)
        // Without the release this one would come two intervals on.
        let waits = await Self.waits(state, 1, budget: budget)
        #expect(waits.first.map { $0 <= .seconds(1) } == true, "\(waits)")
    }

    @Test func aPauseHoldsEveryPlaceAndOnlyALongerOneReplacesIt() async throws {
        let state = InMemoryRateLimitState()
        #expect(await state.pause("u", for: .seconds(2)))
        #expect(!(await state.pause("u", for: .seconds(1))))
        let waits = await Self.waits(state, 3, budget: nil)
        #expect(waits.allSatisfy { $0 > .milliseconds(1500) && $0 <= .seconds(2) }, "\(waits)")
        #expect(await state.reserve("u", budget: nil, maxWait: .seconds(1)) != .granted(wait: .zero))
        // Another upstream is not paused.
        #expect(await state.reserve("v", budget: nil, maxWait: .zero) == .granted(wait: .zero))
    }

    @Test func aLearnedBudgetGovernsWhereItIsTighter() async throws {
        let state = InMemoryRateLimitState()
        let loose = try #require(RateBudget(requestsPerSecond: 1000, burst: 100))
        await state.learn("u", budget: try #require(RateBudget(requestsPerSecond: 2, burst: 1)), for: .seconds(60))
        let waits = await Self.waits(state, 2, budget: loose)
        #expect(waits[0] == .zero && waits[1] > .milliseconds(400), "\(waits)")
    }

    @Test func aLearnedBudgetExpiresAndAnotherStartsAfresh() async throws {
        let state = InMemoryRateLimitState()
        let slow = try #require(RateBudget(requestsPerSecond: 0.1, burst: 1))
        await state.learn("u", budget: slow, for: .milliseconds(100))
        _ = await Self.waits(state, 1, budget: nil)
        // The next place is ten seconds on while the budget holds...
        guard case .refused = await state.reserve("u", budget: nil, maxWait: .seconds(1)) else {
            Issue.record("the learned budget did not hold")
            return
        }
        // ...and at once once it expired (polled: a refusal takes nothing).
        let deadline = ContinuousClock.now + .seconds(10)
        var reservation = await state.reserve("u", budget: nil, maxWait: .zero)
        while reservation != .granted(wait: .zero), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
            reservation = await state.reserve("u", budget: nil, maxWait: .zero)
        }
        #expect(reservation == .granted(wait: .zero))
        // A new budget does not inherit the places reserved under the old one.
        await state.learn("u", budget: slow, for: .seconds(60))
        _ = await Self.waits(state, 1, budget: nil)
        await state.learn("u", budget: try #require(RateBudget(requestsPerSecond: 1000, burst: 1)), for: .seconds(60))
        #expect(await state.reserve("u", budget: nil, maxWait: .milliseconds(100)) == .granted(wait: .zero))
    }

    @Test func upstreamsWithoutABudgetHoldNothingAndManyUpstreamsStayBounded() async throws {
        let state = InMemoryRateLimitState(maximumEntries: 100, idleLifetime: .zero)
        for index in 0..<1000 { _ = await state.reserve("u\(index)", budget: nil, maxWait: .zero) }
        #expect(state.count == 0)
        let budget = try #require(RateBudget(requestsPerSecond: 1_000_000, burst: 1))
        for index in 0..<1000 { _ = await state.reserve("u\(index)", budget: budget, maxWait: .seconds(1)) }
        #expect(state.count <= 100)
        // Busy upstreams (paused far ahead) are bounded too.
        for index in 0..<1000 { await state.pause("p\(index)", for: .seconds(600)) }
        #expect(state.count <= 100)
    }

    @Test func budgetsAreClampedAndRefuseNonsense() {
        #expect(RateBudget(requestsPerSecond: 0) == nil)
        #expect(RateBudget(requestsPerSecond: -1) == nil)
        #expect(RateBudget(requestsPerSecond: .nan) == nil)
        #expect(RateBudget(requestsPerSecond: .infinity) == nil)
        #expect(RateBudget(requestsPerSecond: 1e30, burst: Int.max)?.requestsPerSecond == RateBudget.maximumRate)
        #expect(RateBudget(requestsPerSecond: 1e30, burst: Int.max)?.burst == RateBudget.maximumBurst)
        #expect(RateBudget(requestsPerSecond: 5, burst: -3)?.burst == 1)
    }
}
