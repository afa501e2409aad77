import Foundation
import ProcessTestSupport
import Resourceful
import ResourcefulPostgres
import Testing

/// Instances that keep shorter pauses than the one a row holds (another instance's
/// `limits.maxPause` is longer): each keeps the pause as it would have written it, from when a
/// pause was last asked for, and their calls are spaced by the budget on the real clock, never
/// booked behind the row's pause nor sent beside the places booked there.
@Suite(.postgres)
struct ShorterPausesTests {
    /// The waits of `count` places of `upstream` for callers keeping pauses of `maxPause`.
    private static func waits(
        _ state: PostgresRateLimitState, _ upstream: String, budget: RateBudget, maxPause: Duration, count: Int
    ) async -> [Duration]? {
        var waits: [Duration] = []
        for _ in 0..<count {
            guard case .granted(let wait) = await state.reserve(upstream, budget: budget, maxWait: .seconds(172_800), maxPause: maxPause)
            else { return nil }
            waits.append(wait)
        }
        return waits
    }

    /// What a test of two instances sees: the short callers' state, the long callers' (the one
    /// that paused the upstream), the upstream, and when the pause was asked for (taken before).
    struct Paused: Sendable {
        var short: PostgresRateLimitState
        var long: PostgresRateLimitState
        var upstream: String
        var start: ContinuousClock.Instant
    }

    /// Two instances, one of which pauses a new upstream named after `name` for `pause`.
    private static func withPause(_ name: String, for pause: Duration, _ body: @escaping @Sendable (Paused) async throws -> Void) async throws {
        let upstream = "\(name) \(UUID())"
        try await withInstances(2) { instances in
            let start = ContinuousClock.now
            #expect(await instances[1].rateLimits.pause(upstream, for: pause))
            try await body(Paused(short: instances[0].rateLimits, long: instances[1].rateLimits, upstream: upstream, start: start))
        }
    }

    @Test("Callers keeping 2 s pauses go after 2 s, spaced by the budget, and book nothing behind an hour's pause")
    func shorterCallersBookNothingBehindThePause() async throws {
        let budget = try #require(RateBudget(requestsPerSecond: 1, burst: 1))
        try await Self.withPause("queue", for: .seconds(3600)) { paused in
            let (short, long, upstream) = (paused.short, paused.long, paused.upstream)
            // Taken before the pause was written: what passed since bounds how far the waits ran down.
            let start = paused.start
            let shortWaits = try #require(await Self.waits(short, upstream, budget: budget, maxPause: .seconds(2), count: 3))
            let longWaits = try #require(await Self.waits(long, upstream, budget: budget, maxPause: .seconds(86_400), count: 2))
            let passed = ContinuousClock.now - start
            // About 2, 3 and 4 s after the pause was written.
            for (index, wait) in shortWaits.enumerated() {
                let due = Duration.seconds(2 + index)
                #expect(wait <= due && wait >= due - passed - .milliseconds(10), "\(shortWaits)")
            }
            // The hour's callers start when the hour ends: the short callers' places took none of
            // theirs (each would have pushed them a second later).
            #expect(longWaits[0] <= .seconds(3600) && longWaits[0] >= .seconds(3600) - passed - .milliseconds(10), "\(longWaits)")
            #expect(longWaits[1] <= .seconds(3601) && longWaits[1] >= .seconds(3601) - passed - .milliseconds(10), "\(longWaits)")
            // The pause a short caller keeps is what is left of its 2 s; the others keep the hour.
            #expect(await short.remainingPause(of: upstream, maxPause: .seconds(2)) <= .seconds(2))
            #expect(await long.remainingPause(of: upstream, maxPause: .seconds(86_400)) > .seconds(3000))
        }
    }

