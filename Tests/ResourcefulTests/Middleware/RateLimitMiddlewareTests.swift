import Foundation
import HTTPTypes
import InMemoryLogging
import Logging
import MetricsTestKit
import Resourceful
import ResourcefulTesting
import Testing

/// The upstream's own limits, kept by every call to it: a pause it asks for holds every task, a
/// call that cannot wait fails at once without sending, a configured budget spaces the calls.
@Suite struct RateLimitMiddlewareTests {
    struct Tick: Codable, Sendable { var n: Int }

    /// When each request reached the server, on the clock the test reads.
    final class Arrivals: Sendable {
        let times = Locked<[ContinuousClock.Instant]>([])
        func record() { times.withLock { $0.append(.now) } }
        var all: [ContinuousClock.Instant] { times.withLock { $0 } }
    }

    /// Answers `/v1/ticks` with `first` once, then with a tick, noting each arrival.
    static func route(_ server: MockServer, first: MockResponse?, arrivals: Arrivals) {
        let pending = Locked(first)
        server.route(.get, "/v1/ticks") { _ in
            arrivals.record()
            return pending.withLock { response in
                defer { response = nil }
                return response ?? .json(raw: #"{"n": 1}"#)
            }
        }
    }

    static func refusal(retryAfter: String) -> MockResponse {
        MockResponse(status: .tooManyRequests, headerFields: [.retryAfter: retryAfter, .contentType: "application/json"], body: Data("{}".utf8))
    }

    static let ticks = AdHocRequest<Tick, Empty>(.show, "ticks")

    @Test func aRetryAfterHoldsEveryTaskForItsLength() async throws {
        try await Harness.run(configure: { $0.retry.maxAttempts = 1 }) { harness in
            let arrivals = Arrivals()
            Self.route(harness.server, first: Self.refusal(retryAfter: "2"), arrivals: arrivals)
            let api = harness.api
            let refused = await #expect(throws: APIError.self) { _ = try await api.call(Self.ticks) }
            #expect(refused?.status == .tooManyRequests)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 { group.addTask { _ = try await api.call(Self.ticks) } }
                try await group.waitForAll()
            }
            let times = arrivals.all
            #expect(times.count == 9)
            // Not one of the eight reached the server within the two seconds it asked for.
            let earliest = try #require(times.dropFirst().min())
            #expect(earliest - times[0] >= .milliseconds(1900), "\(earliest - times[0])")
            #expect(harness.logText.contains("Upstream paused"))
            #expect(harness.logs.entries.filter { $0.message.description.hasPrefix("Upstream paused") }.count == 1)
        }
    }

    @Test func aCallThatWouldWaitPastItsDeadlineFailsAtOnceWithoutSending() async throws {
        try await Harness.run(configure: { $0.retry.maxAttempts = 1; $0.timeout = .seconds(5) }) { harness in
            let arrivals = Arrivals()
            Self.route(harness.server, first: Self.refusal(retryAfter: "60"), arrivals: arrivals)
            let api = harness.api
            _ = try? await api.call(Self.ticks)
            let start = ContinuousClock.now
            let error = await #expect(throws: APIError.self) { _ = try await api.call(Self.ticks) }
            #expect(ContinuousClock.now - start < .seconds(5), "it failed before its deadline, not at it")
            #expect(error?.kind == .rateLimited)
            #expect(error?.detail?.contains(Harness.service) == true && error?.detail?.contains("127.0.0.1") == true, "\(String(describing: error))")
            #expect(error?.detail?.contains("takes no request for 6") == true || error?.detail?.contains("takes no request for 5") == true)
            #expect(arrivals.all.count == 1, "nothing was sent")
            #expect(harness.logsAreFreeOfSecrets)
        }
    }

