import Foundation
import InMemoryLogging
import Logging
import ProcessTestSupport
import Resourceful
@testable import ResourcefulPostgres
import Testing

/// PostgreSQL stopped mid-run and started again, or stopped where it stands: its own server, as
/// the tests stop it, one test at a time.
@Suite(.postgres, .serialized)
struct StoreOutageTests {
    @Test("A store that hangs is left alone after its own time even by calls that wait less; no call waits past its deadline for a write")
    func aStoreThatHangs() async throws {
        let server = try suiteServer()
        var options = PostgresSharedState.Options()
        options.statementTimeout = .seconds(5)
        options.retryInterval = .seconds(120)
        let budget = try #require(RateBudget(requestsPerSecond: 1000, burst: 100))
        try await withInstances(2, options: options) { instances in
            let shared = instances[0]
            try await shared.prepare()
            #expect(await shared.rateLimits.reserve("warm \(UUID())", budget: budget, maxWait: .seconds(5)) == .granted(wait: .zero))
            server.freeze()
            defer { server.thaw() }
            // Each call may wait 0.3 s, less than the store's own 5 s: the first ones are refused
            // (none can know it has a place in time), until the store's own time is up; every
            // call after that is served from memory at once.
            let upstream = "hung \(UUID())"
            let start = ContinuousClock.now
            var served = false
            while !served, ContinuousClock.now - start < .seconds(120) {
                served = await shared.rateLimits.reserve(upstream, budget: budget, maxWait: .milliseconds(300)) == .granted(wait: .zero)
            }
            #expect(served)
            #expect(!shared.isAvailable)

            // What another instance writes after an answer came (a pause, a breaker's opening)
            // waits for the store no longer than its call's deadline.
            let other = instances[1]
            let written = ContinuousClock.now
            await SharedState.$callDeadline.withValue(.now + .milliseconds(300)) {
                _ = await other.rateLimits.pause(upstream, for: .seconds(600))
            }
            #expect(ContinuousClock.now - written < .seconds(5))
            // The pause is kept all the same, in the instance's memory.
            #expect(await other.rateLimits.remainingPause(of: upstream) > .zero)
        }
    }

    @Test("A store that answers reads and refuses writes is said unavailable once a minute, not at each change")
    func aFlappingStoreIsSaidOnceAMinute() async throws {
        let logs = InMemoryLogHandler()
        var logger = Logger(label: "flapping") { _ in logs }
        logger.logLevel = .notice
        try await withInstances(1, logger: logger) { instances in
            let store = instances[0].store
            // The store's own lines: the client's (a connection's warning on a loaded machine) aside.
            func said(_ level: Logger.Level) -> Int {
                logs.entries.filter { $0.level == level && "\($0.message)".hasPrefix("Shared state") }.count
            }
            // Read-only: each retry interval a read answers and a write fails.
            for _ in 0..<5 {
                store.noteFailure("reserve", QueryFailed(description: "read-only"))
                store.noteSuccess()
            }
            #expect(said(.warning) == 1)
            #expect(said(.notice) == 1)
        }
    }

