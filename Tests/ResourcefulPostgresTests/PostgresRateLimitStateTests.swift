import Foundation
import ProcessTestSupport
import Resourceful
import ResourcefulPostgres
import Testing

/// Budgets and pauses kept by one instance hold for another: each instance has its own client,
/// as separate processes of a fleet do.
@Suite(.postgres)
struct PostgresRateLimitStateTests {
    @Test("A budget is one for the fleet: places alternate between instances, spaced by the rate")
    func aBudgetIsSharedBetweenInstances() async throws {
        let upstream = "budget \(UUID())"
        // One place each 5 s, two at once.
        let budget = try #require(RateBudget(requestsPerSecond: 0.2, burst: 2))
        let interval = Duration.seconds(5)
        try await withInstances(2) { instances in
            let a = instances[0].rateLimits
            let b = instances[1].rateLimits
            // Each instance's connection is made before the places are counted.
            for instance in instances { _ = await instance.rateLimits.reserve("warm \(UUID())", budget: budget, maxWait: .seconds(5)) }
            // The burst's two places go at once, the third an interval after the first, the fourth
            // two: each wait is that, less the time that passed since the first was taken.
            let start = ContinuousClock.now
            #expect(await a.reserve(upstream, budget: budget, maxWait: .seconds(30)) == .granted(wait: .zero))
            #expect(await b.reserve(upstream, budget: budget, maxWait: .seconds(30)) == .granted(wait: .zero))
            guard case .granted(let third) = await a.reserve(upstream, budget: budget, maxWait: .seconds(30)) else {
                Issue.record("a place was refused within its wait")
                return
            }
            let thirdPassed = ContinuousClock.now - start
            guard case .granted(let fourth) = await b.reserve(upstream, budget: budget, maxWait: .seconds(30)) else {
                Issue.record("a place was refused within its wait")
                return
            }
            let fourthPassed = ContinuousClock.now - start
            #expect(third >= interval - thirdPassed - .milliseconds(10) && third <= interval, "\(third)")
            #expect(fourth >= interval * 2 - fourthPassed - .milliseconds(10) && fourth <= interval * 2, "\(fourth)")
            // One that cannot wait that long is refused, and takes no place.
            guard case .refused(let wait) = await b.reserve(upstream, budget: budget, maxWait: .milliseconds(300)) else {
                Issue.record("a place past the wait allowed was granted")
                return
            }
            #expect(wait >= interval * 3 - (ContinuousClock.now - start) - .milliseconds(10), "\(wait)")
            #expect(instances.allSatisfy { $0.isAvailable })
        }
    }

    @Test("A place given back is taken by the next call of any instance")
    func aReleasedPlaceGoesToTheNextCall() async throws {
        let upstream = "release \(UUID())"
        let budget = try #require(RateBudget(requestsPerSecond: 0.2, burst: 1))
        try await withInstances(2) { instances in
            let start = ContinuousClock.now
            #expect(await instances[0].rateLimits.reserve(upstream, budget: budget, maxWait: .seconds(30)) == .granted(wait: .zero))
            guard case .granted(let wait) = await instances[0].rateLimits.reserve(upstream, budget: budget, maxWait: .seconds(30)) else {
                Issue.record("refused")
                return
            }
            #expect(wait >= .seconds(5) - (ContinuousClock.now - start) - .milliseconds(10), "\(wait)")
            await instances[0].rateLimits.release(upstream, budget: budget)
            guard case .granted(let again) = await instances[1].rateLimits.reserve(upstream, budget: budget, maxWait: .seconds(30)) else {
                Issue.record("refused")
                return
            }
            #expect(again <= wait)
        }
    }

    @Test("A statement refused for its values (a key past the index's limit) leaves the store in use")
    func aValueTheServerRefusesIsNoOutage() async throws {
        try await withInstances(1) { instances in
            let state = instances[0]
            // Past PostgreSQL's limit for an index entry (about 2.7 kB).
            let huge = "svc " + String(repeating: "h", count: 4_000)
            _ = await state.rateLimits.pause(huge, for: .seconds(1))
            #expect(state.isAvailable)
            // The others go on through the store.
            #expect(await state.rateLimits.pause("after \(UUID())", for: .seconds(1)))
            #expect(state.isAvailable)
        }
    }