    @Test("The short callers' queue goes by with real time: ten seconds on, the next one goes at once")
    func theShortQueueFollowsTheClock() async throws {
        let upstream = "clock \(UUID())"
        let budget = try #require(RateBudget(requestsPerSecond: 1, burst: 1))
        try await withInstances(1) { instances in
            let state = instances[0].rateLimits
            let start = ContinuousClock.now
            #expect(await state.pause(upstream, for: .seconds(3600)))
            let before = try #require(await Self.waits(state, upstream, budget: budget, maxPause: .seconds(2), count: 4))
            // At 2, 3, 4 and 5 s.
            #expect(before[3] >= .seconds(5) - (ContinuousClock.now - start) - .milliseconds(10), "\(before)")
            // Ten seconds pass (the row's times moved back by as much): the four places are behind,
            // the short callers' pause is over, and the next place is now.
            let moved = try await rows(
                """
                UPDATE resourceful.rate_limits SET paused_since_us = paused_since_us - 10000000,
                    paused_until_us = paused_until_us - 10000000, capped_arrival_us = capped_arrival_us - 10000000
                WHERE upstream = '\(upstream)' RETURNING upstream
                """)
            #expect(moved.count == 1)
            let after = try #require(await Self.waits(state, upstream, budget: budget, maxPause: .seconds(2), count: 2))
            #expect(after[0] == .zero, "\(after)")
            #expect(after[1] <= .seconds(1) && after[1] > .milliseconds(500), "\(after)")
            // The row's own pause is still there for those who keep it.
            #expect(await state.remainingPause(of: upstream, maxPause: .seconds(86_400)) > .seconds(3500))
        }
    }

    @Test("Across the end of the row's pause, short and long callers' places never coincide")
    func placesAcrossThePauseEndAreSpaced() async throws {
        let budget = try #require(RateBudget(requestsPerSecond: 1, burst: 1))
        try await Self.withPause("edge", for: .seconds(3)) { paused in
            let (short, long, upstream) = (paused.short, paused.long, paused.upstream)
            // Short callers at 1 and 2 s, then at 3 s (the pause's end: taken on the row's queue),
            // a long caller at 4 s, a short one at 5 s.
            var waits = try #require(await Self.waits(short, upstream, budget: budget, maxPause: .seconds(1), count: 3))
            waits += try #require(await Self.waits(long, upstream, budget: budget, maxPause: .seconds(60), count: 1))
            waits += try #require(await Self.waits(short, upstream, budget: budget, maxPause: .seconds(1), count: 1))
            for (earlier, later) in zip(waits, waits.dropFirst()) {
                #expect(later - earlier >= .milliseconds(500) && later - earlier <= .milliseconds(1010), "\(waits)")
            }
            #expect(waits[0] <= .seconds(1) && waits[4] <= .seconds(5), "\(waits)")
        }
    }

    @Test("A place a short caller gives back during the row's pause is kept: the next goes after it, never beside another")
    func aShortCallersPlaceIsNotGivenBackBesideAnother() async throws {
        let budget = try #require(RateBudget(requestsPerSecond: 1, burst: 1))
        try await Self.withPause("given", for: .seconds(3600)) { paused in
            let (short, long, upstream) = (paused.short, paused.long, paused.upstream)
            let first = try #require(await Self.waits(short, upstream, budget: budget, maxPause: .seconds(2), count: 2))
            await short.release(upstream, budget: budget, maxPause: .seconds(2))
            let again = try #require(await Self.waits(short, upstream, budget: budget, maxPause: .seconds(2), count: 1))
            #expect(again[0] > first[1] + .milliseconds(500), "\(first) \(again)")
            // The hour's queue was not touched by the short callers, nor by the place given back.
            let longWait = try #require(await Self.waits(long, upstream, budget: budget, maxPause: .seconds(86_400), count: 1))
            #expect(longWait[0] > .seconds(3590) && longWait[0] <= .seconds(3600), "\(longWait)")
            // A long caller's place given back goes back on the row's queue.
            await long.release(upstream, budget: budget, maxPause: .seconds(86_400))
            let longAgain = try #require(await Self.waits(long, upstream, budget: budget, maxPause: .seconds(86_400), count: 1))
            #expect(longAgain[0] <= longWait[0], "\(longWait) \(longAgain)")
        }
    }