    @Test func aPauseOfAYearIsCutToTheLongestAllowedAndSaysSo() async throws {
        try await Harness.run(configure: { $0.retry.maxAttempts = 1; $0.limits.maxPause = .seconds(1) }) { harness in
            let arrivals = Arrivals()
            Self.route(harness.server, first: Self.refusal(retryAfter: "31536000"), arrivals: arrivals)
            let api = harness.api
            _ = try? await api.call(Self.ticks)
            _ = try await api.call(Self.ticks)
            let times = arrivals.all
            #expect(times.count == 2 && times[1] - times[0] >= .milliseconds(900))
            let line = harness.logs.entries.first { $0.message.description.hasPrefix("Upstream paused") }
            #expect(line?.message.description == "Upstream paused, for less than it asked")
            #expect(line?.metadata["resourceful.pause-ms"]?.description == "1000")
            #expect(line?.metadata["resourceful.pause-asked-ms"]?.description == "31536000000")
        }
    }

    @Test func aLearnedBudgetNeverHoldsCallsLongerThanTheLongestPause() async throws {
        try await Harness.run(configure: { $0.retry.maxAttempts = 1; $0.timeout = .seconds(5); $0.limits.maxPause = .seconds(1) }) { harness in
            let arrivals = Arrivals()
            var stingy = MockResponse.json(raw: #"{"n": 1}"#)
            stingy.headerFields[HTTPField.Name("RateLimit-Policy")!] = #""day";q=1;w=999999999999"#
            Self.route(harness.server, first: stingy, arrivals: arrivals)
            let api = harness.api
            for _ in 0..<3 { _ = try await api.call(Self.ticks) }
            let times = arrivals.all
            // The budget is known from the first answer: the second goes at once, the third a
            // second later at the slowest — not a day later, nor refused.
            #expect(times.count == 3 && times[2] - times[1] >= .milliseconds(900))
        }
    }

    @Test func aConfiguredBudgetSpacesTheCalls() async throws {
        try await Harness.run(configure: { $0.limits.rate = RateBudget(requestsPerSecond: 20, burst: 2) }) { harness in
            let arrivals = Arrivals()
            Self.route(harness.server, first: nil, arrivals: arrivals)
            let api = harness.api
            let start = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 { group.addTask { _ = try await api.call(Self.ticks) } }
                try await group.waitForAll()
            }
            let times = arrivals.all.sorted()
            #expect(times.count == 8)
            // Two at once, then one each 50 ms: the eighth 300 ms after the start at the earliest.
            #expect(times[7] - start >= .milliseconds(300), "\(times[7] - start)")
        }
    }