    @Test("While the store is down each call is answered from memory within its wait, warned once; the store is used again once back")
    func aStoreThatStopsAndComesBack() async throws {
        let server = try suiteServer()
        let logs = InMemoryLogHandler()
        var logger = Logger(label: "outage") { _ in logs }
        logger.logLevel = .notice
        var options = PostgresSharedState.Options()
        options.statementTimeout = .seconds(1)
        options.retryInterval = .seconds(2)
        let budget = try #require(RateBudget(requestsPerSecond: 1000, burst: 100))
        try await withInstances(1, options: options, logger: logger) { instances in
            let shared = instances[0]
            try await shared.prepare()
            let before = "before \(UUID())"
            #expect(await shared.rateLimits.reserve(before, budget: budget, maxWait: .seconds(5)) == .granted(wait: .zero))
            #expect(try await rows("SELECT count(*)::text FROM resourceful.rate_limits WHERE upstream = '\(before)'") == ["1"])

            await server.halt()
            let during = "during \(UUID())"
            for _ in 0..<20 {
                let started = ContinuousClock.now
                let place = await shared.rateLimits.reserve(during, budget: budget, maxWait: .seconds(5))
                #expect(place == .granted(wait: .zero))
                // Within the call's wait: at most the store's own time once per outage.
                #expect(ContinuousClock.now - started < .seconds(5))
                _ = await shared.circuitBreakers.permit(during, policy: CircuitBreakerPolicy())
            }
            // The store's own warnings: the PostgreSQL client's, on the same logger, aside.
            let warnings = logs.entries.filter { $0.level == .warning && $0.message.description.hasPrefix("Shared state") }
            #expect(!shared.isAvailable || !warnings.isEmpty)
            #expect(warnings.count == 1)
            #expect(warnings.first?.message.description.hasPrefix("Shared state unavailable") == true)

            // A token the fleet must ask for once fails, typed and in time, without the store;
            // one that may be asked for alone is.
            let keys = try SharedStateKeys(current: "k", keys: ["k": Array(repeating: 9, count: 32)])
            let strict = PostgresTokenCache(sharedState: shared, keys: keys, whenUnavailable: .fail)
            let lenient = PostgresTokenCache(sharedState: shared, keys: keys)
            let started = ContinuousClock.now
            await #expect(throws: PostgresSharedStateError.self) {
                _ = try await strict.withLease(named: "t", refusing: nil, deadline: .now + .seconds(2)) {
                    SharedToken(header: "Bearer never-asked", renewIn: .seconds(60))
                }
            }
            #expect(ContinuousClock.now - started < .seconds(2))
            let alone = try await lenient.withLease(named: "t", refusing: nil, deadline: .now + .seconds(2)) {
                SharedToken(header: "Bearer asked-alone", renewIn: .seconds(60))
            }
            #expect(alone.header == "Bearer asked-alone")

            try await server.start()
            // The client reconnects on its own: calls go back to the store once it answers.
            let after = "after \(UUID())"
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                _ = await shared.rateLimits.reserve(after, budget: budget, maxWait: .seconds(1))
                if shared.isAvailable, (try? await rows("SELECT count(*)::text FROM resourceful.rate_limits WHERE upstream = '\(after)'")) == ["1"] {
                    break
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(try await rows("SELECT count(*)::text FROM resourceful.rate_limits WHERE upstream = '\(after)'") == ["1"])
            #expect(logs.entries.contains { $0.level == .notice && $0.message.description == "Shared state available again" })
            // Nothing of a row is in the log lines.
            #expect(!logs.entries.contains { "\($0.message) \($0.metadata)".contains(during) })
        }
    }

    @Test(
        "A place a hung store grants late, to a call that stopped waiting, is given back",
        arguments: [(false, false), (true, false), (false, true), (true, true)])
    func aPlaceGrantedLateIsGivenBack(strict: Bool, pastStatementTime: Bool) async throws {
        let server = try suiteServer()
        var options = PostgresSharedState.Options.patient
        options.statementTimeout = .seconds(1)
        options.retryInterval = .seconds(600)
        options.budgetsWhenUnavailable = strict ? .fail : .useMemory
        // One place an hour: a place kept would hold the next call for an hour.
        let budget = try #require(RateBudget(requestsPerSecond: 1.0 / 3600, burst: 1))
        try await withInstances(1, options: options) { instances in
            let state = instances[0].rateLimits
            // A connection open before the server hangs: the statement reaches it and waits there.
            _ = await state.reserve("warm \(UUID())", budget: budget, maxWait: .seconds(5))
            let upstream = "late \(UUID())"
            server.freeze()
            defer { server.thaw() }
            let place = await state.reserve(upstream, budget: budget, maxWait: .milliseconds(300))
            // Not had within the call's wait: refused (its deadline came first), never granted.
            if case .granted = place { Issue.record("a place granted by a store that hung: \(place)") }
            // Hung past the statement's own time too: the instance gave up on it, and a statement
            // still waiting for a connection then (none idle) is never sent.
            if pastStatementTime { try await poll { !instances[0].isAvailable } }
            server.thaw()
            if pastStatementTime {
                // Once no reservation runs any more, none holds a place.
                try await poll {
                    try await rows(
                        """
                        SELECT count(*)::text FROM pg_catalog.pg_stat_activity
                        WHERE query LIKE '%resourceful.reserve(%' AND state <> 'idle' AND pid <> pg_catalog.pg_backend_pid()
                        """) == ["0"]
                }
                #expect(try await rows(
                    "SELECT count(*)::text FROM resourceful.rate_limits WHERE upstream = '\(upstream)' AND arrival_us > resourceful.now_us()"
                ) == ["0"])
            } else {
                // The statement the server ran once let go took the place, and gave it back.
                try await poll {
                    try await rows(
                        """
                        SELECT count(*)::text FROM resourceful.rate_limits
                        WHERE upstream = '\(upstream)' AND coalesce(arrival_us, 0) <= resourceful.now_us()
                        """) == ["1"]
                }
            }
        }
    }
}
