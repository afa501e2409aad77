import Foundation
import HTTPTypes
import Logging
import ProcessTestSupport
import Resourceful
@testable import ResourcefulPostgres
import ResourcefulTesting
import Testing

/// What an instance does when the fleet's state cannot be had as the fleet would: a lease held
/// past the lease time by a session that lives on, a store that is down for a budget set to fail.
@Suite(.postgres, .serialized)
struct WhenUnavailableTests {
    static let keys = Array(repeating: UInt8(0x33), count: 32)

    /// Holds the lease on `name` through `holder` (a live session of the fleet, its token request
    /// unanswered) while `body` runs; the request is let go on every path.
    static func holdingLease<T: Sendable>(
        _ name: String, through holder: PostgresTokenCache, _ body: @Sendable () async throws -> T
    ) async throws -> T {
        let (released, release) = AsyncStream<Void>.makeStream()
        let (held, holding) = AsyncStream<Void>.makeStream()
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                _ = try? await holder.withLease(named: name, refusing: nil, deadline: .now + .seconds(120)) {
                    holding.yield()
                    for await _ in released { break }
                    return SharedToken(header: "Bearer held-token", renewIn: .seconds(600))
                }
                return nil
            }
            defer {
                release.finish()
                holding.finish()
            }
            for await _ in held { break }
            let result = try await body()
            release.finish()
            while let next = try await group.next() { if let next { return next } }
            return result
        }
    }

    @Test("A lease another live session holds past the lease time: the call asks alone after it, well before its deadline")
    func aLeaseHeldPastItsTimeIsNotWaitedFor() async throws {
        var options = PostgresSharedState.Options.patient
        options.tokenLease = .seconds(1)
        let name = "held \(UUID())"
        try await withInstances(2, options: options) { instances in
            let keys = try SharedStateKeys(current: "k", keys: ["k": Self.keys])
            let holder = PostgresTokenCache(sharedState: instances[0], keys: keys)
            let waiter = PostgresTokenCache(sharedState: instances[1], keys: keys)
            let asked = Locked(0)
            let deadline = ContinuousClock.now + .seconds(60)
            let (token, waited) = try await Self.holdingLease(name, through: holder) {
                let started = ContinuousClock.now
                let token = try await waiter.withLease(named: name, refusing: nil, deadline: deadline) {
                    asked.withLock { $0 += 1 }
                    return SharedToken(header: "Bearer own-token", renewIn: .seconds(600))
                }
                return (token, ContinuousClock.now - started)
            }
            #expect(token.header == "Bearer own-token")
            #expect(asked.withLock { $0 } == 1)
            // Not before the lease time, and not held to the call's deadline.
            #expect(waited >= .seconds(1))
            #expect(ContinuousClock.now < deadline)
            // The store answered all along: the budgets and breakers still use it.
            #expect(instances[1].isAvailable)
        }
    }

    @Test("With whenUnavailable: fail, a lease held past the lease time fails the call, typed, without asking")
    func aLeaseHeldPastItsTimeFailsAStrictCall() async throws {
        var options = PostgresSharedState.Options.patient
        options.tokenLease = .seconds(1)
        let name = "held strictly \(UUID())"
        try await withInstances(2, options: options) { instances in
            let keys = try SharedStateKeys(current: "k", keys: ["k": Self.keys])
            let holder = PostgresTokenCache(sharedState: instances[0], keys: keys)
            let strict = PostgresTokenCache(sharedState: instances[1], keys: keys, whenUnavailable: .fail)
            let deadline = ContinuousClock.now + .seconds(60)
            let error = try await Self.holdingLease(name, through: holder) {
                await #expect(throws: PostgresSharedStateError.self) {
                    _ = try await strict.withLease(named: name, refusing: nil, deadline: deadline) {
                        Issue.record("asked without the lease")
                        return SharedToken(header: "Bearer unwanted", renewIn: .seconds(600))
                    }
                }
            }
            #expect(error?.description.contains("lease time") == true, "\(String(describing: error))")
            #expect(ContinuousClock.now < deadline)
        }
    }

    @Test("A lease its holder gives back within the lease time is waited for: its token is taken, nothing asked")
    func aLeaseGivenBackInTimeIsWaitedFor() async throws {
        var options = PostgresSharedState.Options.patient
        options.tokenLease = .seconds(30)
        let name = "quick \(UUID())"
        try await withInstances(2, options: options) { instances in
            let keys = try SharedStateKeys(current: "k", keys: ["k": Self.keys])
            let holder = PostgresTokenCache(sharedState: instances[0], keys: keys)
            let waiter = PostgresTokenCache(sharedState: instances[1], keys: keys)
            let (released, release) = AsyncStream<Void>.makeStream()
            let (held, holding) = AsyncStream<Void>.makeStream()
            defer {
                release.finish()
                holding.finish()
            }
            async let first = holder.withLease(named: name, refusing: nil, deadline: .now + .seconds(60)) {
                holding.yield()
                for await _ in released { break }
                return SharedToken(header: "Bearer holders-token", renewIn: .seconds(600))
            }
            for await _ in held { break }
            async let second = waiter.withLease(named: name, refusing: nil, deadline: .now + .seconds(60)) {
                Issue.record("asked although the holder's token came within the lease time")
                return SharedToken(header: "Bearer unwanted", renewIn: .seconds(600))
            }
            // The waiter is queued behind the holder's row lock before the holder answers.
            try await poll {
                try await rows("SELECT count(*)::text FROM pg_catalog.pg_locks WHERE NOT granted") != ["0"]
            }
            release.finish()
            #expect(try await first.header == "Bearer holders-token")
            #expect(try await second.header == "Bearer holders-token")
        }
    }

    @Test("A budget set to fail while the store is down fails the call unsent; a call without a budget goes; useMemory serves it")
    func aBudgetSetToFailFailsWhileTheStoreIsDown() async throws {
        var strictOptions = PostgresSharedState.Options.patient
        strictOptions.retryInterval = .seconds(600)
        strictOptions.rateLimitsWhenUnavailable = .fail
        var lenientOptions = strictOptions
        lenientOptions.rateLimitsWhenUnavailable = .useMemory
        try await MockServer.withRunning { server in
            server.route(.get, "/v1/ticks") { _ in .json(raw: #"{"n": 1}"#) }
            var budgeted = APIConfig(baseURL: server.baseURL.appendingPathComponent("v1"), service: "strict")
            budgeted.limits.rate = RateBudget(requestsPerSecond: 100, burst: 10)
            budgeted.retry = .never
            var free = budgeted
            free.limits.rate = nil
            let (withBudget, withoutBudget) = (budgeted, free)
            let ticks = AdHocRequest<Empty, Empty>(.show, "ticks")
            for (options, fails) in [(strictOptions, true), (lenientOptions, false)] {
                try await withInstances(1, options: options) { instances in
                    let shared = instances[0]
                    shared.store.noteFailure("reserve", PostgresSharedStateError("a test's outage"))
                    #expect(!shared.isAvailable)
                    let before = server.requests.count
                    let api = API(dependencies: try await APIDependencies.live(config: withBudget), middlewares: API.defaultMiddlewares(sharedState: shared.state))
                    let free = API(dependencies: try await APIDependencies.live(config: withoutBudget), middlewares: API.defaultMiddlewares(sharedState: shared.state))
                    if fails {
                        let error = await #expect(throws: APIError.self) { _ = try await api.call(ticks) }
                        #expect(error?.kind == .sharedStateUnavailable)
                        #expect(error?.description.contains("strict") == true, "\(String(describing: error))")
                        #expect(server.requests.count == before, "sent while the budget could not be kept")
                    } else {
                        _ = try await api.call(ticks)
                        #expect(server.requests.count == before + 1)
                    }
                    _ = try await free.call(ticks)
                    #expect(server.requests.count == before + (fails ? 1 : 2))
                    try await api.shutdown()
                    try await free.shutdown()
                }
            }
        }
    }
}