    @Test("A caller waits at most its own longest pause; a pause or learned budget a row holds for a year is cut to a day in the row")
    func aPauseLongerThanTheReadersEnds() async throws {
        let upstream = "year \(UUID())"
        try await withInstances(1) { instances in
            let state = instances[0].rateLimits
            #expect(await state.pause("warm \(UUID())", for: .milliseconds(1)))
            _ = try await rows(
                """
                INSERT INTO resourceful.rate_limits (upstream, paused_until_us, learned_interval_us, learned_burst, learned_until_us, touched_us)
                VALUES ('\(upstream)', resourceful.now_us() + 31536000000000, 86400000000, 1, 9000000000000000000, resourceful.now_us())
                RETURNING upstream
                """)
            // A caller keeping pauses of at most 2 s waits at most that, not a day.
            guard case .granted(let wait) = await state.reserve(upstream, budget: nil, maxWait: .seconds(30), maxPause: .seconds(2)) else {
                Issue.record("refused for a pause past the reader's longest")
                return
            }
            #expect(wait <= .seconds(2), "\(wait)")
            // The row is cut to a day, so that it ends, not to this caller's 2 s: another instance
            // may keep longer pauses.
            let row = try await rows(
                """
                SELECT ((paused_until_us - resourceful.now_us()) BETWEEN 3600000000 AND 86400000000
                    AND (learned_until_us - resourceful.now_us()) BETWEEN 3600000000 AND 86400000000
                    AND learned_interval_us = 86400000000)::text
                FROM resourceful.rate_limits WHERE upstream = '\(upstream)'
                """)
            #expect(row == ["true"])
        }
    }

    @Test("A pause one instance keeps holds every instance's calls, and only a longer one replaces it")
    func aPauseHoldsTheFleet() async throws {
        let upstream = "pause \(UUID())"
        try await withInstances(2) { instances in
            let start = ContinuousClock.now
            #expect(await instances[0].rateLimits.pause(upstream, for: .seconds(10)))
            #expect(await instances[1].rateLimits.pause(upstream, for: .seconds(1)) == false)
            guard case .granted(let wait) = await instances[1].rateLimits.reserve(upstream, budget: nil, maxWait: .seconds(30)) else {
                Issue.record("refused")
                return
            }
            // The pause, less the time that passed since it was set.
            #expect(wait >= .seconds(10) - (ContinuousClock.now - start) - .milliseconds(10) && wait <= .seconds(10), "\(wait)")
            guard case .refused = await instances[1].rateLimits.reserve(upstream, budget: nil, maxWait: .milliseconds(500)) else {
                Issue.record("a call that cannot wait out the pause was let through")
                return
            }
        }
    }

    @Test("A budget one instance learned from the upstream holds the others, until it expires")
    func aLearnedBudgetHoldsTheFleet() async throws {
        let upstream = "learned \(UUID())"
        let learned = try #require(RateBudget(requestsPerSecond: 0.2, burst: 1))
        try await withInstances(2) { instances in
            await instances[0].rateLimits.learn(upstream, budget: learned, for: .seconds(60))
            let start = ContinuousClock.now
            #expect(await instances[1].rateLimits.reserve(upstream, budget: nil, maxWait: .seconds(30)) == .granted(wait: .zero))
            guard case .granted(let wait) = await instances[1].rateLimits.reserve(upstream, budget: nil, maxWait: .seconds(30)) else {
                Issue.record("refused")
                return
            }
            #expect(wait >= .seconds(5) - (ContinuousClock.now - start) - .milliseconds(10), "\(wait)")
            // A configured budget looser than the learned one does not loosen it.
            let loose = try #require(RateBudget(requestsPerSecond: 100, burst: 10))
            guard case .refused = await instances[0].rateLimits.reserve(upstream, budget: loose, maxWait: .milliseconds(100)) else {
                Issue.record("the looser configured budget won")
                return
            }
        }
        let rows = try await rows("SELECT learned_interval_us::text FROM resourceful.rate_limits WHERE upstream = '\(upstream)'")
        #expect(rows == ["5000000"])
    }

    @Test("A budget said again on every answer is written once per half its lifetime, a changed one at once")
    func aBudgetSaidAgainIsNotWrittenAgain() async throws {
        let upstream = "said again \(UUID())"
        let said = try #require(RateBudget(requestsPerSecond: 10, burst: 5))
        let touched = "SELECT touched_us::text || ' ' || learned_interval_us::text FROM resourceful.rate_limits WHERE upstream = '\(upstream)'"
        try await withInstances(1) { instances in
            let state = instances[0].rateLimits
            await state.learn(upstream, budget: said, for: .seconds(60))
            let first = try await rows(touched)
            for _ in 0..<5 { await state.learn(upstream, budget: said, for: .seconds(60)) }
            #expect(try await rows(touched) == first)
            let changed = try #require(RateBudget(requestsPerSecond: 5, burst: 5))
            await state.learn(upstream, budget: changed, for: .seconds(60))
            let after = try await rows(touched)
            #expect(after != first)
            #expect(after.first?.hasSuffix(" 200000") == true, "\(after)")
        }
    }
}
