import Foundation
import HTTPTypes
import Logging
import PostgresNIO
import ProcessTestSupport
import Resourceful
import ResourcefulOAuth2
@testable import ResourcefulPostgres
import ResourcefulTesting
import ServiceLifecycle
import Testing

/// Rotating refresh tokens shared by OS processes through the suite's PostgreSQL, against a token
/// server that detects reuse as RFC 9700 asks.
@Suite(.postgres, .serialized)
struct FleetRefreshTokenTests {
    /// Each refresh token is good once and is answered with a new one; one spent again revokes
    /// the grant (every later request is refused with `invalid_grant`). Access tokens live 1 s.
    final class RotatingServer: Sendable {
        struct State {
            var valid: Set<String>
            var issued = 0
            var reused = 0
            var revoked = false
        }

        let state: Locked<State>

        init(first: String) {
            state = Locked(State(valid: [first]))
        }

        func answer(_ body: Data) -> MockResponse {
            let fields = URLComponents(string: "?" + String(decoding: body, as: UTF8.self))?.queryItems ?? []
            guard fields.first(where: { $0.name == "grant_type" })?.value == "refresh_token",
                let spent = fields.first(where: { $0.name == "refresh_token" })?.value
            else { return .json(raw: #"{"error": "invalid_request"}"#, status: .badRequest) }
            return state.withLock { state in
                guard !state.revoked else { return .json(raw: #"{"error": "invalid_grant"}"#, status: .badRequest) }
                guard state.valid.remove(spent) != nil else {
                    state.reused += 1
                    state.revoked = true
                    return .json(raw: #"{"error": "invalid_grant"}"#, status: .badRequest)
                }
                state.issued += 1
                let next = "rt-\(state.issued)-\(UUID().uuidString)"
                state.valid.insert(next)
                return .json(raw: #"{"access_token": "acc-\#(state.issued)", "token_type": "Bearer", "expires_in": 1, "refresh_token": "\#(next)"}"#)
            }
        }
    }

    @Test("Two processes renewing 1 s tokens for 3 s spend each refresh token once: no invalid_grant, the grant never revoked")
    func rotationAcrossProcesses() async throws {
        let first = "rt-0-\(UUID().uuidString)"
        let keys = try SharedStateKeys(current: "k1", keys: ["k1": try #require(PostgresSharedStateFactory.keyBytes(FleetTokenTests.sealingKey))])
        try await MockServer.withRunning { server in
            // The worker's settings: the token endpoint and client its refresh tokens are scoped to.
            let name = OAuth2AuthenticationStorage.sharedRefreshTokenName(
                service: "fleet", settings: OAuth2Settings(clientID: "fleet", tokenEndpoint: server.baseURL.appendingPathComponent("token")))
            try await withInstances(1) { instances in
                try await PostgresRefreshTokenStorage(sharedState: instances[0], keys: keys).storeSecret(first, named: name)
            }
            let tokens = RotatingServer(first: first)
            server.route(.post, "/token") { request in tokens.answer(request.body) }
            server.route(.get, "/v1/ok") { request in
                request.headerFields[.authorization]?.hasPrefix("Bearer acc-") == true ? .json(raw: "{}") : .json(raw: "{}", status: .unauthorized)
            }
            let outputs = try await fleet(
                2, baseURL: server.baseURL.appendingPathComponent("v1").absoluteString + "/",
                FleetTokenTests.arguments(server) + ["--refresh", "--seconds", "3", "--concurrency", "4"], environment: FleetTokenTests.environment)
            let seen = try outcomes(outputs)
            #expect(Set(seen.keys) == ["200"], "\(seen)")
            let state = tokens.state.withLock { $0 }
            #expect(state.reused == 0 && !state.revoked)
            // Tokens due every half second for 3 s: renewed several times, by either process.
            #expect(state.issued >= 3, "\(state.issued)")
            // The access token was the fleet's too: renewed under its lease, kept in its row.
            #expect(try await rows("SELECT count(*)::text FROM resourceful.tokens") == ["1"])
            // The table holds the last refresh token sealed, at the version of its rotations
            // (beside the login's status, which the storage keeps with it).
            let row = PostgresRefreshTokenStorage.row(name)
            let kept = try await rows("SELECT version::text || ' ' || encode(sealed, 'escape') FROM resourceful.refresh_tokens WHERE name = '\(row)'")
            #expect(kept.count == 1)
            #expect(kept.first?.hasPrefix("\(state.issued + 1) ") == true, "\(kept)")
            let all = try await rows("SELECT encode(sealed, 'escape') FROM resourceful.refresh_tokens")
            #expect(!all.joined().contains("rt-") && !all.joined().contains("acc-"))
            #expect(!outputs.joined().contains("rt-") && !outputs.joined().contains("acc-"))
        }
        _ = try await rows("DELETE FROM resourceful.refresh_tokens RETURNING name")
        _ = try await rows("DELETE FROM resourceful.tokens RETURNING name")
    }

    @Test("A rotation is written only over the token spent: a second writer of the same spent token loses")
    func aRotationIsACompareAndSet() async throws {
        let keys = try SharedStateKeys(current: "k1", keys: ["k1": try #require(PostgresSharedStateFactory.keyBytes(FleetTokenTests.sealingKey))])
        let name = "cas-\(UUID().uuidString)"
        try await withInstances(2) { instances in
            let a = PostgresRefreshTokenStorage(sharedState: instances[0], keys: keys)
            let b = PostgresRefreshTokenStorage(sharedState: instances[1], keys: keys)
            try await a.storeSecret("r0", named: name)
            // Both read r0 and rotate it at once: one wins.
            async let first = a.replaceSecret(named: name, spent: "r0", with: "r1-a")
            async let second = b.replaceSecret(named: name, spent: "r0", with: "r1-b")
            let won = try await [first, second]
            #expect(won.filter { $0 }.count == 1)
            let kept = try await b.secret(named: name)
            #expect(kept == (won[0] ? "r1-a" : "r1-b"))
            // A token that is no longer the one stored is not written over, nor is a deleted one.
            #expect(try await a.replaceSecret(named: name, spent: "r0", with: "r2") == false)
            #expect(try await a.deleteSecret(named: name))
            #expect(try await a.replaceSecret(named: name, spent: kept ?? "", with: "r2") == false)
            #expect(try await a.secret(named: name) == nil)
        }
    }

    @Test("A login made after a logout is not written over by the old grant's rotation, though its version is the same")
    func aNewLoginIsNotWrittenOverByAnOldRotation() async throws {
        let keys = try SharedStateKeys(current: "k1", keys: ["k1": try #require(PostgresSharedStateFactory.keyBytes(FleetTokenTests.sealingKey))])
        let name = "relogin-\(UUID().uuidString)"
        try await withInstances(2) { instances in
            let a = PostgresRefreshTokenStorage(sharedState: instances[0], keys: keys)
            let b = PostgresRefreshTokenStorage(sharedState: instances[1], keys: keys)
            try await a.storeSecret("old-grant", named: name)
            #expect(try await b.secret(named: name) == "old-grant")
            // Logged out and in again elsewhere while b's renewal spent the old grant's token.
            #expect(try await a.deleteSecret(named: name))
            try await a.storeSecret("new-login", named: name)
            #expect(try await b.replaceSecret(named: name, spent: "old-grant", with: "old-successor") == false)
            #expect(try await a.secret(named: name) == "new-login")
        }
    }

    @Test("A rotation being written when the shared state stops reaches the store before its connections close")
    func aRotationInFlightOutlivesShutdown() async throws {
        let name = "shutdown-\(UUID().uuidString)"
        let row = PostgresRefreshTokenStorage.row(name)
        let logger = Logger(label: "resourceful-postgres-tests")
        let (shared, services, running, storage) = try Self.inAServiceGroup(logger: logger)
        defer { running.cancel() }
        try await storage.storeSecret("r0", named: name)
        #expect(try await storage.secret(named: name) == "r0")

        // Another session holds the row, so that the rotation's write waits for it.
        let locker = PostgresClient(configuration: connection(to: try suiteServer()))
        let (locked, nowLocked) = AsyncStream<Void>.makeStream()
        let (released, release) = AsyncStream<Void>.makeStream()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await locker.run() }
            defer { group.cancelAll() }
            group.addTask {
                // Ended however the transaction ends: a lock that fails fails the test, never hangs it.
                defer { nowLocked.finish() }
                try await locker.withTransaction(logger: logger) { session in
                    for try await _ in try await session.query("SELECT 1 FROM resourceful.refresh_tokens WHERE name = \(row) FOR UPDATE", logger: logger) {}
                    nowLocked.yield()
                    for await _ in released { break }
                }
            }
            defer { release.finish() }
            for await _ in locked { break }

            let rotation = Task { try await storage.replaceSecret(named: name, spent: "r0", with: "r1") }
            let first = try await waitingForTheRow(besides: nil)
            // The app stops while the write waits, and the write's session is then ended by
            // another hand: the write is tried again on connections that shutdown keeps open.
            await services.triggerGracefulShutdown()
            #expect(try await rows("SELECT pg_catalog.pg_terminate_backend(\(first))::text") == ["true"])
            _ = try await waitingForTheRow(besides: first)
            release.finish()
            #expect(try await rotation.value)
            try await running.value
        }
        #expect(try await rows("SELECT version::text FROM resourceful.refresh_tokens WHERE name = '\(row)'") == ["2"])
        #expect(shared.store.lastingWrites.count == 0)
        _ = try await rows("DELETE FROM resourceful.refresh_tokens WHERE name = '\(row)' RETURNING name")
    }

    @Test("A claim made before the shared state stops holds its connections open for the rotation that follows")
    func aClaimHoldsShutdownForItsRotation() async throws {
        let name = "claimed-\(UUID().uuidString)"
        let (shared, services, running, storage) = try Self.inAServiceGroup(logger: Logger(label: "resourceful-postgres-tests"))
        defer { running.cancel() }
        let other = "later-\(UUID().uuidString)"
        try await storage.storeSecret("r0", named: name)
        try await storage.storeSecret("s0", named: other)
        // The renewal claims the token; its request to the token server is out.
        #expect(try await storage.claimSecret(named: name, spending: "r0", until: .now + .seconds(30)) == .claimed)
        #expect(shared.store.lastingWrites.count == 1)
        // The app stops meanwhile. A renewal begun now spends nothing (its claim is refused) and
        // does not hold the shutdown; the answer to the first then comes, and its rotation is written.
        await services.triggerGracefulShutdown()
        // The group tells its services in tasks of their own: polled until the state was told.
        let told = ContinuousClock.now + .seconds(60)
        while !shared.store.lastingWrites.isClosing, ContinuousClock.now < told { try await Task.sleep(for: .milliseconds(10)) }
        await #expect(throws: PostgresSharedStateError.self) {
            _ = try await storage.claimSecret(named: other, spending: "s0", until: .now + .seconds(30))
        }
        #expect(shared.store.lastingWrites.count == 1)
        #expect(try await storage.replaceSecret(named: name, spent: "r0", with: "r1"))
        try await running.value
        #expect(shared.store.lastingWrites.count == 0)
        let row = PostgresRefreshTokenStorage.row(name)
        #expect(try await rows("SELECT version::text FROM resourceful.refresh_tokens WHERE name = '\(row)'") == ["2"])
        _ = try await rows("DELETE FROM resourceful.refresh_tokens WHERE name = '\(row)' OR name = '\(PostgresRefreshTokenStorage.row(other))' RETURNING name")
    }

    @Test("A rotation's write refused for its values is said at once, not tried for the write's whole window")
    func aWriteRefusedForItsValuesIsNotTriedAgain() async throws {
        let keys = try SharedStateKeys(current: "k1", keys: ["k1": try #require(PostgresSharedStateFactory.keyBytes(FleetTokenTests.sealingKey))])
        try await withInstances(1) { instances in
            let storage = PostgresRefreshTokenStorage(sharedState: instances[0], keys: keys)
            let attempts = Locked(0)
            let started = ContinuousClock.now
            // A data exception (class 22): the server would refuse the same statement each time.
            await #expect(throws: PostgresSharedStateError.self) {
                try await storage.persisted("refresh token rotation") { client in
                    attempts.withLock { $0 += 1 }
                    for try await _ in try await client.query("SELECT (1 / 0)::text") {}
                    return true
                }
            }
            #expect(attempts.value == 1)
            #expect(ContinuousClock.now - started < storage.writeWindow)
            #expect(instances[0].isAvailable)
        }
    }

    /// A shared state run by a `ServiceGroup` (as an app runs it), and a refresh token storage
    /// through it.
    private static func inAServiceGroup(logger: Logger) throws -> (
        shared: PostgresSharedState, services: ServiceGroup, running: Task<Void, any Error>, storage: PostgresRefreshTokenStorage
    ) {
        let keys = try SharedStateKeys(current: "k1", keys: ["k1": try #require(PostgresSharedStateFactory.keyBytes(FleetTokenTests.sealingKey))])
        let shared = PostgresSharedState(configuration: connection(to: try suiteServer()), options: .patient, logger: logger)
        let services = ServiceGroup(services: [shared], logger: logger)
        let running = Task { try await services.run() }
        return (shared, services, running, PostgresRefreshTokenStorage(sharedState: shared, keys: keys))
    }

    /// The process id of a session waiting for a lock on a refresh token's row, other than
    /// `besides`, once there is one.
    private func waitingForTheRow(besides: String?) async throws -> String {
        var found: String?
        try await poll {
            found = try await rows(
                """
                SELECT pid::text FROM pg_catalog.pg_stat_activity
                WHERE wait_event_type = 'Lock' AND query LIKE '%UPDATE resourceful.refresh_tokens%' AND pid <> pg_catalog.pg_backend_pid()
                """
            ).first { $0 != besides }
            return found != nil
        }
        return try #require(found)
    }

    @Test("A rotated token is written even while the store counts as unavailable after a failure")
    func aRotationIsWrittenThroughAPause() async throws {
        let keys = try SharedStateKeys(current: "k1", keys: ["k1": try #require(PostgresSharedStateFactory.keyBytes(FleetTokenTests.sealingKey))])
        let name = "through-\(UUID().uuidString)"
        var options = PostgresSharedState.Options.patient
        options.retryInterval = .seconds(600)
        try await withInstances(1, options: options) { instances in
            let storage = PostgresRefreshTokenStorage(sharedState: instances[0], keys: keys)
            try await storage.storeSecret("spent-now", named: name)
            // The renewal read the token it spends.
            #expect(try await storage.secret(named: name) == "spent-now")
            // Another statement failed a moment ago: the store is left alone for ten minutes.
            instances[0].store.noteFailure("a test", QueryFailed(description: "a failure"))
            #expect(!instances[0].isAvailable)
            // The successor of a token the server already took is written all the same, even by
            // a call whose deadline has passed.
            let written = try await SharedState.$callDeadline.withValue(.now) {
                try await storage.replaceSecret(named: name, spent: "spent-now", with: "successor")
            }
            #expect(written)
            let rows = try await rows("SELECT count(*)::text FROM resourceful.refresh_tokens WHERE name = '\(PostgresRefreshTokenStorage.row(name))' AND version = 2")
            #expect(rows == ["1"])
        }
    }
}
