import Foundation
import HTTPTypes
import Logging
import PostgresNIO
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
        _ name: String, through holder: PostgresTokenCache, refusing refused: String? = nil, _ body: @Sendable () async throws -> T
    ) async throws -> T {
        let (released, release) = AsyncStream<Void>.makeStream()
        let (held, holding) = AsyncStream<Void>.makeStream()
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                _ = try? await holder.withLease(named: name, refusing: refused, deadline: .now + .seconds(120)) {
                    holding.yield()
                    for await _ in released { break }
                    return SharedToken(header: "Bearer held-token", renewIn: .seconds(600))
                }
                // Ended without asking (or failing): the wait for the lease ends too.
                holding.finish()
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

    /// Two instances' token caches, a lease holder's and a waiter's (failing rather than asking
    /// alone when `strict`), under `tokenLease` and, when given, `statementTimeout`.
    static func withHolderAndWaiter<T: Sendable>(
        tokenLease: Duration = PostgresSharedState.Options().tokenLease, statementTimeout: Duration? = nil, strict: Bool = false,
        _ body: @Sendable (_ holder: PostgresTokenCache, _ waiter: PostgresTokenCache, _ instances: [PostgresSharedState]) async throws -> T
    ) async throws -> T {
        var options = PostgresSharedState.Options.patient
        options.tokenLease = tokenLease
        if let statementTimeout { options.statementTimeout = statementTimeout }
        return try await withInstances(2, options: options) { instances in
            let keys = try SharedStateKeys(current: "k", keys: ["k": Self.keys])
            let holder = PostgresTokenCache(sharedState: instances[0], keys: keys)
            let waiter = PostgresTokenCache(sharedState: instances[1], keys: keys, whenUnavailable: strict ? .fail : .askAlone)
            return try await body(holder, waiter, instances)
        }
    }

    /// The token a waiter gets when it asks alone, counted in `asked`.
    static func ownToken(counting asked: Locked<Int>) -> SharedToken {
        asked.withLock { $0 += 1 }
        return SharedToken(header: "Bearer own-token", renewIn: .seconds(600))
    }

    @Test("With the defaults, a lease another live session holds past the lease time: the call asks alone after it, before its deadline")
    func aLeaseHeldPastItsTimeIsNotWaitedFor() async throws {
        let name = "held \(UUID())"
        // The default lease time, and a token request's default time-out.
        let lease = PostgresSharedState.Options().tokenLease
        try await Self.withHolderAndWaiter { holder, waiter, instances in
            let asked = Locked(0)
            let deadline = ContinuousClock.now + .seconds(30)
            let (token, waited) = try await Self.holdingLease(name, through: holder) {
                let started = ContinuousClock.now
                let token = try await waiter.withLease(named: name, refusing: nil, deadline: deadline) { Self.ownToken(counting: asked) }
                return (token, ContinuousClock.now - started)
            }
            #expect(token.header == "Bearer own-token")
            #expect(asked.withLock { $0 } == 1)
            // Not before the lease time, and not held to the call's deadline.
            #expect(waited >= lease)
            #expect(ContinuousClock.now < deadline)
            // The store answered all along: the budgets and breakers still use it.
            #expect(instances[1].isAvailable)
        }
    }

    @Test("A lease held past the lease time: a token kept meanwhile is taken, not asked for; a refused one is not")
    func aTokenKeptMeanwhileIsTakenAfterTheLeaseTime() async throws {
        let name = "kept meanwhile \(UUID())"
        try await Self.withHolderAndWaiter(tokenLease: .seconds(1)) { holder, waiter, _ in
            let kept = try await holder.withLease(named: name, refusing: nil, deadline: .now + .seconds(60)) {
                SharedToken(header: "Bearer kept-token", renewIn: .seconds(600))
            }
            let asked = Locked(0)
            // The holder replaces the kept token (it was refused) and hangs while asking.
            let (taken, replaced) = try await Self.holdingLease(name, through: holder, refusing: kept.header) {
                let taken = try await waiter.withLease(named: name, refusing: nil, deadline: .now + .seconds(60)) { Self.ownToken(counting: asked) }
                let replaced = try await waiter.withLease(named: name, refusing: kept.header, deadline: .now + .seconds(60)) {
                    Self.ownToken(counting: asked)
                }
                return (taken, replaced)
            }
            #expect(taken.header == "Bearer kept-token")
            #expect(replaced.header == "Bearer own-token")
            #expect(asked.withLock { $0 } == 1)
        }
    }

    @Test(
        "A store that hangs while a call waits for a lease is left after its own time: the call asks alone (or fails, strict), before its deadline",
        arguments: [false, true])
    func aStoreHungDuringTheLeaseWaitIsLeft(strict: Bool) async throws {
        let server = try suiteServer()
        let name = "hung \(UUID())"
        try await Self.withHolderAndWaiter(tokenLease: .seconds(3), statementTimeout: .seconds(2), strict: strict) { holder, waiter, instances in
            let asked = Locked(0)
            let deadline = ContinuousClock.now + .seconds(60)
            let outcome = try await Self.holdingLease(name, through: holder) {
                try await withThrowingTaskGroup(of: Result<SharedToken, any Error>.self) { group in
                    group.addTask {
                        do {
                            return .success(try await waiter.withLease(named: name, refusing: nil, deadline: deadline) { Self.ownToken(counting: asked) })
                        } catch {
                            return .failure(error)
                        }
                    }
                    // Once the waiter waits for the holder's lock, the server stops answering.
                    try await poll { try await rows("SELECT count(*)::text FROM pg_catalog.pg_locks WHERE NOT granted") != ["0"] }
                    server.freeze()
                    defer { server.thaw() }
                    return try await group.next()
                }
            }
            if strict {
                // Said as the store's failure, not as a lease held too long.
                #expect(throws: PostgresSharedStateError.self) { _ = try outcome?.get() }
                #expect("\(String(describing: outcome))".contains("did not answer"))
                #expect(asked.withLock { $0 } == 0)
            } else {
                #expect((try outcome?.get())?.header == "Bearer own-token")
                #expect(asked.withLock { $0 } == 1)
            }
            #expect(ContinuousClock.now < deadline)
            #expect(!instances[1].isAvailable)
        }
    }

    @Test("With whenUnavailable: fail, a lease held past the lease time fails the call, typed, without asking")
    func aLeaseHeldPastItsTimeFailsAStrictCall() async throws {
        let name = "held strictly \(UUID())"
        try await Self.withHolderAndWaiter(tokenLease: .seconds(1), strict: true) { holder, strict, _ in
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
        let name = "quick \(UUID())"
        try await Self.withHolderAndWaiter(tokenLease: .seconds(30)) { holder, waiter, _ in
            let (released, release) = AsyncStream<Void>.makeStream()
            let (held, holding) = AsyncStream<Void>.makeStream()
            defer {
                release.finish()
                holding.finish()
            }
            async let first = holder.withLease(named: name, refusing: nil, deadline: .now + .seconds(60)) {
                defer { holding.finish() }
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
        strictOptions.statementTimeout = .milliseconds(500)
        strictOptions.budgetsWhenUnavailable = .fail
        var lenientOptions = strictOptions
        lenientOptions.budgetsWhenUnavailable = .useMemory
        // A port nothing listens on: a store that is down.
        let server = try suiteServer()
        let store = PostgresClient.Configuration(
            host: "127.0.0.1", port: try Nginx.freePort(), username: server.username, password: server.password, database: "postgres", tls: .disable)
        try await MockServer.withRunning { server in
            server.route(.get, "/v1/ticks") { _ in .json(raw: #"{"n": 1}"#) }
            let ticks = AdHocRequest<Empty, Empty>(.show, "ticks")
            for (options, fails) in [(strictOptions, true), (lenientOptions, false)] {
                let shared = PostgresSharedState(configuration: store, options: options, logger: Logger(label: "down"))
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { await shared.run() }
                    defer { group.cancelAll() }
                    let before = server.requests.count
                    let api = try await Self.api(server, budgeted: true, shared: shared)
                    let free = try await Self.api(server, budgeted: false, shared: shared)
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

    @Test("A budget set to fail is served by a store that answers, although another statement marked it unavailable")
    func aStrictBudgetTriesTheStoreItself() async throws {
        var options = PostgresSharedState.Options.patient
        options.retryInterval = .seconds(600)
        options.budgetsWhenUnavailable = .fail
        try await MockServer.withRunning { server in
            server.route(.get, "/v1/ticks") { _ in .json(raw: #"{"n": 1}"#) }
            try await withInstances(1, options: options) { instances in
                let shared = instances[0]
                // Another kind's statement failed: the store counts as unavailable for 10 minutes.
                shared.store.noteFailure("cache write", PostgresSharedStateError("a slow write"))
                #expect(!shared.isAvailable)
                let api = try await Self.api(server, budgeted: true, shared: shared)
                _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "ticks"))
                #expect(server.requests.count == 1)
                // It answered: the store is the fleet's again, for every kind.
                #expect(shared.isAvailable)
                try await api.shutdown()
            }
        }
    }

    /// An API on `server` whose limits are kept in `shared`, with a budget or without.
    static func api(_ server: MockServer, budgeted: Bool, shared: PostgresSharedState) async throws -> API {
        var config = APIConfig(baseURL: server.baseURL.appendingPathComponent("v1"), service: "strict")
        config.limits.rate = budgeted ? RateBudget(requestsPerSecond: 100, burst: 10) : nil
        config.retry = .never
        return API(dependencies: try await APIDependencies.live(config: config), middlewares: API.defaultMiddlewares(sharedState: shared.state))
    }
}