    @Test func aPauseBegunWhileACallWaitedForItsPlaceHoldsItToo() async throws {
        try await Harness.run(configure: {
            $0.retry.maxAttempts = 1
            $0.limits.rate = RateBudget(requestsPerSecond: 1, burst: 1)
        }) { harness in
            let arrivals = Arrivals()
            Self.route(harness.server, first: Self.refusal(retryAfter: "2"), arrivals: arrivals)
            let api = harness.api
            // The first call goes at once and is refused for 2 s; the second took its place a
            // second later before the refusal came, and waits out the pause as well.
            let outcomes = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<2 { group.addTask { (try? await api.call(Self.ticks)) != nil } }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 }.count == 1 && outcomes.count == 2)
            let times = arrivals.all.sorted()
            #expect(times.count == 2)
            #expect(times[1] - times[0] >= .milliseconds(1900), "\(times[1] - times[0])")
        }
    }

    @Test func callsAPauseHeldAfterTheirPlacesGoSpacedByTheBudget() async throws {
        try await Harness.run(configure: {
            $0.retry.maxAttempts = 1
            $0.timeout = .seconds(30)
            $0.limits.rate = RateBudget(requestsPerSecond: 1, burst: 1)
        }) { harness in
            let arrivals = Arrivals()
            Self.route(harness.server, first: Self.refusal(retryAfter: "2"), arrivals: arrivals)
            let api = harness.api
            // Places at 0, 1, 2 and 3 s; the first is refused for 2 s. The call whose place at 1 s
            // fell in the pause takes a new one after the others (4 s), instead of going at the
            // pause's end beside the call placed there.
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<4 { group.addTask { _ = try? await api.call(Self.ticks) } }
            }
            let times = arrivals.all.sorted()
            #expect(times.count == 4)
            // Places a second apart; the arrivals as far apart as a loaded machine's sending lets
            // them be, never together (the two calls of one instant arrived a few ms apart).
            for (earlier, later) in zip(times, times.dropFirst()) {
                #expect(later - earlier >= .milliseconds(300), "\(times.map { $0 - times[0] })")
            }
            #expect(times[3] - times[0] >= .milliseconds(2700), "\(times.map { $0 - times[0] })")
        }
    }

    /// A store that grants every place after a short wait and says the upstream is paused for
    /// an hour (a row written by hand).
    struct HourLongPause: RateLimitState {
        func reserve(_ upstream: String, budget: RateBudget?, maxWait: Duration) async -> RateLimitReservation {
            .granted(wait: .milliseconds(10))
        }
        func release(_ upstream: String, budget: RateBudget?) async {}
        func pause(_ upstream: String, for duration: Duration) async -> Bool { true }
        func learn(_ upstream: String, budget: RateBudget, for lifetime: Duration) async {}
        func remainingPause(of upstream: String) async -> Duration { .seconds(3600) }
    }

    @Test func aPauseAStoreSaysIsLongerThanTheLongestKeptIsCutToIt() async throws {
        try await Harness.run(configure: {
            $0.retry.maxAttempts = 1
            $0.limits.maxPause = .milliseconds(300)
        }) { harness in
            let arrivals = Arrivals()
            Self.route(harness.server, first: nil, arrivals: arrivals)
            let api = API(dependencies: harness.dependencies, middlewares: [RateLimitMiddleware(state: HourLongPause())])
            let start = ContinuousClock.now
            // Waited out as 0.3 s (the longest pause kept), not refused as an hour past the deadline.
            _ = try await api.call(Self.ticks)
            #expect(try #require(arrivals.all.first) - start >= .milliseconds(300))
        }
    }

    /// A store that cannot be used and is set to say so rather than answer from memory.
    struct Unavailable: RateLimitState {
        func reserve(_ upstream: String, budget: RateBudget?, maxWait: Duration) async -> RateLimitReservation {
            .unavailable(reason: "the store did not answer")
        }
        func release(_ upstream: String, budget: RateBudget?) async {}
        func pause(_ upstream: String, for duration: Duration) async -> Bool { false }
        func learn(_ upstream: String, budget: RateBudget, for lifetime: Duration) async {}
    }

    @Test func aStateThatCannotBeUsedFailsTheCallUnsentAndCountsIt() async throws {
        try await Harness.run(configure: { $0.limits.rate = RateBudget(requestsPerSecond: 10, burst: 1) }) { harness in
            let arrivals = Arrivals()
            Self.route(harness.server, first: nil, arrivals: arrivals)
            let metrics = TestMetrics()
            let api = API(dependencies: harness.dependencies, middlewares: API.defaultMiddlewares + [RateLimitMiddleware(state: Unavailable(), metrics: metrics)])
            let error = await #expect(throws: APIError.self) { _ = try await api.call(Self.ticks) }
            #expect(error?.kind == .sharedStateUnavailable)
            #expect(error?.description.contains("the store did not answer") == true, "\(String(describing: error))")
            // Not retried, not sent.
            #expect(arrivals.all.isEmpty)
            let counted = try metrics.expectCounter("resourceful.ratelimit.unavailable", [("service", Harness.service)])
            #expect(counted.totalValue == 1)
        }
    }

    @Test func pausesWaitsAndRefusalsAreCountedByService() async throws {
        try await Harness.run(configure: { $0.retry.maxAttempts = 1; $0.timeout = .seconds(5) }) { harness in
            let arrivals = Arrivals()
            Self.route(harness.server, first: Self.refusal(retryAfter: "1"), arrivals: arrivals)
            let metrics = TestMetrics()
            let api = API(dependencies: harness.dependencies, middlewares: [RateLimitMiddleware(metrics: metrics)])
            _ = try? await api.call(Self.ticks)
            _ = try await api.call(Self.ticks)
            let service = [("service", Harness.service)]
            let pauses = try metrics.expectCounter("resourceful.ratelimit.pauses", service)
            #expect(pauses.totalValue == 1)
            let waits = try metrics.expectTimer("resourceful.ratelimit.wait", service).values
            #expect(waits.count == 1 && waits.allSatisfy { $0 > 500_000_000 }, "\(waits)")
            harness.server.reset()
            Self.route(harness.server, first: Self.refusal(retryAfter: "60"), arrivals: arrivals)
            _ = try? await api.call(Self.ticks)
            _ = try? await api.call(Self.ticks)
            let refused = try metrics.expectCounter("resourceful.ratelimit.refused", service)
            #expect(refused.totalValue == 1)
        }
    }

    @Test func anAnswerReachedThroughARedirectSaysNothingOfTheUpstream() async throws {
        try await MockServer.withRunning { other in
            other.stub(.get, "/elsewhere", Self.refusal(retryAfter: "60"))
            try await Harness.run(configure: { $0.retry.maxAttempts = 1; $0.timeout = .seconds(5) }) { harness in
                harness.server.stub(.get, "/v1/moved", MockResponse(status: .found, headerFields: [.location: "\(other.baseURL.absoluteString)/elsewhere"]))
                harness.server.stub(.get, "/v1/ticks", .json(raw: #"{"n": 1}"#))
                let api = harness.api
                let refused = await #expect(throws: APIError.self) { _ = try await api.call(AdHocRequest<Tick, Empty>(.show, "moved")) }
                #expect(refused?.status == .tooManyRequests)
                // The other origin's Retry-After did not pause this upstream.
                _ = try await api.call(Self.ticks)
            }
        }
    }

    @Test func theLimitsAreReadFromTheConfigurationFile() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("limits-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let json = #"""
            {"baseURL": "https://api.example.com", "service": "s", "limits": {"rate": {"requestsPerSecond": 2.5, "burst": 4}, "maxPause": 30},
             "services": {"slow": {"limits": {"rate": {"requestsPerSecond": 0.5}}}}}
            """#
        try Data(json.utf8).write(to: folder.appendingPathComponent("x.json"))
        let top = try await APIConfig.load(environment: "x", configDirectory: folder.path, environmentVariables: [:])
        #expect(top.limits.rate == RateBudget(requestsPerSecond: 2.5, burst: 4))
        #expect(top.limits.maxPause == .seconds(30))
        let slow = try await APIConfig.load(environment: "x", configDirectory: folder.path, environmentVariables: [:], service: "slow")
        #expect(slow.limits.rate == RateBudget(requestsPerSecond: 0.5, burst: 4))
        let variable = try await APIConfig.load(
            environment: "x", configDirectory: folder.path, environmentVariables: ["RESOURCEFUL_LIMITS_RATE_BURST": "9"]
        )
        #expect(variable.limits.rate?.burst == 9)
        for (bad, key) in [(#""requestsPerSecond": 0"#, "limits.rate.requestsPerSecond"), (#""requestsPerSecond": "fast""#, "limits.rate.requestsPerSecond"), (#""burst": 3"#, "limits.rate.requestsPerSecond")] {
            try Data(#"{"baseURL": "https://api.example.com", "service": "s", "limits": {"rate": {\#(bad)}}}"#.utf8).write(to: folder.appendingPathComponent("y.json"))
            let error = await #expect(throws: APIError.self) {
                _ = try await APIConfig.load(environment: "y", configDirectory: folder.path, environmentVariables: [:])
            }
            #expect(error?.description.contains(key) == true, "\(bad): \(String(describing: error))")
        }
    }
}