    @Test("A short caller's own Retry-After, under a longer pause, holds it its own longest pause from then")
    func aShortCallersOwnRetryAfterHoldsIt() async throws {
        try await Self.withPause("asked", for: .seconds(3600)) { paused in
            let (short, upstream) = (paused.short, paused.upstream)
            // Ten seconds on (the row's times moved back), the short callers' 2 s are long over.
            _ = try await rows(
                """
                UPDATE resourceful.rate_limits SET paused_since_us = paused_since_us - 10000000, paused_until_us = paused_until_us - 10000000
                WHERE upstream = '\(upstream)' RETURNING upstream
                """)
            #expect(await short.reserve(upstream, budget: nil, maxWait: .seconds(30), maxPause: .seconds(2)) == .granted(wait: .zero))
            // Its own 429 asks for a minute, which it cuts to its 2 s: the row keeps the hour, and
            // the short callers are held 2 s from now, not let through at once.
            #expect(await short.pause(upstream, for: .seconds(2)) == false)
            guard case .granted(let wait) = await short.reserve(upstream, budget: nil, maxWait: .seconds(30), maxPause: .seconds(2)) else {
                Issue.record("refused")
                return
            }
            #expect(wait > .seconds(1) && wait <= .seconds(2), "\(wait)")
            #expect(await short.remainingPause(of: upstream, maxPause: .seconds(2)) > .seconds(1))
        }
    }

    @Test("A place booked after the row's pause first keeps short callers' places an interval before it")
    func aPlaceBookedAfterThePauseFirstIsNotCrowded() async throws {
        let budget = try #require(RateBudget(requestsPerSecond: 1, burst: 1))
        try await Self.withPause("first", for: .milliseconds(3500)) { paused in
            let (short, long, upstream) = (paused.short, paused.long, paused.upstream)
            let start = paused.start
            // The long caller at 3.5 s; short callers at 1 and 2 s, then after it, at 4.5 s (at 3 s
            // it would go half an interval before the long caller's place).
            let first = try #require(await Self.waits(long, upstream, budget: budget, maxPause: .seconds(60), count: 1))
            let shorts = try #require(await Self.waits(short, upstream, budget: budget, maxPause: .seconds(1), count: 3))
            let passed = ContinuousClock.now - start
            let times = ([first[0]] + shorts).sorted()
            for (earlier, later) in zip(times, times.dropFirst()) {
                #expect(later - earlier >= .seconds(1) - passed - .milliseconds(10), "\(first) \(shorts)")
            }
            #expect(shorts[2] > first[0], "\(first) \(shorts)")
        }
    }

    @Test("With a burst, short callers' places and those booked after the row's pause keep to one budget")
    func aBurstIsNotTakenTwiceAcrossThePauseEnd() async throws {
        let budget = try #require(RateBudget(requestsPerSecond: 1, burst: 3))
        try await Self.withPause("burst", for: .seconds(5)) { paused in
            let (short, long, upstream) = (paused.short, paused.long, paused.upstream)
            // Three long callers take the burst at 5 s; then short callers (4 s pauses) take what
            // one budget leaves: one place at 4 s, the others after the long callers'.
            var times: [ContinuousClock.Instant] = []
            for (state, maxPause) in [(long, Duration.seconds(60)), (short, Duration.seconds(4))] {
                for _ in 0..<(state === long ? 3 : 4) {
                    guard case .granted(let wait) = await state.reserve(upstream, budget: budget, maxWait: .seconds(60), maxPause: maxPause) else {
                        Issue.record("refused")
                        return
                    }
                    times.append(.now + wait)
                }
            }
            times.sort()
            // No second holds more than the burst and one more place.
            for (index, start) in times.enumerated() {
                let within = times[index...].prefix { $0 <= start + .milliseconds(1050) }.count
                #expect(within <= 4, "\(times.map { $0 - times[0] })")
            }
        }
    }

    @Test("A row whose queue was written out of range is given back without an error")
    func aReleaseOnARowOutOfRangeIsNoError() async throws {
        let upstream = "range \(UUID())"
        let budget = try #require(RateBudget(requestsPerSecond: 1, burst: 1))
        try await withInstances(1) { instances in
            let state = instances[0]
            _ = try await rows(
                """
                INSERT INTO resourceful.rate_limits (upstream, arrival_us, capped_arrival_us, touched_us)
                VALUES ('\(upstream)', -9223372036854775000, -9223372036854775000, 0) RETURNING upstream
                """)
            await state.rateLimits.release(upstream, budget: budget, maxPause: .seconds(1))
            #expect(state.isAvailable)
            #expect(await state.rateLimits.reserve(upstream, budget: budget, maxWait: .seconds(5), maxPause: .seconds(1)) == .granted(wait: .zero))
        }
    }
}
